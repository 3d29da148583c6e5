from .. import schema
from .base import Rule
from .base_shapes import fmt_shape


class MissingAxis(Rule):
    """
    ## What it checks
    That a com.microsoft QuantizeLinear / DequantizeLinear with a 1-D scale has
    an explicit `axis`.

    ## Why is this bad?
    In com.microsoft, `axis` has no default: "If it's not specified, it means
    per-tensor quantization and input 'x_scale' and 'x_zero_point' must be
    scalars." A 1-D scale without an axis contradicts itself, and runtimes
    differ in what they do with it.

    ## Example
    ```
    com.microsoft.QuantizeLinear(x: [1, 3, 8, 8], s: [3], zp: [3])
    ```

    ## Fix
    Add `axis` (1 above), or make the scale and zero point scalars.
    """

    code = "QL404"
    name = "missing-axis"
    summary = "com.microsoft node with a 1-D scale and no axis."

    def check(self, n):
        spec = n.spec
        if spec.axis_absent != schema.AXIS_ABSENT_PER_TENSOR or n.has("axis"):
            return
        if n.in_rank(n.scale_index) != 1 or n.granularity is not None:
            return
        yield (
            f"a 1-D scale (shape {fmt_shape(n.scale_shape)}) but no axis; {spec.domain_name} has no "
            f"default axis: add axis, or use scalar scale and zero point"
        )
