import numpy as np

from ..check.diagnostic import WARNING
from .base import Rule, op_title


class Int32ZeroPoint(Rule):
    """
    ## What it checks
    That DequantizeLinear of an int32 tensor has no zero point, or a zero one.

    ## Why is this bad?
    "In the case of dequantizing int32, there's no zero point (zero point is
    supposed to be 0)." int32 tensors are accumulators (biases of quantized
    convolutions); a non-zero zero point means the bias was quantized with the
    wrong parameters, and kernels that fuse the bias ignore it.

    ## Example
    ```
    DequantizeLinear(bias: int32, s, zp: int32 = 5)
    ```

    ## Fix
    Drop the zero point and fold the offset into the int32 values.
    """

    code = "QL502"
    name = "int32-zero-point"
    severity = WARNING
    summary = "Non-zero zero point when dequantizing int32."

    def check(self, n):
        if n.spec.kind != "dequantize" or n.in_type(0) != "int32" or not n.present(2):
            return
        zp = n.in_value(2)
        if zp is None or not np.any(zp != 0):
            return
        yield (
            f"node {n.where} ({op_title(n)}): int32 input dequantized with non-zero zero point "
            f"'{n.input_name(2)}' ({int(np.count_nonzero(zp))} non-zero of {zp.size}); int32 "
            f"has no zero point: fold it into the values and drop it"
        )
