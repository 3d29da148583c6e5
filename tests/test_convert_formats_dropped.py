"""`qlin convert --to-format qdq / qoperator`: a source initializer that only the rewritten
nodes read, and that no node of the result reads, is dropped from the result
(convert/passes/unread.py ``drop_unread``; apply.py removes it). One that nothing read in
the source stays, and so does one that another node (in any graph), a graph output or a graph
input still names.

Each conversion is made twice, with the drop and without it (format.py's ``drop_unread`` made a no-op:
the result as it was before the drop existed), and held to: no initializer of the result
without a reader but those the source had, nothing dropped that a node of the result without
the drop reads, onnx.checker's full check, and onnxruntime's outputs of both results the same
bytes on random inputs.
"""

from __future__ import annotations

import os

import corpus
import numpy as np
import onnx
import pytest
from format_models import walked_readers
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats.nbits import pack
from qlin_cli.convert.passes import format as format_pass
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.model.walk import graph_paths

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
PLANTED = "planted_never_read"  # an initializer added to every source, which no node reads
# MatMulNBits (and GatherBlockQuantized) -> QDQ: every quantizer output of the corpus; 2-bit
# codes are a DequantizeLinear type from opset 25
NBITS = sorted(c.name for c in corpus.CONFIGS if "_nbits" in c.name and "_qdq_" not in c.name
               and c.name not in corpus.KNOWN_FAILURES)
# blocked DequantizeLinear + MatMul -> MatMulNBits (the quantizer's outputs whose weights reach a
# MatMul: the channel_sym one transposes them first, and stays QDQ); QDQ Conv / MatMul groups ->
# QOperator (the bias' DequantizeLinear folds into QLinearConv, which reads the int32 bias but not
# its scale and zero point)
BACK = ["transformer_nbits4_qdq_asym_b128_op21", "transformer_nbits4_qdq_asym_b32_op17",
        "transformer_nbits4_qdq_channel_asym_op21", "transformer_nbits4_qdq_sym_b32_op21",
        "transformer_qdq_u8s4_blocked32_op21", "cnn_qdq_u8s8_tensor_op13", "mixed_qdq_u8s8_tensor_op13"]
# QOperator -> QDQ: every source input is read again by the DequantizeLinear / QuantizeLinear
# nodes the rewrite writes, so nothing is dropped
QOPERATOR = ["cnn_qop_u8s8_tensor_op13", "transformer_qop_u8s8_tensor_op13", "cnn_dyn_u8_op11",
             "mixed_qop_u8s8_tensor_op13"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("dropped"), NBITS + BACK + QOPERATOR)


