from ..schema import semantics
from .base import Rule, first_ai_onnx, raise_hint
from .base_shapes import fmt_shape


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
        spec = n.spec
        for p in n.problems():
            if p.kind != semantics.GRANULARITY:
                continue
            g = p.subject
            onnx_since = first_ai_onnx(spec.kind, lambda s, g=g: g in s.granularities)
            hint = raise_hint(n, lambda s, g=g: g in s.granularities,
                              f"convert the node to ai.onnx opset {onnx_since} or later "
                              f"(qlin convert --to-domain ai.onnx)")
            yield (
                f"a {g} scale (shape {fmt_shape(n.scale_shape)}), which this version does not "
                f"support: {hint}"
            )
