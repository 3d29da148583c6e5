from .. import schema
from .base import Rule, op_title
from .base_shapes import fmt_shape, one_element_vector


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
        if n.domain != schema.MICROSOFT or n.has("axis"):
            return
        if n.scale_rank != 1 or one_element_vector(n):
            return
        yield (
            f"node {n.where} ({op_title(n)}) has a 1-D scale (shape {fmt_shape(n.in_shape(1))}) "
            f"but no axis; com.microsoft has no default axis: add axis, or use scalar scale "
            f"and zero point"
        )
