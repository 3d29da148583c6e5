from ..schema import dtypes
from .base import WARNING, Fix, RemoveAttribute, Rule, Violation


class SaturateNoEffect(Rule):
    """
    ## What it checks
    That `saturate` is only set on nodes whose output is one of the four float8
    types; "It only applies for float 8 quantization".

    ## Why is this bad?
    On an integer or float4 output the attribute does nothing. `saturate=0` on
    an int8 node suggests the author expected wrap-around or Inf, which never
    happens: integer outputs always clamp.

    ## Example
    ```
    QuantizeLinear(x, s, zp: int8, saturate=0)
    ```

    ## Fix
    Remove the attribute.
    """

    code = "QL303"
    name = "saturate-no-effect"
    severity = WARNING
    summary = "saturate is set on a node whose output is not float8."

    fixable = True

    def check(self, n):
        if not n.has("saturate") or "saturate" not in n.spec.attributes:
            return
        qt = n.quant_type
        if qt is None or qt in dtypes.SATURATE_APPLIES:
            return
        yield Violation(
            f"saturate={n.attr_int('saturate')} has no effect on {qt} outputs (it applies only to "
            f"float8 outputs): remove it",
            Fix("remove saturate", (RemoveAttribute("saturate"),)),
        )
