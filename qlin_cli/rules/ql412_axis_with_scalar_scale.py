from .. import schema
from .base import Rule


class AxisWithScalarScale(Rule):
    """
    ## What it checks
    That a com.microsoft QuantizeLinear / DequantizeLinear with `axis` set has a 1-D scale
    and zero point.

    ## Why is this bad?
    com.microsoft's `axis` decides the granularity by being there or not: "If it's
    specified, it means per 'axis' quantization and input 'x_scale' and 'x_zero_point'
    must be 1-D tensors" (ContribOperators.md, QuantizeLinear and DequantizeLinear). A
    scalar scale with an axis says both per tensor and per axis; what a runtime makes of
    it is not the schema's.

    ## Example
    ```
    com.microsoft.QuantizeLinear(x: [2, 3], s: [], zp: [], axis=1)
    ```

    ## Fix
    Drop `axis` for per-tensor quantization, or give the scale and zero point one entry
    per channel along it (a 1-D tensor).
    """

    code = "QL412"
    name = "axis-with-scalar-scale"
    summary = "com.microsoft node with an axis and a scalar scale or zero point."

    def check(self, n):
        spec = n.spec
        if spec.axis_absent != schema.AXIS_ABSENT_PER_TENSOR or not n.has("axis"):
            return
        for i, what in ((n.scale_index, "scale"), (n.zero_point_index, "zero point")):
            if i is not None and n.present_at(i) and n.in_rank(i) == 0:
                yield (f"{what} '{n.input_name(i)}' is a scalar but axis is set; with an axis "
                       f"{spec.domain_name} takes 1-D scale and zero point: drop axis, or give one "
                       f"value per channel")
