"""Evaluate a model made of Q/DQ nodes (plus Constant and Identity)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from qlin_cli.model.walk import constant_tensor
from qlin_cli.schema import normalize_domain
from qlin_cli.schema.dtypes import BY_PROTO, name_of

from .errors import EvaluationError
from .node import run_node


def _constant(node: onnx.NodeProto) -> np.ndarray:
    tensor = constant_tensor(node)
    if tensor is None:
        raise EvaluationError(f"Constant {node.name!r} has no supported value attribute")
    return numpy_helper.to_array(tensor)


def evaluate(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` on ``feeds`` and return its graph outputs, in order.

    Nodes may be QuantizeLinear / DequantizeLinear of any domain and version qlin
    knows (ai.onnx, com.microsoft, com.amd.quark), Constant and Identity; they
    must be in topological order, as ONNX requires. Arrays use numpy / ml_dtypes
    dtypes with one element per value (int4, int2, float4e2m1 unpacked).
    """
    opsets = {normalize_domain(o.domain): o.version for o in model.opset_import}
    g = model.graph
    values: dict[str, np.ndarray] = {}
    for init in g.initializer:
        values[init.name] = numpy_helper.to_array(init)
    for vi in g.input:
        if vi.name in feeds:
            arr = np.asarray(feeds[vi.name])
            want = vi.type.tensor_type.elem_type
            d = BY_PROTO.get(want)
            if want and d is not None and arr.dtype != d.numpy:
                raise EvaluationError(
                    f"feed {vi.name!r} has dtype {arr.dtype}, the graph declares {name_of(want)}")
            values[vi.name] = arr
        elif vi.name not in values:
            raise EvaluationError(f"no feed for graph input {vi.name!r}")
    for node in g.node:
        dom = normalize_domain(node.domain)
        if node.op_type == "Constant" and dom == "":
            result = _constant(node)
        else:
            args = []
            for name in node.input:
                if name == "":
                    args.append(None)
                elif name in values:
                    args.append(values[name])
                else:
                    raise EvaluationError(f"node {node.name or node.op_type!r}: input "
                                          f"{name!r} is not computed before it")
            if node.op_type == "Identity" and dom == "":
                result = args[0]
            else:
                if dom not in opsets:
                    raise EvaluationError(f"the model imports no opset for domain {dom!r}")
                result = run_node(node, opsets[dom], args)
        if len(node.output) != 1:
            raise EvaluationError(f"node {node.name or node.op_type!r} must have one output")
        values[node.output[0]] = result
    try:
        return [values[o.name] for o in g.output]
    except KeyError as e:
        raise EvaluationError(f"graph output {e.args[0]!r} is never computed") from None
