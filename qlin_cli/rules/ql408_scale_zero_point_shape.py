from ..schema import semantics
from .base import Rule
from .base_shapes import fmt_shape


class ScaleZeroPointShape(Rule):
    """
    ## What it checks
    That the scale and the zero point have the same shape ("In all cases,
    y_zero_point must have the same shape as y_scale").

    ## Why is this bad?
    Different shapes mean different granularities for the two parameters; some
    runtimes broadcast one of them silently, others fail.

    ## Example
    ```
    QuantizeLinear(x: [1, 3, 8, 8], s: [3], zp: [], axis=1)
    ```

    A scalar and a shape-[1] tensor are both one element, and every runtime (and
    onnx's own test cases) treats them alike; that pairing is reported as
    information by QL409, not here.

    ## Fix
    Give the zero point the scale's shape (repeat the value per channel).
    """

    code = "QL408"
    name = "scale-zero-point-shape"
    summary = "Scale and zero point shapes differ."

    def check(self, n):
        zi = n.zero_point_index
        if not n.present_at(zi):
            return
        s, z = n.scale_shape, n.in_shape(zi)
        if _one(s) and _one(z):
            return  # one element each: QL409
        if s is None or z is None:
            return
        if len(s) != len(z) or any(
                a is not None and b is not None and a != b for a, b in zip(s, z, strict=True)):
            yield (
                f"scale '{n.input_name(n.scale_index)}' has shape {fmt_shape(s)} but zero point "
                f"'{n.input_name(zi)}' has shape {fmt_shape(z)}: give them one shape"
            )


def _one(shape) -> bool:
    return shape == () or semantics.is_one_element(shape)
