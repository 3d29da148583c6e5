from .base import Rule, op_title
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
        if not n.present(2):
            return
        s, z = n.in_shape(1), n.in_shape(2)
        if s in ((), (1,)) and z in ((), (1,)):
            return  # one element each: QL409
        if s is None or z is None or len(s) != len(z):
            if s is not None and z is not None:
                yield self._msg(n, s, z)
            return
        if any(a is not None and b is not None and a != b for a, b in zip(s, z, strict=True)):
            yield self._msg(n, s, z)

    @staticmethod
    def _msg(n, s, z):
        return (
            f"node {n.where} ({op_title(n)}): scale '{n.input_name(1)}' has shape {fmt_shape(s)} "
            f"but zero point '{n.input_name(2)}' has shape {fmt_shape(z)}: give them one shape"
        )
