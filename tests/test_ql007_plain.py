"""QL007 leaves out of onnx's check the tensors written plainly (rules/ql007_tensor.py,
``_written_plainly``): held here to onnx's check, which must accept every one of them, on
tensors of every element type, of dims and raw data of every fit and misfit, with every
other field a tensor can carry; and the plain ones must be found as plain."""

from __future__ import annotations

import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, checker

from qlin_cli.model.tensors import census
from qlin_cli.rules.ql007_tensor import _WIDTH, _written_plainly

TYPES = [t for t in TensorProto.DataType.values()] + [99]
EXTRAS = {
    "doc": lambda t: setattr(t, "doc_string", "d"),
    "empty doc": lambda t: setattr(t, "doc_string", ""),
    "float_data": lambda t: t.float_data.append(1.0),
    "int32_data": lambda t: t.int32_data.append(0),
    "int64_data": lambda t: t.int64_data.append(0),
    "string_data": lambda t: t.string_data.append(b"s"),
    "default location": lambda t: setattr(t, "data_location", TensorProto.DEFAULT),
    "external": lambda t: (setattr(t, "data_location", TensorProto.EXTERNAL),
                           t.external_data.add(key="location", value="w.bin")),
    "segment": lambda t: t.segment.SetInParent(),
    "metadata": lambda t: t.metadata_props.add(key="k", value="v"),
}


def _tensor(data_type: int, dims: list[int], extra_bytes: int, name: str, extras: list[str]) -> TensorProto:
    t = TensorProto(name=name, data_type=data_type, dims=dims)
    count = 1
    for d in dims:
        count *= d
    need = max(count, 0) * _WIDTH.get(data_type, 1)
    t.raw_data = bytes(max(need + extra_bytes, 0) if need <= 1 << 22 else 16)
    for e in extras:
        EXTRAS[e](t)
    return t


def _plain(t: TensorProto) -> bool:
    g = onnx.GraphProto(name="g")
    g.initializer.add().CopyFrom(t)
    return _written_plainly(census(g))[1][0]


def _onnx_accepts(t: TensorProto) -> bool:
    ctx = checker.C.CheckerContext()
    ctx.ir_version = 10
    ctx.opset_imports = {"": 21}
    try:
        checker.check_tensor(t, ctx)
    except checker.ValidationError:
        return False
    return True


@settings(max_examples=400, deadline=None, derandomize=True)
@given(data_type=st.sampled_from(TYPES),
       dims=st.lists(st.integers(-2, 70), max_size=3),
       extra_bytes=st.sampled_from([0, 0, 0, -1, 1, 2, -4]),
       name=st.sampled_from(["w", "", "a" * 200, "wé", "x" * 20_000]),
       extras=st.lists(st.sampled_from(sorted(EXTRAS)), max_size=2))
def test_a_tensor_found_plain_is_one_onnx_accepts(data_type, dims, extra_bytes, name, extras):
    t = _tensor(data_type, dims, extra_bytes, name, extras)
    if _plain(t):
        assert _onnx_accepts(t), t


def test_plain_tensors_are_found_plain():
    """Every element type of _WIDTH, scalar, vector and matrix, names of one and two bytes a
    length: plain; the same with any other field, a byte more or less, or no name: not."""
    for data_type in _WIDTH:
        for dims in ([], [3], [2, 200], [300, 300]):
            for name in ("s", "scale_" * 30):
                t = _tensor(data_type, dims, 0, name, [])
                assert _plain(t) == (dims != [300, 300]), (data_type, dims)  # (above 65,536 values: to onnx)
                assert _onnx_accepts(t)
                if dims == [300, 300]:
                    continue
                for extra in EXTRAS:
                    assert not _plain(_tensor(data_type, dims, 0, name, [extra])), (data_type, dims, extra)
                for off in (-1, 1):
                    assert not _plain(_tensor(data_type, dims, off, name, [])), (data_type, dims, off)
            assert not _plain(_tensor(data_type, [3], 0, "", []))
