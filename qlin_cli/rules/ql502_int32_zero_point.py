import numpy as np

from .base import WARNING, Rule


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
    reads_values = True

    def wants_values(self, n):
        return n.spec.kind == "dequantize" and n.in_type(0) == "int32" and n.present_at(n.zero_point_index)

    def check(self, n):
        if not self.wants_values(n):
            return
        zi = n.zero_point_index
        zp = n.value(zi)
        if zp is None or not np.any(zp != 0):
            return
        yield (
            f"int32 input dequantized with non-zero zero point '{n.input_name(zi)}' "
            f"({int(np.count_nonzero(zp))} non-zero of {zp.size}); int32 has no zero point: fold it "
            f"into the values and drop it"
        )
