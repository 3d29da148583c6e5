from ..schema import semantics
from .base import INFO, Fix, ReshapeConstant, Rule, Violation


class OneElementScale(Rule):
    """
    ## What it checks
    For a scale (or zero point) of shape [1] where a scalar is meant: a
    non-blocked node whose scale has one element is read as a per-tensor scale
    (where x is 1 wide along the axis, the per-axis reading computes the same
    values); or the scale is a scalar and the zero point has shape [1]. Off by
    default (docs/decisions.md): select it with `--select QL409`.

    ## Why is this bad?
    The spec says a per-tensor scale "is a scalar" and a per-axis one has
    D[axis] elements. onnx.reference and onnxruntime both treat a one-element
    vector as a scalar, so the model runs, but stricter runtimes and converters
    may refuse it or read it as per-axis.

    ## Example
    ```
    QuantizeLinear(x: [1, 3, 8, 8], s: [1], zp: [1])
    ```

    ## Fix
    Store the scale and zero point as scalars (shape []).
    """

    code = "QL409"
    name = "one-element-scale"
    severity = INFO
    summary = "Scale of shape [1] used where a scalar is meant."

    fixable = True
    # Off by default (docs/decisions.md, "One-element scales"): onnxruntime's quantize_static
    # writes a shape-[1] scale on every bias DequantizeLinear; `--select QL409` turns it on.
    default = False

    def check(self, n):
        si, zi = n.scale_index, n.zero_point_index
        s, z = n.scale_shape, n.in_shape(zi)
        if s == () and semantics.is_one_element(z):
            yield Violation(
                f"zero point '{n.input_name(zi)}' has shape [1] while the scale is a scalar: store "
                f"the zero point as a scalar (shape [])",
                Fix("store the zero point as a scalar", (ReshapeConstant(zi, ()),)),
            )
            return
        if not semantics.is_one_element(s) or n.block_size > 0:
            return
        edits = [ReshapeConstant(si, ())]
        if n.present_at(zi):
            edits.append(ReshapeConstant(zi, ()))
        yield Violation(
            f"scale '{n.input_name(si)}' has shape [1] and is used as a per-tensor scale: store "
            f"scale and zero point as scalars (shape [])",
            Fix("store scale and zero point as scalars", tuple(edits)),
        )
