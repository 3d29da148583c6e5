"""Model-level and QDQ-format rules on planted mistakes and their near misses:
topological order through subgraphs, domain imports, unused imports, types the IR
predates, Q -> DQ pairs, bias scales, DQ -> Q requantization, weights quantized at run
time."""

from __future__ import annotations

import numpy as np
import onnx
from builders import make, tensor
from family_builders import conv_qdq, dq_q_chain, qdq_chain, weight_q
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_model

F32 = np.float32


def codes(model):
    return [(d.code, d.node, d.graph) for d in check_model(model, ".")]


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# ---- QL108 topological order -----------------------------------------------------------
def _if_reading_outer(value_after: bool) -> onnx.ModelProto:
    """An If whose then-branch reads 'late', which the main graph produces before or after it."""
    branch = helper.make_graph([helper.make_node("Identity", ["late"], ["t"], name="inner")], "b", [],
                               [_vi("t", TensorProto.FLOAT, [2])])
    cond = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=branch, else_branch=branch)
    make_late = helper.make_node("Relu", ["x"], ["late"], name="producer")
    nodes = [cond, make_late] if value_after else [make_late, cond]
    graph = helper.make_graph(nodes, "g", [_vi("c", TensorProto.BOOL, []), _vi("x", TensorProto.FLOAT, [2])],
                              [_vi("y", TensorProto.FLOAT, [2])])
    return make(graph, {"": 13})


def test_outer_scope_value_produced_after_the_subgraph_owner_is_out_of_order():
    found = codes(_if_reading_outer(True))
    assert ("QL108", "branch", "main") in found
    msg = next(d.message for d in check_model(_if_reading_outer(True), ".") if d.code == "QL108")
    assert "'late' through its subgraph" in msg and "'producer'" in msg
    assert not [c for c in codes(_if_reading_outer(False)) if c[0] == "QL108"]


def test_a_training_graph_subgraph_reading_a_later_value_is_out_of_order():
    """The only subgraphs are in a training graph (none in main): still walked for QL108."""
    then = helper.make_graph([helper.make_node("Identity", ["late"], ["t"])], "then", [],
                             [_vi("t", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["r"], ["e"])], "else", [],
                              [_vi("e", TensorProto.FLOAT, [2])])
    main = helper.make_graph([helper.make_node("Relu", ["i"], ["r"])], "g",
                             [_vi("i", TensorProto.FLOAT, [2]), _vi("c", TensorProto.BOOL, [])],
                             [_vi("r", TensorProto.FLOAT, [2])])
    model = make(main, {"": 13})
    model.training_info.add().algorithm.CopyFrom(helper.make_graph(
        [helper.make_node("If", ["c"], ["o"], name="branch", then_branch=then, else_branch=other),
         helper.make_node("Relu", ["r"], ["late"], name="producer")], "alg", [],
        [_vi("o", TensorProto.FLOAT, [2])]))
    found = [c for c in codes(model) if c[0] == "QL108"]
    assert found == [("QL108", "branch", "training_info[0].algorithm")]


def test_order_inside_a_subgraph_is_checked_with_outer_values_available():
    body = helper.make_graph(
        [helper.make_node("Neg", ["mid"], ["t"], name="second"),
         helper.make_node("Relu", ["outer"], ["mid"], name="first")], "b", [],
        [_vi("t", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["outer"], name="p"),
         helper.make_node("If", ["c"], ["y"], name="branch", then_branch=body, else_branch=body)], "g",
        [_vi("c", TensorProto.BOOL, []), _vi("x", TensorProto.FLOAT, [2])],
        [_vi("y", TensorProto.FLOAT, [2])])
    found = [c for c in codes(make(graph, {"": 13})) if c[0] == "QL108"]
    assert {(n, g) for _, n, g in found} == {("second", "main/branch.then_branch"),
                                             ("second", "main/branch.else_branch")}