def _planted(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with one more initializer, which nothing reads."""
    model.graph.initializer.append(numpy_helper.from_array(np.arange(4, dtype=np.float32), PLANTED))
    return model


def _unread(model: onnx.ModelProto) -> set:
    """(graph path, name) of every initializer no node of any graph or function reads and no
    graph names as an output or an input (the default of an input the caller may feed)."""
    readers = walked_readers(model)
    named = {v.name for _, g in graph_paths(model) for v in (*g.output, *g.input)}
    return {(path, t.name) for path, g in graph_paths(model) for t in g.initializer
            if not readers.get(t.name) and t.name not in named}


def _initializers(model: onnx.ModelProto) -> set:
    return {(path, t.name) for path, g in graph_paths(model) for t in g.initializer}


def _both(source: onnx.ModelProto, base: str, opts: Options, monkeypatch) -> tuple:
    """(the result without the drop, the result) of converting ``source``."""
    with monkeypatch.context() as m:
        m.setattr(format_pass, "drop_unread", lambda ctx, rewrites: None)
        kept = convert_model(source, base, opts)
    r = convert_model(source, base, opts)
    assert kept.model is not None and r.model is not None, [x.detail for x in r.refused]
    return kept, r


def _run(model: onnx.ModelProto, feeds: dict) -> list:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _held_to_the_rule(source: onnx.ModelProto, kept, r, feeds: list) -> set:
    """The names the drop removed (those the result without it had and nobody read), after
    holding the result to the rule, onnx.checker and onnxruntime."""
    gone = _initializers(kept.model) - _initializers(r.model)
    assert _unread(r.model) == _unread(source)  # (the planted one among them: kept)
    assert gone == _unread(kept.model) - _unread(source)
    onnx.checker.check_model(r.model, full_check=True)
    for f in feeds:
        want, got = _run(kept.model, f), _run(r.model, f)
        assert [(a.dtype, a.shape, a.tobytes()) for a in want] == [(a.dtype, a.shape, a.tobytes())
                                                                   for a in got]
    return {name for _, name in gone}


def _corpus_case(name: str, models: dict, fmt: str, opset: int, monkeypatch, tolerance: int = 0) -> tuple:
    path = models[name]
    source = _planted(onnx.load(path))
    kept, r = _both(source, os.path.dirname(path), Options(opset, to_format=fmt, tolerance=tolerance),
                    monkeypatch)
    model = corpus.BY_NAME[name].model
    feeds = [corpus.sample_feeds(model, seed) for seed in (1, 2, 3)]
    return source, kept, r, _held_to_the_rule(source, kept, r, feeds)


@pytest.mark.parametrize("name", NBITS)
def test_matmul_nbits_to_qdq_drops_the_packed_weights(name, models, monkeypatch):
    """The packed B, scales and zero points of every MatMulNBits go: the DequantizeLinear reads
    copies of its own ([K, N] codes, transposed scales and zero points). The result is smaller
    by at least their bytes. (A GatherBlockQuantized's uint4 table is read where it is: kept.)"""
    source, kept, r, gone = _corpus_case(name, models, "qdq", 25 if "nbits2" in name else 21, monkeypatch)
    packed = {x for n in source.graph.node if n.op_type == "MatMulNBits" for x in n.input[1:4] if x}
    assert len(packed) >= 6 and packed <= gone
    tables = {n.input[0] for n in source.graph.node if n.op_type == "GatherBlockQuantized"}
    assert gone == packed and tables.isdisjoint(gone), gone
    weights = sum(t.ByteSize() for t in source.graph.initializer if t.name in packed)
    assert r.model.ByteSize() <= kept.model.ByteSize() - weights


@pytest.mark.parametrize("name", BACK)
def test_qdq_to_qoperator_drops_what_the_fused_nodes_no_longer_read(name, models, monkeypatch):
    """Blocked DequantizeLinear + MatMul -> MatMulNBits: the int4 / uint4 codes, scales and
    zero points go (the MatMulNBits reads its packed copies); a QDQ Conv -> QLinearConv: the
    bias' scale and zero point go (QLinearConv reads the int32 bias alone)."""
    _, _, r, gone = _corpus_case(name, models, "qoperator", 21, monkeypatch, tolerance=255)
    assert gone and any(e.action == "reformatted" for e in r.entries)
    if "cnn" in name or "mixed" in name:
        assert all(x.endswith(("_b_quantized_scale", "_b_quantized_zero_point")) for x in gone), gone


@pytest.mark.parametrize("name", QOPERATOR)
def test_qoperator_to_qdq_leaves_nothing_unread(name, models, monkeypatch):
    """QLinearConv, QLinearMatMul, the com.microsoft QLinear ops and the dynamic chains: the
    QDQ form reads every constant the node read, so the rule drops nothing."""
    _, _, r, gone = _corpus_case(name, models, "qdq", 21, monkeypatch, tolerance=255)
    assert gone == set() and r.count("reformatted")


def _nbits_node(rng, name: str, y: str) -> tuple[onnx.NodeProto, list]:
    """A 4-bit MatMulNBits of A [K 32, N 8, blocks of 16, zero points] reading B, scales, zp,
    and those initializers."""
    k, n, bs = 32, 8, 16
    codes = rng.integers(0, 16, (n, k)).astype(np.uint8)
    zero = rng.integers(0, 16, (n, k // bs)).astype(np.uint8)
    inits = [numpy_helper.from_array(pack(codes, 4, k // 2).reshape(n, k // bs, bs // 2), "B"),
             numpy_helper.from_array(rng.uniform(0.01, 0.2, n * k // bs).astype(np.float32), "scales"),
             numpy_helper.from_array(pack(zero, 4, 1), "zp")]
    node = helper.make_node("MatMulNBits", ["A", "B", "scales", "zp"], [y], name=name, domain=MS, K=k, N=n,
                            bits=4, block_size=bs)
    return node, inits


def _model(nodes, inits, inputs, outputs) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)],
                             ir_version=10)


A = helper.make_tensor_value_info("A", TensorProto.FLOAT, [3, 32])


def _still_read(how: str) -> tuple[onnx.ModelProto, str]:
    """A MatMulNBits whose scales (or zero points, or B) something else still names, ``how``:
    another node, a node of an If branch (a value of the graph around it), a graph output, a
    graph input the initializer gives a default to."""
    rng = np.random.default_rng(3)
    node, inits = _nbits_node(rng, "mm", "Y")
    nodes = [node]
    outputs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 8])]
    inputs = [A]
    if how == "node":
        nodes.append(helper.make_node("Identity", ["scales"], ["S"]))
        outputs.append(helper.make_tensor_value_info("S", TensorProto.FLOAT, [16]))
        return _model(nodes, inits, inputs, outputs), "scales"
    if how == "branch":
        out = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [16])
        then = helper.make_graph([helper.make_node("Identity", ["scales"], ["Z"])], "then", [], [out])
        other = helper.make_graph([helper.make_node("Neg", ["scales"], ["Z"])], "else", [], [out])
        nodes.append(helper.make_node("If", ["c"], ["S"], then_branch=then, else_branch=other))
        inputs.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
        outputs.append(helper.make_tensor_value_info("S", TensorProto.FLOAT, [16]))
        return _model(nodes, inits, inputs, outputs), "scales"
    if how == "output":
        outputs.append(helper.make_tensor_value_info("zp", TensorProto.UINT8, [8, 1]))
        return _model(nodes, inits, inputs, outputs), "zp"
    inputs.append(helper.make_tensor_value_info("B", TensorProto.UINT8, [8, 2, 8]))
    return _model(nodes, inits, inputs, outputs), "B"


def _feeds(model: onnx.ModelProto) -> list:
    rng = np.random.default_rng(7)
    names = {i.name for i in model.graph.input}
    out = []
    for c in (True, False):
        f = {"A": rng.standard_normal((3, 32)).astype(np.float32)}
        if "c" in names:
            f["c"] = np.array(c)
        out.append(f)
    return out


@pytest.mark.parametrize("how", ["node", "branch", "output", "input"])
def test_an_initializer_something_else_still_names_stays(how, tmp_path, monkeypatch):
    """B, scales and zero points go but the one another node (in the graph or a branch of an If),
    a graph output or a graph input still names."""
    source, name = _still_read(how)
    kept, r = _both(_planted(source), str(tmp_path), Options(21, to_format="qdq"), monkeypatch)
    gone = _held_to_the_rule(source, kept, r, _feeds(source))
    assert gone == {"B", "scales", "zp"} - {name}
    assert name in {t.name for t in r.model.graph.initializer}


def test_a_branch_rewritten_drops_the_weights_of_the_graph_around_it(tmp_path, monkeypatch):
    """MatMulNBits nodes inside both branches of an If, reading the main graph's initializers
    (the main graph has no rewritten node of its own): the weights go from the main graph, and
    the branches hold the new ones; where one branch keeps a reader (an Identity), it stays."""
    rng = np.random.default_rng(4)
    for keep in (False, True):
        node, inits = _nbits_node(rng, "mm_then", "Z")
        twin = onnx.NodeProto()
        twin.CopyFrom(node)
        twin.name = "mm_else"
        out = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [3, 8])
        other = [twin, helper.make_node("Identity", ["zp"], ["unused"])] if keep else [twin]
        branches = {"then_branch": helper.make_graph([node], "then", [], [out]),
                    "else_branch": helper.make_graph(other, "else", [], [out])}
        source = _model([helper.make_node("If", ["c"], ["Y"], **branches)], inits,
                        [A, helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 8])])
        kept, r = _both(_planted(source), str(tmp_path), Options(21, to_format="qdq"), monkeypatch)
        assert r.count("reformatted") == 2
        gone = _held_to_the_rule(source, kept, r, _feeds(source))
        assert gone == ({"B", "scales"} if keep else {"B", "scales", "zp"})
        main = {t.name for t in r.model.graph.initializer}
        assert PLANTED in main and ("zp" in main) == keep


