"""Read the value of one tensor, following external data only where it is safe.

Only small tensors a rule needs (scales, zero points) are read; weights never are.
External data must stay inside the model's folder: no absolute paths, no ``..``
that escapes, no symbolic or hard links, and offsets and lengths that fit the
file. Anything else is refused with an UnsafeData error naming the reason.
"""

from __future__ import annotations

import math
import os
import stat

import numpy as np
import onnx
from onnx import numpy_helper

from ..schema import dtypes
from .graphs import initializers_of, kept

# Tensors larger than this are not read for value checks.
MAX_VALUE_BYTES = 64 * 2**20
# Element counts are computed up to this and no further: more than any file or memory holds.
COUNT_CAP = 2**64


class UnsafeData(ValueError):
    """External data that qlin refuses to read; the message says why."""


class Census:
    """A graph's initializers, each field read from protobuf once (model/graphs.py
    ``reading``): the safety checks, the skeleton decision, the scopes and the tensor
    rules of a large model each read every initializer otherwise. ``typed`` and ``external``
    are read first, from the tensors as protobuf gives them one by one; the list of the
    tensors and their names only when first asked for (by the scopes, after shape
    inference): each Python object protobuf makes for a kept tensor, and the dims list
    asked of it, stay in memory (21 MB on 62,500 initializers, held during inference
    otherwise)."""

    __slots__ = ("_graph", "typed", "distinct", "external", "_tensors", "_names")

    def __init__(self, graph: onnx.GraphProto):
        ext = onnx.TensorProto.EXTERNAL
        one: dict = {}  # most initializers share a few types and shapes: one tuple for each
        typed = []
        external = []
        for i, t in enumerate(graph.initializer):
            k = (t.data_type, tuple(t.dims[:]))
            typed.append(one.setdefault(k, k))
            if t.data_location == ext:
                external.append(i)
        self._graph = graph
        self.typed: list[tuple[int, tuple]] = typed  # (data type, dims) of each, one tuple per distinct value
        self.distinct: tuple[tuple[int, tuple], ...] = tuple(one)  # those distinct values
        self.external: list[int] = external  # the indices of those stored outside the file
        self._tensors = self._names = None

    @property
    def tensors(self) -> list:
        """The initializers, in order (``graphs.initializers_of``)."""
        if self._tensors is None:
            self._tensors = initializers_of(self._graph)
        return self._tensors

    @property
    def names(self) -> list[str]:
        if self._names is None:
            self._names = [t.name for t in self.tensors]
        return self._names

    def tensor(self, i: int) -> onnx.TensorProto:
        """Initializer ``i``, without making the list of them all."""
        return self._graph.initializer[i] if self._tensors is None else self._tensors[i]


def census(graph: onnx.GraphProto) -> Census:
    """The ``Census`` of a graph's initializers (once per graph inside ``reading``)."""
    return kept(graph, ("census", id(graph)), lambda: Census(graph))


def external_info(tensor: onnx.TensorProto) -> dict[str, str]:
    # [:] first: protobuf lists are read faster sliced than iterated (here and below)
    return {e.key: e.value for e in tensor.external_data[:]}


