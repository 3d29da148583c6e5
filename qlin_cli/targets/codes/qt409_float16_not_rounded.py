"""QT409 float16-not-rounded: the logic is here, each target's facts are its
``float16_in_float32`` (onnxruntime: its kernel registry) and ``keeps_float32_between`` (its
release's float16-casts probe); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class Float16NotRounded(Code):
    """
    ## What it checks
    float16 QuantizeLinear / DequantizeLinear nodes the target runs in float32 (no
    float16 kernel) next to a node it also runs in float32: the float16 value between
    them is never rounded to float16.

    ## Why is this bad?
    The model says the value is float16. The QuantizeLinear page: "x (heterogeneous) - T1:
    N-D full precision Input tensor to be quantized", T1 the type the model gives x (float16
    here), so the x the node reads is a float16 value; DequantizeLinear's y (y = (x -
    x_zero_point) * x_scale) has the scale's type, float16 here. onnxruntime's CPU provider
    has no float16 kernel for com.microsoft QuantizeLinear / DequantizeLinear nor for MatMul
    or Conv: it runs each between inserted Casts and removes a Cast float -> float16
    followed by a Cast float16 -> float, so a DequantizeLinear output reaches the MatMul, or
    a MatMul output the QuantizeLinear, with float32 precision. openvino's CPU plugin
    converts every float16 value to float32 and computes in float32 (its CPU device page:
    "the plugin internally converts all f16 values to f32, and all computations are executed
    in f32 native precision"), so no value between two nodes is rounded to float16.
    Measured in each release by a probe per version of the ops (tools/probe_quantize.py,
    "float16 between nodes"): a DequantizeLinear of float16 output feeding a QuantizeLinear,
    whose codes differ from the page's where the value between them is not rounded to
    float16; the code is reported for the releases whose probe kept float32 there. On
    onnxruntime 1.31.1 also a float16 Q -> DQ -> MatMul -> Q -> DQ with com.microsoft Q/DQ
    gives other codes than the same graph with ai.onnx Q/DQ-19 (which have float16 kernels)
    on 7 of 1,536 outputs; on openvino 2026.4.1 a Relu or a Mul between the DequantizeLinear
    and the QuantizeLinear keeps float32 as well.

    ## Example
    ```
    y = MatMul(x: float16, w: float16)
    com.microsoft QuantizeLinear(y, y_scale: float16)
    ```

    ## Fix
    onnxruntime: use ai.onnx QuantizeLinear / DequantizeLinear-19 or newer (`qlin convert
    --to-domain ai.onnx --to-opset 19`), or compute the model in float32. openvino: compute
    the model in float32, or validate its outputs on openvino.
    """

    code = "QT409"
    name = "float16-not-rounded"
    severity = WARNING
    summary = "The target keeps float32 precision where the model rounds to float16."

    @staticmethod
    def check(target, site):
        from ... import schema
        from .. import nodes

        f = site.facts
        if not schema.is_linear(f.spec) or not target.float16_in_float32(f.op, f.domain, f.opset, f):
            return
        if not target.keeps_float32_between(site):
            return
        opsets = dict(site.opsets)
        if nodes.kind(f) == nodes.QUANTIZE:
            near = [site.x_from] if nodes.x_type(f) == "float16" and site.x_from is not None else []
        else:
            near = [(op, dom) for op, dom, _ in site.consumers] if nodes.out_type(f) == "float16" else []
        hit = sorted({op for op, dom in near
                      if target.float16_in_float32(op, dom, schema.opset_of(opsets, dom))})
        if hit:
            value = "its input x" if nodes.kind(f) == nodes.QUANTIZE else "its output y"
            why = target.float16_why.format(ops=", ".join(hit))
            yield target.finding("QT409", f"{why}, so {value} is not rounded to float16 as the model says",
                                 fix=target.float16_fix)
