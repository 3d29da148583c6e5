"""The measurement of format rewrites (convert/formats/measure.py) computes the cases of one
structure at once (convert/formats/stacked.py): onnx.reference's arithmetic on stacked
arrays, one onnxruntime session per structure. What it gives is what onnx.reference and
onnxruntime give each case alone: held here bit for bit, kernel by kernel, on random and
edge values, and measurement by measurement against the models of each batch."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import measure, stacked
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.write import write_model

pytest.importorskip("onnxruntime")

U8, I8 = TensorProto.UINT8, TensorProto.INT8
NP = {U8: np.uint8, I8: np.int8}


def _scale(rng, tie: bool, shape=()) -> np.ndarray:
    """Random float32 scales; ``tie``: powers of two, which put many results on a rounding tie."""
    if tie:
        return (2.0 ** rng.integers(-3, 2, shape)).astype(np.float32)
    return np.exp(rng.uniform(np.log(1e-3), np.log(0.5), shape)).astype(np.float32)


def _codes(rng, elem: int, shape) -> np.ndarray:
    info = np.iinfo(NP[elem])
    return rng.integers(info.min, int(info.max) + 1, shape).astype(NP[elem])


def _qlinear_matmul(rng, a_elem, b_elem, y_elem, a_shape, n, per_column, one_element, tie):
    """QLinearMatMul of an input ``a`` and constant weights [K, n]."""
    k = a_shape[-1]
    shape = (n,) if per_column else (1,) if one_element else ()
    consts = {"as": _scale(rng, tie, (1,) if one_element else ()), "az": _codes(rng, a_elem, ()),
              "b": _codes(rng, b_elem, (k, n)), "bs": _scale(rng, tie, shape),
              "bz": _codes(rng, b_elem, shape), "ys": _scale(rng, tie), "yz": _codes(rng, y_elem, ())}
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    return [node], consts, {"a": (a_elem, a_shape)}, [("y", y_elem)]


def _qdq_matmul(rng, x_elem, w_elem, y_elem, x_shape, n, per_column, zero_points, tie):
    """DequantizeLinear of an input and of constant weights [K, n] (per column along axis 1
    or -1), MatMul, QuantizeLinear (without a zero point: uint8)."""
    k = x_shape[-1]
    shape = (n,) if per_column else ()
    consts = {"xs": _scale(rng, tie), "xz": _codes(rng, x_elem, ()), "w": _codes(rng, w_elem, (k, n)),
              "ws": _scale(rng, tie, shape), "wz": _codes(rng, w_elem, shape), "ys": _scale(rng, tie),
              "yz": _codes(rng, y_elem, ())}
    z = (lambda name: [name]) if zero_points else (lambda name: [])
    axis = {"axis": -1 if tie else 1} if per_column else {}
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", *z("xz")], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", *z("wz")], ["wd"], **axis),
             helper.make_node("MatMul", ["xd", "wd"], ["f"]),
             helper.make_node("QuantizeLinear", ["f", "ys", *z("yz")], ["y"])]
    if not zero_points:
        consts = {n_: v for n_, v in consts.items() if not n_.endswith("z")}
        y_elem = U8
    outputs = [("xd", TensorProto.FLOAT), ("wd", TensorProto.FLOAT), ("f", TensorProto.FLOAT), ("y", y_elem)]
    return nodes, consts, {"x": (x_elem, x_shape)}, outputs


STRUCTURES = [
    (_qlinear_matmul, (U8, I8, U8, (1, 16), 16, False, False, False)),
    (_qlinear_matmul, (U8, I8, U8, (4, 16), 8, True, False, False)),
    (_qlinear_matmul, (I8, I8, I8, (2, 3, 8), 5, False, True, False)),
    (_qlinear_matmul, (U8, U8, U8, (3, 8), 4, True, False, True)),
    (_qlinear_matmul, (I8, U8, I8, (2, 8), 8, False, False, True)),
    (_qdq_matmul, (U8, I8, U8, (1, 16), 16, False, True, False)),
    (_qdq_matmul, (U8, I8, U8, (4, 16), 8, True, True, False)),
    (_qdq_matmul, (I8, I8, I8, (2, 3, 8), 5, True, True, True)),
    (_qdq_matmul, (U8, U8, U8, (3, 8), 4, False, False, True)),
]


def _alone(nodes, consts, inputs, outputs, feeds: dict) -> list:
    """What onnx.reference gives one case, for each of its inputs: [input][output]."""
    from onnx.reference import ReferenceEvaluator

    graph = helper.make_graph(
        nodes, "case", [helper.make_tensor_value_info(n, e, s) for n, (e, s) in inputs.items()],
        [helper.make_tensor_value_info(n, e, None) for n, e in outputs],
        [numpy_helper.from_array(v, n) for n, v in consts.items()])
    ref = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                                               ir_version=10))
    rows = next(iter(feeds.values())).shape[0]
    return [ref.run(None, {n: v[f] for n, v in feeds.items()}) for f in range(rows)]


@pytest.mark.parametrize("index", range(len(STRUCTURES)))
def test_stacked_arithmetic_is_onnx_reference_bit_for_bit(index):
    """Six cases of one structure (random scales, zero points and weights; scales that put
    results on rounding ties too), each on the measurement's own inputs (edge and random
    codes): every output of every kernel equal to onnx.reference's for the case alone."""
    build, args = STRUCTURES[index]
    rng = np.random.default_rng(index)
    cases = [build(rng, *args) for _ in range(6)]
    feeds = [measure._feeds(c[2], np.random.default_rng(k)) for k, c in enumerate(cases)]
    sigs = [stacked.signature(n, i, lambda x, c=c: c.get(x), o) for n, c, i, o in cases]
    assert len({s[0] for s in sigs}) == 1
    st = stacked.Structure.of(sigs[0][0], cases[0][0])
    assert stacked.computable(st)
    values = [None] * len(st.kinds)
    for slot, kind in enumerate(st.kinds):
        if kind[0] == "input":
            values[slot] = np.stack([f[s[1][slot]] for f, s in zip(feeds, sigs, strict=True)], 1)
        elif kind[0] == "const":
            values[slot] = np.stack([c[1][s[1][slot]] for c, s in zip(cases, sigs, strict=True)])[None]
    got = stacked.reference(st, values)
    for k, (case, f) in enumerate(zip(cases, feeds, strict=True)):
        for row, want in enumerate(_alone(*case, f)):
            for o, w in enumerate(want):
                g = got[o][row if got[o].shape[0] > 1 else 0, k]
                assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), (k, row, o)


