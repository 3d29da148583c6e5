"""Each QOperator op `qlin convert --to-format qdq` rewrites (convert/formats/), as data:
where its quantized inputs, their scales and zero points are, the int32 bias (whose scale
is the product of two input scales, the op's page says), the output's scale and zero
point, and the float op it computes.

Sources (the same as schema/families/qlinear.py's): ai.onnx QLinearConv-10 and
QLinearMatMul-10 pages ("y = saturate(round(x_scale * w_scale / y_scale * (conv of the
zero-point-shifted x and w) + B)) ..." in substance); onnxruntime's registered schemas of
the com.microsoft ops (onnxruntime 1.31.1): QLinearAdd "C = (A_scale * (A - A_zero_point) +
B_scale * (B - B_zero_point))/C_scale + C_zero_point"; QGemm's C "is int32_t and must be
quantized with zero_point = 0 and scale = alpha / beta * a_scale * b_scale" (QGemm has no
beta: 1) and "The output is full precision(float32) if [y_scale] is not provided";
QLinearSoftmax "'axis' ... for onnx v.13+, or the dimension coerced to NxD Matrix for onnx
v.12-" (its ``opset`` attribute says which).
"""

from __future__ import annotations

from dataclasses import dataclass

from .ops import AI_ONNX, MICROSOFT


@dataclass(frozen=True)
class Quantized:
    """An input read through DequantizeLinear: positions of the value, scale, zero point."""

    value: int
    scale: int
    zero_point: int
    # where a scale of more than one element runs along the value: "first" (axis 0),
    # "last" (the last axis), "transB" (QGemm's B: 0 when transposed, else 1); None: a
    # scalar scale only
    axis: str | None = None


@dataclass(frozen=True)
class Form:
    float_op: str
    inputs: tuple[Quantized, ...] = ()
    bias: int | None = None  # an int32 bias input, dequantized with inputs[0].scale * inputs[1].scale
    output: tuple[int, int] = (0, 0)  # the output's (scale, zero point) positions
    # attributes copied to the float op (all of the node's but those listed in ``drop``)
    drop: frozenset[str] = frozenset()
    must_be_zero: tuple[str, ...] = ()  # attributes the float op cannot express unless 0
    bias_times_alpha: bool = False  # QGemm: the bias's scale is alpha * a_scale * b_scale
    concat: bool = False  # QLinearConcat: (Y_scale, Y_zp, then X, X_scale, X_zp per input)


_X = (Quantized(0, 1, 2),)
_UNARY_OUT = (3, 4)
_BINARY = (Quantized(0, 1, 2), Quantized(3, 4, 5))

FORMS: dict[tuple[str, str], Form] = {
    (AI_ONNX, "QLinearConv"): Form("Conv", (Quantized(0, 1, 2), Quantized(3, 4, 5, "first")), bias=8,
                              output=(6, 7)),
    (MICROSOFT, "QLinearConv"): Form("Conv", (Quantized(0, 1, 2), Quantized(3, 4, 5, "first")), bias=8,
                                     output=(6, 7), drop=frozenset({"channels_last"}),
                                     must_be_zero=("channels_last",)),
    (AI_ONNX, "QLinearMatMul"): Form("MatMul", (Quantized(0, 1, 2), Quantized(3, 4, 5, "last")),
                                     output=(6, 7)),
    (MICROSOFT, "QGemm"): Form("Gemm", (Quantized(0, 1, 2), Quantized(3, 4, 5, "transB")), bias=6,
                               output=(7, 8), bias_times_alpha=True),
    (MICROSOFT, "QLinearAdd"): Form("Add", _BINARY, output=(6, 7)),
    (MICROSOFT, "QLinearMul"): Form("Mul", _BINARY, output=(6, 7)),
    (MICROSOFT, "QLinearSigmoid"): Form("Sigmoid", _X, output=_UNARY_OUT),
    (MICROSOFT, "QLinearLeakyRelu"): Form("LeakyRelu", _X, output=_UNARY_OUT),
    (MICROSOFT, "QLinearSoftmax"): Form("Softmax", _X, output=_UNARY_OUT, drop=frozenset({"opset"})),
    (MICROSOFT, "QLinearGlobalAveragePool"): Form("GlobalAveragePool", _X, output=_UNARY_OUT,
                                                  drop=frozenset({"channels_last"}),
                                                  must_be_zero=("channels_last",)),
    (MICROSOFT, "QLinearAveragePool"): Form("AveragePool", _X, output=_UNARY_OUT,
                                            drop=frozenset({"channels_last"}),
                                            must_be_zero=("channels_last",)),
    (MICROSOFT, "QLinearConcat"): Form("Concat", output=(0, 1), concat=True),
}


def form_of(domain: str, op_type: str) -> Form | None:
    from . import normalize_domain

    return FORMS.get((normalize_domain(domain), op_type))


# The way back (`--to-format qoperator`): the QOperator op each float op of a QDQ group
# becomes. Conv becomes ai.onnx QLinearConv (com.microsoft's adds only channels_last).
QOPERATOR_OF: dict[str, tuple[str, str]] = {
    form.float_op: key for key, form in FORMS.items() if key != (MICROSOFT, "QLinearConv")}

# com.microsoft MatMulNBits: packed weights, whose QDQ form is a blocked DequantizeLinear
# and a MatMul (convert/formats/nbits.py)
N_BITS_MATMUL = (MICROSOFT, "MatMulNBits")
# com.microsoft GatherBlockQuantized: a blocked table, whose QDQ form is a blocked
# DequantizeLinear and a Gather (convert/formats/gather_block.py)
GATHER_BLOCK_QUANTIZED = (MICROSOFT, "GatherBlockQuantized")
