"""Model-local functions seen from their call sites.

A function body declares no types: its formal inputs take whatever each call passes.
For every distinct signature of the calls (the element types and shapes of the actual
inputs), the body is typed by onnx shape inference run on the body alone with those
inputs, so every rule and every proof sees the types the call gives. A body called
with two signatures is read twice, once for each.
"""

from __future__ import annotations

import onnx
from onnx import helper

from .. import schema

Signature = tuple  # ((elem_type, shape | None) | None, ...) per formal input


def function_key(domain: str, name: str, overload: str = "") -> tuple[str, str, str]:
    return (schema.normalize_domain(domain), name, overload)


def call_signature(fn: onnx.FunctionProto, node: onnx.NodeProto, scope) -> Signature:
    found = []
    for i in range(len(fn.input)):
        actual = node.input[i] if i < len(node.input) else ""
        found.append(scope.find_type(actual) if actual else None)
    return tuple(found)


def describe(sig: Signature) -> str:
    """'float[2, 3], int8[]' for a signature (what a path shows when a body has several)."""
    from ..schema import dtypes

    parts = []
    for t in sig:
        if t is None or not t[0]:
            parts.append("?")
            continue
        shape = "" if t[1] is None else "[" + ", ".join("?" if d is None else str(d) for d in t[1]) + "]"
        parts.append(dtypes.name_of(t[0]) + shape)
    return ", ".join(parts)


def _type_proto(t) -> onnx.TypeProto:
    if t is None or not t[0]:
        return onnx.TypeProto()
    shape = None if t[1] is None else list(t[1])
    return helper.make_tensor_type_proto(t[0], shape)


def formal_types(fn: onnx.FunctionProto, sig: Signature) -> dict[str, list]:
    """{formal input: [TypeProto]} as the call gives them (no inference)."""
    return {name: [_type_proto(t)] for name, t in zip(fn.input, sig, strict=False)}


def needs_inference(fn: onnx.FunctionProto, functions) -> bool:
    """Whether anything in the body reads a type beyond its formal inputs: a node of an
    op qlin knows, or a call to a local function with a computed argument. (A body that
    only passes its inputs on, like a chain of wrappers, is typed by its signature.)"""
    from .graphs import Body, within

    formal = set(fn.input)
    for body in within(Body("", fn, None)):
        for node in body.owner.node:
            if function_key(node.domain, node.op_type, node.overload) in functions:
                if any(i and i not in formal for i in node.input):
                    return True
            elif schema.knows(node.domain, node.op_type):
                return True
    return False


def body_types(model: onnx.ModelProto, fn: onnx.FunctionProto, sig: Signature) -> dict[str, list]:
    """{value name: [TypeProto]} inside ``fn`` when called with ``sig`` (empty when
    inference cannot run)."""
    inputs = []
    for name, t in zip(fn.input, sig, strict=False):
        if t is None or not t[0]:
            inputs.append(helper.make_value_info(name, onnx.TypeProto()))
        else:
            shape = None if t[1] is None else [d if d is not None else None for d in t[1]]
            inputs.append(helper.make_tensor_value_info(name, t[0], shape))
    graph = helper.make_graph(list(fn.node), "body", inputs,
                              [helper.make_value_info(o, onnx.TypeProto()) for o in fn.output])
    opsets = {o.domain: o.version for o in model.opset_import}
    opsets.update({o.domain: o.version for o in fn.opset_import})
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
                          functions=[f for f in model.functions if f is not fn])
    m.ir_version = max(model.ir_version, 8)
    try:
        inferred = onnx.shape_inference.infer_shapes(m, check_type=False, strict_mode=False,
                                                     data_prop=False)
    except Exception:  # inference is a help, not a requirement
        return {}
    found: dict[str, list] = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input):
        found.setdefault(vi.name, []).append(vi.type)
    return found
