from .. import schema
from .base import Rule, first_ai_onnx
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
        r = n.in_rank(n.scale_index)
        shape = fmt_shape(n.scale_shape)
        if "block_size" not in n.spec.attributes and n.block_size == 0:
            if r is not None and r >= 2:
                since = first_ai_onnx(n.spec.kind, lambda s: "block_size" in s.attributes)
                hint = (
                    f"raise the opset to {since} and set block_size for blocked quantization"
                    if n.domain == schema.AI_ONNX
                    else f"use ai.onnx opset {since} or later for blocked quantization"
                )
                yield (
                    f"a scale of rank {r} {shape}; this version takes only scalar or 1-D scales: "
                    f"use a 1-D scale, or {hint}"
                )
            return
        b = n.block_size
        if b < 0:
            yield f"block_size {b}; it must be positive for blocked quantization or 0 otherwise"
        elif b == 0 and r is not None and r >= 2:
            yield (
                f"a scale of rank {r} {shape} but no block_size: set block_size for blocked "
                f"quantization"
            )
        elif b > 0 and r == 0:
            yield (
                f"block_size {b} with a scalar scale: remove block_size, or give a blocked scale "
                f"of x's rank"
            )
