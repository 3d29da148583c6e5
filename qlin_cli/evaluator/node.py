"""One node: read its schema, resolve attributes and types, call quantize/dequantize."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from qlin_cli import schema
from qlin_cli.schema.dtypes import PRECISION_TYPES, name_of, name_of_array
from qlin_cli.schema.ops import DEFAULT_QUANT_TYPE

from .dequantize import dequantize
from .errors import EvaluationError
from .quantize import quantize


def _attributes(node: onnx.NodeProto, spec) -> dict:
    attrs = dict(spec.attributes)
    for a in node.attribute:
        if a.name not in spec.attributes:
            raise EvaluationError(
                f"{node.op_type} ({spec.domain_name} {spec.since}) has no attribute {a.name!r}")
        value = helper.get_attribute_value(a)
        if not isinstance(value, int):
            raise EvaluationError(f"attribute {a.name!r} must be an integer")
        attrs[a.name] = value
    return attrs


def _check_types(spec, inputs: list, where: str) -> None:
    seen: dict[str, str] = {}
    for param, arr in zip(spec.inputs, inputs, strict=False):
        if arr is None:
            if not param.optional:
                raise EvaluationError(f"{where}: input {param.name!r} is required")
            continue
        t = name_of_array(arr)
        allowed = spec.allowed(param)
        if t not in allowed:
            raise EvaluationError(
                f"{where}: input {param.name!r} has type {t or arr.dtype}, allowed: "
                f"{', '.join(sorted(allowed))}")
        if param.types in seen and seen[param.types] != t and param.name != "y_zero_point":
            raise EvaluationError(
                f"{where}: input {param.name!r} ({t}) must have the type of the input "
                f"sharing {param.types} ({seen[param.types]})")
        seen.setdefault(param.types, t)


def run_node(node: onnx.NodeProto, opset: int, inputs: list[np.ndarray | None]) -> np.ndarray:
    """Evaluate one QuantizeLinear / DequantizeLinear node (any known domain/version).

    ``opset`` is the version the graph imports for ``node.domain``; ``inputs`` the
    arrays for the node's inputs in order (None for an absent optional input).
    Returns the single output. Raises EvaluationError for unknown ops, wrong
    input counts, types, attributes or shapes.
    """
    spec = schema.lookup(node.domain, node.op_type, opset)
    where = f"{node.op_type} {node.name!r}" if node.name else node.op_type
    if spec is None:
        raise EvaluationError(
            f"{where}: qlin knows no {node.op_type} in domain "
            f"{node.domain or 'ai.onnx'} at opset {opset}")
    inputs = [None if a is None else np.asarray(a) for a in inputs]
    while inputs and inputs[-1] is None and len(inputs) > spec.min_inputs:
        inputs.pop()
    if not spec.min_inputs <= len(inputs) <= len(spec.inputs):
        raise EvaluationError(
            f"{where}: takes {spec.min_inputs} to {len(spec.inputs)} inputs, got {len(inputs)}")
    inputs = inputs + [None] * (3 - len(inputs))
    _check_types(spec, inputs, where)
    attrs = _attributes(node, spec)
    x, scale, zp = inputs
    axis = attrs.get("axis")
    block = attrs.get("block_size", 0) or 0
    out_dtype = attrs.get("output_dtype", 0) or 0
    try:
        if spec.kind == "quantize":
            out_type = name_of(out_dtype) if out_dtype else None
            if zp is not None:
                zp_t = name_of_array(zp)
                if out_type is not None and out_type != zp_t:
                    raise EvaluationError(
                        f"output_dtype {out_type} differs from the zero point's type {zp_t}")
                out_type = zp_t
            out_type = out_type or DEFAULT_QUANT_TYPE
            if out_type not in spec.quantized_types:
                raise EvaluationError(f"output type {out_type} is not allowed by this version")
            precision = attrs.get("precision", 0) or 0
            prec = None
            if precision:
                prec = name_of(precision)
                if prec not in PRECISION_TYPES:
                    raise EvaluationError(f"precision {prec} is not an arithmetic type")
            return quantize(x, scale, zp, axis=axis, block_size=block, out_type=out_type,
                            saturate=bool(attrs.get("saturate", 1)), precision=prec,
                            granularities=spec.granularities)
        out_type = name_of(out_dtype) if out_dtype else None
        allowed = spec.allowed(spec.outputs[0])
        if out_type is not None and out_type not in allowed:
            raise EvaluationError(f"output_dtype {out_type} is not allowed by this version")
        return dequantize(x, scale, zp, axis=axis, block_size=block, out_type=out_type,
                          granularities=spec.granularities)
    except EvaluationError as e:
        raise EvaluationError(f"{where}: {e}") from None
