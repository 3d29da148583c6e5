from ..check.diagnostic import INFO
from .base import Rule, op_title
from .base_shapes import dim


class OneElementScale(Rule):
    """
    ## What it checks
    For a scale (or zero point) of shape [1] where a scalar is meant: x is not 1
    wide along the axis, so the scale cannot be per-axis and is used as a
    per-tensor scale; or the scale is a scalar and the zero point has shape [1].

    ## Why is this bad?
    The spec says a per-tensor scale "is a scalar" and a per-axis one has
    D[axis] elements. onnx.reference and onnxruntime both treat a one-element
    vector as a scalar, so the model runs, but stricter runtimes and converters
    may refuse it or read it as per-axis.

    ## Example
    ```
    QuantizeLinear(x: [1, 3, 8, 8], s: [1], zp: [1])
    ```

    ## Fix
    Store the scale and zero point as scalars (shape []).
    """

    code = "QL409"
    name = "one-element-scale"
    severity = INFO
    summary = "Scale of shape [1] used where a scalar is meant."

    def check(self, n):
        if n.in_shape(1) == () and n.in_shape(2) == (1,):
            yield (
                f"node {n.where} ({op_title(n)}): zero point '{n.input_name(2)}' has shape [1] "
                f"while the scale is a scalar: store the zero point as a scalar (shape [])"
            )
            return
        if n.in_shape(1) != (1,):
            return
        axis = n.normalized_axis()
        along = dim(n.in_shape(0), axis) if axis is not None else None
        if along == 1 and n.has("axis"):
            return  # a genuine per-axis scale over a dimension of size 1
        yield (
            f"node {n.where} ({op_title(n)}): scale '{n.input_name(1)}' has shape [1] and is used "
            f"as a per-tensor scale: store scale and zero point as scalars (shape [])"
        )
