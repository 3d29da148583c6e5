"""One analysis per model: how many shape inferences each command makes, and that every
command sees the same types (model/analysis.py)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.convert.passes.read import ReadModel
from qlin_cli.convert.run import Options
from qlin_cli.convert.state import Context
from qlin_cli.model import infer
from qlin_cli.model.analysis import analyze, own_errors, vendor_twins
from qlin_cli.model.load import load_model


def vendor_chain() -> onnx.ModelProto:
    """x -> com.microsoft Q -> com.microsoft DQ -> Relu -> ai.onnx Q: onnx inference alone
    types nothing after the vendor Q."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="mq", domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="mdq", domain="com.microsoft"),
        helper.make_node("Relu", ["d"], ["r"], name="relu"),
        helper.make_node("QuantizeLinear", ["r", "s", "z"], ["y"], name="q"),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, [2, 3])],
                          [helper.make_tensor("s", TensorProto.FLOAT, [], [0.05]),
                           helper.make_tensor("z", TensorProto.INT8, [], [0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    return m


def one_element_scales() -> onnx.ModelProto:
    """Opset 23, QuantizeLinear on a value typed only by inference (Relu's output), with
    shape-[1] scale and zero point: QL409 and its fix."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["y"], name="q")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 4, 4])],
                          [helper.make_tensor("s", TensorProto.FLOAT, [1], [0.1]),
                           helper.make_tensor("z", TensorProto.UINT8, [1], [128])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 11
    return m


@pytest.fixture
def count(monkeypatch):
    """How many times onnx shape inference runs (every run goes through infer._infer)."""
    calls = []
    real = infer._infer

    def counted(light, strict=False):
        calls.append(strict)
        return real(light, strict)

    monkeypatch.setattr(infer, "_infer", counted)
    return calls


def save(tmp_path, model, name="m.onnx") -> str:
    path = str(tmp_path / name)
    onnx.save(model, path)
    return path


def qlin(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_check_infers_once(tmp_path, count):
    path = save(tmp_path, vendor_chain())
    r = qlin("check", "--jobs", "1", path)
    assert r.exit_code == 0, r.output
    assert len(count) == 1


def test_check_with_targets_infers_once(tmp_path, count):
    path = save(tmp_path, vendor_chain())
    r = qlin("check", "--jobs", "1", "--target", "onnxruntime,openvino", path)
    assert r.exit_code in (0, 1), r.output
    assert len(count) == 1


def test_inspect_infers_once(tmp_path, count):
    path = save(tmp_path, vendor_chain())
    r = qlin("inspect", path)
    assert r.exit_code == 0, r.output
    assert len(count) == 1


def test_convert_infers_once_and_once_more_for_its_result(tmp_path, count):
    """The second inference is convert's look at its own result (what the measured runtimes
    compute differently), made when it rewrote a node or moved one to another version of
    its op (another kind to a runtime); a conversion that moved only the IR version, or
    opset imports no op's version follows, is held to the runtimes by those (issue 35), and
    one that changes nothing has none."""
    path = save(tmp_path, vendor_chain())
    r = qlin("convert", path, "--to-domain", "com.microsoft", "-o", tmp_path / "ms.onnx")
    assert r.exit_code == 0, r.output
    assert len(count) == 2
    count.clear()
    r = qlin("convert", path, "--to-opset", "23", "-o", tmp_path / "out.onnx")
    assert r.exit_code == 0, r.output
    # the Q/DQ nodes move to version 23: their runtimes' view is the source's sites moved
    # (convert_moved.py), no second inference
    assert len(count) == 1
    count.clear()
    same = qlin("convert", tmp_path / "out.onnx", "--to-opset", "23", "-o", tmp_path / "again.onnx")
    assert same.exit_code == 0, same.output
    assert len(count) == 1


def test_convert_to_a_target_infers_twice(tmp_path, count):
    """The second inference is convert's look at its own result."""
    path = save(tmp_path, vendor_chain())
    r = qlin("convert", path, "--target", "tensorrt-10", "-o", tmp_path / "out.onnx")
    assert r.exit_code in (0, 1), r.output
    assert "no conversion" in r.output or os.path.exists(tmp_path / "out.onnx"), r.output
    assert len(count) <= 2


def test_fix_infers_at_most_twice_and_fixes_an_inferred_node(tmp_path, count):
    """Before the analysis, --fix read the nodes without inference's types: on this opset-23
    model it offered QL409's fix and then skipped it ('the node's input types are unknown')."""
    path = save(tmp_path, one_element_scales())
    before = check_file(path, ["QL"])  # QL409 is off by default: every rule selected
    assert [d.code for d in before.diagnostics] == ["QL409"]
    count.clear()
    r = qlin("check", "--jobs", "1", "--fix", "--select", "QL409", path)
    assert r.exit_code == 0, r.output
    assert "not fixed" not in r.output, r.output
    assert len(count) <= 2
    fixed = onnx.load(path)
    dims = {t.name: list(t.dims) for t in fixed.graph.initializer}
    assert dims == {"s": [], "z": []}
    assert check_file(path, ["QL"]).diagnostics == []
    # the fixed model computes what the original did, in a runtime nobody here wrote
    x = np.random.default_rng(0).normal(size=(1, 3, 4, 4)).astype(np.float32)
    want = ort.InferenceSession(one_element_scales().SerializeToString()).run(None, {"x": x})[0]
    got = ort.InferenceSession(path).run(None, {"x": x})[0]
    assert np.array_equal(want, got)


def _types_by_value(scopes) -> dict:
    return {name: scope.find_type(name) for scope in scopes for name in ("q", "d", "r", "y")}


def test_every_command_sees_the_same_types():
    """check, targets and inspect read one Analysis; convert analyses its working copy
    with that analysis' types. Both see the values after the vendor Q typed."""
    model = vendor_chain()
    a = analyze(model, ".")
    seen = _types_by_value([a.bodies[0].scope])
    assert seen == {"q": (TensorProto.INT8, (2, 3)), "d": (TensorProto.FLOAT, (2, 3)),
                    "r": (TensorProto.FLOAT, (2, 3)), "y": (TensorProto.INT8, (2, 3))}
    work = onnx.ModelProto()
    work.CopyFrom(model)
    ctx = Context(work, ".", Options(23), model.ir_version, {}, types=a.inferred)
    ReadModel()(ctx)
    assert _types_by_value([ctx.sites[0].scope]) == seen
    # facts, as the rules and targets read them
    relu = a.any_facts(a.bodies[0], 2)
    assert relu.in_types == ("float",) and relu.out_types == ("float",)


def test_vendor_twins_are_put_back():
    model = vendor_chain()
    before = model.SerializeToString()
    with vendor_twins(model):
        assert [n.domain for n in model.graph.node] == ["", "", "", ""]
    assert model.SerializeToString() == before


def test_strict_inference_errors_are_kept():
    """A model strict inference rejects: its errors are in the analysis, each on its node,
    and the types still come (from a lenient second run)."""
    nodes = [helper.make_node("Add", ["x", "w"], ["a"], name="bad_add"),
             helper.make_node("Relu", ["x"], ["r"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
                          [helper.make_tensor("w", TensorProto.INT64, [1], [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m, full_check=True)
    a = analyze(m, ".")
    assert len(a.inference_errors) == 1 and "node name: bad_add" in a.inference_errors[0]
    assert a.bodies[0].scope.find_type("r") == (TensorProto.FLOAT, (2,))


def test_clean_models_have_no_inference_errors():
    for name in os.listdir(os.path.join(os.path.dirname(__file__), "..", "fixtures", "models", "clean")):
        path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models", "clean", name)
        model = load_model(path)
        assert analyze(model, os.path.dirname(path)).inference_errors == (), name


def test_errors_that_are_not_the_models():
    errors = ("(op_type:QuantizeLinear, node name: \x1fqlin-twin\x1fq): bad",
              "(op_type:Add): [TypeInferenceError] Input 0 expected to have type but instead is null",
              "(op_type:Reshape): Data size mismatch. Tensor: s",
              "(op_type:MatMul, node name: mm): Incompatible dimensions")
    assert own_errors(errors, skeleton=True) == errors[3:]
    assert own_errors(errors, skeleton=False) == errors[2:]


def test_a_vendor_dequantize_whose_twin_cannot_take_its_scale_is_typed_by_its_own_schema():
    """com.microsoft DequantizeLinear takes a float16 scale and gives float16
    (ContribOperators.md: T2 float or float16, y: T2); its ai.onnx twin at opset 13 takes a
    float scale alone and says float, which made QL202 call the float16 output wrong."""
    def model(scale_type):
        nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], domain="com.microsoft")]
        inits = [helper.make_tensor("q", TensorProto.INT8, [4], [1, 2, 3, 4]),
                 helper.make_tensor("s", scale_type, [], [0.5]),
                 helper.make_tensor("z", TensorProto.INT8, [], [0])]
        graph = helper.make_graph(nodes, "g", [], [onnx.ValueInfoProto(name="y")], initializer=inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                       helper.make_opsetid("com.microsoft", 1)])

    for scale_type, out in ((TensorProto.FLOAT16, "float16"), (TensorProto.FLOAT, "float")):
        a = analyze(model(scale_type), ".")
        (body, index, _), = a.nodes()
        assert a.any_facts(body, index).out_type == out
    from qlin_cli.check.engine import check_model

    found = [d.code for d in check_model(model(TensorProto.FLOAT16), ".")]
    assert "QL202" not in found, found
