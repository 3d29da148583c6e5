from ..schema import dtypes
from .base import Rule, fmt_types


class Precision(Rule):
    """
    ## What it checks
    That a non-zero `precision` (ai.onnx QuantizeLinear 23 and later) names a
    floating type the division x / y_scale can be carried out in: float,
    float16, bfloat16 or double. qlin's decision: integer and 8-bit-or-smaller
    float types cannot hold a quotient, so they are refused.

    ## Why is this bad?
    The spec says `precision` is "the precision of the division operation";
    a type such as int8 or float8e4m3fn has no meaningful division, and runtimes
    either reject the node or compute something that depends on the runtime.

    ## Example
    ```
    QuantizeLinear(x: float, s: float, zp: int8, precision=INT8)
    ```

    ## Fix
    Set `precision` to FLOAT (1), FLOAT16 (10) or BFLOAT16 (16), or remove it to
    divide in the scale's type.
    """

    code = "QL302"
    name = "precision"
    summary = "precision names a type the division cannot be done in."

    def check(self, n):
        if "precision" not in n.spec.attributes:
            return
        p = n.attr_int("precision")
        if not p:
            return
        name = dtypes.name_of(p)
        if name not in dtypes.PRECISION_TYPES:
            yield (
                f"precision {p} ({name}) cannot hold the quotient x / y_scale (allowed: "
                f"{fmt_types(dtypes.PRECISION_TYPES)}): use one of those or remove precision"
            )