def test_what_the_stacked_arithmetic_does_not_compute_it_declines():
    """A Conv, or a DequantizeLinear with block_size: not computed here (measure.py runs
    those as models)."""
    conv = helper.make_node("Conv", ["x", "w"], ["y"])
    key, _ = stacked.signature([conv], {"x": (TensorProto.FLOAT, (1, 1, 3, 3))},
                               lambda n: np.ones((1, 1, 1, 1), np.float32), [("y", TensorProto.FLOAT)])
    assert not stacked.computable(stacked.Structure.of(key, [conv]))
    with pytest.raises(stacked.Declined):
        stacked._dequantize({"axis": 0, "block_size": 2}, np.zeros((1, 1, 4), np.uint8),
                            np.ones((1, 1, 2), np.float32))


def test_the_inputs_are_the_codes_drawn_input_by_input_and_sample_by_sample():
    """measure._feeds draws the random codes of consecutive inputs of one type in one call:
    the codes one call per input and sample gives (what the measurement drew before), in the
    same order, for every type and for a type that comes back after another."""
    types = [U8, U8, I8, TensorProto.UINT16, TensorProto.INT16, U8, TensorProto.INT32, U8]
    shapes = [(1, 16), (3,), (2, 2, 5), (4,), (1, 7), (16, 16), (3, 3), (1,)]
    inputs = {f"x{i}": (t, s) for i, (t, s) in enumerate(zip(types, shapes, strict=True))}
    got = measure._feeds(inputs, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    for name, (elem, shape) in inputs.items():
        info = np.iinfo(helper.tensor_dtype_to_np_dtype(elem))
        edges = [info.min, info.max, (int(info.min) + int(info.max) + 1) // 2]
        want = [np.full(shape, e, info.dtype) for e in edges] + [
            rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(info.dtype)
            for _ in range(measure.SAMPLES)]
        assert got[name].dtype == info.dtype and got[name].tobytes() == np.stack(want).tobytes(), name


def _chain(tmp_seed: int = 0) -> onnx.ModelProto:
    """x -> QuantizeLinear -> 10 QLinearMatMul with per-tensor weights, 10 with per-column
    weights (each its own scales and zero points) -> 8 QLinearConv of one shape ->
    DequantizeLinear: three structures of at least 8 nodes, so that each is computed at once."""
    rng = np.random.default_rng(tmp_seed)
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    prev = "q0"
    for i in range(20):
        shape = (16,) if i >= 10 else ()
        w_elem = I8 if i < 10 else U8
        inits += [numpy_helper.from_array(_codes(rng, w_elem, (16, 16)), f"w{i}"),
                  numpy_helper.from_array(_scale(rng, i % 4 == 0, shape), f"ws{i}"),
                  numpy_helper.from_array(_codes(rng, w_elem, shape) // 8, f"wz{i}"),
                  numpy_helper.from_array(_scale(rng, i % 4 == 0), f"ys{i}"),
                  numpy_helper.from_array(np.uint8(rng.integers(100, 156)), f"yz{i}")]
        nodes.append(helper.make_node("QLinearMatMul", [prev, "s", "z", f"w{i}", f"ws{i}", f"wz{i}", f"ys{i}",
                                                        f"yz{i}"], [f"m{i}"], name=f"mm{i}"))
        prev = f"m{i}"
    nodes.append(helper.make_node("Reshape", [prev, "shape"], ["c0"]))
    inits.append(numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "shape"))
    prev = "c0"
    for i in range(8):
        inits += [numpy_helper.from_array(_codes(rng, I8, (1, 1, 3, 3)), f"cw{i}"),
                  numpy_helper.from_array(_scale(rng, False), f"cws{i}"),
                  numpy_helper.from_array(np.int8(0), f"cwz{i}"),
                  numpy_helper.from_array(_scale(rng, False), f"cys{i}"),
                  numpy_helper.from_array(np.uint8(rng.integers(100, 156)), f"cyz{i}")]
        x_scale, x_zero = ("ys19", "yz19") if i == 0 else (f"cys{i - 1}", f"cyz{i - 1}")
        nodes.append(helper.make_node("QLinearConv", [prev, x_scale, x_zero, f"cw{i}", f"cws{i}", f"cwz{i}",
                                                      f"cys{i}", f"cyz{i}"], [f"c{i + 1}"],
                                      name=f"conv{i}", pads=[1, 1, 1, 1]))
        prev = f"c{i + 1}"
    nodes.append(helper.make_node("DequantizeLinear", [prev, "cys7", "cyz7"], ["y"]))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _measured(model: onnx.ModelProto, to_format: str):
    r = convert_model(model, "", Options(13, to_format=to_format, tolerance=255))
    return r, [(e.where, e.action, e.measured.to_json() if e.measured else None, e.changes)
               for e in r.entries]


def test_the_measurement_is_the_same_computed_at_once_or_as_models(monkeypatch):
    """Both ways (QOperator -> QDQ and back), every node's measurement (bound, outputs
    that differ, outputs, engines) is the same whether the cases of one structure are
    computed at once (in one piece or case by case) or each batch is run as models
    (onnx.reference, onnxruntime)."""
    model = _chain()
    there, stacked_there = _measured(model, "qdq")
    back, stacked_back = _measured(there.model, "qoperator")
    assert len([e for e in stacked_there if e[2]]) == 28 and len([e for e in stacked_back if e[2]]) == 28
    monkeypatch.setattr(measure, "STACK_BYTES", 1)  # one case at a time
    assert _measured(model, "qdq")[1] == stacked_there
    monkeypatch.setattr(measure, "STACKED", False)
    assert _measured(model, "qdq")[1] == stacked_there
    assert _measured(there.model, "qoperator")[1] == stacked_back


def test_the_matmul_chain_is_measured_without_running_a_model(monkeypatch):
    """The QLinearMatMul nodes' QDQ forms: onnx.reference's arithmetic stacked, one
    onnxruntime session per structure; no model of a batch is run."""
    model = _chain()
    del model.graph.node[21:-1]  # the Reshape and the convolutions
    model.graph.node[-1].input[:] = ["m19", "ys19", "yz19"]
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16]))

    def ran(*args):
        raise AssertionError("a model was run")

    monkeypatch.setattr(measure, "_run_ort", ran)
    monkeypatch.setattr(measure, "_run_reference", ran)
    r, entries = _measured(model, "qdq")
    assert len([e for e in entries if e[2]]) == 20, [e.changes for e in r.entries]


