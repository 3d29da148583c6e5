"""Which IR version a model needs: for its opsets, its element types, its features.

The opset -> IR facts come from ``onnx.helper.VERSION_TABLE`` (the release table
onnx ships); the type and feature facts from the ``Version`` comments in
onnx.proto (IR 8 added model-local functions, IR 9 the float8 types, IR 10
int4/uint4 and node metadata_props, IR 11 float4e2m1, IR 12 float8e8m0, IR 13
int2/uint2, IR 14 the float6 types). The converter asks here and nowhere else.
"""

from __future__ import annotations

from onnx import helper

from .ops import AI_ONNX

# element type (ONNX spelling) -> the first IR version that has it
TYPE_MIN_IR: dict[str, int] = {
    "float8e4m3fn": 9, "float8e4m3fnuz": 9, "float8e5m2": 9, "float8e5m2fnuz": 9,
    "int4": 10, "uint4": 10,
    "float4e2m1": 11,
    "float8e8m0": 12,
    "int2": 13, "uint2": 13,
    "float6e2m3": 14, "float6e3m2": 14,
}
FUNCTIONS_MIN_IR = 8  # FunctionProto list in ModelProto
NODE_METADATA_MIN_IR = 10  # NodeProto.metadata_props
OLDEST_IR = 3  # the first IR with opset_import


def ir_for_opset(opset: int) -> int:
    """The lowest IR version released together with ai.onnx ``opset`` or a later one."""
    found = [row[1] for row in helper.VERSION_TABLE if row[2] >= opset]
    if not found:
        raise ValueError(f"onnx {helper.VERSION_TABLE[-1][0]} knows no ai.onnx opset {opset}")
    return min(found)


def newest_opset() -> int:
    return max(row[2] for row in helper.VERSION_TABLE)


def ir_needed(opsets: dict[str, int], types: set[str], has_functions: bool, has_node_metadata: bool) -> int:
    """The lowest IR that carries the ai.onnx opset, every type used, and the features used."""
    need = ir_for_opset(opsets.get(AI_ONNX, 1)) if AI_ONNX in opsets else OLDEST_IR
    for t in types:
        need = max(need, TYPE_MIN_IR.get(t, OLDEST_IR))
    if has_functions:
        need = max(need, FUNCTIONS_MIN_IR)
    if has_node_metadata:
        need = max(need, NODE_METADATA_MIN_IR)
    return need


def why_needed(opsets: dict[str, int], types: set[str], need: int) -> str:
    """What in a model asks for IR ``need``: its ai.onnx opset or a stored type."""
    if AI_ONNX in opsets and ir_for_opset(opsets[AI_ONNX]) == need:
        return f"ai.onnx opset {opsets[AI_ONNX]}"
    stored = sorted(t for t in types if TYPE_MIN_IR.get(t) == need)
    return f"it stores {', '.join(stored)}" if stored else "the features it uses"
