"""Dynamic quantization: scales and zero points computed at run time.

Sources: ai.onnx DynamicQuantizeLinear 11 from ``onnx.defs`` (onnx 1.23): one float
input, three outputs (y, y_scale, y_zero_point), uint8 only. com.microsoft
DynamicQuantizeLSTM 1 from onnxruntime's registered schema (1.31.1): the weights W and R
arrive quantized, "W_scale ... Its size is [num_directions] for per-tensor/layer
quantization, or [num_directions, 4*hidden_size] for per-channel quantization"; W
is [num_directions, input_size, 4*hidden_size], R [num_directions, hidden_size,
4*hidden_size].
"""

from __future__ import annotations

from ..ops import (
    A_FLOAT,
    A_FLOATS,
    A_STRING,
    A_STRINGS,
    AI_ONNX,
    DYNAMIC_QUANTIZE,
    MICROSOFT,
    SCALAR,
    SCALE,
    ZERO_POINT,
    Constraint,
    Group,
)
from .common import FLOAT, INT8S, INT32, other, out, q, s, spec, z

_LSTM_FORMS = (SCALAR, (0,), (0, 2))

SPECS = (
    spec(AI_ONNX, "DynamicQuantizeLinear", 11, DYNAMIC_QUANTIZE,
         [other("x", "T1")],
         [out("y", "T2"), out("y_scale", "F", role=SCALE), out("y_zero_point", "T2", role=ZERO_POINT)],
         {"T1": FLOAT, "T2": frozenset({"uint8"}), "F": FLOAT}, source="onnx.defs"),
    spec(MICROSOFT, "DynamicQuantizeLSTM", 1, DYNAMIC_QUANTIZE,
         [other("X", "T"), q("W", "T2", 0), q("R", "T2", 1), other("B", "T", True),
          other("sequence_lens", "T1", True), other("initial_h", "T", True),
          other("initial_c", "T", True), other("P", "T", True),
          s("W_scale", "T", 0), z("W_zero_point", "T2", 0), s("R_scale", "T", 1),
          z("R_zero_point", "T2", 1)],
         [out("Y", "T", optional=True, role="other"), out("Y_h", "T", optional=True, role="other"),
          out("Y_c", "T", optional=True, role="other")],
         {"T": FLOAT, "T1": INT32, "T2": INT8S},
         {"activation_alpha": None, "activation_beta": None, "activations": None, "clip": None,
          "direction": "forward", "hidden_size": None, "input_forget": 0},
         attribute_types={"activation_alpha": A_FLOATS, "activation_beta": A_FLOATS,
                          "activations": A_STRINGS, "clip": A_FLOAT, "direction": A_STRING},
         groups=(Group("W", 1, _LSTM_FORMS, what="channel ([num_directions, 4*hidden_size])"),
                 Group("R", 2, _LSTM_FORMS, what="channel ([num_directions, 4*hidden_size])")),
         constraints=(Constraint("direction", "one-of", ("forward", "reverse", "bidirectional"),
                                 "onnxruntime DynamicQuantizeLSTM: \"Must be one of forward "
                                 "(default), reverse, or bidirectional\""),),
         source="onnxruntime registered schema"),
)
