"""The shortcuts that make a format conversion of thousands of nodes cost a few runs: each is
held to the slow way it stands for (convert/formats/nbits.py, nbits_proof.py, measure.py, stacked.py)."""

from __future__ import annotations

import numpy as np
import pytest
from format_models import nbits_case, qlinear_chain
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import nbits, nbits_proof


def written_by_onnx(name: str, elem: int, codes: np.ndarray):
    """What numpy_helper.from_array writes of uint8 ``codes`` as the ml_dtypes type of ``elem``
    (uint2 / uint4 packed into raw_data low bits first; uint8 as it is)."""
    import ml_dtypes

    as_type = {TensorProto.UINT4: ml_dtypes.uint4, TensorProto.UINT2: ml_dtypes.uint2}.get(elem, np.uint8)
    return numpy_helper.from_array(np.asarray(codes).astype(as_type), name)


@pytest.mark.parametrize("elem,high", [(TensorProto.UINT4, 16), (TensorProto.UINT2, 4),
                                       (TensorProto.UINT8, 256)])
def test_codes_tensor_is_what_from_array_writes(elem, high):
    """The tensor nbits writes for its codes is numpy_helper.from_array's of them, message and
    bytes, for odd sizes (a padded last byte), transposed views and empty tables; onnx reads
    back the codes, as it reads helper.make_tensor's int32_data of them."""
    rng = np.random.default_rng(0)
    for shape in ((32, 32), (3, 5), (1, 1), (7,), (2, 3, 5), (0, 4), (5, 2)):
        codes = rng.integers(0, high, shape).astype(np.uint8)
        for c in (codes, codes.T):
            want = written_by_onnx("w", elem, c)
            got = nbits.codes_tensor("w", elem, list(c.shape), c)
            assert got == want and got.SerializeToString() == want.SerializeToString(), (shape, c.shape)
            old = helper.make_tensor("w", elem, list(c.shape), c.reshape(-1))
            assert np.array_equal(numpy_helper.to_array(got), numpy_helper.to_array(old))
            assert np.array_equal(numpy_helper.to_array(got).astype(np.uint8), c)


def test_the_stacked_proof_gives_each_case_its_own_verdict(monkeypatch):
    """Cases of one structure are proven side by side in one evaluator run: each case's verdict
    is its own proof's, an error planted in one case (first, middle, last, at a table's edge)
    fails that case alone with the message its own proof gives; cases of other shapes or bits
    are proven in their own runs, and none is proven alone."""
    cases = [nbits_case(i, name=str(i)) for i in range(7)]
    cases += [nbits_case(10, k=48, block=16, name="a"), nbits_case(11, bits=8, name="b"),
              nbits_case(12, zero=False, name="c")]
    cases += [nbits_case(20 + i, bits=2, name=f"t{i}") for i in range(3)]
    for i, at in ((0, (0, 0)), (3, (5, 63)), (6, (2, 31)), (8, (0, 0)), (12, (1, 1))):
        cases[i].w["codes"] = cases[i].w["codes"].copy()
        cases[i].w["codes"][at] ^= 1
    monkeypatch.setattr(nbits_proof.NBitsCase, "prove", lambda case: pytest.fail("a case was proven alone"))
    got = nbits_proof.prove_all(cases)
    monkeypatch.undo()
    want = [c.prove() for c in cases]
    assert got == want
    assert [i for i, v in enumerate(got) if v is not None] == [0, 3, 6, 8, 12]
    assert all("where the page gives" in got[i] for i in (0, 3, 6, 8, 12))


@pytest.mark.parametrize("case", [nbits_case(1), nbits_case(2, k=48, block=16), nbits_case(3, bits=8),
                                  nbits_case(4, zero=False), nbits_case(5, bits=2),
                                  nbits_case(6, k=40, block=16, bits=2, zero=False)])
