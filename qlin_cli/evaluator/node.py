"""One node: read its schema, resolve attributes and types, call quantize/dequantize."""

from __future__ import annotations

import numpy as np
import onnx

from qlin_cli import schema
from qlin_cli.model.facts import array_facts
from qlin_cli.schema import semantics
from qlin_cli.schema.dtypes import name_of

from .dequantize import dequantize
from .errors import EvaluationError
from .quantize import quantize

# What the evaluator refuses before computing: the schema problems that make the
# node meaningless. Granularity and shapes are judged by the Layout, with the values.
_REFUSED = (semantics.ATTRIBUTE, semantics.INPUT_COUNT, semantics.INPUT_TYPE, semantics.SHARED_TYPE,
            semantics.OUTPUT_TYPE, semantics.OUTPUT_DTYPE, semantics.PRECISION)


def run_node(node: onnx.NodeProto, opset: int, inputs: list[np.ndarray | None]) -> np.ndarray:
    """Evaluate one QuantizeLinear / DequantizeLinear node (any known domain/version).

    ``opset`` is the version the graph imports for ``node.domain``; ``inputs`` the
    arrays for the node's inputs in order (None for an absent optional input).
    Returns the single output. Raises EvaluationError for unknown ops, wrong
    input counts, types, attributes or shapes.
    """
    where = f"{node.op_type} {node.name!r}" if node.name else node.op_type
    inputs = [None if a is None else np.asarray(a) for a in inputs]
    while inputs and inputs[-1] is None:
        inputs.pop()
    read = _read(node, opset, inputs)
    if isinstance(read, str):
        raise EvaluationError(f"{where}: {read}")
    spec, attrs, axis, block_size, quant_type = read
    x, scale, zp = (inputs + [None] * 3)[:3]
    try:
        if spec.kind == "quantize":
            precision = attrs.get("precision", 0) or 0
            return quantize(x, scale, zp, axis=axis, block_size=block_size,
                            out_type=quant_type, saturate=bool(attrs.get("saturate", 1)),
                            precision=name_of(precision) if precision else None,
                            granularities=spec.granularities)
        od = attrs.get("output_dtype", 0) or 0
        return dequantize(x, scale, zp, axis=axis, block_size=block_size,
                          out_type=name_of(od) if od else None, granularities=spec.granularities)
    except EvaluationError as e:
        raise EvaluationError(f"{where}: {e}") from None


# What a node's schema says of it, by what decides it: op, domain, opset, attributes, and each
# input's type and shape (never its values: the refusals above read none). A conversion proves
# every rewritten node on the same few probe shapes, so most nodes of a model are read once
# (the facts and their validation were about 40% of a small node's evaluation).
_READ: dict[tuple, tuple | str] = {}
_READ_MAX = 4096


def _read(node: onnx.NodeProto, opset: int, inputs: list) -> tuple | str:
    """(spec, integer attributes, axis, block size, quantized type) of the node, or the reason
    it is refused (without the node's name)."""
    key = (node.op_type, node.domain, opset, len(node.output),
           tuple((a.name, a.type, a.i if a.type == onnx.AttributeProto.INT else a.SerializeToString())
                 for a in node.attribute),
           tuple(None if a is None else (a.dtype, a.shape) for a in inputs))
    found = _READ.get(key)
    if found is None:
        found = _reading(node, opset, inputs)
        if len(_READ) >= _READ_MAX:
            _READ.clear()
        _READ[key] = found
    return found


def _reading(node: onnx.NodeProto, opset: int, inputs: list) -> tuple | str:
    facts = array_facts(node, opset, inputs)
    spec = facts.spec
    if not schema.is_linear(spec):
        return f"qlin knows no {node.op_type} in domain {schema.domain_name(node.domain)} at opset {opset}"
    for a in node.attribute:
        if a.name in spec.attributes and a.type != onnx.AttributeProto.INT:
            return f"attribute {a.name!r} must be an integer"
    problems = [p for p in facts.problems() if p.kind in _REFUSED]
    if problems:
        return problems[0].text
    return spec, facts.attrs, facts.axis, facts.block_size, facts.quant_type
