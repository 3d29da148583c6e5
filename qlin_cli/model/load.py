"""Load an ONNX model's structure without its external weights.

A model file above ``PIECES_ABOVE`` bytes is parsed in pieces, so that its
bytes and the parsed message are never both in memory whole: the protobuf wire
format is a sequence of fields, and parsing a concatenation is the same as
merging its parts one after the other. The top-level fields of the ModelProto
are read and merged in batches of at most ``PIECE`` bytes; the graph (field 7),
where the inline weights are, is split at its own fields (nodes, initializers
...), and each batch is merged wrapped in a ModelProto graph field again, so
every message is parsed at the depth it has in the file and protobuf's nesting
limit applies exactly as for a whole parse. Peak memory is the parsed model
plus the largest single field (one initializer), not twice the file. With
``weights=False`` (what `qlin check` needs: it never reads a value above
MAX_VALUE_BYTES) an initializer above that size is merged without its data
fields, so the peak is the model's structure plus one piece. Anything
the scan does not expect (a group, a length past the end) or any piece protobuf
refuses falls back to one whole parse, which gives the usual verdict.
"""

from __future__ import annotations

import os
import stat

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError

from ..errors import QlinError
from .tensors import MAX_VALUE_BYTES
from .utf8 import STRICT_MAX_BYTES, Strings

# protobuf refuses to parse messages above 2 GiB; so do we, with a clear message.
PROTOBUF_LIMIT = 2**31 - 1
PIECES_ABOVE = 32 * 2**20  # smaller files are parsed at once
PIECE = 8 * 2**20  # bytes per batch of fields merged at once
_GRAPH_TAG = 7 << 3 | 2  # ModelProto.graph, length-delimited
_INITIALIZER_TAG = 5 << 3 | 2  # GraphProto.initializer
# TensorProto fields that hold the data: float_data, int32_data, string_data, int64_data,
# raw_data, double_data, uint64_data
_DATA_FIELDS = {4, 5, 6, 7, 9, 10, 11}
_STRING, _MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
_TOO_DEEP = (
    "messages nested deeper than protobuf's limit of 100 levels (subgraphs too deeply nested); "
    "cannot parse"
)


def load_model(path: str, *, weights: bool = True) -> onnx.ModelProto:
    """Parse ``path`` as a ModelProto, leaving external data on disk.

    ``weights=False``: in a file above PIECES_ABOVE bytes, initializers of the main
    graph larger than MAX_VALUE_BYTES keep their name, type and dims but not their
    data (for checking, which never reads such values; never for converting).

    Raises QlinError for anything that is not a readable ONNX model.
    """
    return load_model_bytes(path, weights=weights)[0]


