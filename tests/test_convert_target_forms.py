"""`convert --target` through the forms a runtime needs (issue 36 point 4): a runtime that
quantizes no int32 (TensorRT) gets each DequantizeLinear of a constant int32 bias as the
float values it computes, exactly; a GatherBlockQuantized table goes through its QDQ form
as MatMulNBits does; and a model going through its QDQ form no longer reads the source's
nodes for the rewritten copy's (an internal error before)."""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner
from paths import FIXTURES, MODELS

import qlin
from qlin_cli.cli import main
from qlin_cli.evaluator import run_node

sys.path.insert(0, FIXTURES)
from builders import tensor  # noqa: E402
from family_builders import conv_qdq  # noqa: E402


def _symmetric_int8(tmp_path) -> str:
    """conv_qdq with an int8 input of zero point 0: only its int32 bias blocks TensorRT."""
    m = conv_qdq()
    g = m.graph
    zp = next(t for t in g.initializer if t.name == "x_zp")
    zp.CopyFrom(tensor("x_zp", 0, "int8"))
    g.input[0].type.tensor_type.elem_type = onnx.TensorProto.INT8
    onnx.checker.check_model(m, full_check=True)
    path = str(tmp_path / "sym.onnx")
    onnx.save(m, path)
    return path


def _errors(path: str) -> set[str]:
    found = qlin.check(path, targets="tensorrt-10", config=False).findings
    return {f.code for f in found if f.severity == "error"}


def test_tensorrt_gets_the_bias_as_the_float_values_its_dequantize_computes(tmp_path):
    src = _symmetric_int8(tmp_path)
    assert _errors(src) == {"QT202"}  # int32: TensorRT quantizes no int32
    out = str(tmp_path / "trt.onnx")
    r = CliRunner().invoke(main, ["convert", src, "--target", "tensorrt-10", "-o", out])
    assert r.exit_code == 0, r.output
    assert "through float biases" in r.output and "proven bit for bit" in r.output
    assert _errors(out) == set()
    source, result = onnx.load(src), onnx.load(out)
    assert "DequantizeLinear" not in [n.op_type for n in result.graph.node if n.output[0] == "b"]
    bias = next(t for t in result.graph.initializer if t.name == "b")
    dq = next(n for n in source.graph.node if n.output[0] == "b")
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in source.graph.initializer}
    want = run_node(dq, 13, [inits[x] for x in dq.input])
    assert onnx.numpy_helper.to_array(bias).tobytes() == want.tobytes()
    feed = {"xq": np.random.default_rng(0).integers(-128, 128, (1, 3, 4, 4), dtype=np.int8)}
    run = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, feed)[0] for p in (src, out)]
    assert run[0].tobytes() == run[1].tobytes()


def test_weights_unfold_bias_unfolds_the_int32_ones_only(tmp_path):
    src = _symmetric_int8(tmp_path)
    out = str(tmp_path / "u.onnx")
    r = CliRunner().invoke(main, ["convert", src, "--weights", "unfold-bias", "-o", out])
    assert r.exit_code == 0, r.output
    ops = {n.output[0]: n.op_type for n in onnx.load(out).graph.node}
    assert "b" not in ops and ops["w"] == "DequantizeLinear" and ops["x"] == "DequantizeLinear"


def test_a_qoperator_model_through_its_qdq_form_is_judged_on_the_rewritten_nodes():
    path = os.path.join(MODELS, "clean", "qoperator.onnx")
    args = ["convert", path, "--target", "tensorrt-10", "--tolerance", "100", "--dry-run"]
    r = CliRunner().invoke(main, args)
    # its QDQ form has uint8 zero points tensorrt-10 refuses (QT306, as `check --target` names
    # them on that form); within the tolerance they move to int8 with zero point 0
    assert r.exit_code == 0 and "internal error" not in r.output, r.output
    assert "its QDQ form then int8 then zero point 0" in r.output
    r = CliRunner().invoke(main, args[:4] + ["--tolerance", "1", "--dry-run"])
    assert r.exit_code == 1 and "QC403" in r.output and "--tolerance 2 allows it" in r.output, r.output


def test_a_gather_block_quantized_table_goes_through_its_qdq_form_for_tensorrt(tmp_path):
    from onnx import TensorProto
    from test_convert_gather_block import _one

    src = str(tmp_path / "gbq.onnx")
    onnx.save(_one(TensorProto.INT4, (32, 64), {"block_size": 16}, zp=False), src)
    assert _errors(src) == {"QT104"}  # no com.microsoft op in TensorRT's parser
    out = str(tmp_path / "gbq_trt.onnx")
    r = CliRunner().invoke(main, ["convert", src, "--target", "tensorrt-10", "-o", out])
    assert r.exit_code == 0 and "through its QDQ form" in r.output, r.output
    assert _errors(out) == set()
    assert [n.op_type for n in onnx.load(out).graph.node] == ["DequantizeLinear", "Gather"]
