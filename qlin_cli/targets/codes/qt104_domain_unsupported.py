"""QT104 domain-unsupported. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class DomainUnsupported(Code):
    """
    ## What it checks
    That every node's domain is one the target has operators for (model-local
    functions excepted: runtimes inline them).

    ## Why is this bad?
    A node of an unknown domain stops the load: onnxruntime reports
    "com.amd.quark:ExtendedQuantizeLinear(-1) is not a registered function/op"
    (unless a custom-op library for it is registered), openvino "No conversion rule
    found for operations", TensorRT's operator support list holds only ai.onnx ops.

    ## Example
    ```
    node {op_type: "ExtendedQuantizeLinear", domain: "com.amd.quark"}
    ```

    ## Fix
    For Q/DQ nodes, `qlin convert --target NAME` moves them to a domain the target
    runs (ai.onnx or com.microsoft) where that domain can express them; other ops
    need the vendor's custom-op library or a rewrite.
    """

    code = "QT104"
    name = "domain-unsupported"
    summary = "A node's domain has no operators in the target."
