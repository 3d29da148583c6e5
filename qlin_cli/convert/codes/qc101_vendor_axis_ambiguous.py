"""QC101 vendor-axis-ambiguous, refused by the Q/DQ pass (convert/passes/qdq.py)."""

from __future__ import annotations

from ...code import Code


class VendorAxisAmbiguous(Code):
    """
    ## What it checks
    That a per-axis com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear
    node to convert states its `axis`, or that `--quark-axis` says which axis it
    means.

    ## Why is this bad?
    AMD Quark's operator page says "axis - INT (default is '1')", while Quark's
    kernel uses 0 when the attribute is absent (and a LabVIEW toolkit's page
    documents 0 for the same op). A converted node must name its axis, and the two
    readings give different models: qlin does not choose for you. `qlin check`
    reports the same node as QL402.

    ## Example
    ```
    com.amd.quark.ExtendedQuantizeLinear(x: [8, 16], s: [16], zp: [16])   # no axis
    ```

    ## Fix
    Pass `--quark-axis 1` (the page's reading) or `--quark-axis 0` (the kernel's), or
    write `axis` on the node first (`qlin check --fix` writes the page's default).
    """

    code = "QC101"
    name = "vendor-axis-ambiguous"
    summary = "A per-axis vendor node omits axis, and its page and kernel disagree on the default."