def test_a_constant_read_before_it_is_made_is_out_of_order_unless_an_initializer_has_its_name():
    """What a graph has before its first node is its inputs and initializers (read from the
    scope's initializer entries), never a Constant node's output."""
    read = helper.make_node("Relu", ["c"], ["y"], name="reader")
    const = helper.make_node("Constant", [], ["c"], name="maker", value=tensor("v", F32(1.0)))
    graph = helper.make_graph([read, const], "g", [], [_vi("y", TensorProto.FLOAT, [])])
    assert ("QL108", "reader", "main") in codes(make(graph, {"": 13}))
    graph.initializer.append(tensor("c", F32(2.0)))
    assert not [c for c in codes(make(graph, {"": 13})) if c[0] == "QL108"]


def test_qdq_pair_out_of_order_names_the_late_producer():
    assert ("QL108", "node0", "main") in codes(qdq_chain(reverse=True))
    assert not [c for c in codes(qdq_chain()) if c[0] == "QL108"]


# ---- QL103 domain imports, QL109 unused imports ------------------------------------------
def _function_model(fn_imports, model_imports):
    q = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q_fn")
    const = helper.make_node("Constant", [], ["s"], value=tensor("", np.float32(0.5)))
    fn = helper.make_function("local", "Q", ["x"], ["y"], [const, q],
                              [helper.make_opsetid(d, v) for d, v in fn_imports.items()])
    graph = helper.make_graph([helper.make_node("Q", ["x"], ["y"], name="call", domain="local")], "g",
                              [_vi("x", TensorProto.FLOAT, [2])], [_vi("y", TensorProto.UINT8, [2])])
    return make(graph, model_imports, functions=[fn])


def test_a_function_call_without_its_domain_import_gets_version_1():
    model = _function_model({"": 21}, {"": 21})
    d = next(d for d in check_model(model, ".") if d.code == "QL103")
    assert d.node == "call" and d.fix is not None and "version 1" in d.fix.title


def test_unused_function_import_is_reported_for_the_function():
    model = _function_model({"": 21, "com.microsoft": 1}, {"": 21, "local": 1})
    found = [c for c in codes(model) if c[0] == "QL109"]
    assert found == [("QL109", "opset_import com.microsoft", "function local.Q")]
    assert not [c for c in codes(_function_model({"": 21}, {"": 21, "local": 1})) if c[0] == "QL109"]


# ---- QL205 / QL206 -----------------------------------------------------------------------
def _int4_weights(ir: int) -> onnx.ModelProto:
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="w_dq", axis=0)
    graph = helper.make_graph([node], "g", [], [_vi("y", TensorProto.FLOAT, [4, 2])],
                              initializer=[tensor("w", np.zeros((4, 2)), "int4"),
                                           tensor("s", np.full(4, 0.1, F32))])
    model = make(graph, {"": 21})
    model.ir_version = ir
    return model


def test_int4_weights_in_an_ir_7_file_are_reported_once_with_the_version_needed():
    found = [d for d in check_model(_int4_weights(7), ".") if d.code == "QL205"]
    assert len(found) == 1 and "int4" in found[0].message and "ir_version to 10" in found[0].message
    assert found[0].fix is not None and found[0].fix.edits[0].version == 10
    assert not [d for d in check_model(_int4_weights(10), ".") if d.code in ("QL205", "QL206")]


def test_a_type_only_a_tensor_attribute_stores_is_reported_too():
    """A Constant's value= tensor is looked at (the graph has no initializer, and the body's
    attribute types say a tensor attribute is there): its int4 at IR 7 is QL205's."""
    value = helper.make_tensor("c", TensorProto.INT4, [2], [1, 2])
    nodes = [helper.make_node("Constant", [], ["c"], value=value),
             helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [], [_vi("y", TensorProto.FLOAT, [2])])
    model = make(graph, {"": 21})
    model.ir_version = 7
    found = [d for d in check_model(model, ".") if d.code == "QL205"]
    assert len(found) == 1 and "int4" in found[0].message
    model.ir_version = 10
    assert not [d for d in check_model(model, ".") if d.code == "QL205"]


def test_an_ir_below_3_names_only_the_types_newer_than_it():
    """IR 1 predates opset imports, not float: QL205 speaks of int4 alone (found by the
    byte fuzzer, where an IR of 1 crashed the rule on a float tensor)."""
    found = [d for d in check_model(_int4_weights(1), ".") if d.code == "QL205"]
    assert len(found) == 1 and "int4" in found[0].message and "float" not in found[0].message


