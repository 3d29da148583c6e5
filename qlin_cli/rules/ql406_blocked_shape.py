from .. import schema
from .base import Rule, ceil_div
from .base_shapes import fmt_shape


class BlockedShape(Rule):
    """
    ## What it checks
    For blocked quantization: the scale has x's rank, equals x's shape in every
    dimension but the axis, and `block_size` lies in
    [ceil(Di/Si), ceil(Di/(Si-1)) - 1], Di and Si being the sizes of x and the
    scale along the axis.

    ## Why is this bad?
    Outside that range some blocks get no scale or some scales cover no
    element: the result is undefined and runtimes either fail or read past the
    scale.

    ## Example
    ```
    QuantizeLinear(x: [4, 64], s: [4, 2], axis=1, block_size=16)  # needs 32
    ```

    ## Fix
    Set `block_size` to ceil(Di / Si) (or any value in the range the message
    gives), or reshape the scale.
    """

    code = "QL406"
    name = "blocked-shape"
    summary = "Blocked scale shape or block_size inconsistent with x."

    def check(self, n):
        if n.granularity != schema.BLOCKED or n.block_size <= 0:
            return
        xs, ss = n.in_shape(0), n.scale_shape
        if xs is None or ss is None:
            return
        head = f"blocked scale '{n.input_name(n.scale_index)}' {fmt_shape(ss)}"
        if len(xs) != len(ss):
            yield (
                f"{head} has rank {len(ss)} but x {fmt_shape(xs)} has rank {len(xs)}: a blocked "
                f"scale has x's rank"
            )
            return
        axis = n.normalized_axis()
        if axis is None:
            return  # QL401 reports the axis
        for j, (d, s) in enumerate(zip(xs, ss, strict=True)):
            if j != axis and d is not None and s is not None and d != s:
                yield (
                    f"{head} differs from x {fmt_shape(xs)} in dimension {j} ({s} vs {d}), which "
                    f"is not the blocking axis {axis}: only the axis may differ"
                )
                return
        di, si, b = xs[axis], ss[axis], n.block_size
        if di is None or si is None:
            return
        if si == 0:
            yield f"{head} has size 0 along axis {axis}: give it ceil({di}/{b}) elements"
            return
        lo = ceil_div(di, si)
        hi = ceil_div(di, si - 1) - 1 if si > 1 else None
        if b < lo or (hi is not None and b > hi):
            rng = f"[{lo}, {hi}]" if hi is not None else f"[{lo}, inf)"
            yield (
                f"{head}: block_size {b} is outside {rng} for x size {di} and {si} scales along "
                f"axis {axis}: set block_size to {lo}"
            )
