from .. import schema
from .base import INFO, ModelRule, Violation
from .base_qdq import differences, fed_by, label, same_values, scale_of


class RedundantRequantize(ModelRule):
    """
    ## What it checks
    For every QuantizeLinear whose input comes straight from a DequantizeLinear:
    whether it quantizes again with exactly the parameters the DequantizeLinear
    used (same scale and zero point values, types, granularity and axis).

    ## Why is this bad?
    DQ -> Q with one set of parameters gives back the integers it started from:
    two nodes that do nothing but cost time and hide the real producer from the
    fusers that look for DQ -> op -> Q patterns. It is what a tool leaves when it
    removes the op that sat between them.

    ## Example
    ```
    DequantizeLinear(xq, s, zp) -> xd
    QuantizeLinear(xd, s, zp) -> xq2          # xq2 == xq
    ```

    ## Fix
    Remove the pair and feed the QuantizeLinear's consumers from the
    DequantizeLinear's input.
    """

    code = "QL602"
    name = "redundant-requantize"
    severity = INFO
    summary = "A DQ -> Q pair that requantizes with the same parameters."

    def check_model(self, view):
        for body, i, f, j, d in fed_by(view, schema.LINEAR_QUANTIZE, schema.LINEAR_DEQUANTIZE):
            if f.quant_type != d.in_type(0) or differences(f, d):
                continue
            if same_values(scale_of(f), scale_of(d)) is None and \
                    f.inputs[f.scale_index] != d.inputs[d.scale_index]:
                continue  # unknown scales: cannot tell
            yield Violation(
                f"requantizes the output of DequantizeLinear {label(d, j)} with the parameters it "
                f"was dequantized with, giving back '{d.inputs[0]}': remove the pair and read "
                f"'{d.inputs[0]}' directly", at=view.node_site(body, i))