def test_opset_newer_than_the_ir_is_an_info_the_checker_and_onnxruntime_accept():
    """Versioning.md: IR and opset versions are "distinct and largely independent"; a model
    importing opset 21 at IR 8 passes onnx.checker (full) and onnxruntime loads and runs it."""
    import onnxruntime as ort

    found = [d for d in check_model(_int4_weights(9), ".") if d.code == "QL206"]
    assert [d.severity for d in found] == ["info"] and "opset 21 came with IR 10" in found[0].message
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [_vi("x", TensorProto.FLOAT, [2])],
                          [_vi("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    out = ort.InferenceSession(m.SerializeToString()).run(None, {"x": np.array([-1, 2], F32)})[0]
    assert out.tolist() == [0, 2]
    assert [d.code for d in check_model(m, ".")] == ["QL206"]


# ---- QDQ format ----------------------------------------------------------------------------
def _per_axis_pair(dq_axis: int, dq_zp=(0, 0, 0)) -> onnx.ModelProto:
    nodes = [helper.make_node("QuantizeLinear", ["w", "s", "zq"], ["wq"], name="q", axis=1),
             helper.make_node("DequantizeLinear", ["wq", "s", "zd"], ["y"], name="dq", axis=dq_axis)]
    graph = helper.make_graph(nodes, "g", [_vi("w", TensorProto.FLOAT, [3, 3])],
                              [_vi("y", TensorProto.FLOAT, [3, 3])],
                              initializer=[tensor("s", np.full(3, 0.1, F32)),
                                           tensor("zq", np.zeros(3), "int8"),
                                           tensor("zd", np.array(dq_zp), "int8")])
    return make(graph, {"": 21})


def test_pair_with_another_axis_or_zero_point_is_reported_on_the_dequantize():
    axis = [d for d in check_model(_per_axis_pair(0), ".") if d.code == "QL601"]
    assert [d.node for d in axis] == ["dq"] and "axis 0" in axis[0].message and "axis 1" in axis[0].message
    zp = [d for d in check_model(_per_axis_pair(-1, (0, 1, 0)), ".") if d.code == "QL601"]
    assert [d.node for d in zp] == ["dq"] and "zero point" in zp[0].message
    assert not [d for d in check_model(_per_axis_pair(-1), ".") if d.code == "QL601"]  # -1 is axis 1


def test_bias_scale_off_in_one_channel_names_the_channel():
    w_scale = np.array([0.005, 0.01, 0.002, 0.004], F32)
    bias = (np.float32(0.02) * w_scale).astype(F32)
    bias[2] *= 1.01
    found = [d for d in check_model(conv_qdq(bias_scale=bias), ".") if d.code == "QL603"]
    assert [d.node for d in found] == ["node0"] and "at index 2" in found[0].message


def test_bias_scale_computed_in_double_then_stored_as_float_is_clean():
    w_scale = np.array([0.005, 0.01, 0.002, 0.004], F32)
    bias = (np.float64(np.float32(0.02)) * w_scale.astype(np.float64)).astype(F32)
    assert not [d for d in check_model(conv_qdq(bias_scale=bias), ".") if d.code == "QL603"]


def test_redundant_requantize_only_with_identical_parameters():
    assert ("QL602", "node0", "main") in codes(dq_q_chain())
    assert not [c for c in codes(dq_q_chain(q_scale=0.04)) if c[0] == "QL602"]


def test_weight_quantized_at_run_time_but_not_an_overridable_input():
    assert ("QL604", "node0", "main") in codes(weight_q())
    model = weight_q()
    model.graph.input.append(_vi("w", TensorProto.FLOAT, [4, 3]))  # an initializer that is also an input
    assert not [c for c in codes(model) if c[0] == "QL604"]


# ---- bodies without nodes ----------------------------------------------------------------
def test_an_empty_subgraph_named_like_another_does_not_take_its_scope():
    """Two If nodes named alike give their then-branches one path; the first branch has no
    node. The engine gives the view only bodies with nodes, so the second branch keeps its
    own scope and its weight quantized at run time is still found."""
    empty = helper.make_graph([], "e", [], [_vi("cond", TensorProto.BOOL, [])])
    other = helper.make_graph([helper.make_node("Identity", ["cond"], ["o"])], "o", [],
                              [_vi("o", TensorProto.BOOL, [])])
    body = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["w", "s", "z"], ["wq"], name="q"),
         helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["wd"], name="dq")],
        "b", [], [_vi("wd", TensorProto.FLOAT, [4])],
        [tensor("w", np.ones(4, F32)), tensor("s", F32(0.1)), tensor("z", np.int8(0))])
    main = helper.make_graph(
        [helper.make_node("If", ["cond"], ["a"], name="if", then_branch=empty, else_branch=other),
         helper.make_node("If", ["cond"], ["b"], name="if", then_branch=body, else_branch=body)],
        "g", [_vi("cond", TensorProto.BOOL, [])],
        [_vi("a", TensorProto.BOOL, []), _vi("b", TensorProto.FLOAT, [4])])
    found = [c for c in codes(make(main, {"": 21})) if c[0] == "QL604"]
    assert found and all(c[1] == "q" for c in found)


