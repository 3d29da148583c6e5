"""Message classes that read a serialized ModelProto as a few of its fields only.

Parsing a whole model makes a Python-visible message for every node, attribute and tensor;
a reader that needs only the main graph's initializers (model/tensors.py) or the types
inference wrote (model/infer.py) declares just those fields, by their numbers in
onnx.proto, and protobuf keeps every other field as unread bytes.
"""

from __future__ import annotations

from functools import cache

# (field name, number in onnx.proto, type: "bytes", "string" or another message of the
# reader, repeated)
Field = tuple[str, int, str, bool]
_SCALARS = {"bytes": "TYPE_BYTES", "string": "TYPE_STRING"}


@cache
def reader(package: str, messages: tuple[tuple[str, tuple[Field, ...]], ...]):
    """The class of message ``Model`` of ``messages`` ((message name, its fields) in
    order, every message named by the ones after it declared before them), in a proto2
    file of its own named after ``package``; None where protobuf cannot build it."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}.proto", package=package, syntax="proto2")
        f = descriptor_pb2.FieldDescriptorProto
        for name, fields in messages:
            message = fdp.message_type.add(name=name)
            for field, number, kind, repeated in fields:
                label = f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL
                if kind in _SCALARS:
                    message.field.add(name=field, number=number, type=getattr(f, _SCALARS[kind]), label=label)
                else:
                    message.field.add(name=field, number=number, type=f.TYPE_MESSAGE, label=label,
                                      type_name=f".{package}.{kind}")
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Model"))
    except Exception:
        return None
