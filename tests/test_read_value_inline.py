"""model/tensors.read_value's shortcut for inline constants of byte-aligned types (with few
dims or many) gives what numpy_helper.to_array gives, and leaves every other tensor (negative
dims, external, empty, short raw data, int32_data, sub-byte types) to the reading it had."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.model import tensors
from qlin_cli.model.tensors import UnsafeData, read_value


@pytest.mark.parametrize("array", [
    np.float32(0.25).reshape(()), np.arange(12, dtype=np.int8).reshape(3, 4), np.arange(5, dtype=np.uint16),
    np.arange(6, dtype=np.float16).reshape(1, 2, 3), np.arange(3, dtype=np.int64),
    np.arange(4, dtype=np.float64).reshape(2, 2), np.arange(8, dtype=np.uint8).reshape((1,) * 8 + (8,))[0],
    np.zeros((1,) * 9, np.int8), np.zeros((0, 3), np.float32), np.arange(4).astype(ml_dtypes.float8_e4m3fn),
    np.arange(6).astype(ml_dtypes.uint4), np.arange(3).astype(ml_dtypes.bfloat16)])
def test_inline_constants_read_as_to_array_reads_them(array, monkeypatch):
    t = numpy_helper.from_array(array, "t")
    want = numpy_helper.to_array(t)
    got = read_value(t, ".")
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
    shortcut = tensors._inline_plain(t)
    monkeypatch.setattr(tensors, "_inline_plain", lambda t: None)  # the reading without the shortcut
    slow = read_value(t, ".")
    assert slow.dtype == got.dtype and slow.shape == got.shape and slow.tobytes() == got.tobytes()
    plain = t.data_type in tensors._PLAIN and 0 < array.size
    assert (shortcut is not None) == plain, array.dtype


def test_what_the_shortcut_leaves_is_read_as_before():
    neg = TensorProto(name="neg", data_type=TensorProto.FLOAT, dims=[-1, 2], raw_data=b"")
    with pytest.raises(UnsafeData, match="negative dimension"):
        read_value(neg, ".")
    short = TensorProto(name="short", data_type=TensorProto.FLOAT, dims=[2], raw_data=b"\0" * 7)
    assert tensors._inline_plain(short) is None
    with pytest.raises(UnsafeData, match="cannot be read"):
        read_value(short, ".")
    typed = helper.make_tensor("i", TensorProto.INT32, [3], [1, -2, 3])  # int32_data, no raw_data
    assert tensors._inline_plain(typed) is None and read_value(typed, ".").tolist() == [1, -2, 3]
    big = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[1 << 40], raw_data=b"")
    assert read_value(big, ".") is None  # too large to read for a check
    flags = numpy_helper.from_array(np.array([True, False]), "b")  # no quantization type: not read
    assert tensors._inline_plain(flags) is None and read_value(flags, ".") is None
    ext = numpy_helper.from_array(np.arange(4, dtype=np.float32), "e")
    ext.data_location = TensorProto.EXTERNAL
    assert tensors._inline_plain(ext) is None