def is_external(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == onnx.TensorProto.EXTERNAL


def element_count(dims) -> int:
    """The product of ``dims`` (their absolute values: negative dims are the caller's
    to refuse), saturating: any product above COUNT_CAP is returned as COUNT_CAP + 1.

    A declared shape can have hundreds of thousands of dims near 2**63; their exact
    product would have millions of digits and take minutes to compute (each
    multiplication costs as much as the digits so far). Any 0 makes the product 0.
    """
    dims = list(dims)
    if 0 in dims:
        return 0
    count = 1
    for d in dims:
        count *= abs(d)
        if count > COUNT_CAP:
            return COUNT_CAP + 1
    return count


def dims_text(dims, keep: int = 8) -> str:
    """Dims for a message: all of them, or the first ``keep`` and how many there are."""
    dims = list(dims)
    if len(dims) <= keep:
        return str(dims)
    return "[" + ", ".join(map(str, dims[:keep])) + f", ... ({len(dims)} dims)]"


def nbytes(tensor: onnx.TensorProto) -> int | None:
    """Bytes the tensor's raw data must hold, or None for types without a fixed width.

    Saturating like ``element_count``: a result above 2**64 means "more than any file"."""
    d = dtypes.BY_PROTO.get(tensor.data_type)
    if d is None:
        return None
    count = element_count(tensor.dims[:])
    return (count * d.bits + 7) // 8


def resolve_location(base_dir: str, location: str) -> str:
    """The data file a location names, after checking it stays in ``base_dir``."""
    if not location:
        raise UnsafeData("external data has no location")
    if "\x00" in location:
        raise UnsafeData("external data location contains a NUL byte")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location[:3]:
        raise UnsafeData(f"external data location {location!r} is an absolute path")
    norm = os.path.normpath(location)
    if norm == ".." or norm.startswith(".." + os.sep) or norm.startswith("../"):
        raise UnsafeData(f"external data location {location!r} escapes the model's folder")
    base_real = os.path.realpath(base_dir or ".")
    full = os.path.join(base_real, norm)
    # Every component must be a real directory or file, never a symbolic link.
    walked = base_real
    for part in norm.split(os.sep):
        walked = os.path.join(walked, part)
        if os.path.islink(walked):
            raise UnsafeData(f"external data location {location!r} goes through a symbolic link")
    if os.path.commonpath([base_real, os.path.realpath(full)]) != base_real:
        raise UnsafeData(f"external data location {location!r} escapes the model's folder")
    try:
        st = os.stat(full, follow_symlinks=False)
    except FileNotFoundError:
        raise UnsafeData(f"external data file {location!r} does not exist") from None
    except OSError as e:
        raise UnsafeData(f"external data file {location!r}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeData(f"external data file {location!r} is not a regular file")
    if st.st_nlink > 1:
        raise UnsafeData(f"external data file {location!r} is hard-linked ({st.st_nlink} links)")
    return full


def _int_field(info: dict[str, str], key: str, location: str) -> int | None:
    text = info.get(key)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UnsafeData(f"external data {key} {info[key]!r} of {location!r} is not a number") from None
    if value < 0:
        raise UnsafeData(f"external data {key} {value} of {location!r} is negative")
    return value


def check_external(
    tensor: onnx.TensorProto, base_dir: str, cache: dict | None = None, info: dict | None = None
) -> tuple[str, int, int]:
    """Validate a tensor's external data; returns (file, offset, bytes to read).

    ``cache`` (location -> (path, size)) saves resolving one data file per tensor;
    ``info``: its ``external_info``, when the caller has read it.
    """
    if info is None:
        info = external_info(tensor)
    location = info.get("location", "")
    dims = tensor.dims[:]
    if dims and min(dims) < 0:
        raise UnsafeData(f"tensor {tensor.name!r} has a negative dimension {dims_text(dims)}")
    if cache is not None and location in cache:
        path, size = cache[location]
    else:
        path = resolve_location(base_dir, location)
        size = os.path.getsize(path)
        try:  # an unreadable data file is refused here, not met later by a read
            with open(path, "rb"):
                pass
        except OSError as e:
            raise UnsafeData(f"external data file {location!r} cannot be read: {e.strerror or e}") from None
        if cache is not None:
            cache[location] = (path, size)
    offset = _int_field(info, "offset", location) or 0
    length = _int_field(info, "length", location)
    if offset > size:
        raise UnsafeData(f"external data offset {offset} is past the end of {location!r} ({size} bytes)")
    available = size - offset
    if length is not None and length > available:
        raise UnsafeData(
            f"external data length {length} at offset {offset} runs past the end of "
            f"{location!r} ({size} bytes)"
        )
    need = nbytes(tensor)
    if need is None:
        raise UnsafeData(f"tensor {tensor.name!r} has a type qlin cannot read from external data")
    if need > (length if length is not None else available):
        amount = f"more than {COUNT_CAP}" if need > COUNT_CAP else str(need)
        raise UnsafeData(
            f"tensor {tensor.name!r} needs {amount} bytes for dims {dims_text(tensor.dims)} but "
            f"{location!r} holds {length if length is not None else available} at offset {offset}"
        )
    return path, offset, need


# Byte-aligned types whose raw_data numpy can view directly (little-endian).
_PLAIN = {d.proto: d.numpy for d in dtypes.BY_NAME.values() if d.bits >= 8 and d.kind != "float8e8m0"}
# raw data is little-endian (onnx.proto): each type's dtype so, made once
_PLAIN_LE = {proto: np.dtype(t).newbyteorder("<") for proto, t in _PLAIN.items()}


def _inline_plain(tensor: onnx.TensorProto) -> np.ndarray | None:
    """The common case, each field read once: inline raw_data of a byte-aligned type, no dim
    negative, of the size its dims say and at most MAX_VALUE_BYTES; None for anything else,
    which ``read_value`` then reads its own way (or refuses)."""
    dtype = _PLAIN_LE.get(tensor.data_type)
    if dtype is None or tensor.data_location != _DEFAULT:
        return None
    dims = tensor.dims[:]
    if dims and min(dims) < 0:
        return None
    # (a product taken at once for the usual few dims; element_count saturates a hostile many)
    need = (math.prod(dims) if len(dims) <= 8 else element_count(dims)) * dtype.itemsize
    if not 0 < need <= MAX_VALUE_BYTES:
        return None
    raw = tensor.raw_data
    if len(raw) != need:
        return None
    return np.frombuffer(raw, dtype=dtype).reshape(dims)


_DEFAULT = onnx.TensorProto.DEFAULT


def read_value(tensor: onnx.TensorProto, base_dir: str) -> np.ndarray | None:
    """The tensor as a numpy array, or None when it is too large to read for a check.

    Raises UnsafeData for external data that is unsafe or lies about its size.
    """
    fast = _inline_plain(tensor)
    if fast is not None:
        return fast
    if any(d < 0 for d in tensor.dims):
        raise UnsafeData(f"tensor {tensor.name!r} has a negative dimension {dims_text(tensor.dims)}")
    need = nbytes(tensor)
    if need is None or need > MAX_VALUE_BYTES:
        return None
    if is_external(tensor):
        path, offset, need = check_external(tensor, base_dir)
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                raw = f.read(need)
        except OSError as e:
            location = external_info(tensor).get("location", "")
            raise UnsafeData(f"external data file {location!r} of tensor {tensor.name!r} cannot be "
                             f"read: {e.strerror or e}") from None
        if len(raw) != need:
            raise UnsafeData(f"external data of tensor {tensor.name!r} ended early")
        inline = onnx.TensorProto()
        inline.CopyFrom(tensor)
        del inline.external_data[:]
        inline.data_location = onnx.TensorProto.DEFAULT
        inline.raw_data = raw
        tensor = inline
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # malformed inline data: wrong element count and similar
        raise UnsafeData(f"tensor {tensor.name!r} cannot be read: {str(e).splitlines()[0][:160]}") from None
