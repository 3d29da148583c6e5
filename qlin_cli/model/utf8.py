"""UTF-8 validation of every string field, at protobuf's parsing speed.

onnx.proto is a proto2 file, and protobuf does not validate proto2 strings when it
parses them: a bad one reads back in Python as ``bytes`` instead of ``str``. Walking
every message to find one costs about 0.2 s on 30,000 nodes and 30,000 tensors, most
of `qlin check`'s loading time. Instead, the same bytes are parsed a second time as a
copy of onnx.proto's messages declared with UTF-8 verification on (protobuf editions:
``features.utf8_validation = VERIFY``), which protobuf itself enforces while
parsing; the copy is thrown away at once.

Where that copy cannot be built (a protobuf without editions), or a piece is larger
than STRICT_MAX_BYTES (a file parsed whole: than the loader's PIECES_ABOVE, verified
before the model is parsed), ``Strings.unknown`` is set and the loader falls back to the walk
(``load.invalid_string``).
"""

from __future__ import annotations

from functools import cache

import onnx
from google.protobuf.message import DecodeError

_PACKAGE = "qlin_utf8_check"
# Bytes above this are not parsed a second time: the verifying parse copies what it reads,
# weights included, so it would add their size to the peak. The loader gives such a weight
# without its data instead; anything else that large is left to the walk over the model.
STRICT_MAX_BYTES = 16 * 2**20


@cache
def _strict_model_class():
    """onnx.ModelProto's twin with verified strings, or None when it cannot be built."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        fdp = descriptor_pb2.FileDescriptorProto()
        onnx.ModelProto.DESCRIPTOR.file.CopyToProto(fdp)
        features = descriptor_pb2.FeatureSet
        fdp.name, fdp.package = f"{_PACKAGE}.proto", _PACKAGE
        fdp.syntax, fdp.edition = "editions", descriptor_pb2.EDITION_2023
        # proto2 behaviour everywhere, except that strings are verified
        fdp.options.features.field_presence = features.EXPLICIT
        fdp.options.features.enum_type = features.CLOSED
        fdp.options.features.repeated_field_encoding = features.EXPANDED
        fdp.options.features.utf8_validation = features.VERIFY
        todo = list(fdp.message_type)
        while todo:
            msg = todo.pop()
            todo.extend(msg.nested_type)
            for f in msg.field:
                if f.type_name.startswith(".onnx."):
                    f.type_name = f".{_PACKAGE}.{f.type_name[len('.onnx.'):]}"
                if f.label == f.LABEL_REQUIRED:
                    f.label = f.LABEL_OPTIONAL
                    f.options.features.field_presence = features.LEGACY_REQUIRED
                if f.options.HasField("packed"):  # a proto2 option editions spell as a feature
                    packed = f.options.packed
                    f.options.ClearField("packed")
                    f.options.features.repeated_field_encoding = (
                        features.PACKED if packed else features.EXPANDED)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.ModelProto"))
    except Exception:  # an older protobuf: the loader walks the parsed model instead
        return None


class Strings:
    """The verdict on the string fields of the bytes a loader parsed, piece by piece."""

    def __init__(self) -> None:
        self.cls = _strict_model_class()
        self.reset()

    def reset(self) -> None:
        """Forget what was seen (the loader starts over with a whole parse)."""
        self.unknown = self.cls is None  # no verdict: walk the model instead
        self.bad = False

    def see(self, data, limit: int | None = None) -> None:
        """Parse ``data`` (a serialized ModelProto, or a piece of one) with verified strings;
        ``limit``: the most bytes to parse (default STRICT_MAX_BYTES), above which the
        verdict is left to the walk."""
        if self.unknown or self.bad:
            return
        if len(data) > (STRICT_MAX_BYTES if limit is None else limit):
            self.unknown = True
            return
        try:
            self.cls().ParseFromString(data)
        except DecodeError as e:
            if "UTF-8" in str(e):
                self.bad = True
            else:  # the ordinary parse accepted it: leave the verdict to the walk
                self.unknown = True
        except Exception:
            self.unknown = True
