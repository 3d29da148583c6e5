import numpy as np
from onnx import TensorProto

from .. import schema
from .base import WARNING, Rule, magnitudes, scale_consts

# The smallest normal number of each scale type (numpy's finfo(...).tiny).
TINY = {"float": 2.0**-126, "double": 2.0**-1022, "float16": 2.0**-14, "bfloat16": 2.0**-126}
F16_TINY = 2.0**-14  # 6.1035e-05
# Bits of the significand a normal number keeps (the implicit one included).
DIGITS = {"float": 24, "double": 53, "float16": 11, "bfloat16": 8}
# Exponent of the smallest subnormal step: a subnormal is m * 2**STEP with m < 2**(DIGITS - 1).
STEP = {"float": -149, "double": -1074, "float16": -24, "bfloat16": -133}


class SubnormalScale(Rule):
    """
    ## What it checks
    That no value of a scale known statically is subnormal: non-zero but below the
    smallest normal number of its own type (float32 1.175e-38, float16 6.104e-05,
    bfloat16 1.175e-38). And, for a node that computes in float16 with a float32
    (or double) scale, that no scale value lies below float16's smallest normal
    6.104e-05: a DequantizeLinear whose output is float16 ("The output type also
    determines the precision of the multiplication operation", DequantizeLinear),
    or a QuantizeLinear with `precision` float16 ("The type of y_scale determines
    the precision of the division operation between x and y_scale, unless the
    precision attribute is specified", QuantizeLinear). A zero scale is QL501's.

    ## Why is this bad?
    A subnormal keeps fewer significant bits the smaller it is (a float16 scale of
    3e-06 keeps 6 of 11), runtimes built to flush subnormals to zero read it as 0
    and divide by zero, and XNNPACK refuses a model with such scales
    (ai-edge-quantizer#678). A float32 scale computed in float16 is rounded to
    float16 first: below 6.104e-05 it becomes a subnormal and below 2.98e-08 zero,
    the float16 underflow of a QDQ model converted to float16 (ModelOpt#468, whose
    fix warns when a Q/DQ scale "overflows or underflows when cast to FP16").

    ## Example
    ```
    DequantizeLinear(x_q, x_scale: float16 = 3e-06)     # a float16 subnormal
    DequantizeLinear(x_q, x_scale: float = 1e-05, output_dtype=FLOAT16)
    ```

    ## Fix
    Recalibrate with a floor on the scale at the type's smallest normal (the
    quantized values then span fewer levels), or keep the scale and the
    computation in float32.
    """

    code = "QL504"
    name = "subnormal-scale"
    severity = WARNING
    summary = "A known scale value is subnormal, or underflows in the float16 the node computes in."
    reads_values = True

    def wants_values(self, n) -> bool:
        si = n.scale_index
        return si is not None and n.present_at(si) and n.in_type(si) in TINY

    def clean_values(self, nodes):
        # every node's scale looked at together: clean where its smallest finite non-zero |v|
        # is at least the limit ``check`` holds it to (a node with no known scale: nothing)
        scales = scale_consts(nodes)
        consts = [c for _, c in scales]
        out = []
        for n, (si, c), known in zip(nodes, scales, magnitudes(consts), strict=True):
            kind = n.in_type(si) if si is not None else None
            if c is None or kind not in TINY:
                out.append(True)
                continue
            # the limit is the type's smallest normal or float16's, whichever is larger where the
            # node computes in float16: a magnitude at or above both needs no look at the node
            out.append(known is not None and (known[0] >= max(TINY[kind], F16_TINY)
                                              or known[0] >= _limit(n, kind)))
        return out

    def check(self, n):
        si = n.scale_index
        kind = n.in_type(si) if si is not None else None
        if kind not in TINY:
            return
        scale = n.value(si)
        if scale is None or scale.size == 0:
            return
        values = np.abs(scale.astype(np.float64).reshape(-1))
        bad = np.isfinite(values) & (values > 0) & (values < _limit(n, kind))
        if not bad.any():
            return
        idx = int(np.argmax(bad))
        more = int(bad.sum()) - 1
        extra = f" (and {more} more such value{'s' if more > 1 else ''})" if more else ""
        at = f" at index {idx}" if values.size > 1 else ""
        v = float(scale.reshape(-1)[idx])
        name = n.input_name(si)
        if values[idx] < TINY[kind]:
            bits = _bits(abs(v), kind)
            yield (
                f"scale '{name}' holds {_text(v, kind)}{at}{extra}, a {kind} subnormal (below "
                f"{_text(TINY[kind], kind)}): it keeps {bits} significant bit{'s' if bits != 1 else ''} "
                f"of {DIGITS[kind]}, and a runtime that flushes subnormals reads 0; floor the scale at "
                f"{_text(TINY[kind], kind)} or store it in a wider type")
            return
        h = float(np.float16(v))
        dq = n.spec.family == schema.LINEAR_DEQUANTIZE
        why = "its output is float16" if dq else "its precision is float16"
        if h == 0:
            became = "0 (a division by zero)"
        else:
            off = abs(h - v) / abs(v) * 100
            bits = _bits(abs(h), "float16")
            became = f"the subnormal {_text(h, 'float')} ({off:.2g}% off, {bits} of 11 bits)"
        yield (
            f"scale '{name}' holds {_text(v, kind)}{at}{extra}, below float16's smallest normal "
            f"{_text(F16_TINY, 'float16')}, and this node computes in float16 ({why}): the scale "
            f"becomes {became}; floor the scale at {_text(F16_TINY, 'float16')} or compute in float32")


def _limit(n, kind: str) -> float:
    """The smallest |scale| not reported on ``n``: its type's smallest normal, or float16's
    where a float or double scale is used in a float16 computation."""
    if kind in ("float", "double") and _computes_in_float16(n):
        return max(TINY[kind], F16_TINY)
    return TINY[kind]


def _computes_in_float16(n) -> bool:
    if n.spec is None:
        return False
    if n.spec.family == schema.LINEAR_DEQUANTIZE:
        return n.attrs.get("output_dtype") == TensorProto.FLOAT16 or n.out_type == "float16"
    return n.attrs.get("precision") == TensorProto.FLOAT16


def _bits(v: float, kind: str) -> int:
    """Significant bits of a subnormal ``v`` of ``kind``: those of m in v = m * 2**STEP."""
    m = int(round(v / 2.0 ** STEP[kind]))
    return max(m.bit_length(), 0)


def _text(x: float, kind: str) -> str:
    dt = {"float16": np.float16, "double": np.float64}.get(kind, np.float32)
    return np.format_float_scientific(dt(x), unique=True, trim="-", precision=4)
