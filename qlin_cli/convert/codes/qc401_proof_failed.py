"""QC401 proof-failed, refused by the prove pass (convert/passes/prove.py)."""

from __future__ import annotations

from ...code import Code


class ProofFailed(Code):
    """
    ## What it checks
    That every rewrite qlin would write computes, bit for bit, what the node it
    replaces computes: Q/DQ nodes in qlin's evaluator before and after on probe
    inputs (ties, bounds, NaN, infinities, every code of small types), other ops in
    onnx.reference at the source and the target opset. A rewrite that is not exact by
    construction and cannot be run on a probe is refused too.

    ## Why is this bad?
    A conversion changes the version of an op, not what the model computes: each
    operator page defines the result exactly ("y = saturate((x / y_scale) +
    y_zero_point)" for QuantizeLinear), so a rewrite that differs on one input is a
    different model. qlin writes nothing it has not proven.

    ## Example
    ```
    a node onnx.version_converter rewrites into ops that differ on a probe input
    ```

    ## Fix
    Convert to another opset, or rewrite the node by hand. The reason names the probe
    input and both results where a probe differed. `--no-verify` skips the Q/DQ
    proofs (their rewrites are exact by construction), never this refusal for a rewrite
    that is not.
    """

    code = "QC401"
    name = "proof-failed"
    summary = "A rewrite differs from the node it replaces on a probe input, or cannot be proven."
