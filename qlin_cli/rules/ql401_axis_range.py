from .. import schema
from .base import Rule


class AxisRange(Rule):
    """
    ## What it checks
    That `axis` (explicit or its default) lies in [-r, r-1], r being the rank of
    x, wherever the axis is used: per-axis and blocked quantization.

    ## Why is this bad?
    An axis outside the rank names no dimension: onnxruntime fails when the
    model runs and onnx.reference raises an IndexError. The default axis of 1 is
    out of range for a rank-1 input, a common slip.

    ## Example
    ```
    QuantizeLinear(x: [64], s: [64], zp: [64])          # axis defaults to 1
    ```

    ## Fix
    Set `axis` to the dimension the scale runs along (`axis=0` above).
    """

    code = "QL401"
    name = "axis-out-of-range"
    summary = "axis outside [-r, r-1] for a per-axis or blocked node."

    def check(self, n):
        if n.granularity not in (schema.PER_AXIS, schema.BLOCKED):
            return
        if n.axis is None or n.x_rank is None:
            return
        r = n.x_rank
        if not -r <= n.axis <= r - 1:
            how = "" if n.has("axis") else " (the default)"
            yield (
                f"axis {n.axis}{how} is outside [{-r}, {r - 1}] for x of rank {r}: set axis to the "
                f"dimension the scale runs along"
            )
