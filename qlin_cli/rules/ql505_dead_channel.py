import numpy as np

from .. import schema
from ..model.facts import shared_with
from .base import WARNING, ModelRule, Violation, magnitudes, scale_consts
from .base_numeric import by_channel, constant_array, g3, int_range
from .base_qdq import of_family, scale_of, zero_point_of

# A channel scale this many times the median of its tensor's channel scales is an outlier.
OUTLIER = 16.0


class DeadChannel(ModelRule):
    """
    ## What it checks
    For every per-axis QuantizeLinear or DequantizeLinear of a constant tensor (a
    weight), whether a whole channel (one index along `axis`) comes out as its
    zero point, so that every value of it dequantizes to 0:

    * a QuantizeLinear of constant float weights: a channel with non-zero weights
      where round(w / scale) is 0 for every weight, that is max |w| / scale <= 0.5
      ("y = saturate((x / y_scale) + y_zero_point)", rounding half to even,
      QuantizeLinear);
    * a DequantizeLinear of constant integer weights: a channel that holds only its
      zero point while its scale is an outlier, at least 16 times the median of the
      tensor's channel scales (and not 1.0, the scale onnxruntime's quantizer writes
      for an all-zero channel, whose zeros are the weights' own).

    ## Why is this bad?
    The output channel the weights feed loses its whole input: after
    dequantization it is the bias alone, whatever the activations. A per-channel
    scale from a range it was not computed from (a clamped or shared range, a
    calibration outlier) does this silently; the model loads and runs, and the
    accuracy loss shows only on data.

    ## Example
    ```
    w = [[0.5, -0.3], [0.0004, -0.0002]]        # channel 1 is small, not zero
    QuantizeLinear(w, scale=[0.004, 0.004], zp=[0, 0], axis=0)
    # channel 1: max |w| 0.0004 / 0.004 = 0.1 <= 0.5: every weight quantizes to 0
    ```

    ## Fix
    Give each channel a scale from its own range (max |w| / 127 for symmetric
    int8), and quantize the weights again.
    """

    code = "QL505"
    name = "dead-channel"
    severity = WARNING
    summary = "A per-axis scale that quantizes a whole channel of non-zero constant weights to 0."

    def check_model(self, view):
        for family, judge in ((schema.LINEAR_QUANTIZE, _quantized), (schema.LINEAR_DEQUANTIZE, _dequantized)):
            for body in view.bodies:
                found = [(i, f) for i, f in of_family(view, body, family)
                         if (shared_with(f) or f).granularity == schema.PER_AXIS and f.present_at(0)]
                ranges = _scale_ranges(found) if judge is _dequantized else [None] * len(found)
                for (i, f), known in zip(found, ranges, strict=True):
                    if known is not None and not _spread(*known):
                        continue  # no channel scale can be an outlier: the weights are not read
                    message = _judged(view, body, f, judge)
                    if message:
                        yield Violation(message, at=view.node_site(body, i))


def _scale_ranges(found: list) -> list:
    """(smallest, largest) finite non-zero |scale| of each node, all read together; None
    where not known so."""
    return magnitudes([c for _, c in scale_consts([f for _, f in found])])


def _judged(view, body, f, judge) -> str | None:
    axis = f.normalized_axis()
    scale = scale_of(f)
    if axis is None or scale is None or scale.ndim != 1:
        return None
    if judge is _dequantized and not _outlier_possible(scale):
        return None  # (its weights are not read)
    x = constant_array(view, body, f.inputs[0])
    if x is None or x.ndim <= axis or x.shape[axis] != scale.size or x.size == 0:
        return None
    return judge(f, by_channel(x, axis), scale, axis)


def _more(dead) -> str:
    more = int(dead.sum()) - 1
    return f" (and {more} more channel{'s' if more > 1 else ''})" if more else ""


def _quantized(f, rows, scale, axis):
    if rows.dtype.kind != "f":
        return None
    s = scale.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint(rows.astype(np.float32) / s[:, None])
    dead = (q == 0).all(axis=1) & (rows != 0).any(axis=1) & (s != 0)
    if not dead.any():
        return None
    c = int(np.argmax(dead))
    top = float(np.abs(rows[c]).max())
    hi = (int_range(f.quant_type) or (0, 127))[1]
    return (f"channel {c} (axis {axis}) of constant '{f.inputs[0]}' quantizes to its zero point "
            f"everywhere{_more(dead)}: max |w| {g3(top)} / scale {g3(s[c])} = {g3(top / float(s[c]))} "
            f"<= 0.5, so the whole channel dequantizes to 0; give it its own scale, max |w| / {hi} = "
            f"{g3(top / hi)}")


def _outlier_possible(scale) -> bool:
    """Whether some channel scale can be OUTLIER times the median of the finite non-zero ones:
    not when the largest is below OUTLIER times the smallest (the median is at least that)."""
    s = np.abs(scale.astype(np.float64))
    live = s[(s > 0) & np.isfinite(s)]
    return live.size >= 2 and _spread(live.min(), live.max())


def _spread(low: float, high: float) -> bool:
    """Whether scales from ``low`` to ``high`` (finite, non-zero) can hold an outlier: the
    median is at least ``low``, so none is when ``high`` is below OUTLIER times it."""
    return high >= OUTLIER * low


def _dequantized(f, rows, scale, axis):
    if rows.dtype.kind not in "iu" or f.in_type(0) == "int32":
        return None
    zp = zero_point_of(f)
    if zp is None:
        return None
    zp = np.broadcast_to(np.asarray(zp, np.int64).reshape(-1), (rows.shape[0],))
    s = np.abs(scale.astype(np.float64))
    live = s[(s > 0) & np.isfinite(s)]
    if live.size < 2:
        return None
    median = float(np.median(live))
    flat = (rows.astype(np.int64) == zp[:, None]).all(axis=1)
    dead = flat & (s >= OUTLIER * median) & (scale != 1.0) & np.isfinite(s)
    if not dead.any() or flat.all():
        return None
    c = int(np.argmax(dead))
    return (f"channel {c} (axis {axis}) of constant '{f.inputs[0]}' holds only its zero point "
            f"{int(zp[c])}{_more(dead)} while its scale {g3(scale[c])} is {g3(s[c] / median)}x the "
            f"median channel scale {g3(median)}: every weight below {g3(s[c] / 2)} in size rounded to 0 "
            f"and the whole channel dequantizes to 0; quantize the channel again with a scale from its "
            f"own range")
