import numpy as np

from .. import schema
from .base import FamilyRule, finite_non_zero


class GroupScaleValue(FamilyRule):
    """
    ## What it checks
    That every statically known scale of the other quantization ops (QLinearConv,
    QLinearMatMul, QGemm, QLinearAdd ..., DynamicQuantizeLSTM, MatMulNBits,
    GatherBlockQuantized) is finite and not zero.

    ## Why is this bad?
    A zero scale makes the whole tensor collapse to its zero point (or divides by
    zero when requantizing the output); NaN or Inf poison every value it
    touches. No runtime checks scales. Negative scales are allowed: nothing in
    the specs forbids them and onnxruntime's symmetric n-bit quantizer writes
    them on purpose (the sign folds into the scale).

    ## Example
    ```
    QLinearConv(x, x_scale = 0.0, ...)
    ```

    ## Fix
    Recalibrate, or replace the bad entries with a small non-zero scale.
    """

    code = "QL503"
    name = "group-scale-value"
    summary = "A known scale of a QLinear, integer or n-bit op is zero, NaN or infinite."
    reads_values = True

    def clean_values(self, nodes):
        # one verdict per scale input of every node; a node is clean when all of its are
        # (a scale that is not a known constant has nothing to report: ``check``)
        consts, owner = [], []
        for k, n in enumerate(nodes):
            for i, p in enumerate(n.spec.inputs):
                if p.role == schema.SCALE and i < len(n.values) and n.values[i] is not None:
                    consts.append(n.values[i])
                    owner.append(k)
        out = [True] * len(nodes)
        for k, good in zip(owner, finite_non_zero(consts), strict=True):
            if not good:
                out[k] = False
        return out

    def check(self, n):
        for i, p in enumerate(n.spec.inputs):
            if p.role != schema.SCALE:
                continue
            value = n.value(i)
            if value is None or value.size == 0:
                continue
            values = value.astype(np.float64).reshape(-1)
            bad = ~(np.isfinite(values) & (values != 0))
            if not bad.any():
                continue
            idx = int(np.argmax(bad))
            more = int(bad.sum()) - 1
            extra = f" (and {more} more bad value{'s' if more > 1 else ''})" if more else ""
            at = f" at index {idx}" if values.size > 1 else ""
            yield (
                f"{p.name} '{n.input_name(i)}' holds {float(values[idx])!r}{at}{extra}; scales must be "
                f"finite and non-zero: recalibrate or replace the bad entries"
            )
