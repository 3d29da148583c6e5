"""QC201 op-not-convertible, refused by the other-ops pass (convert/passes/other_ops.py)."""

from __future__ import annotations

from ...code import Code


class OpNotConvertible(Code):
    """
    ## What it checks
    That every op other than the Q/DQ family can be written at the target opset
    exactly: the op exists there, each attribute, input and output the node uses
    exists there, and a step between two versions that changes what the op computes
    has a rewrite qlin can prove (or onnx.version_converter's, then proven).

    ## Why is this bad?
    Versioning.md: "The union of the operator sets specified by a given model MUST
    have a compatible operator declaration for each node in the model's graph." A
    node moved to an opset whose version of the op lacks what it uses (Resize-10 has
    no `sizes`, Gather-1 does not define negative indices, BatchNormalization-14 has
    no training outputs) has no declaration there, or means something else.

    ## Example
    ```
    Resize-13(x, roi, scales, sizes)   # --to-opset 10: Resize-10 takes no sizes
    ```

    ## Fix
    Convert to an opset whose version of the op has what the node uses, or rewrite
    the node before converting. The reason names the attribute, input or step.
    """

    code = "QC201"
    name = "op-not-convertible"
    summary = "An op other than Q/DQ has no exact form at the target opset."
