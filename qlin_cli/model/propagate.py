"""Types shape inference left unknown, filled forward from the schemas' type variables.

onnx shape inference stops at ops it does not know (vendor ops) and everything after
them loses its type. Walking every body in order, an output whose type variable is
bound to an input of known type (or allows a single type) gets that type: from
onnx.defs for ai.onnx ops, from qlin's schema table for the vendor ops it knows.
Ranks (not dimensions) are carried the same way where an op's output rank follows
from its inputs' (the tables below). Declared and inferred types always win.
"""

from __future__ import annotations

import functools

import onnx.defs

from .. import schema
from ..schema import dtypes


@functools.lru_cache(maxsize=4096)
def _onnx_rule(op: str, opset: int):
    """(input constraint per position, output constraint per position, single-type map)."""
    try:
        s = onnx.defs.get_schema(op, opset, "")
    except Exception:  # not an ai.onnx op at this opset
        return None
    single = {t.type_param_str: t.allowed_type_strs[0] for t in s.type_constraints
              if len(t.allowed_type_strs) == 1}
    ins = [(p.type_str, p.option == onnx.defs.OpSchema.FormalParameterOption.Variadic) for p in s.inputs]
    outs = [p.type_str for p in s.outputs]
    return ins, outs, single


@functools.lru_cache(maxsize=1024)  # (an OpSpec is one object per schema, hashed by identity)
def _qlin_rule(spec):
    ins = [(p.types, False) for p in spec.inputs]
    outs = [p.types for p in spec.outputs]
    single = {k: f"tensor({next(iter(v))})" for k, v in spec.types.items() if len(v) == 1}
    return ins, outs, single


def _name(type_str: str) -> str | None:
    if type_str.startswith("tensor(") and type_str.endswith(")"):
        return type_str[7:-1]
    return None


# Ops whose output 0 has the rank of input 0 (elementwise, normalisations, casts, the
# linear and block quantizers; MatMulNBits' Y is A's shape with N last: onnxruntime's
# contrib op documentation, com.microsoft.MatMulNBits).
SAME_RANK = frozenset({
    "Abs", "Cast", "CastLike", "Ceil", "Clip", "Cos", "DequantizeLinear", "Dropout", "Elu", "Erf",
    "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization",
    "LayerNormalization", "LeakyRelu", "Log", "LogSoftmax", "MatMulNBits", "Neg", "Not", "PRelu",
    "QuantizeLinear", "Reciprocal", "Relu", "Round", "Sigmoid", "Sign", "Sin", "Softmax", "Softplus",
    "Sqrt", "Tanh", "BatchNormalization", "DynamicQuantizeLinear", "ExtendedQuantizeLinear",
    "ExtendedDequantizeLinear", "BFPQuantizeDequantize", "QLinearSoftmax", "QLinearLeakyRelu",
    "QLinearSigmoid", "Transpose",
})
# Ops whose output 0 has the broadcast rank of their inputs (the largest input rank).
BROADCAST = frozenset({
    "Add", "And", "Div", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean",
    "Min", "Mod", "Mul", "Or", "Pow", "Sub", "Sum", "Where", "Xor", "MatMul", "MatMulInteger",
    "QLinearMatMul", "QLinearAdd", "QLinearMul",
})


REDUCE = frozenset({"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"})


def _keeps_rank(node) -> bool:
    """The op's output 0 has its input 0's rank."""
    if node.op_type in REDUCE:
        return all(a.i != 0 for a in node.attribute if a.name == "keepdims")
    return node.op_type in SAME_RANK


def _rank_of(scope, name: str) -> int | None:
    t = scope.find_type(name) if name else None
    return None if t is None or t[1] is None else len(t[1])


def _out_rank(node, scope) -> int | None:
    op = node.op_type
    if op == "Reshape" and len(node.input) > 1:
        shape = scope.find_value(node.input[1])
        return shape.dims[0] if shape is not None and len(shape.dims) == 1 else None
    if _keeps_rank(node):
        return _rank_of(scope, node.input[0]) if node.input else None
    if op in BROADCAST:
        ranks = [_rank_of(scope, n) for n in node.input if n]
        if op == "QLinearMatMul":
            ranks = [_rank_of(scope, node.input[0]), _rank_of(scope, node.input[3])]
        elif op in ("QLinearAdd", "QLinearMul"):
            ranks = [_rank_of(scope, node.input[0]), _rank_of(scope, node.input[3])]
        return None if not ranks or None in ranks else max(ranks)
    return None


def fill_ranks(walked) -> int:
    """Give a rank (dimensions unknown) to values of known type whose shape is unknown:
    forward from the inputs, then backward from the output of a rank-keeping op."""
    added = 0
    walked = list(walked)
    for scope, _, node in walked:
        if not node.output or not node.output[0]:
            continue
        out = node.output[0]
        t = scope.find_type(out)
        if t is None or not t[0] or t[1] is not None:
            continue
        rank = _out_rank(node, scope)
        if rank is not None:
            scope.types[out] = (t[0], (None,) * rank)
            added += 1
    for scope, _, node in reversed(walked):
        if not _keeps_rank(node) or not node.input or not node.input[0] or not node.output:
            continue
        t, rank = scope.find_type(node.input[0]), _rank_of(scope, node.output[0])
        if t is not None and t[0] and t[1] is None and rank is not None:
            scope.types[node.input[0]] = (t[0], (None,) * rank)
            added += 1
    return added


def fill(walked) -> int:
    """Give types to unknown node outputs; ``walked`` yields (scope, index, node) in order.
    Returns how many values got a type."""
    added = 0
    for scope, _, node in walked:
        outs = [o for o in node.output if o]
        if not outs or all(_known(scope, o) for o in outs):
            continue
        domain = schema.normalize_domain(node.domain)
        opset = schema.opset_of(scope.opsets, domain)
        if opset is None:
            continue
        if domain == schema.AI_ONNX and not schema.is_known_op(domain, node.op_type):
            rule = _onnx_rule(node.op_type, opset)
        else:
            spec = schema.lookup(domain, node.op_type, opset)
            rule = _qlin_rule(spec) if spec is not None else None
        if rule is None:
            continue
        ins, out_keys, single = rule
        bound: dict[str, str] = {}
        to = _cast_to(node) if domain == schema.AI_ONNX and node.op_type == "Cast" else None
        if to is not None:
            bound[out_keys[0]] = to
        for i, name in enumerate(node.input):
            if not name:
                continue
            key = ins[i][0] if i < len(ins) else (ins[-1][0] if ins and ins[-1][1] else None)
            t = scope.find_type(name)
            if key is not None and t is not None and t[0]:
                bound.setdefault(key, dtypes.name_of(t[0]))
        for i, out in enumerate(node.output):
            if not out or i >= len(out_keys) or _known(scope, out):
                continue
            key = out_keys[i]
            t = bound.get(key) or _name(single.get(key, "")) or _name(key)
            if t is not None and t in dtypes.BY_NAME:
                scope.types[out] = (dtypes.BY_NAME[t].proto, None)
                added += 1
    return added


def _known(scope, name: str) -> bool:
    t = scope.find_type(name)
    return t is not None and t[0] != 0


def _cast_to(node) -> str | None:
    """Cast's output type, which its ``to`` attribute states."""
    for a in node.attribute:
        if a.name == "to" and a.type == onnx.AttributeProto.INT:
            name = dtypes.name_of(a.i)
            return name if name in dtypes.BY_NAME else None
    return None
