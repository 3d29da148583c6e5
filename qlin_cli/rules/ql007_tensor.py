from itertools import pairwise

import onnx

from ..model.tensors import MAX_VALUE_BYTES, census, nbytes
from ..schema import dtypes
from .base import ModelRule, Violation
from .base_validity import all_valid, check_sparse, check_tensor

_DATA_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


class TensorInvalid(ModelRule):
    """
    ## What it checks
    Every initializer and sparse initializer of every graph as onnx.checker checks a
    tensor: a data type (not UNDEFINED), exactly one field holding the values (none
    for an empty tensor), the field the type is stored in, as many values as the
    dims say; for a sparse tensor, values of rank 1 and indices that fit the dims.
    Tensors stored outside the file are checked by qlin's external-data checks.

    ## Why is this bad?
    onnx.proto: a tensor's data type field "MUST have a valid TensorProto.DataType
    value", and each value field says which types it holds ("When this field is
    present, the data_type field MUST be FLOAT or COMPLEX64"; raw_data's "MUST NOT
    be STRING or UNDEFINED"); a tensor whose values do not match its dims, or whose
    type is UNDEFINED, has no value a runtime can read. onnx.checker rejects the model
    ("setting data_type field ... to UNDEFINED is not allowed", "should contain one
    and only one value field").

    ## Example
    ```
    initializer zp: data_type 0 (UNDEFINED), dims [], int32_data [0]
    ```

    ## Fix
    Write the tensor again with its element type and its values in one field
    (numpy_helper.from_array does both).
    """

    code = "QL007"
    name = "tensor-invalid"
    summary = "An initializer without a data type, with two value fields, or values that do not fit."

    def check_model(self, view):
        ir = view.model.ir_version or 1
        for body in view.graphs():
            g = body.owner
            for t in _suspects(g, ir):
                why = _problem(t, ir)
                if why:
                    yield Violation(why, at=view.site(body.path, t.name, f"initializer {t.name!r}"))
            for s in g.sparse_initializer:
                why = check_sparse(s, ir)
                if why:
                    name = s.values.name
                    yield Violation(why, at=view.site(body.path, name, f"sparse initializer {name!r}"))


SMALL = 1 << 16  # tensors up to this size go to onnx's check together, a batch per call
BATCH = 4 << 20  # bytes of small tensors per call: each is copied twice on its way to onnx


def _suspects(g, ir: int) -> list:
    """The inline initializers worth a look of their own: of those not written plainly
    (``_written_plainly``, which onnx's check is not asked about: tensors of raw data, as
    numpy_helper writes them and onnxruntime's quantizer its weights; the quantizer writes
    scales and zero points in float_data and int32_data, which go to onnx), every small one
    of a batch that together fails onnx's check (they seldom do), and each large one that is
    not plainly
    right (raw data of its exact size and no other value field), which is read without
    copying the whole graph's weights again. (Batches, not all small ones at once: each
    is copied into the check's graph and serialized for onnx, several times the weights
    of a large model held at once.)"""
    c = census(g)
    outside = set(c.external)
    small, large, batches, size = [], [], [0], 0
    for i, (t, n, plain) in enumerate(zip(c.tensors, *_written_plainly(c), strict=True)):
        if plain or i in outside:
            continue
        if n > SMALL:
            large.append(t)
            continue
        if size + n > BATCH:
            batches.append(len(small))
            size = 0
        small.append(t)
        size += n
    batches.append(len(small))
    found = [t for a, b in pairwise(batches) if not all_valid(small[a:b], ir) for t in small[a:b]]
    return found + [t for t in large if not _plainly_right(t)]


# element types whose raw data onnx's check holds to the dims' count times their width, and
# nothing else (tests/test_ql007_plain.py holds every one to onnx's check): their bytes each,
# from the dtype table
_T = onnx.TensorProto
_WIDTH = {t: dtypes.BY_PROTO[t].bits // 8 for t in (
    _T.FLOAT, _T.UINT8, _T.INT8, _T.UINT16, _T.INT16, _T.INT32, _T.INT64, _T.FLOAT16, _T.DOUBLE,
    _T.UINT32, _T.BFLOAT16)}


def _varint(n: int) -> int:
    """Bytes of ``n`` >= 0 as a protobuf varint."""
    return 1 if n < 0x80 else 2 if n < 0x4000 else (max(n.bit_length(), 1) + 6) // 7


def _written_plainly(c) -> tuple[list[int], list[bool]]:
    """The serialized size of each of a census' tensors, and whether it is written plainly:
    a name, dims of at least 0, a data type of _WIDTH, raw data of exactly the bytes those
    need, and no other field. onnx's check accepts such a tensor, so none goes to it. (The
    size says there is no other field: protobuf writes each field it holds in at least a
    byte, and the four read here add up to the size only when nothing else is written.)"""
    tensors = c.tensors
    sizes = [t.ByteSize() for t in tensors]
    parts: dict = {}  # (data type, dims) -> (raw bytes they need, bytes of the dims and type fields)
    for typed in c.distinct:
        width = _WIDTH.get(typed[0])
        count = 0 if width is None or min(typed[1], default=0) < 0 else 1
        for d in typed[1] if count else ():
            count *= d  # (at most SMALL times a dim: never the product of thousands of large dims)
            if not 0 < count <= SMALL:
                break
        if not 0 < count <= SMALL:
            parts[typed] = None
            continue
        parts[typed] = (count * width, sum(1 + _varint(d) for d in typed[1]) + 1 + _varint(typed[0]))
    plain = []
    for t, size, typed, name in zip(tensors, sizes, c.typed, c.names, strict=True):
        part = parts[typed]
        if part is None or not name:
            plain.append(False)
            continue
        need, fixed = part
        named = len(name) if name.isascii() else len(name.encode())
        plain.append(size == fixed + 1 + _varint(named) + named + 1 + _varint(need) + need
                     and len(t.raw_data) == need)
    return sizes, plain


def _plainly_right(t: onnx.TensorProto) -> bool:
    if not t.data_type or any(len(getattr(t, f)) for f in _DATA_FIELDS):
        return False
    if not t.HasField("raw_data"):
        return _stripped(t)
    return len(t.raw_data) == nbytes(t)


def _problem(t: onnx.TensorProto, ir: int) -> str | None:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return None  # the external-data checks (model/safety.py) read those
    if not t.data_type:
        return f"tensor {t.name!r} has data type UNDEFINED (0): it must name its element type"
    if _stripped(t):
        return None
    return check_tensor(t, ir)


def _stripped(t: onnx.TensorProto) -> bool:
    """A weight `qlin check` loaded without its data (above MAX_VALUE_BYTES, model/load.py):
    its values were never read, so there is nothing to compare its dims with."""
    size = nbytes(t)
    return (size is not None and size > MAX_VALUE_BYTES and not t.HasField("raw_data")
            and not any(len(getattr(t, f)) for f in _DATA_FIELDS))
