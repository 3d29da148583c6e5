"""A rewrite leaves the constant the rewritten node read where a graph still lists it as an
output (dropping it left the output unwritten, a model onnx.checker refuses); one no graph
names goes, as before (convert/passes/unread.py: one rule for `--weights`, `--to-int8`,
`--to-symmetric` and the format rewrites). (A constant a graph declares as an input is no
constant weight: the caller may feed it, and nothing unfolds it.) Likewise a scale or zero
point a graph lists as an input: no rewrite computes new values from it, and a refusal says so."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.run import Options, convert_model


def _model(as_output: bool, as_input: bool) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.arange(16, dtype=np.int8).reshape(4, 4), "W"),
             numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.int8(0), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["W", "s", "z"], ["wf"]),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])]
    w = helper.make_tensor_value_info("W", TensorProto.INT8, [4, 4])
    ins, outs = ins + ([w] if as_input else []), outs + ([w] if as_output else [])
    g = helper.make_graph(nodes, "g", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("as_output", [True, False])
def test_a_weight_a_graph_lists_as_an_output_is_kept(as_output):
    r = convert_model(_model(as_output, False), "", Options(13, weights="unfold"))
    names = {t.name for t in r.model.graph.initializer}
    assert ("W" in names) == as_output and "wf" in names
    onnx.checker.check_model(r.model, full_check=True)


def _pair(as_output: bool) -> onnx.ModelProto:
    """QuantizeLinear -> DequantizeLinear at uint8 zero point 128, the zero point an initializer
    the graph may also list as an output."""
    inits = [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.uint8(128), "zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])]
    outs += [helper.make_tensor_value_info("zp", TensorProto.UINT8, [])] if as_output else []
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])]
    g = helper.make_graph(nodes, "g", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("as_output", [True, False])
@pytest.mark.parametrize("how", [{"to_int8": True}, {"to_symmetric": True}])
def test_a_zero_point_a_graph_lists_as_an_output_is_kept(as_output, how):
    """--to-int8 and --to-symmetric give both nodes a new zero point; the old one goes unless
    the graph lists it as an output (both dropped it before unread.py's rule was theirs)."""
    r = convert_model(_pair(as_output), "", Options(13, **how))
    assert r.model is not None and all(n.input[2] != "zp" for n in r.model.graph.node)
    names = {t.name for t in r.model.graph.initializer}
    assert ("zp" in names) == as_output
    onnx.checker.check_model(r.model, full_check=True)


@pytest.mark.parametrize("how", [{"to_int8": True}, {"to_symmetric": True}, {"weights": "fold"}])
def test_a_scale_or_zero_point_the_caller_may_feed_is_not_computed_with(how):
    """IR.md: "When an initializer has the same name as a graph input, it specifies a default
    value for that input", which a runtime may let the caller override. A rewrite that computes
    new constants from a scale or zero point (a zero point moved, a weight folded at its scale)
    would fix the default in place of what the caller feeds: such a tensor stays as it is."""
    model = _pair(False)
    if "weights" in how:  # the QuantizeLinear reads a constant float weight
        model.graph.initializer.append(numpy_helper.from_array(np.arange(4, dtype=np.float32), "x"))
        del model.graph.input[:]
    for name in ("s", "zp"):
        plain = convert_model(model, "", Options(13, **how))
        assert plain.model is not None and plain.rewritten, name  # moved while both are constants
        fed = onnx.ModelProto()
        fed.CopyFrom(model)
        t = next(t for t in fed.graph.initializer if t.name == name)
        fed.graph.input.append(helper.make_tensor_value_info(name, t.data_type, list(t.dims)))
        r = convert_model(fed, "", Options(13, **how))
        # --to-int8 computes nothing from the scale (each zero point moves by 128 whatever it is)
        moved = "to_int8" in how and name == "s"
        assert (r.model is not None and bool(r.rewritten)) == moved, (name, [e.changes for e in r.entries])


def test_a_target_refusal_names_the_defaults_the_caller_may_feed(tmp_path):
    """`--target tensorrt-10` of a uint8 pair whose zero point is also a graph input: int8
    leaves it, TensorRT still refuses uint8, and the refusal says why no form moved it."""
    from qlin_cli.convert_pipeline import Request, Stop, run

    model = _pair(False)
    model.graph.input.append(helper.make_tensor_value_info("zp", TensorProto.UINT8, []))
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    with pytest.raises(Stop) as stop:
        run(Request(path, target="tensorrt-10", tolerance=2))
    assert "the Q/DQ input 'zp' is also a graph input" in stop.value.reason
    assert "QT202" in {f.code for f in stop.value.findings}


@pytest.mark.parametrize("how", [{"to_int8": True}, {"weights": "strip"}])
def test_an_initializer_a_training_binding_names_is_kept(how):
    """onnx.proto of TrainingInfoProto.update_binding: "The keys must appear in names of
    ModelProto.graph.initializer or TrainingInfoProto.algorithm.initializer": a zero point the
    training step updates stays, though no node of the result reads it."""
    model = _pair(False)
    algorithm = helper.make_graph([helper.make_node("Identity", ["s"], ["s_new"])], "algorithm", [],
                                  [helper.make_tensor_value_info("s_new", TensorProto.FLOAT, [])])
    info = onnx.TrainingInfoProto()
    info.algorithm.CopyFrom(algorithm)
    binding = info.update_binding.add()
    binding.key, binding.value = "zp", "s_new"
    model.training_info.append(info)
    r = convert_model(model, "", Options(13, **how))
    assert r.model is not None and r.rewritten
    assert "zp" in {t.name for t in r.model.graph.initializer}
