"""Load an ONNX model's structure without its external weights."""

from __future__ import annotations

import os
import stat

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError

from ..errors import QlinError

# protobuf refuses to parse messages above 2 GiB; so do we, with a clear message.
PROTOBUF_LIMIT = 2**31 - 1
_STRING, _MESSAGE = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
_TOO_DEEP = (
    "messages nested deeper than protobuf's limit of 100 levels (subgraphs too deeply nested); "
    "cannot parse"
)


def load_model(path: str) -> onnx.ModelProto:
    """Parse ``path`` as a ModelProto, leaving external data on disk.

    Raises QlinError for anything that is not a readable ONNX model.
    """
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
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise QlinError(path, f"cannot read: {e.strerror or e}") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as e:
        if "MaxDepth" in str(e) or "recursion" in str(e).lower():
            raise QlinError(path, _TOO_DEEP) from None
        raise QlinError(path, f"not a valid ONNX protobuf ({_short(e)})") from None
    except RecursionError:
        raise QlinError(path, _TOO_DEEP) from None
    bad = invalid_string(model)
    if bad is not None:
        raise QlinError(path, f"a string ({bad}) is not valid UTF-8: a corrupt or hostile file")
    if not model.HasField("graph"):
        raise QlinError(path, "not an ONNX model: no graph in the file")
    if model.ir_version <= 0:
        raise QlinError(path, "not an ONNX model: ir_version is missing")
    return model


def invalid_string(model: onnx.ModelProto) -> str | None:
    """The name of the first string field that is not valid UTF-8, or None.

    protobuf does not validate strings of a proto2 file when parsing; in Python
    a bad one reads back as ``bytes`` instead of ``str``, and code far away then
    fails on it. Every message is visited (an explicit stack, no recursion):
    0.2 s for 30,000 nodes and 30,000 initializers.
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
