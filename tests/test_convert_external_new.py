"""A model whose weights are external data: the tensors a conversion writes go to the output's
data file too (convert/write.py, those of at least NEW_EXTERNAL bytes), and the way back
reads the blocked weights from beside the model, wherever the command runs. A MatMulNBits
chain (64 x 64, 4 bits: 2 KiB of codes a node) to its QDQ form and back: both results pass
onnx.checker's full check, keep their weights out of the model file, and give onnxruntime's
outputs of the same conversions made inline, bit for bit."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert import write
from qlin_cli.convert_pipeline import Request, run
from qlin_cli.errors import QlinError

K = 64
NODES = 4


def _chain() -> onnx.ModelProto:
    rng = np.random.default_rng(5)
    nodes, inits = [], []
    for i in range(NODES):
        codes = rng.integers(0, 16, (K, K)).astype(np.uint8)  # [N, K]
        packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).reshape(K, 1, K // 2)
        inits += [numpy_helper.from_array(packed, f"b{i}"),
                  numpy_helper.from_array(rng.uniform(0.05, 0.1, K).astype(np.float32), f"s{i}")]
        nodes.append(helper.make_node("MatMulNBits", ["x" if i == 0 else f"h{i}", f"b{i}", f"s{i}"],
                                      ["y" if i == NODES - 1 else f"h{i + 1}"], name=f"mnb{i}",
                                      domain="com.microsoft", K=K, N=K, bits=4, block_size=K))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, K])], inits)
    imports = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(g, opset_imports=imports, ir_version=10)


def _outputs(path: str) -> bytes:
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    x = np.random.default_rng(0).standard_normal((1, K)).astype(np.float32)
    session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0].tobytes()


def _inline_bytes(path: str) -> int:
    m = onnx.load(path, load_external_data=False)
    return sum(len(t.raw_data) for t in m.graph.initializer if t.data_location != TensorProto.EXTERNAL)


def test_new_tensors_go_to_the_data_file_and_the_way_back_reads_them(tmp_path, monkeypatch):
    src_dir, out_dir = tmp_path / "src", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    onnx.save(_chain(), str(src_dir / "inline.onnx"))
    onnx.save(_chain(), str(src_dir / "ext.onnx"), save_as_external_data=True, location="ext.onnx.data",
              size_threshold=1024)
    monkeypatch.chdir(tmp_path)  # (neither the models' folder nor the outputs')
    for name in ("inline", "ext"):
        run(Request(str(src_dir / f"{name}.onnx"), to_format="qdq", output=str(out_dir / f"{name}_qdq.onnx")))
        run(Request(str(out_dir / f"{name}_qdq.onnx"), to_format="qoperator",
                    output=str(out_dir / f"{name}_back.onnx")))
    for step in ("qdq", "back"):
        onnx.checker.check_model(str(out_dir / f"ext_{step}.onnx"), full_check=True)
        assert os.path.exists(out_dir / f"ext_{step}.onnx.data")
        assert _inline_bytes(str(out_dir / f"ext_{step}.onnx")) < 1024 * NODES  # (the scales stay inline)
        assert _outputs(str(out_dir / f"ext_{step}.onnx")) == _outputs(str(out_dir / f"inline_{step}.onnx"))
    assert not os.path.exists(out_dir / "inline_qdq.onnx.data")  # a model of inline weights stays whole
    assert _outputs(str(out_dir / "ext_back.onnx")) == _outputs(str(src_dir / "ext.onnx"))


@pytest.mark.parametrize("where", ["_serialize", "_publish"])
def test_a_failed_write_puts_the_new_tensors_back(where, tmp_path, monkeypatch):
    """The model file cannot be made (``_serialize``), or the data file is published and the
    model's cannot be (``_publish``: a full disk, say): QlinError, and the result in
    memory holds its new tensors inline again (their bytes were kept, not read back from a
    file that failed)."""
    onnx.save(_chain(), str(tmp_path / "ext.onnx"), save_as_external_data=True, location="ext.onnx.data",
              size_threshold=1024)
    result = run(Request(str(tmp_path / "ext.onnx"), to_format="qdq"))
    before = {t.name: t.SerializeToString() for t in result.model.graph.initializer}
    data = {os.path.realpath(str(tmp_path / "ext.onnx.data"))}

    def broken(*a, **k):
        if where == "_publish":  # the data file published (closed), then the model's rename fails
            for output, _ in a[1]:
                output.file.close()
            raise OSError(28, "No space left on device")
        raise QlinError("out.onnx", "cannot write")

    monkeypatch.setattr(write, where, broken)
    with pytest.raises(QlinError):
        write.write_model(result.model, str(tmp_path), str(tmp_path / "out.onnx"),
                          source=str(tmp_path / "ext.onnx"), new=result.added, source_data=data)
    assert {t.name: t.SerializeToString() for t in result.model.graph.initializer} == before
    assert not os.path.exists(tmp_path / "out.onnx.data")


def test_shapes_observed_in_onnxruntime_read_the_external_weights(tmp_path, monkeypatch):
    """measure.observed_shapes runs the model's bytes in onnxruntime (for a vendor op's output
    shapes inference leaves unknown): the session finds the data file in the model's folder,
    not the working directory (a QOperator transformer of external weights was refused
    'the shape of input ... is not known')."""
    from qlin_cli.convert.formats.measure import observed_shapes

    w = numpy_helper.from_array(np.arange(K * K, dtype=np.float32).reshape(K, K), "W")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, K])], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, location="m.onnx.data",
              size_threshold=1024)
    model = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    monkeypatch.chdir(tmp_path.parent)
    pytest.importorskip("onnxruntime")
    found = observed_shapes(model, {"h": TensorProto.FLOAT}, str(tmp_path))
    assert found == {"h": ((1, K), TensorProto.FLOAT)}
    assert observed_shapes(model, {"h": TensorProto.FLOAT}) == {}  # (without the folder: not found)
