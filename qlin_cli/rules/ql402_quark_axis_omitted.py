from .. import schema
from ..check.diagnostic import WARNING
from ..schema.ops import QUARK_KERNEL_AXIS_DEFAULT
from .base import Rule, op_title
from .base_shapes import one_element_vector


class QuarkAxisOmitted(Rule):
    """
    ## What it checks
    That a per-axis com.amd.quark ExtendedQuantizeLinear / ExtendedDequantizeLinear
    node states its `axis`.

    ## Why is this bad?
    AMD Quark's page says `axis` defaults to 1, but Quark's kernel uses 0 when
    the attribute is absent (and a LabVIEW toolkit documents 0 for the same
    op). Without an explicit axis the node means different things to different
    readers; qlin follows the page.

    ## Example
    ```
    com.amd.quark.ExtendedQuantizeLinear(x: [8, 16], s: [16], zp: [16])
    ```

    ## Fix
    Write `axis` explicitly (`axis=1` above).
    """

    code = "QL402"
    name = "quark-axis-omitted"
    severity = WARNING
    summary = "Per-axis com.amd.quark node without an explicit axis."

    def check(self, n):
        if n.domain != schema.QUARK or n.has("axis"):
            return
        if n.granularity != schema.PER_AXIS or one_element_vector(n):
            return
        yield (
            f"node {n.where} ({op_title(n)}) is per-axis without an explicit axis: Quark's page "
            f"says the default is {n.spec.axis_default}, its kernel uses "
            f"{QUARK_KERNEL_AXIS_DEFAULT}: write axis explicitly"
        )
