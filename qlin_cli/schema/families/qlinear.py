"""QLinear ops: quantized inputs and output, each with its scale and zero point.

Sources:

* ai.onnx QLinearConv 10 and QLinearMatMul 10 / 21: ``onnx.defs`` (onnx 1.23), the
  operator pages. QLinearConv: x and y scales are scalars, w's "could be a scalar or a
  1-D tensor ... its number of elements should be equal to the number of output
  channels (M)". QLinearMatMul: scale and zero point "must be either scalar (per
  tensor) or N-D tensor (per row for 'a' and per column for 'b')", an M-element vector
  for a [M, K] a, and [D1, D2, M, 1] / [D1, D2, 1, N] for N-D inputs.
* com.microsoft QLinearConv, QLinearAdd, QLinearMul, QLinearSoftmax,
  QLinearGlobalAveragePool, QLinearAveragePool, QLinearLeakyRelu, QLinearSigmoid,
  QLinearConcat and QGemm 1: onnxruntime's registered schemas
  (``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``,
  onnxruntime 1.31.1) and their parameter descriptions ("It's a scalar, which means
  a per-tensor/layer quantization"; QGemm b_scale "a scalar or a 1-D tensor ... equal
  to the number of columns of input 'B'").
"""

from __future__ import annotations

from ..ops import (
    A_FLOAT,
    A_INTS,
    A_STRING,
    AI_ONNX,
    BIAS,
    COLS,
    MICROSOFT,
    QLINEAR,
    ROWS,
    SCALAR,
    Constraint,
    Group,
)
from .common import FLOAT, FLOAT8S, INT8S, INT32, other, out, q, s, spec, z

CONV_ATTRS = {"group": 1, "pads": None, "strides": None, "dilations": None, "kernel_shape": None,
              "auto_pad": "NOTSET"}
CONV_TYPES = {"pads": A_INTS, "strides": A_INTS, "dilations": A_INTS, "kernel_shape": A_INTS,
              "auto_pad": A_STRING}
CONV_RULES = (Constraint("group", "min", 1, "onnx.defs Conv: group is the number of groups"),
              Constraint("auto_pad", "one-of", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"),
                         "onnx.defs Conv: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID"))
CONV_GROUPS = (Group("x", 0), Group("w", 3, (SCALAR, (0,)), what="output channel (M = D0 of w)"),
               Group("y", -1))


def _conv(domain: str, extra_attrs: dict, source: str):
    return spec(
        domain, "QLinearConv", 1 if domain else 10, QLINEAR,
        [q("x", "T1", 0), s("x_scale", "F", 0), z("x_zero_point", "T1", 0),
         q("w", "T2", 1), s("w_scale", "F", 1), z("w_zero_point", "T2", 1),
         s("y_scale", "F", 2), z("y_zero_point", "T3", 2), other("B", "T4", True, BIAS)],
        [out("y", "T3", 2)],
        {"T1": INT8S, "T2": INT8S, "T3": INT8S, "T4": INT32, "F": FLOAT},
        {**CONV_ATTRS, **extra_attrs}, groups=CONV_GROUPS, attribute_types=CONV_TYPES,
        constraints=CONV_RULES, source=source)


def _matmul(since: int, scale_types, q_types):
    return spec(
        AI_ONNX, "QLinearMatMul", since, QLINEAR,
        [q("a", "T1", 0), s("a_scale", "TS", 0), z("a_zero_point", "T1", 0),
         q("b", "T2", 1), s("b_scale", "TS", 1), z("b_zero_point", "T2", 1),
         s("y_scale", "TS", 2), z("y_zero_point", "T3", 2)],
        [out("y", "T3", 2)],
        {"T1": q_types, "T2": q_types, "T3": q_types, "TS": scale_types},
        groups=(Group("a", 0, (SCALAR, (-2,), ROWS), what="row (M = D-2 of a)"),
                Group("b", 3, (SCALAR, (-1,), COLS), what="column (N = D-1 of b)"),
                Group("y", -1)),
        source="onnx.defs")


def _binary(op: str):
    """QLinearAdd / QLinearMul: A, B and C of one type, every scale a scalar."""
    return spec(
        MICROSOFT, op, 1, QLINEAR,
        [q("A", "T", 0), s("A_scale", "F", 0), z("A_zero_point", "T", 0, True),
         q("B", "T", 1), s("B_scale", "F", 1), z("B_zero_point", "T", 1, True),
         s("C_scale", "F", 2), z("C_zero_point", "T", 2, True)],
        [out("C", "T", 2)],
        {"T": INT8S, "F": FLOAT}, groups=(Group("A", 0), Group("B", 3), Group("C", -1)),
        source="onnxruntime registered schema")