def test_findings_on_an_empty_main_graph_come_after_the_functions():
    """Findings sort by body in walk order; a body without nodes is not in the walk's
    order, so what is found on it comes last."""
    foo = helper.make_node("Foo", ["a"], ["b"], domain="x.y")
    fn = helper.make_function("local", "F", ["a"], ["b"], [foo], [helper.make_opsetid("", 21)])
    main = helper.make_graph([], "g", [_vi("a", TensorProto.FLOAT, [2])], [_vi("a", TensorProto.FLOAT, [2])])
    model = helper.make_model(main, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.microsoft", 1),
                                                   helper.make_opsetid("local", 1)], functions=[fn])
    model.ir_version = 10
    found = [c[0] for c in codes(model)]
    assert "QL103" in found and "QL109" in found
    assert found.index("QL103") < found.index("QL109")


# ---- qlin:ignore on nodes of subgraphs and functions ---------------------------------------
def _ignored(node, codes_: str):
    entry = node.metadata_props.add()
    entry.key, entry.value = "qlin:ignore", codes_
    return node


def _weight_q_in_a_branch(ignore: str | None, heavy: bool) -> onnx.ModelProto:
    q = helper.make_node("QuantizeLinear", ["w", "s", "z"], ["wq"], name="q")
    if ignore is not None:
        _ignored(q, ignore)
    branch = helper.make_graph(
        [q, helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["wd"], name="dq")], "b", [],
        [_vi("wd", TensorProto.FLOAT, [4])],
        [tensor("w", np.ones(4, F32)), tensor("s", F32(0.1)), tensor("z", np.int8(0))])
    main = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch, else_branch=branch)],
        "g", [_vi("c", TensorProto.BOOL, [])], [_vi("y", TensorProto.FLOAT, [4])],
        [tensor("big", np.zeros(4096, F32))] if heavy else [])  # 16 KiB: inference gets a skeleton
    return make(main, {"": 21})


def test_a_qlin_ignore_entry_inside_a_subgraph_is_honoured_whatever_copy_inference_gets():
    for heavy in (False, True):
        assert [c for c in codes(_weight_q_in_a_branch(None, heavy)) if c[0] == "QL604"]
        assert not [c for c in codes(_weight_q_in_a_branch("QL604", heavy)) if c[0] == "QL604"]


def test_a_qlin_ignore_entry_inside_a_function_is_honoured():
    def model(ignore):
        s = helper.make_node("Constant", [], ["s"], value=tensor("v", F32(0.0)))
        q = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q")
        if ignore:
            _ignored(q, "QL501")
        fn = helper.make_function("local", "F", ["x"], ["y"], [s, q], [helper.make_opsetid("", 21)])
        main = helper.make_graph([helper.make_node("F", ["x"], ["y"], domain="local", name="call")], "g",
                                 [_vi("x", TensorProto.FLOAT, [4])], [_vi("y", TensorProto.UINT8, [4])])
        return make(main, {"": 21, "local": 1}, functions=[fn])
    assert [c for c in codes(model(False)) if c[0] == "QL501"]
    assert not [c for c in codes(model(True)) if c[0] == "QL501"]
