"""Every body of a model has its own path (model/graphs.py): paths are keys for the check's
view, fix and the findings, so two subgraphs or two functions must never share one."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.check.engine import check_model
from qlin_cli.model.graphs import bodies


def _vi(name, elem=TensorProto.FLOAT, shape=(4,)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def _weight_q(tag: str):
    """A branch that quantizes its own float initializer at run time (QL604 on 'q<tag>')."""
    return helper.make_graph(
        [helper.make_node("QuantizeLinear", ["w", "s", "z"], ["wq"], name=f"q{tag}"),
         helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["wd"], name=f"dq{tag}")],
        tag, [], [_vi("wd")],
        [numpy_helper.from_array(np.ones(4, np.float32), "w"),
         numpy_helper.from_array(np.array(0.1, np.float32), "s"),
         numpy_helper.from_array(np.array(0, np.int8), "z")])


def _ifs(names):
    nodes = [helper.make_node("If", ["c"], [f"y{i}"], name=n, then_branch=_weight_q(f"T{i}"),
                              else_branch=_weight_q(f"E{i}")) for i, n in enumerate(names)]
    g = helper.make_graph(nodes, "g", [_vi("c", TensorProto.BOOL, ())],
                          [_vi(f"y{i}") for i in range(len(names))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def test_nodes_sharing_a_name_give_their_subgraphs_distinct_paths():
    """The first of a name keeps it, later ones add their index, and a label another node
    already has (a node named 'if#1', one named like an unnamed node's '#2') is not reused."""
    paths = [b.path for b in bodies(_ifs(["if", "if", "", "#2", "if#1"]))]
    assert len(paths) == len(set(paths)) == 11
    owners = {p.split("/")[1].rsplit(".", 1)[0] for p in paths[1:]}
    assert owners == {"if", "if#1#1", "#2", "#2#3", "if#1"}


def test_every_subgraph_of_nodes_sharing_a_name_is_checked():
    found = sorted((d.node, d.graph) for d in check_model(_ifs(["if", "if"]), ".") if d.code == "QL604")
    assert [n for n, _ in found] == ["qE0", "qE1", "qT0", "qT1"]
    assert len({g for _, g in found}) == 4


def test_overloads_of_a_function_are_bodies_of_their_own():
    def fn(overload, scale):
        body = [helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(np.float32(scale))),
                helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q")]
        f = helper.make_function("local", "F", ["x"], ["y"], body, [helper.make_opsetid("", 21)])
        f.overload = overload
        return f
    calls = [helper.make_node("F", ["x"], [f"y{o}"], domain="local") for o in ("", "zero")]
    for node, o in zip(calls, ("", "zero"), strict=True):
        node.overload = o
    outs = [helper.make_tensor_value_info(n, TensorProto.UINT8, [4]) for n in ("y", "yzero")]
    g = helper.make_graph(calls, "g", [_vi("x")], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
                          functions=[fn("", 0.5), fn("zero", 0.0)])
    m.ir_version = 10
    assert [b.path for b in bodies(m)] == ["main", "function local.F", "function local.F:zero"]
    zero = [d.graph for d in check_model(m, ".") if d.code == "QL501"]  # a zero scale
    assert zero == ["function local.F:zero"]
