from .base import Rule, first_ai_onnx, op_title
from .base_shapes import fmt_shape


class BlockSize(Rule):
    """
    ## What it checks
    That `block_size` is positive exactly when the quantization is blocked: it
    is never negative, a scale of rank 2 or more has a block size, and a scalar
    scale has none.

    ## Why is this bad?
    "The block size is a positive integer", used "only for blocked
    quantization". A rank-2 scale without a block size is no granularity at
    all; a block size on a scalar scale is ignored by some runtimes and refused
    by others.

    ## Example
    ```
    QuantizeLinear(x: [4, 64], s: [4, 2], zp: [4, 2], axis=1)   # block_size missing
    ```

    ## Fix
    Set `block_size` for a blocked scale (ceil(Di / Si)), or remove it for
    per-tensor and per-axis scales.
    """

    code = "QL407"
    name = "block-size"
    summary = "block_size negative, missing on a blocked scale, or set on a scalar scale."

    def check(self, n):
        if "block_size" not in n.spec.attributes and n.block_size == 0:
            r = n.scale_rank
            if r is not None and r >= 2:
                since = first_ai_onnx(n.spec.kind, lambda s: "block_size" in s.attributes)
                hint = (
                    f"raise the opset to {since} for blocked quantization" if n.domain == ""
                    else f"use ai.onnx opset {since} or later for blocked quantization"
                )
                yield (
                    f"node {n.where} ({op_title(n)}) has a scale of rank {r} "
                    f"{fmt_shape(n.in_shape(1))}; this version takes only scalar or 1-D scales: "
                    f"use a 1-D scale, or {hint}"
                )
            return
        b, r = n.block_size, n.scale_rank
        if b < 0:
            yield (
                f"node {n.where} ({op_title(n)}) has block_size {b}; it must be positive for "
                f"blocked quantization or 0 otherwise"
            )
        elif b == 0 and r is not None and r >= 2:
            yield (
                f"node {n.where} ({op_title(n)}) has a scale of rank {r} "
                f"{fmt_shape(n.in_shape(1))} but no block_size: set block_size for blocked "
                f"quantization"
            )
        elif b > 0 and r == 0:
            yield (
                f"node {n.where} ({op_title(n)}) has block_size {b} with a scalar scale: remove "
                f"block_size, or give a blocked scale of x's rank"
            )
