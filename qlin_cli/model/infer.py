"""Types and shapes from onnx shape inference, as a help to what models declare."""

from __future__ import annotations

import onnx

from .safety import all_tensors
from .tensors import is_external
from .walk import scope_types


def inferred_types(model: onnx.ModelProto) -> dict | None:
    """{scope path: {name: [TypeProto, ...]}} from onnx shape inference, or None
    when it cannot run.

    Inference runs on a copy whose external tensors have their references
    removed (dims and types stay): onnx's inference otherwise allocates room
    for the external weights, gigabytes on a large model.
    """
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    for tensor in all_tensors(skeleton):
        if is_external(tensor):
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
    try:
        inferred = onnx.shape_inference.infer_shapes(
            skeleton, check_type=False, strict_mode=False, data_prop=False
        )
    except Exception:  # inference is a help, not a requirement
        return None
    return scope_types(inferred)