def test_generated_gather_block_tables_both_ways(tmp_path, monkeypatch):
    """The generated GatherBlockQuantized tables of tests/test_convert_gather_block.py to
    DequantizeLinear + Gather: the uint8 tables of 4-bit codes (and their zero points) go, which
    the DequantizeLinear reads unpacked into uint4; int4 / uint4 / 8-bit tables, read where they
    are, stay. Back: the zero point of 128 written out for a uint8 table without one goes (the
    GatherBlockQuantized leaves it to its default)."""
    from test_convert_gather_block import GENERATED, _gbq_model
    from test_convert_gather_block import _feeds as gather_feeds

    source = _planted(_gbq_model(GENERATED))
    onnx.save(source, str(tmp_path / "src.onnx"))
    feeds = [gather_feeds(str(tmp_path / "src.onnx"), seed) for seed in (1, 2)]
    kept, r = _both(source, str(tmp_path), Options(21, to_format="qdq"), monkeypatch)
    unpacked = {(name, zp) for name, (elem, _, attrs, zp, _) in GENERATED.items()
                if elem == TensorProto.UINT8 and attrs.get("bits", 4) == 4}
    assert _held_to_the_rule(source, kept, r, feeds) == (
        {f"{name}_data" for name, _ in unpacked} | {f"{name}_zp" for name, zp in unpacked if zp})
    back_kept, back = _both(r.model, str(tmp_path), Options(21, to_format="qoperator"), monkeypatch)
    assert back.count("reformatted") == len(GENERATED)
    assert _held_to_the_rule(r.model, back_kept, back, feeds) == {
        f"{name}_table_zero_point" for name, (elem, _, attrs, zp, _) in GENERATED.items()
        if elem == TensorProto.UINT8 and attrs.get("bits") == 8 and not zp}
