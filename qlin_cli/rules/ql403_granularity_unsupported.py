from .. import schema
from .base import Rule, first_ai_onnx, first_version, op_title
from .base_shapes import fmt_shape, one_element_vector


class GranularityUnsupported(Rule):
    """
    ## What it checks
    That the granularity the scale implies exists in the node's version and
    domain: ai.onnx has per-tensor from 10, per-axis from 13 and blocked from
    21; com.microsoft and com.amd.quark have per-tensor and per-axis only.

    ## Why is this bad?
    A runtime implementing that version has no kernel for the granularity: the
    model is refused, or the scale is misread as something else.

    ## Example
    ```
    opset 10: QuantizeLinear(x: [4, 3], s: [3], zp: [3])       # per-axis needs 13
    ```

    ## Fix
    Raise the opset to one with that granularity, or (for vendor domains) move
    the node to ai.onnx with `qlin convert --to-domain ai.onnx`.
    """

    code = "QL403"
    name = "granularity-unsupported"
    summary = "Per-axis or blocked scale where the version/domain does not have it."

    def check(self, n):
        g = n.granularity
        spec = n.spec
        if g is None or g in spec.granularities:
            return
        if g == schema.PER_AXIS and one_element_vector(n):
            return  # reported as QL409
        since = first_version(spec.domain, spec.op_type, lambda s: g in s.granularities)
        if since:
            hint = f"raise the {spec.domain_name} opset to {since} or later"
        else:
            onnx_since = first_ai_onnx(spec.kind, lambda s: g in s.granularities)
            hint = (f"convert the node to ai.onnx opset {onnx_since} or later "
                    f"(qlin convert --to-domain ai.onnx)")
        yield (
            f"node {n.where} ({op_title(n)}) has a {g} scale (shape "
            f"{fmt_shape(n.in_shape(1))}), which this version does not support: {hint}"
        )
