from .. import schema
from .base import Rule, op_title
from .base_shapes import dim, fmt_shape, one_element_vector


class PerAxisShape(Rule):
    """
    ## What it checks
    That a per-axis scale is 1-D with length D[axis], the size of x along the
    quantization axis.

    ## Why is this bad?
    A scale of the wrong length cannot be broadcast along the axis: runtimes
    fail when the model runs, or quantize channels with another channel's
    scale.

    ## Example
    ```
    QuantizeLinear(x: [1, 3, 8, 8], s: [4], zp: [4], axis=1)     # D[1] is 3
    ```

    ## Fix
    Give the scale and zero point D[axis] elements, or set `axis` to the
    dimension they were computed for.
    """

    code = "QL405"
    name = "per-axis-shape"
    summary = "Per-axis scale whose length is not x's size along the axis."

    def check(self, n):
        if n.granularity != schema.PER_AXIS or one_element_vector(n):
            return
        axis = n.normalized_axis()
        if axis is None or (n.domain == schema.MICROSOFT and not n.has("axis")):
            return
        want = dim(n.in_shape(0), axis)
        got = dim(n.in_shape(1), 0)
        if want is None or got is None or want == got:
            return
        yield (
            f"node {n.where} ({op_title(n)}): per-axis scale '{n.input_name(1)}' has length {got} "
            f"but x {fmt_shape(n.in_shape(0))} has {want} along axis {n.axis}: give the scale "
            f"{want} elements or fix axis"
        )
