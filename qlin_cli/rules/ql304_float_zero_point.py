import numpy as np

from ..schema import dtypes
from .base import WARNING, Rule


class FloatZeroPoint(Rule):
    """
    ## What it checks
    That the zero point of a float8, float6 or float4 quantization is zero.

    ## Why is this bad?
    The spec says the zero point "is usually not used for quantization to float8
    and 4bit types"; runtimes disagree on whether they add it at all
    (onnx.reference ignores it for float8), so a non-zero value gives different
    results on different runtimes.

    ## Example
    ```
    QuantizeLinear(x, s, zp: float8e4m3fn = 1.0)
    ```

    ## Fix
    Use a zero point of 0 (or omit it and set `output_dtype`), and fold any
    offset into the graph before the quantization.
    """

    code = "QL304"
    name = "float-zero-point"
    severity = WARNING
    summary = "Non-zero zero point for a float8/float6/float4 quantization."
    reads_values = True

    def wants_values(self, n):
        qt = n.quant_type
        return qt is not None and dtypes.is_low_precision_float(qt) and n.present_at(n.zero_point_index)

    def check(self, n):
        if not self.wants_values(n):
            return
        qt, zp = n.quant_type, n.zero_point_index
        value = n.value(zp)
        if value is None:
            return
        values = value.astype(np.float32)
        bad = ~(values == 0)
        if bad.any():
            first = values.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
            yield (
                f"zero point '{n.input_name(zp)}' of the {qt} quantization holds {float(first)!r} "
                f"({int(bad.sum())} non-zero of {values.size}); runtimes disagree on adding it: use 0"
            )