def test_the_proofs_engine_is_onnx_reference_bit_for_bit(case):
    """The proofs run qlin's evaluator (convert/verify.py's, bit-exact by the spec): on each
    layout the weights' tables take (2, 4 and 8 bits, a last block cut short, with and without
    zero points), its DequantizeLinear-21 gives onnx.reference's values bit for bit, stacked too."""
    from onnx.reference import ReferenceEvaluator

    tables = [numpy_helper.to_array(t) for t in case.inits]
    names = [t.name for t in case.inits]
    graph = helper.make_graph([case.dq], "g", [], [helper.make_tensor_value_info(case.dq.output[0], 0, None)],
                              case.inits)
    opset = nbits.opset_for(case.w["bits"])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)
    want = ReferenceEvaluator(model).run(None, {})[0]
    got = nbits_proof._dequantized(case.dq, opset, tables)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes() and names
    stacked = nbits_proof._run_stacked(nbits_proof._tables(case)[0], [tables, tables], opset)
    assert stacked.tobytes() == np.concatenate([want, want], axis=1).tobytes()


def test_the_stacked_proof_splits_by_bytes(monkeypatch):
    """Stacks are cut at STACK_BYTES; one case a stack gives the same verdicts."""
    cases = [nbits_case(i, name=str(i)) for i in range(5)]
    cases[2].w["codes"] = cases[2].w["codes"].copy()
    cases[2].w["codes"][4, 40] ^= 2
    whole = nbits_proof.prove_all(cases)
    monkeypatch.setattr(nbits_proof, "STACK_BYTES", 1)
    assert nbits_proof.prove_all(cases) == whole == [c.prove() for c in cases]
    assert whole[2] is not None and whole.count(None) == 4


