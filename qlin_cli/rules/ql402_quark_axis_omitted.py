from .. import schema
from .base import WARNING, Fix, Rule, SetAttribute, Violation


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

    fixable = True

    def check(self, n):
        spec = n.spec
        if spec.kernel_axis_default is None or n.has("axis"):
            return
        if n.granularity != schema.PER_AXIS:
            return
        yield Violation(
            f"per-axis without an explicit axis: {spec.domain_name}'s page says the default is "
            f"{spec.axis_default}, its kernel uses {spec.kernel_axis_default}: write axis explicitly",
            Fix(f"write axis={spec.axis_default} (the documented default)",
                (SetAttribute("axis", spec.axis_default),)),
        )
