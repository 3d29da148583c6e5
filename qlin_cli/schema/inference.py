"""What onnx's shape inference of an op reads: a fact about each op's inference function in
onnx's defs, read by the analysis (model/weightless.py, model/infer_kinds.py) and by convert
(convert/result_types.py).

With data propagation off, as qlin runs every inference, the ops of ``SHAPE_ONLY`` (ai.onnx)
work out their outputs' types and shapes from their inputs' types and shapes and their
attributes, and never ask for an input's values (``getInputData``): a weight they read may go
to inference without its data, and a node of theirs is inferred alike whatever data it is
given. tests/test_schema_inference.py holds each to onnx: a node of the op inferred with its
constant inputs as initializers (data given) and as typed inputs (none) gets the same types.
Concat reads values only in its data-propagation function, which is off.
"""

from __future__ import annotations

SHAPE_ONLY = frozenset({
    "DequantizeLinear", "QuantizeLinear", "MatMul", "Gemm", "Conv", "ConvTranspose",
    "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "Gather", "Add", "Mul",
    "Sigmoid", "LeakyRelu", "Softmax", "GlobalAveragePool", "AveragePool", "Concat",
})
