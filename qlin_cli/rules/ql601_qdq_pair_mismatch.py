from .. import schema
from .base import WARNING, ModelRule, Violation
from .base_qdq import differences, fed_by, label


class QdqPairMismatch(ModelRule):
    """
    ## What it checks
    For every DequantizeLinear (any domain) whose input comes straight from a
    QuantizeLinear: that it dequantizes with the parameters the QuantizeLinear
    quantized with: the same scale and zero point values (an absent zero point is
    0; a scalar equals a one-element tensor), zero points of one type, and the
    same granularity, axis and block size. Values that are not known statically
    are not compared.

    ## Why is this bad?
    A Q -> DQ pair stands for "this tensor is quantized with these parameters":
    runtimes fuse the pair into the neighbouring ops on that assumption and
    compute with one set of parameters or the other, so the model gives
    different results on different runtimes (and with optimizations on or off).
    Run as written, the values come back rescaled. It usually means a tool
    rewrote one half of a pair.

    ## Example
    ```
    QuantizeLinear(x, s = 0.02, zp = 128) -> xq
    DequantizeLinear(xq, s = 0.04, zp = 128) -> xd
    ```

    ## Fix
    Give the DequantizeLinear the QuantizeLinear's scale and zero point (share
    the same initializers), or requantize explicitly with a second pair.
    """

    code = "QL601"
    name = "qdq-pair-mismatch"
    severity = WARNING
    summary = "A Q -> DQ pair whose scale, zero point, type or axis differ."

    def check_model(self, view):
        for body, i, f, j, q in fed_by(view, schema.LINEAR_DEQUANTIZE, schema.LINEAR_QUANTIZE):
            diff = differences(q, f)
            if diff:
                yield Violation(
                    f"dequantizes '{f.inputs[0]}' from QuantizeLinear {label(q, j)} with "
                    f"{'; '.join(diff)}: use the quantize's parameters (share its initializers)",
                    at=view.node_site(body, i))
