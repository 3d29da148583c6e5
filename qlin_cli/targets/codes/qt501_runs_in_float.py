"""QT501 runs-in-float. Read from the release's measured QDQ fusion (targets/fusion.py,
tools/probe_fusion.py, tools/probe_fusion_openvino.py): onnxruntime and openvino releases with
fusion data, ``fusion_table``."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class RunsInFloat(Code):
    """
    ## What it checks
    Whether the runtime release fuses the QDQ group around an op (DequantizeLinear ->
    Conv / MatMul / Gemm / Add / Mul / AveragePool / Concat ... -> QuantizeLinear) into an
    integer kernel when it loads the model, as measured in that release: every group of
    tools/probe_fusion.py's matrix (ops x activation and weight types x per tensor / per
    channel and the axis x symmetric weights x a QuantizeLinear after the op or not x a
    Relu / Clip before it x shared DequantizeLinear or initializer x blocked MatMul
    weights) was loaded with the release's default session options (ORT_ENABLE_ALL) and
    its optimized graph (`optimized_model_filepath`) read back. The group's key
    (qlin_cli/targets/fusion.py) holds the facts that decide; a group whose key the
    release fuses is silent, one whose key it leaves as it is gets this warning with the
    nearest measured group that it fuses.

    ## Why is this bad?
    The model loads and its results are right, but the op runs in float between the
    Q/DQ nodes, which then only add work: the "quantized" model can be slower than the
    float one. onnxruntime's CPU provider fuses a group only when it has the shape its
    selectors want (onnxruntime/core/optimizer/qdq_transformer/selectors_actions/
    qdq_selector_action_transformer.cc and qdq_selectors.cc; `is_int8_allowed`,
    `session.qdqisint8allowed` in include/onnxruntime/core/session/
    onnxruntime_session_options_config_keys.h). Each release 1.18.1 .. 1.32.0 is measured
    on x86_64 and judged from its own outcomes. In 1.31.1: a Conv needs a QuantizeLinear
    after it (uint8 or int8 activations); a MatMul with int8 activations and a
    QuantizeLinear after it stays float, without one it becomes MatMulIntegerToFloat;
    16-bit and 4-bit (non-blocked) groups stay float; a blocked int4 / uint4 weight along
    axis 0 becomes MatMulNBits only when its DequantizeLinear and initializer are the
    MatMul's alone. Other releases differ: 1.18 .. 1.20 leave a Conv or Gemm with a float
    bias in float, 1.21 on fuse it; 1.32 makes MatMulNBits of 8-bit and 4-bit weights
    beside 16-bit activations (docs/targets.md has every change). The measurement, not the
    source, decides what qlin says.

    openvino is measured the same way on the same groups (tools/probe_fusion_openvino.py):
    each model compiled for CPU with default properties, and the compiled model's runtime
    graph (`get_runtime_model()`) read: the layer holding the op runs in integer where its
    rt_info "runtimePrecision" and its first input are i8 / u8 (...), in float otherwise (a
    snippets Subgraph computes in f32 whatever it reads). Measured in 2026.4.1 on x86_64: a
    Conv runs in u8 with symmetric int8 weights (per tensor or per output channel) whether a
    QuantizeLinear follows or not, and in float with asymmetric ones; Add, Mul, Sigmoid,
    LeakyRelu and Softmax run in float; 16-bit groups run in float (docs/targets.md).
    A release without data (openvino 2026.1, say) says nothing.

    ## Example
    ```
    x(uint8) -> DequantizeLinear -> Conv(w: DequantizeLinear of int8) -> Sigmoid
    # onnxruntime 1.31.1 (x86_64): runs in float; with a QuantizeLinear after the Conv
    # it is fused into QLinearConv (likewise in every release 1.18 .. 1.32)
    ```

    ## Fix
    Give the group what the nearest fused group has (the message names it): a
    QuantizeLinear after the op, uint8 activations for MatMul on x86, 8-bit weights, per-channel
    weights on the output-channel axis, a weight DequantizeLinear of its own. Or accept
    the float op (its results are the same), or quantize the op's neighbours instead.
    """

    code = "QT501"
    name = "runs-in-float"
    severity = WARNING
    summary = "The release does not fuse the op's QDQ group: the op runs in float between its Q/DQ nodes."

    @staticmethod
    def check(target, site):
        from .. import fusion

        table = getattr(target, "fusion_table", None)
        key = site.group
        if table is None or key is None or table.outcome(key) != fusion.FLOAT:
            return
        machine = table.machine
        where = f" on {machine}" if machine else ""
        verb = fusion.NOT_INTEGER.get(table.runtime, "is not fused by")
        fact = (f"this {site.facts.op}'s QDQ group ({key}) {verb} {table.runtime} {table.version}"
                f"{where} (measured): the {site.facts.op} runs in float between its Q/DQ nodes")
        near = table.reason(key)
        if near is None:
            fix = "no group of this op that differs in one or two facts is fused in this release"
        else:
            diff, into = near
            fact += f"; it {'is ' if into.startswith(fusion.FUSED) else ''}{into} with {diff}"  # runs on ...
            fix = "change the group so"
        yield target.finding("QT501", fact, fix=fix)
