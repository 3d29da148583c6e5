"""graphs.changing: inside a conversion's block, what the outer ``reading`` block read of the
source is answered from it, and nothing read of a model being changed is kept."""

import onnx
from onnx import TensorProto, helper

from qlin_cli.model import graphs


def _model():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


def test_the_source_read_before_is_answered_and_the_copy_never_kept():
    source = _model()
    with graphs.reading(source):
        bodies = list(graphs.bodies(source))
        nodes = graphs.nodes_of(source.graph)
        with graphs.changing():
            # the source: what the reading block read, the same objects
            assert [b.owner for b in graphs.bodies(source)] == [b.owner for b in bodies]
            assert next(iter(graphs.bodies(source))) is bodies[0]
            assert graphs.nodes_of(source.graph) is nodes
            # a working copy: read, changed, read again: its nodes as they are now
            work = onnx.ModelProto()
            work.CopyFrom(source)
            assert [n.name for n in graphs.nodes_of(work.graph)] == ["r"]
            work.graph.node.append(helper.make_node("Relu", ["y"], ["z"], name="s"))
            assert [n.name for n in graphs.nodes_of(work.graph)] == ["r", "s"]
        assert graphs.nodes_of(source.graph) is nodes  # the block's memo is the reading's again
