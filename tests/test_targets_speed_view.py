"""The runtimes' view of a converted model, read faster: each shortcut answers as the long way.

* a zero point's "all zero" from its stored bytes (``nodes.zero_point_is_zero``) against its
  values read as an array;
* ``FusionTable.reason`` reading only the entries of the group's op against every measured
  group of the release.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.targets import data_files, fusion
from qlin_cli.targets.nodes import _zero_bytes

_TYPES = ((TensorProto.INT4, ml_dtypes.int4), (TensorProto.UINT4, ml_dtypes.uint4),
          (TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8),
          (TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16),
          (TensorProto.INT32, np.int32), (TensorProto.UINT32, np.uint32), (TensorProto.INT64, np.int64),
          (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn), (TensorProto.FLOAT, np.float32))


def _tensors():
    rng = np.random.default_rng(1)
    for proto, npdt in _TYPES:
        for count in (1, 2, 3, 5, 8, 33):
            for mode in ("zero", "one", "some"):
                v = np.zeros(count, dtype=np.int64)
                if mode == "one":
                    v[rng.integers(count)] = 1
                elif mode == "some":
                    v = rng.integers(0, 3, count)
                arr = v.astype(npdt)
                yield numpy_helper.from_array(arr, "z")  # raw bytes
                if proto not in (TensorProto.FLOAT, TensorProto.UINT32, TensorProto.INT64):
                    yield helper.make_tensor("z", proto, [count], v.tolist())  # int32_data
    big = numpy_helper.from_array(np.zeros(4, np.int8), "z")
    big.raw_data = b"\0" * 3  # fewer bytes than the dims need: not told
    yield big
    padded = helper.make_tensor("z", TensorProto.UINT4, [3], [0, 0, 0])
    padded.int32_data[1] = 0xF0  # the padding nibble set: not told
    yield padded
    wide = helper.make_tensor("z", TensorProto.INT8, [2], [0, 0])
    wide.int32_data[0] = 256  # read as int8: 0
    yield wide


def test_zero_bytes_agree_with_the_values():
    told = 0
    for t in _tensors():
        found = _zero_bytes(t)
        if found is None:
            continue
        told += 1
        assert found == (not numpy_helper.to_array(t).astype(np.float64).any()), t
    assert told > 200


def _reason_whole(table: fusion.FusionTable, key: str):
    """``reason`` as it read every measured group of the release: the nearest one fused."""
    mine = table.groups.get(key)
    if mine is None:
        return None
    ranked = []
    for other_key, other in table.groups.items():
        alike = other.op == mine.op and len(other.inputs) == len(mine.inputs)
        diff = mine.differences(other) if alike else []
        if table.outcomes[other_key].startswith(fusion.INTEGER) and 0 < len(diff) <= 2:
            ranked.append(((mine.distance(other), other_key), " and ".join(diff), table.outcomes[other_key]))
    return min(ranked)[1:] if ranked else None


@pytest.mark.parametrize("runtime", sorted(fusion.FILES))
def test_reason_reads_the_ops_entries_only_and_answers_alike(runtime):
    versions = list(data_files.head(fusion.FILES[runtime])["releases"])
    for version in (versions[0], versions[-1]):
        table = fusion.table(runtime, version)
        keys = list(table._entries)
        for key in keys[::40] + ["MatMul(float) -> float", "no such group"]:
            assert table.reason(key) == _reason_whole(table, key), (version, key)


@pytest.mark.parametrize("runtime", sorted(fusion.FILES))
def test_only_a_bias_op_has_an_op_before_it(runtime):
    """``FusionTable._measured`` looks for a group of another op by its key's start ("MatMul("):
    only an op of BIAS_OPS has ``before`` ("MatMul -> Add(...)"), as ``fusion._parts`` writes it."""
    for key in data_files.block(fusion.FILES[runtime], "groups"):
        head = key.split("(", 1)[0]
        assert " -> " not in head or fusion._key_op(key) in fusion.BIAS_OPS, key
