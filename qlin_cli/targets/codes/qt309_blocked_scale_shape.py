"""QT309 blocked-scale-shape: the logic is here, each target's fact is its ``blocked_scale``
(targets/<runtime>.py); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code


class BlockedScaleShape(Code):
    """
    ## What it checks
    Blocked QuantizeLinear / DequantizeLinear nodes whose scale is not x's shape with
    ceil(Di / block_size) along the axis.

    ## Why is this bad?
    The QuantizeLinear page: "Blocked quantization: The scale's shape is identical to the
    input's shape, except for one dimension, in which blocking is performed. Given x shape
    (D0, ..., Di, ..., Dn), axis=i, and block size B: y_scale shape is (D0, ..., ceil(Di/B),
    ..., Dn)." qlin reports a node that breaks it as QL406; the kernels read exactly that
    shape and fail otherwise. Measured: onnxruntime 1.31.1 fails at the first run ("x_scale
    and x must have the same shape despite the quantize axis for blocked quantization");
    openvino 2026.4.1 fails to convert the node ("Conversion is failed for:
    DequantizeLinear-21"), though it repeats a scale dimension of 1 off the axis. NVIDIA
    ModelOpt's int4 AWQ export writes such scales.

    ## Example
    ```
    DequantizeLinear(x: int4 [64, 32], x_scale: [4, 16], axis=0, block_size=16)  # needs [4, 32]
    ```

    ## Fix
    Give the scale x's shape with ceil(Di / block_size) along the axis.
    """

    code = "QT309"
    name = "blocked-scale-shape"
    summary = "A blocked scale's shape is not the one the target's kernel reads; it fails."

    @staticmethod
    def check(target, site):
        from .. import nodes

        f = site.facts
        fact = target.blocked_scale
        if fact is None or not nodes.is_linear(f):
            return
        misfit = nodes.blocked_scale_misfit(f, broadcast=fact.broadcast)
        if misfit is not None:
            yield target.finding("QT309", f"{misfit}: {fact.what}",
                                 fix="give the scale x's shape with ceil(Di / block_size) along the axis")
