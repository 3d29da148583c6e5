"""Integer ops: quantized inputs with zero points only, an int32 result.

Source: ``onnx.defs`` (onnx 1.23), MatMulInteger 10 and ConvInteger 10. MatMulInteger:
a_zero_point "could be a scalar or N-D tensor ... per row", an M-element vector for a
[M, K] A or [D1, D2, M, 1]; b_zero_point likewise per column, [N] or [D1, D2, 1, N].
ConvInteger: x_zero_point "It's a scalar"; w_zero_point a scalar or "a 1-D tensor ...
equal to the number of output channels (M)".
"""

from __future__ import annotations

from ..ops import AI_ONNX, COLS, INTEGER, ROWS, SCALAR, Group
from .common import INT8S, INT32, out, q, spec, z
from .qlinear import CONV_ATTRS, CONV_RULES, CONV_TYPES

SPECS = (
    spec(AI_ONNX, "MatMulInteger", 10, INTEGER,
         [q("A", "T1", 0), q("B", "T2", 1), z("a_zero_point", "T1", 0, True),
          z("b_zero_point", "T2", 1, True)],
         [out("Y", "T3", 0, role="other")],
         {"T1": INT8S, "T2": INT8S, "T3": INT32},
         groups=(Group("A", 0, (SCALAR, (-2,), ROWS), what="row (M = D-2 of A)"),
                 Group("B", 1, (SCALAR, (-1,), COLS), what="column (N = D-1 of B)")),
         source="onnx.defs"),
    spec(AI_ONNX, "ConvInteger", 10, INTEGER,
         [q("x", "T1", 0), q("w", "T2", 1), z("x_zero_point", "T1", 0, True),
          z("w_zero_point", "T2", 1, True)],
         [out("y", "T3", 0, role="other")],
         {"T1": INT8S, "T2": INT8S, "T3": INT32}, CONV_ATTRS,
         groups=(Group("x", 0), Group("w", 1, (SCALAR, (0,)), what="output channel (M = D0 of w)")),
         attribute_types=CONV_TYPES, constraints=CONV_RULES, source="onnx.defs"),
)
