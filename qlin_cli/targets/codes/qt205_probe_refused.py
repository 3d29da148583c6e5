"""QT205 probe-refused. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class ProbeRefused(Code):
    """
    ## What it checks
    That the runtime version judged ran the probe models of the node's kind: the same
    op at the same schema version, with the same input types and granularity
    (qlin_cli/targets/probe_keys.py). Every probe is loaded, compiled and run in that
    release, installed in a throwaway environment (tools/gen_target_data.py). openvino
    has no kernel registry to read, so its probes are its data; onnxruntime's probes
    find the kernels that exist and still refuse a case at load or run time
    (onnxruntime 1.18 registers DequantizeLinear-21 and fails every blocked one at its
    first run; it has no QLinearMatMul-21 kernel though its registry lists
    QLinearMatMul from version 10 on). The same holds for the few nodes together a runtime
    rewrites when it loads a model, each probed as such: a chain Q -> DQ -> op, a weight DQ
    read by MatMul or Gemm (through a Transpose or not), a QDQ MatMul with its weight DQ,
    a QLinearAdd / QLinearMul after a QuantizeLinear (the finding is on the DQ or the
    QLinear op, naming the chain); and for the float Reduce ops reading their axes from an
    input (a finding on the model, naming the first such node).

    ## Why is this bad?
    When every probe of that kind failed in the release, a model with such a node
    fails the same way: openvino 2026.4 reads a per-channel QLinearConv weight scale
    along the input's axis 1 and stops ("The number of dequantization scale elements
    '4' must match the input shape dimension '2'"), and has no conversion rule for
    com.microsoft QGemm or QLinearConv. The message quotes the release's own error.

    ## Example
    ```
    QLinearConv-10(x: uint8, w: uint8 [4, 2, 3, 3], w_scale: float [4])   # openvino 2026.4
    ```

    ## Fix
    Express the node in a form the release runs (a QDQ graph: DequantizeLinear ->
    Conv -> QuantizeLinear, which onnxruntime's quantizer writes with
    `quant_format=QDQ`), use a release that runs it (the message says which, for a
    versioned target), or `qlin convert --target NAME` for Q/DQ nodes.
    """

    code = "QT205"
    name = "probe-refused"
    summary = "The runtime version refused every probe model of the node's kind."
