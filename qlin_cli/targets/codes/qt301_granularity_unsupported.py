"""QT301 granularity-unsupported. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class GranularityUnsupported(Code):
    """
    ## What it checks
    That the target supports the node's granularity for its quantized type.

    ## Why is this bad?
    TensorRT 10 documents block quantization for INT4 only, and only on 2-D tensors
    (scale rank at most 2); other blocked nodes do not build. openvino reads a blocked
    DequantizeLinear of a 1-D tensor as per-axis and refuses it (measured). NNAPI takes
    per-tensor scales only, except int8 Conv weights per output channel (onnxruntime's
    NNAPI provider source); other nodes run on the CPU provider instead.

    ## Example
    ```
    DequantizeLinear-21(x: int8 [64, 128], x_scale: [64, 4], block_size=32)   # TensorRT 10
    ```

    ## Fix
    Use a granularity the target documents for that type (per-tensor or per-axis),
    or a target version that supports it.
    """

    code = "QT301"
    name = "granularity-unsupported"
    summary = "The target does not support this granularity for this type."
