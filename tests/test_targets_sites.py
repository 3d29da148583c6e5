"""Nodes whose sites are equal share one ``NodeSite`` (predict._body_sites), and each still
gets its own findings at its own place: in `qlin check --target`, in the plan's blocking
findings, for nodes of the quantization families and for ops of no family qlin knows."""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from paths import MODELS
from test_targets_refusal import uint4_blocked

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import predict


def _others() -> onnx.ModelProto:
    """Two equal nodes of a domain onnxruntime has no operators in, and two Relu nodes that
    differ only in their input type (int16: a type the schema allows and no kernel takes)."""
    nodes = [h.make_node("Relu", ["a"], ["c"], name="relu_f"),
             h.make_node("Relu", ["i"], ["k"], name="relu_i16"),
             h.make_node("Foo", ["c"], ["d"], name="foo0", domain="org.example"),
             h.make_node("Foo", ["c"], ["e"], name="foo1", domain="org.example")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("a", T.FLOAT, [2]),
                                  h.make_tensor_value_info("i", T.INT16, [2])],
                     [h.make_tensor_value_info(n, t, [2]) for n, t in (("k", T.INT16), ("d", T.FLOAT),
                                                                       ("e", T.FLOAT))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("org.example", 1)])
    m.ir_version = 10
    return m


def test_equal_nodes_of_no_family_each_get_their_finding_and_types_keep_sites_apart():
    found = [(f.code, f.node) for f in predict.findings(_others(), "", ["onnxruntime"])]
    assert found == [("QT202", "relu_i16"), ("QT104", "foo0"), ("QT104", "foo1")]
    sites = list(predict.sites(_others(), ""))
    assert len(sites) == 4 and sites[2] is sites[3] and sites[0] is not sites[1]


def test_the_int16_relu_is_refused_by_onnxruntime_itself():
    ort = pytest.importorskip("onnxruntime")
    m = _others()
    del m.graph.node[2:]
    del m.graph.output[1:]
    m.opset_import.pop()
    with pytest.raises(Exception, match="Relu"):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def _twice(m: onnx.ModelProto) -> onnx.ModelProto:
    """The model's graph twice over, the second copy's names suffixed "_2" (equal sites)."""
    g = m.graph
    copy = onnx.ModelProto()
    copy.CopyFrom(m)
    names = {n for node in g.node for n in [*node.input, *node.output]} | {t.name for t in g.initializer}
    rename = {n: f"{n}_2" for n in names}
    for node in g.node:
        new = copy.graph.node.add()
        new.CopyFrom(node)
        new.name = f"{node.name}_2"
        new.input[:] = [rename[n] for n in node.input]
        new.output[:] = [rename[n] for n in node.output]
    for t in g.initializer:
        new = numpy_helper.from_array(numpy_helper.to_array(t), rename[t.name]) if t.data_type not in (
            T.UINT4, T.INT4) else h.make_tensor(rename[t.name], t.data_type, t.dims, _codes(t))
        copy.graph.initializer.append(new)
    for vi in [*g.input, *g.output]:
        new = (copy.graph.input if vi in g.input else copy.graph.output).add()
        new.CopyFrom(vi)
        new.name = rename[vi.name]
    return copy


def _codes(t: onnx.TensorProto) -> list[int]:
    return np.asarray(numpy_helper.to_array(t), dtype=np.int64).ravel().tolist()


def test_equal_quantization_nodes_each_get_their_findings_and_blocking_place():
    m = _twice(uint4_blocked())
    onnx.checker.check_model(m, full_check=True)
    found = [f for f in predict.findings(m, ".", ["tensorrt-11"]) if f.node]
    once = [f for f in predict.findings(uint4_blocked(), ".", ["tensorrt-11"]) if f.node]
    assert [(f.code, f.node) for f in found] == (
        [(f.code, f.node) for f in once] + [(f.code, f"{f.node}_2") for f in once])
    plan = predict.plan(m, ".", "tensorrt-11")
    assert plan.choice is None
    blocked = [(p.code, p.node) for p in plan.blocking]
    assert blocked == [(f.code, f.node) for f in found if f.severity == "error"]
    a = analyze(m, ".")
    sites = list(predict.sites_in(a))
    keys = a.memo("targets.site_classes", dict)
    # dq, mm, dq_2, mm_2: the copies' scales are other initializers of equal content, so the
    # DequantizeLinear sites are two, of one class; the MatMul sites (keyed by types) are one
    assert sites[0] is not sites[2] and keys[id(sites[0])] == keys[id(sites[2])]
    assert sites[1] is sites[3]


def _attribute_variants() -> onnx.ModelProto:
    """Ops of no family qlin knows that differ in their attributes only, or in the output
    type an attribute sets."""
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    nodes = [h.make_node("Conv", ["x", "w"], ["c1"], name="conv_a", pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["x", "w"], ["c2"], name="conv_b", auto_pad="SAME_UPPER"),
             h.make_node("Cast", ["c1"], ["k1"], name="cast_i8", to=T.INT8),
             h.make_node("Cast", ["c1"], ["k2"], name="cast_f16", to=T.FLOAT16),
             h.make_node("Cast", ["c2"], ["k3"], name="cast_bf16", to=T.BFLOAT16)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 8, 8])],
                     [h.make_tensor_value_info(n, t, None) for n, t in (("k1", T.INT8), ("k2", T.FLOAT16),
                                                                        ("k3", T.BFLOAT16))], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def test_a_shared_site_of_an_op_of_no_family_answers_as_each_nodes_own_would():
    """The key of an op of no family leaves its attributes out: every target's findings on
    each node's own site equal those on the site it shares."""
    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import base, registry

    a = analyze(_attribute_variants(), "")
    placed = predict._placed(a, predict.model_info(a.model, a))
    body = a.bodies[0]
    shared = {id(s) for s, _ in placed}
    assert len(shared) < len(placed)  # the two Conv share one site
    for t in registry.all_targets():
        for site, loc in placed:
            own = base.NodeSite(facts=a.any_facts(body, loc.index), in_main_graph=True, opsets=site.opsets)
            assert t.findings_for(own) == t.findings_for(site), (t.name, loc.name)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))[::7])
def test_model_info_from_an_analysis_reads_the_initializer_types_as_the_graph_holds_them(path):
    """The analysis' census of the initializers gives model_info their types: the same set
    as reading every initializer of the graph again."""
    model = onnx.load(path, load_external_data=False)
    a = analyze(model, os.path.dirname(path))
    assert predict.model_info(model, a) == predict.model_info(model)
    assert a.initializer_types == {t.data_type for t in model.graph.initializer}
