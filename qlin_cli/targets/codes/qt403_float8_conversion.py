"""QT403 float8-conversion: the logic is here; whether a release converts otherwise is its
float8 probes' (``arithmetic``), what it does instead its ``float8_quantize``
(targets/<runtime>.py), which alone decides for a target without probes; docs/targets.md
lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class Float8Conversion(Code):
    """
    ## What it checks
    Quantize nodes with a float8 output whose conversion the target does differently
    from the spec.

    ## Why is this bad?
    QuantizeLinear's page: saturate "defines how the conversion behaves if an input value
    is out of range of the destination type. It only applies for float 8 quantization",
    and its tables give each float8 result (NaN or infinity beyond the range when it is 0).
    openvino converts through float16 (double rounding: 15.4999 becomes 16 in
    float8e4m3fn instead of 15), ignores `saturate=0` (values beyond the largest float8
    saturate instead of becoming NaN / Inf) and turns NaN into the negative largest
    value. onnxruntime with `saturate=0` maps values from 480 up to a few more to ±448
    instead of NaN in float8e4m3fn. Both are measured per release by float8 probes
    (tools/probe_quantize.py: each float8 type, saturate 0 and 1, values near rounding
    boundaries, beyond the range and NaN), whose outcome names openvino's conversion
    where a release gives exactly its codes, and the first code that differs otherwise:
    onnxruntime 1.24 to 1.32, openvino 2026.1 to 2026.4 (earlier releases refuse the
    node). A target's description of what it does instead holds where the release's own
    probe gives the outcome the description explains (``Float8Quantize.said``); a release
    whose probe gives another is reported in the probe's words. TensorRT
    documents FP8 outputs clamped to [-448, 448], so `saturate=0` is not honoured.

    ## Example
    ```
    QuantizeLinear-19(x: float, y_scale: float, y_zero_point: float8e4m3fn, saturate=0)
    ```

    ## Fix
    Nothing in the model changes it; validate float8 outputs on the target, and keep
    inputs within the float8 range if saturation behaviour matters.
    """

    code = "QT403"
    name = "float8-conversion"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target converts to float8 differently from the spec."

    @staticmethod
    def check(target, site):
        from .. import nodes

        f = site.facts
        fact = target.float8_quantize
        if fact is None or nodes.kind(f) != nodes.QUANTIZE:
            return
        q = nodes.quant_type(f)
        saturate = f.attr_int("saturate")
        what = fact.what.format(q=q)
        if target.probes_arithmetic:  # the release's own probes decide and say what it does
            probe = f"float8 {q} saturate={1 if saturate is None else saturate}"
            found = target.arithmetic(probe, site)
            said = None if found is None else found.differs
            if said is None:
                return
            if said != fact.said:  # the release does something the description does not say
                what = (f"conversion to {q} differs from the spec ({said}; measured by the release's "
                        "float8 probe)")
        elif q not in fact.types or (fact.saturate_0_only and saturate != 0):
            return
        yield target.finding("QT403", what, fix=fact.fix)
