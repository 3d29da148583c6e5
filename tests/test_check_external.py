"""qlin check reads small external tensors a rule needs (scales, zero points), never weights."""

from __future__ import annotations

import os

import numpy as np
import onnx
from builders import qdq_model
from onnx import external_data_helper

from qlin_cli.check.engine import check_file


def _save_external(model, folder, name="m.onnx"):
    for init in model.graph.initializer:
        external_data_helper.set_external_data(init, "data.bin")
    path = os.path.join(folder, name)
    # write the tensors' bytes into data.bin at their offsets, then the model
    offset = 0
    with open(os.path.join(folder, "data.bin"), "wb") as f:
        for init in model.graph.initializer:
            raw = init.raw_data
            f.write(raw)
            external_data_helper.set_external_data(init, "data.bin", offset, len(raw))
            init.ClearField("raw_data")
            init.data_location = onnx.TensorProto.EXTERNAL
            offset += len(raw)
    onnx.save(model, path)
    return path


def test_external_scale_values_are_read_and_checked(tmp_path):
    model = qdq_model(x_shape=(2, 3), scale=np.array([0.1, 0.0, 0.2], np.float32),
                      zero_point=np.array([0, 1, 2]), zp_type="uint8", attrs={"axis": 1})
    path = _save_external(model, str(tmp_path))
    assert all(i.data_location == onnx.TensorProto.EXTERNAL for i in onnx.load(
        path, load_external_data=False).graph.initializer)
    result = check_file(path)
    assert result.error is None
    assert [d.code for d in result.diagnostics] == ["QL501"]
    assert "index 1" in result.diagnostics[0].message


def test_external_float8_zero_point_is_read(tmp_path):
    model = qdq_model(zero_point=2.0, zp_type="float8e4m3fn")
    path = _save_external(model, str(tmp_path))
    codes = [d.code for d in check_file(path).diagnostics]
    assert codes == ["QL304"]


def test_missing_external_scale_file_is_a_clear_error(tmp_path):
    model = qdq_model(zero_point=0)
    path = _save_external(model, str(tmp_path))
    os.remove(tmp_path / "data.bin")
    result = check_file(path)  # a finding on the tensor (QL008), and the rest of the model checked
    found = {d.node: d.detail for d in result.diagnostics if d.code == "QL008"}
    assert result.error is None and set(found) == {"scale", "zero_point"}, result  # both lived there
    assert all("data.bin" in why and "does not exist" in why for why in found.values())
