from ..check.diagnostic import WARNING
from ..schema import dtypes
from .base import Rule, op_title


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

    def check(self, n):
        if "saturate" not in n.attrs or "saturate" not in n.spec.attributes:
            return
        qt = n.quant_type
        if qt is None or qt in dtypes.SATURATE_APPLIES:
            return
        yield (
            f"node {n.where} ({op_title(n)}) sets saturate={n.attr_int('saturate')}, which has no "
            f"effect on {qt} outputs (it applies only to float8 outputs): remove it"
        )