def load_model_bytes(path: str, *, weights: bool = True, look_for: bytes = b"",
                     found: list | None = None) -> tuple[onnx.ModelProto, bytes | None]:
    """``load_model``, and the file's bytes when the model was parsed from them whole (a
    file of at most PIECES_ABOVE bytes), else None: the model serialized, for a caller
    that would serialize it (shape inference), without serializing it again. ``found`` (a
    list) gets whether the file holds the bytes ``look_for``, looked for in what is parsed
    (whole, or piece by piece: a node is never split between two pieces)."""
    if not os.path.lexists(path):
        raise QlinError(path, "no such file")
    if os.path.isdir(path):
        raise QlinError(path, "is a directory, not a model file")
    try:
        st = os.stat(path)
    except FileNotFoundError:  # a dangling symbolic link
        raise QlinError(path, "no such file (a symbolic link to nothing)") from None
    except OSError as e:
        raise QlinError(path, f"cannot read: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        raise QlinError(path, "not a regular file")
    size = st.st_size
    if size == 0:
        raise QlinError(path, "empty file, not an ONNX model")
    if size > PROTOBUF_LIMIT:
        raise QlinError(
            path,
            f"file is {size} bytes, over protobuf's 2 GiB limit for one message; "
            "store the weights as external data",
        )
    strings = _Looking(look_for) if look_for else Strings()
    try:
        model, data = _parse_file(path, size, weights, strings)
    except OSError as e:
        raise QlinError(path, f"cannot read: {e.strerror or e}") from None
    if strings.bad or strings.unknown:
        bad = invalid_string(model)  # names the field (and is the verdict without one)
        if bad is not None or strings.bad:
            # (unnamed: a bad value the parse kept no trace of, like the first of two
            # values sent for one field)
            name = f" ({bad})" if bad is not None else ""
            raise QlinError(path, f"a string{name} is not valid UTF-8: a corrupt or hostile file")
    if look_for and found is not None:
        found.append(strings.held)
    if not model.HasField("graph"):
        raise QlinError(path, "not an ONNX model: no graph in the file")
    if model.ir_version <= 0:
        raise QlinError(path, "not an ONNX model: ir_version is missing")
    return model, data


class _Looking(Strings):
    """``Strings`` that also notes whether a byte string it sees holds ``marker`` (``held``)."""

    def __init__(self, marker: bytes):
        self.marker = marker
        super().__init__()

    def reset(self) -> None:
        super().reset()
        self.held = False

    def see(self, data, limit: int | None = None) -> None:
        self.held = self.held or self.marker in data
        super().see(data, limit)


def _parse_file(path: str, size: int, weights: bool = True,
                strings: Strings | None = None) -> tuple[onnx.ModelProto, bytes | None]:
    """The parsed model, and the bytes it was parsed from whole (None: parsed in pieces);
    ``strings`` (if given) sees every byte parsed (model/utf8.py)."""
    strings = strings or Strings()
    with open(path, "rb", buffering=0) as f:
        if size > PIECES_ABOVE:
            model = onnx.ModelProto()
            try:
                _parse_in_pieces(f, size, model, weights, strings)
                return model, None
            except (_Unexpected, DecodeError, RuntimeWarning, ValueError, RecursionError, IndexError):
                del model  # the whole parse below gives the verdict
                strings.reset()
        f.seek(0)
        data = f.read(size)  # one read, as bytes (what shape inference takes), on a regular file
        if len(data) != size:
            data = bytes(_read_exactly(f, 0, size, bytearray(size)))
    # the strings first: the verifying parse's copy is gone before the model is parsed, so
    # a file parsed whole (below PIECES_ABOVE) is verified whole at no cost to the peak
    strings.see(data, PIECES_ABOVE)
    return _parse_whole(path, data), data


def _parse_whole(path: str, data) -> onnx.ModelProto:
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as e:
        if "MaxDepth" in str(e) or "recursion" in str(e).lower():
            raise QlinError(path, _TOO_DEEP) from None
        raise QlinError(path, f"not a valid ONNX protobuf ({_short(e)})") from None
    except RecursionError:
        raise QlinError(path, _TOO_DEEP) from None
    return model


class _Unexpected(Exception):
    """The file is not a plain sequence of fields the piecewise parse can split."""


def _read_exactly(f, offset: int, length: int, buf: bytearray, at: int = 0) -> bytearray:
    """Fill ``buf[at:at+length]`` with the file's bytes at ``offset``."""
    view = memoryview(buf)[at:at + length]
    f.seek(offset)
    done = 0
    while done < length:
        n = f.readinto(view[done:])
        if not n:
            raise _Unexpected("the file ended early")
        done += n
    view.release()
    return buf


def _varint(buf, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise _Unexpected("varint too long")


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class _Window:
    """Headers of fields, read from the file a megabyte at a time."""

    SIZE = 2**20

    def __init__(self, f, size: int):
        self.f, self.size, self.start, self.buf = f, size, 0, b""

    def at(self, pos: int) -> tuple[bytes, int]:
        """The buffer and ``pos``'s index in it, with at least 24 bytes after ``pos``
        (fewer only at the end of the file): room for a tag and a length."""
        end = self.start + len(self.buf)
        if pos < self.start or (pos + 24 > end and end < self.size):
            self.f.seek(pos)
            self.start, self.buf = pos, self.f.read(min(self.SIZE, self.size - pos))
        return self.buf, pos - self.start


def _fields(win: _Window, start: int, end: int):
    """(tag, offset, end offset) of each field in the file's bytes [start, end)."""
    pos = start
    while pos < end:
        buf, i = win.at(pos)
        tag, nxt = _field_end(buf, i, pos, end)
        yield tag, pos, nxt
        pos = nxt


def _field_end(buf, i: int, pos: int, end: int) -> tuple[int, int]:
    """(tag, end offset) of the field at file offset ``pos`` (``buf[i]``), within [pos, end)."""
    tag, j = _varint(buf, i)
    wire = tag & 7
    if wire == 0:
        _, j = _varint(buf, j)
    elif wire == 1:
        j += 8
    elif wire == 5:
        j += 4
    elif wire == 2:
        n, j = _varint(buf, j)
        j += n
    else:  # groups: not used by onnx; let the whole parse judge
        raise _Unexpected("group")
    if tag >> 3 == 0:
        raise _Unexpected("field number 0")
    nxt = pos + (j - i)
    if nxt > end:
        raise _Unexpected("a field runs past its message")
    return tag, nxt


def _graph_runs(win: _Window, start: int, end: int):
    """The graph's fields at [start, end), as the pieces to merge: ("run", a, b) for
    consecutive fields of at most PIECE bytes together (or one longer field), ("large", a, b)
    for an initializer above STRICT_MAX_BYTES, on its own; at least one run. (A large file's
    hot loop: one pass per field of the graph, a header whose tag and length take one and
    two bytes at most, as a node's and most tensors' do, read here without a call.)"""
    a = b = pos = start
    buf, base, room = b"", 0, -1  # the window's bytes, its file offset, the last index read inline
    while pos < end:
        i = pos - base
        if i > room:
            buf, i = win.at(pos)
            base = pos - i
            room = len(buf) - 24 if base + len(buf) < win.size else len(buf)
        tag = buf[i]
        if 7 < tag < 0x80 and tag & 7 == 2:  # length-delimited, field number 1..15
            n = buf[i + 1]
            if n < 0x80:
                nxt = pos + 2 + n
            elif buf[i + 2] < 0x80:
                nxt = pos + 3 + ((n & 0x7F) | buf[i + 2] << 7)
            else:
                tag, nxt = _field_end(buf, i, pos, end)
            if nxt > end:
                raise _Unexpected("a field runs past its message")
        else:
            tag, nxt = _field_end(buf, i, pos, end)
        if tag == _INITIALIZER_TAG and nxt - pos > STRICT_MAX_BYTES:
            if b > a:
                yield "run", a, b
            yield "large", pos, nxt
            a = b = nxt
        else:
            if nxt - a > PIECE and b > a:
                yield "run", a, b
                a = b
            b = nxt
        pos = nxt
    yield "run", a, b


def _graph_piece(length: int) -> bytes:
    return bytes([_GRAPH_TAG]) + _encode_varint(length)


def _tensor_without_data(f, win: _Window, start: int, end: int) -> bytes:
    """The initializer field at [start, end) re-encoded without its data fields."""
    buf, i = win.at(start)
    _, j = _varint(buf, i)
    _, j = _varint(buf, j)
    kept = bytearray()
    for tag, pos, nxt in _fields(win, start + (j - i), end):
        if tag >> 3 not in _DATA_FIELDS:
            at = len(kept)
            kept.extend(bytes(nxt - pos))
            _read_exactly(f, pos, nxt - pos, kept, at)
    inner = bytes([_INITIALIZER_TAG]) + _encode_varint(len(kept)) + bytes(kept)
    return _graph_piece(len(inner)) + inner


def _parse_in_pieces(f, size: int, model: onnx.ModelProto, weights: bool = True,
                     strings: Strings | None = None) -> None:
    win = _Window(f, size)
    see = strings.see if strings is not None else (lambda piece: None)

    def merge(start: int, end: int, header: bytes = b"", strings: bytes | None = None) -> None:
        """Merge the file's [start, end) (after ``header``); ``strings``: what to verify
        the strings of instead of the piece (the piece without its data)."""
        piece = bytearray(len(header) + end - start)
        piece[:len(header)] = header
        _read_exactly(f, start, end - start, piece, len(header))
        model.MergeFromString(piece)
        see(piece if strings is None else strings)

    top = top_end = 0  # a batch of top-level fields not yet merged
    for tag, pos, nxt in _fields(win, 0, size):
        if tag != _GRAPH_TAG:
            if nxt - top > PIECE and top_end > top:
                merge(top, top_end)
                top = top_end
            top_end = nxt
            continue
        if top_end > top:
            merge(top, top_end)
        top = top_end = nxt
        buf, i = win.at(pos)
        _, j = _varint(buf, i)
        _, j = _varint(buf, j)
        body = pos + (j - i)  # the graph's own fields: [body, nxt)
        for what, a, b in _graph_runs(win, body, nxt):
            if what == "run":
                merge(a, b, _graph_piece(b - a))  # (at least once: the graph is set)
                continue
            # A large weight, on its own. Its strings are verified without its data, so that
            # the verifying parse does not copy it (model/utf8.py); without ``weights``, one
            # above MAX_VALUE_BYTES is merged without its data too.
            light = _tensor_without_data(f, win, a, b)
            if not weights and b - a > MAX_VALUE_BYTES:
                model.MergeFromString(light)
                see(light)
            else:
                merge(a, b, _graph_piece(b - a), light)
    if top_end > top:
        merge(top, top_end)


def invalid_string(model: onnx.ModelProto) -> str | None:
    """The name of the first string field that is not valid UTF-8, or None.

    protobuf does not validate strings of a proto2 file when parsing; in Python
    a bad one reads back as ``bytes`` instead of ``str``, and code far away then
    fails on it. Every message is visited (an explicit stack, no recursion):
    0.2 s for 30,000 nodes and 30,000 initializers, so the loader runs it only to
    name the field model/utf8.py found bad, or where that check is unavailable.
    """
    stack: list = [model]
    while stack:
        msg = stack.pop()
        if type(msg) is onnx.TensorProto:
            # Tensors are most of a model: read only their string fields, never
            # ListFields(), which would copy every inline weight's raw bytes.
            if type(msg.name) is bytes or type(msg.doc_string) is bytes:
                return "onnx.TensorProto.name"
            for entry in msg.external_data:
                if type(entry.key) is bytes or type(entry.value) is bytes:
                    return "onnx.StringStringEntryProto.value"
            continue
        for fd, value in msg.ListFields():
            if fd.type == _STRING:
                if fd.is_repeated:
                    if bytes in map(type, value):
                        return fd.full_name
                elif type(value) is bytes:
                    return fd.full_name
            elif fd.type == _MESSAGE:
                if fd.is_repeated:
                    stack.extend(value)
                else:
                    stack.append(value)
    return None


def _short(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return text[0][:200] if text else type(err).__name__