def _unary(op: str, names: tuple, attrs: dict, types: dict, zp_optional=(True, True), **kw):
    """X -> Y with a scalar scale and zero point on each side."""
    x, xs, xz, ys, yz, y = names
    return spec(
        MICROSOFT, op, 1, QLINEAR,
        [q(x, "T", 0), s(xs, "F", 0), z(xz, "T", 0, zp_optional[0]),
         s(ys, "F", 1), z(yz, "T", 1, zp_optional[1])],
        [out(y, "T", 1)],
        {"T": INT8S, "F": FLOAT}, attrs, groups=(Group("X", 0), Group("Y", -1)),
        attribute_types=types, source="onnxruntime registered schema", **kw)


POOL_ATTRS = {"auto_pad": "NOTSET", "ceil_mode": 0, "channels_last": 0, "count_include_pad": 0,
              "kernel_shape": None, "pads": None, "strides": None}
POOL_TYPES = {"auto_pad": A_STRING, "kernel_shape": A_INTS, "pads": A_INTS, "strides": A_INTS}

SPECS = (
    _conv(AI_ONNX, {}, "onnx.defs"),
    _matmul(10, FLOAT, INT8S),
    _matmul(21, frozenset({"float", "float16", "bfloat16"}), INT8S | FLOAT8S),
    _conv(MICROSOFT, {"channels_last": 0}, "onnxruntime registered schema"),
    _binary("QLinearAdd"),
    _binary("QLinearMul"),
    _unary("QLinearSoftmax", ("X", "X_scale", "x_zero_point", "y_scale", "y_zero_point", "Y"),
           {"axis": -1, "opset": None}, {}, (True, False), required=frozenset({"opset"}),
           constraints=(Constraint("axis", "axis", 0, "onnxruntime QLinearSoftmax: softmax along "
                                                      "axis, as Softmax ([-r, r-1])"),)),
    _unary("QLinearGlobalAveragePool", ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point",
                                        "Y"), {"channels_last": 0}, {}, (False, False)),
    _unary("QLinearAveragePool", ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point", "Y"),
           POOL_ATTRS, POOL_TYPES, required=frozenset({"kernel_shape"})),
    _unary("QLinearLeakyRelu", ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point", "Y"),
           {"alpha": 0.009999999776482582}, {"alpha": A_FLOAT}),
    _unary("QLinearSigmoid", ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point", "Y"), {}, {}),
    spec(MICROSOFT, "QLinearConcat", 1, QLINEAR,
         [s("Y_scale", "TF", 0), z("Y_zero_point", "T8", 0),
          other("inputs", "TV", variadic=True)],
         [out("Y", "T8", 0)],
         {"T8": INT8S, "TF": FLOAT, "TV": INT8S | FLOAT}, {"axis": None},
         groups=(Group("Y", -1),), required=frozenset({"axis"}),
         constraints=(Constraint("axis", "axis", 2, "onnxruntime QLinearConcat: the axis to "
                                                     "concatenate on, as Concat ([-r, r-1])"),),
         source="onnxruntime registered schema"),
    spec(MICROSOFT, "QGemm", 1, QLINEAR,
         [q("A", "TA", 0), s("a_scale", "T", 0), z("a_zero_point", "TA", 0),
          q("B", "TB", 1), s("b_scale", "T", 1), z("b_zero_point", "TB", 1),
          other("C", "TC", True, BIAS), s("y_scale", "T", 2, True), z("y_zero_point", "TYZ", 2, True)],
         [out("Y", "TY", 2)],
         {"TA": INT8S, "TB": INT8S, "TC": INT32, "T": FLOAT, "TYZ": INT8S, "TY": INT8S | FLOAT},
         {"transA": 0, "transB": 0, "alpha": 1.0}, attribute_types={"alpha": A_FLOAT},
         groups=(Group("a", 0), Group("b", 3, (SCALAR, (1,)), alt=("transB", (SCALAR, (0,))),
                                     what="column (N, the columns of B)"),
                 Group("y", -1)),
         source="onnxruntime registered schema"),
)
