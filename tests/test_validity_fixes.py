"""The safe fixes of the validity work: nodes sorted topologically (QL108), a repeated opset
import kept once (QL012); each applied by `qlin check --fix`, the result checked again and run
in onnxruntime against the original."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.model.order import topological_order


def _vi(name, elem=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def if_with_reversed_branch() -> onnx.ModelProto:
    """The then-branch quantizes and dequantizes x, its two nodes written in reverse."""
    then = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["t_q", "s", "z"], ["t_out"], name="t_dq"),
         helper.make_node("QuantizeLinear", ["x", "s", "z"], ["t_q"], name="t_q")],
        "then", [], [_vi("t_out")])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e_out"], name="e_id")], "else", [],
                              [_vi("e_out")])
    nodes = [helper.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other)]
    g = helper.make_graph(nodes, "g", [_vi("x"), _vi("c", TensorProto.BOOL, ())], [_vi("y")],
                          [numpy_helper.from_array(np.float32(0.1), "s"),
                           numpy_helper.from_array(np.uint8(7), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def _run(model, feeds):
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def test_a_subgraph_is_sorted_and_computes_the_same(tmp_path):
    model = if_with_reversed_branch()
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    found = [d for d in check_file(path).diagnostics if d.code == "QL108"]
    assert found and found[0].graph == "main/if.then_branch" and found[0].fix is not None
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--fix", path])
    assert r.exit_code == 0 and "1 fixed" in r.output, r.output
    fixed = onnx.load(path)
    assert [n.name for n in _then(fixed).node] == ["t_q", "t_dq"]
    assert check_file(path).diagnostics == []
    onnx.checker.check_model(path, full_check=True)
    # the original cannot be loaded: compare with the branch put in order by hand
    want = if_with_reversed_branch()
    _then(want).node.reverse()
    feeds = {"x": np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32), "c": np.array(True)}
    assert np.array_equal(_run(fixed, feeds), _run(want, feeds))


def _then(model) -> onnx.GraphProto:
    return next(a.g for a in model.graph.node[0].attribute if a.name == "then_branch")


def test_the_order_keeps_sorted_nodes_and_refuses_a_cycle():
    io = [(("a",), ("b",)), (("x",), ("a",)), (("b",), ("c",))]
    assert topological_order(io) == [1, 0, 2]
    assert topological_order([(("x",), ("a",)), (("a",), ("b",))]) == [0, 1]
    assert topological_order([(("b",), ("a",)), (("a",), ("b",))]) is None


def test_a_cycle_gets_no_fix(tmp_path):
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="r1"),
             helper.make_node("Relu", ["a"], ["b"], name="r2"),
             helper.make_node("Identity", ["a"], ["y"], name="out")]
    g = helper.make_graph(nodes, "g", [_vi("x")], [_vi("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    path = str(tmp_path / "c.onnx")
    onnx.save(m, path)
    found = [d for d in check_file(path).diagnostics if d.code == "QL108"]
    assert found and all(d.fix is None for d in found)


def test_a_repeated_opset_import_is_kept_once(tmp_path):
    model = if_with_reversed_branch()
    _then(model).node.reverse()  # sorted: only the import is wrong
    model.opset_import.append(helper.make_opsetid("ai.onnx", 21))
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    assert [d.code for d in check_file(path).diagnostics] == ["QL012"]
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--fix", path])
    assert r.exit_code == 0, r.output
    assert [(o.domain, o.version) for o in onnx.load(path).opset_import] == [("", 21)]
    feeds = {"x": np.random.default_rng(1).normal(size=(2, 3)).astype(np.float32), "c": np.array(True)}
    model.opset_import.pop()
    assert np.array_equal(_run(model, feeds), _run(onnx.load(path), feeds))
