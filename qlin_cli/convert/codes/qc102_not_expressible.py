"""QC102 not-expressible, refused by the Q/DQ pass (convert/passes/qdq.py)."""

from __future__ import annotations

from ...code import Code


class NotExpressible(Code):
    """
    ## What it checks
    That the target opset and domain have a QuantizeLinear / DequantizeLinear that
    computes what the node computes: its types, its granularity (per-axis from
    ai.onnx 13, blocked from 21), its attributes (`saturate`, `output_dtype`,
    `precision`), and that qlin knows the types and shapes the rewrite depends on.
    With `--lower`, also that the primitive ops can compute it exactly.

    ## Why is this bad?
    Versioning.md: "The union of the operator sets specified by a given model MUST
    have a compatible operator declaration for each node in the model's graph." Each
    version of the op constrains what it takes: QuantizeLinear-10 reads "Constrain
    'y_zero_point' and 'y' to 8-bit integer tensor", so an int16 node has no
    declaration at ai.onnx 13. Writing the node anyway would give a model no reader
    accepts, or one that computes something else; qlin writes nothing instead.

    ## Example
    ```
    QuantizeLinear-21(x: float[4], s: float, zp: int16)   # --to-opset 13
    ```

    ## Fix
    Take one of the ways out the refusal lists; each was tried on the node before it
    was listed: a newer `--to-opset`, another `--to-domain` (com.microsoft has 16-bit
    and 4-bit types below ai.onnx 21), `--lower` (primitive ops, proven bit for bit),
    or declare the value_info qlin could not infer.
    """

    code = "QC102"
    name = "not-expressible"
    summary = "The target opset or domain has no Q/DQ that computes what the node computes."
