import numpy as np

from .base import Rule, finite_non_zero, scale_consts


class ScaleValue(Rule):
    """
    ## What it checks
    That every value of a scale known statically (an initializer, a Constant,
    or a small external tensor) is finite and not zero.

    ## Why is this bad?
    A zero scale divides by zero (every output saturates or becomes NaN); NaN or
    Inf scales poison the whole tensor. Calibration bugs produce exactly these,
    and no runtime reports them. Negative scales are not reported: the spec puts
    no sign on a scale, the result stays consistent (the sign folds into the
    scale), and onnxruntime's symmetric n-bit quantizer writes negative blocked
    DequantizeLinear scales on purpose.

    ## Example
    ```
    y_scale = [0.02, 0.0, 0.05]
    ```

    ## Fix
    Recalibrate, or replace the bad entries with a small positive scale (for an
    all-zero channel any positive value quantizes to the zero point).
    """

    code = "QL501"
    name = "scale-value"
    summary = "A known scale value is zero, NaN or infinite."
    reads_values = True

    def clean_values(self, nodes):
        # a node whose scale is not a known constant has nothing to report (``check``)
        consts = [c for _, c in scale_consts(nodes)]
        good = finite_non_zero(consts)
        return [g or c is None for g, c in zip(good, consts, strict=True)]

    def check(self, n):
        si = n.scale_index
        scale = n.value(si)
        if scale is None or scale.size == 0:
            return
        values = scale.astype(np.float64).reshape(-1)
        bad = ~(np.isfinite(values) & (values != 0))
        if not bad.any():
            return
        idx = int(np.argmax(bad))
        more = int(bad.sum()) - 1
        extra = f" (and {more} more bad value{'s' if more > 1 else ''})" if more else ""
        at = f" at index {idx}" if values.size > 1 else ""
        yield (
            f"scale '{n.input_name(si)}' holds {float(values[idx])!r}{at}{extra}; scales must be "
            f"finite and non-zero: recalibrate or replace the bad entries"
        )
