from .. import schema
from .base import Rule
from .base_shapes import dim, fmt_shape


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
    dimension they were computed for. When exactly one other axis of x has the
    scale's length, the message names it (`set axis to 0`).
    """

    code = "QL405"
    name = "per-axis-shape"
    summary = "Per-axis scale whose length is not x's size along the axis."

    def check(self, n):
        if n.granularity != schema.PER_AXIS:
            return
        axis = n.normalized_axis()
        if axis is None:
            return
        want = dim(n.in_shape(0), axis)
        got = dim(n.scale_shape, 0)
        if want is None or got is None or want == got:
            return
        shape = n.in_shape(0)
        fits = [i for i, d in enumerate(shape or ()) if i != axis and d == got]
        if len(fits) == 1:  # the scale was computed along another axis: that is the fix
            way = f"set axis to {fits[0]}, the axis of x with {got} elements"
        elif fits:
            way = f"set axis to the one the scale was computed along ({', '.join(map(str, fits))} have " \
                  f"{got} elements), or give the scale {want} elements"
        else:
            way = f"give the scale {want} elements or fix axis"
        yield (
            f"per-axis scale '{n.input_name(n.scale_index)}' has length {got} but x "
            f"{fmt_shape(shape)} has {want} along axis {n.axis}: {way}"
        )
