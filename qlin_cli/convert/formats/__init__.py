"""Quantization formats: a QOperator node (QLinearConv, QGemm, com.microsoft QLinearAdd ...)
and its QDQ form (DequantizeLinear -> the float op -> QuantizeLinear).

* ``schema/qdq_forms.py``: per (domain, op), where its quantized inputs, scales, zero points, bias and
  output are, and the float op it stands for (facts, as data).
* ``to_qdq.py``: one QOperator node -> its QDQ nodes, or why it has none at the target;
  ``nbits.py``: MatMulNBits -> blocked DequantizeLinear + MatMul; ``gather_block.py``:
  GatherBlockQuantized -> blocked DequantizeLinear + Gather (both proven, by ``nbits_proof.py``,
  and both back);
  ``dynamic.py``: quantize_dynamic's DynamicQuantizeLinear -> MatMulInteger / ConvInteger ->
  Cast -> Mul -> DequantizeLinear at the run-time scale -> MatMul / Conv (measured).
* ``to_qoperator.py``: a QDQ group (DequantizeLinear inputs -> float op -> one
  QuantizeLinear) -> its QOperator node, or why the group stays as it is.
* ``measure.py``: what the rewrite computes against the node it replaces, on random and
  edge inputs, in steps of the output's quantization. The two compute differently by their
  pages (QLinearConv accumulates in integers and requantizes once; DequantizeLinear ->
  Conv -> QuantizeLinear computes in float and rounds there), so a format rewrite is
  measured, never proven bit for bit, and written only within the bound the user allows
  (``--tolerance``).
"""

from __future__ import annotations

# What the command line and the API accept; nothing here imports onnx (the CLI reads them)
FORMATS = ("qdq", "qoperator")  # --to-format
WEIGHTS = ("fold", "unfold", "unfold-bias", "strip")  # --weights (convert/passes/weights.py)
