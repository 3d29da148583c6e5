"""nbits writes its code tables' int32_data as the field serialized, every table at once
(``stored_fields``), parsed into each tensor (``codes_tensor``): the tensors helper.make_tensor
writes, message and bytes."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from qlin_cli.convert.formats import nbits


def test_stored_fields_parse_into_the_tensor_make_tensor_writes():
    """Codes below and from 128 (a varint of two bytes), a table of more than 127 bytes of
    payload (a length of two bytes), an empty table, 2, 4 and 8 bits."""
    rng = np.random.default_rng(7)
    for elem, high in ((TensorProto.UINT4, 16), (TensorProto.UINT2, 4), (TensorProto.UINT8, 256)):
        for shape in ((5, 300), (3, 7), (2, 1), (4, 0)):
            codes = rng.integers(0, high, shape).astype(np.uint8)
            fields = nbits.stored_fields(nbits._packed(codes, elem))
            assert all(isinstance(f, bytes) for f in fields) and len(fields) == shape[0]
            for row, field in zip(codes, fields, strict=True):
                want = helper.make_tensor("t", elem, [row.size], row)
                got = nbits.codes_tensor("t", elem, [row.size], row, field)
                assert got == want and got.SerializeToString() == want.SerializeToString()


def test_rows_of_another_type_come_back_as_lists():
    assert nbits.stored_fields(np.array([[1, 200]], np.int64)) == [[1, 200]]
