"""sites.readers_anywhere counts a model's readers from its analysed bodies (the names the
analysis read once) as a walk of its nodes counts them (format_models.walked_readers): on
every fixture model (functions and subgraphs among them) and on a function called from a
subgraph."""

from __future__ import annotations

import glob
import os

import onnx
import pytest
from format_models import walked_readers
from onnx import TensorProto, helper
from paths import FIXTURES

from qlin_cli.convert.sites import readers_anywhere
from qlin_cli.model.analysis import analyze

MODELS = sorted(glob.glob(os.path.join(FIXTURES, "models", "**", "*.onnx"), recursive=True))


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_counted_from_the_bodies_as_from_the_nodes(path):
    model = onnx.load(path, load_external_data=False)
    try:
        a = analyze(model, os.path.dirname(path))
    except Exception:  # (a model the analysis refuses: the conversion reads no bodies of it)
        pytest.skip("not analysed")
    assert readers_anywhere(a.bodies) == walked_readers(model)


def test_a_function_read_from_a_branch_is_counted():
    fn = helper.make_function("local", "twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    branch = helper.make_graph([helper.make_node("twice", ["x"], ["y"], domain="local")], "then", [],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "else", [],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])])
    node = helper.make_node("If", ["c"], ["out"], then_branch=branch, else_branch=other)
    g = helper.make_graph([node], "g",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])])
    model = helper.make_model(g, functions=[fn], opset_imports=[helper.make_opsetid("", 17),
                                                                helper.make_opsetid("local", 1)])
    counted = readers_anywhere(analyze(model, "").bodies)
    assert counted == walked_readers(model) and counted["x"] == 2 and counted["a"] == 2