@pytest.mark.parametrize("opset", [11, 13, 21])
def test_the_stacked_session_measures_what_each_case_alone_measures(monkeypatch, opset):
    """onnxruntime's session of a structure (stacked.Session: several cases side by side, each
    on every input row, fed through a Split where a value has a first axis and a Gather where it
    is a scalar, a weight's DequantizeLinear once per case) gives every node the measurement
    (bound, outputs that differ, engines) that running each batch as models gives, with the last
    run of a structure's cases padded (37 and 19 cases: 4 and 2 side by side; at 11, whose
    DequantizeLinear has no per-column scales, the 37 alone), at an opset whose Split takes its
    sizes as an attribute (11) and as an input (13, 21); no case runs as a model while the
    sessions compute them."""
    pytest.importorskip("onnxruntime")
    from qlin_cli.convert.formats import measure, stacked
    from qlin_cli.convert.run import Options, convert_model

    model = qlinear_chain(37, 19, opset=opset)
    made, split = [], []
    real = stacked.Session.__init__

    def counted(self, ort, st, copies, *args):
        made.append(copies)
        real(self, ort, st, copies, *args)
        split.append(len(self.split))

    monkeypatch.setattr(stacked.Session, "__init__", counted)
    as_models = []
    real_ort = measure._run_ort
    monkeypatch.setattr(measure, "_run_ort", lambda *a: as_models.append(1) or real_ort(*a))

    def measured():
        r = convert_model(model, "", Options(opset, to_format="qdq", tolerance=255))
        return [(e.where, e.measured.to_json()) for e in r.entries if e.measured]

    together = measured()
    assert (sorted(made), len(together)) == (([4], 37) if opset < 13 else ([2, 4], 56))
    assert not as_models and min(split) >= 2  # the activation and the weight split, every time
    monkeypatch.setattr(measure, "STACKED", False)
    assert measured() == together and as_models


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_pack_and_unpack_are_the_byte_layout_element_by_element(bits):
    """nbits.pack / unpack (whole rows at once) against the layout written out code by code: code
    j of a byte is bits j*bits.. of it, low bits first; the bytes after the codes are zero; a code
    out of its range is added in as a byte is (mod 256), as the sum of shifted codes was."""
    rng = np.random.default_rng(bits)
    per, mask = 8 // bits, (1 << bits) - 1
    for rows, cols, extra in ((3, 5, 0), (4, 33, 2), (1, 1, 1)):
        per_row = -(-cols // per) + extra
        for high in (1 << bits, 256):
            codes = rng.integers(0, high, (rows, cols)).astype(np.uint8)
            want = np.zeros((rows, per_row), np.uint8)
            for r in range(rows):
                for c in range(cols):
                    shifted = int(codes[r, c]) << (bits * (c % per))
                    want[r, c // per] = (int(want[r, c // per]) + shifted) % 256
            assert nbits.pack(codes, bits, per_row).tobytes() == want.tobytes()
        packed = rng.integers(0, 256, (rows, per_row)).astype(np.uint8)
        count = per_row * per - extra
        got = nbits.unpack(packed, bits, count)
        assert got.shape == (rows, count) and got.dtype == np.uint8
        assert all(int(got[r, c]) == (int(packed[r, c // per]) >> (bits * (c % per))) & mask
                   for r in range(rows) for c in range(count))


def _nbits_node(rng, i: int, k: int, n: int, bits: int, block: int, zero: bool, consts: dict):
    blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, (n, blocks * block)).astype(np.uint8)
    consts[f"b{i}"] = nbits.pack(codes, bits, blocks * block * bits // 8).reshape(n, blocks, -1)
    consts[f"s{i}"] = rng.uniform(0.01, 0.5, n * blocks).astype(np.float32)
    inputs = ["a", f"b{i}", f"s{i}"]
    if zero:
        consts[f"z{i}"] = nbits.pack(rng.integers(0, 1 << bits, (n, blocks)).astype(np.uint8), bits,
                                     -(-blocks * bits // 8)).reshape(-1)
        inputs.append(f"z{i}")
    return helper.make_node("MatMulNBits", inputs, [f"y{i}"], name=f"m{i}", domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=block)


def test_weights_of_many_nodes_is_each_nodes_weights_and_tensors():
    """nbits.weights_of (nodes of one layout unpacked and packed together) gives each node what
    weights() gives it alone and what codes_tensor stores for its two tensors, for 2, 4 and 8
    bits, K not a multiple of the block (the codes cut at K), an odd K x N (a padded byte), with
    and without zero points; a node weights() refuses is left to it (None)."""
    from qlin_cli.convert.formats.to_qdq import Lookups

    rng = np.random.default_rng(5)
    consts: dict = {}
    layouts = [(32, 6, 4, 16, True), (48, 5, 4, 32, False), (33, 3, 2, 16, True), (16, 4, 8, 16, True),
               (17, 3, 4, 16, False)]
    nodes = [_nbits_node(rng, 10 * j + c, *layout, consts)
             for j, layout in enumerate(layouts) for c in range(3)]
    bad = helper.make_node("MatMulNBits", ["a", "b0", "s0"], ["y"], domain="com.microsoft", K=32, N=6, bits=3,
                           block_size=16)
    look = Lookups(consts.get, lambda name: None, lambda base: base)
    got = nbits.weights_of([(n, look) for n in [*nodes, bad]])
    assert got[-1] is None
    for node, (w, stored) in zip(nodes, got, strict=False):
        want = nbits.weights(node, look)
        assert set(w) == set(want) and all(np.array_equal(w[k], want[k]) for k in ("codes", "scales", "zero"))
        assert all(w[k] == want[k] for k in ("K", "N", "bits", "block_size"))
        elem = nbits.TYPES[w["bits"]]
        for codes, kept in ((want["codes"].T, stored[0]), (want["zero"].T, stored[1])):
            alone = nbits.codes_tensor("t", elem, list(codes.shape), codes)
            assert nbits.codes_tensor("t", elem, list(codes.shape), codes, kept) == alone
            assert alone == written_by_onnx("t", elem, codes)


def test_the_proofs_run_in_qlins_evaluator(monkeypatch):
    """Stacked or alone, the weights' proofs are computed by qlin's evaluator (run_node): with
    it failing, every case's verdict says the evaluator could not run the DequantizeLinear."""
    import qlin_cli.evaluator

    cases = [nbits_case(i, name=str(i)) for i in range(3)] + [nbits_case(9, bits=8, name="b")]
    assert nbits_proof.prove_all(cases) == [None] * len(cases)

    def broken(*args):
        raise RuntimeError("no evaluator")
    monkeypatch.setattr(qlin_cli.evaluator, "run_node", broken)
    got = nbits_proof.prove_all(cases)
    assert all(v == "qlin's evaluator cannot run the DequantizeLinear: no evaluator" for v in got), got