# MatMul n-bits blocks the corpus does not hold (it has 32 and 128): 16 and 64, 4 and 8
# bits, with zero points (asymmetric) and without (symmetric)
NBITS_BLOCKS = [(bits, block, sym) for block in (16, 64) for bits in (4, 8) for sym in (False, True)]


@pytest.mark.parametrize("bits, block, sym", NBITS_BLOCKS)
def test_matmul_nbits_blocks_of_16_and_64_to_qdq_and_back_give_the_same_outputs(bits, block, sym, tmp_path):
    """onnxruntime's MatMul n-bits quantizer output -> blocked DequantizeLinear + MatMul at
    opset 21 -> MatMulNBits: each step proven (the weights as written read back against
    onnx.reference), and onnxruntime (ops as written) gives the source's outputs bit for bit
    at each step."""
    import corpus

    pytest.importorskip("onnx_ir")  # the quantizer imports it
    weight = {(4, True): "QInt4", (4, False): "QUInt4", (8, True): "QInt8", (8, False): "QUInt8"}[bits, sym]
    name = f"transformer_nbits{bits}_b{block}_{'sym' if sym else 'asym'}_op21"
    cfg = corpus.Config(name, "transformer", 21, "MatMulNBitsQuantizer", "QOperator", None, weight,
                        f"blocked-{block}", {"bits": bits, "block_size": block, "is_symmetric": sym})
    path = cfg(tmp_path)
    source = onnx.load(path)
    made = [n for n in source.graph.node if n.op_type == "MatMulNBits"]
    attrs = [{a.name: a.i for a in n.attribute} for n in made]
    assert len(made) == 3 and all(a["bits"] == bits and a["block_size"] == block for a in attrs)
    assert all((len(n.input) > 3 and bool(n.input[3])) == (not sym) for n in made)  # zero points
    there = convert_model(source, str(tmp_path), Options(21, to_format="qdq"))
    assert there.model is not None, [x.detail for x in there.refused]
    mid = str(tmp_path / "qdq.onnx")
    write_model(there.model, str(tmp_path), mid)
    back = convert_model(onnx.load(mid), str(tmp_path), Options(21, to_format="qoperator"))
    for r in (there, back):
        done = [e for e in r.entries if e.action == "reformatted"]
        assert len(done) == 3 and all(e.verified for e in done), [e.changes for e in r.entries]
    dqs = [n for n in there.model.graph.node if n.op_type == "DequantizeLinear"]
    assert "MatMulNBits" not in {n.op_type for n in there.model.graph.node}
    assert len(dqs) == 3 and all({a.name: a.i for a in n.attribute}["block_size"] == block for n in dqs)
    assert [n.op_type for n in back.model.graph.node].count("MatMulNBits") == 3
    out = str(tmp_path / "back.onnx")
    write_model(back.model, str(tmp_path), out)
    runs = [corpus.run(p, cfg.model, optimize=False) for p in (path, mid, out)]
    assert all(a.tobytes() == b.tobytes() for run in runs[1:] for a, b in zip(runs[0], run, strict=True))
