from ..schema import semantics
from .base import FamilyRule
from .base_shapes import fmt_shape


class GroupShape(FamilyRule):
    """
    ## What it checks
    For ops with several scale / zero-point groups (QLinearConv x / w / y,
    QLinearMatMul a / b / y, QGemm, QLinearAdd, MatMulInteger, ConvInteger,
    DynamicQuantizeLSTM W / R ...): that each group's scale and zero point take a
    shape the op allows for that group, against the tensor the group quantizes,
    and that the two have one shape. A per-channel QLinearConv weight scale has
    the output-channel count M = D0 of w; QLinearMatMul / MatMulInteger take per
    row [M] (or [..., M, 1]) for a and per column [N] (or [..., 1, N]) for b;
    QGemm's b scale has N elements (B's columns, or its rows with transB);
    DynamicQuantizeLSTM takes [num_directions] or [num_directions,
    4*hidden_size]; every other group is per tensor (a scalar, or one element).

    ## Why is this bad?
    A scale of the wrong length cannot be broadcast over the channels it
    describes: onnxruntime refuses the node when it runs, or quantizes channels
    with another channel's scale. A per-channel scale on a group that is per
    tensor only (x and y of QLinearConv) has no kernel at all.

    ## Example
    ```
    QLinearConv(x, ..., w: [8, 3, 3, 3], w_scale: [4], w_zero_point: [4], ...)   # M is 8
    ```

    ## Fix
    Give the scale and zero point the shape the message names (one value per
    output channel for w), or a scalar for per-tensor quantization.
    """

    code = "QL410"
    name = "group-shape"
    summary = "A scale or zero point of a QLinear/integer op group has the wrong shape."

    def check(self, n):
        spec = n.spec
        for p in semantics.group_problems(n, spec):
            if p.text:
                yield f"{p.text}: give them one shape"
                continue
            g = spec.inputs[p.index].group
            group = spec.groups[g]
            tensor = semantics.group_tensor_shape(n, group)
            forms = group.forms_for(n.attrs)
            name = spec.inputs[group.tensor].name if group.tensor >= 0 else \
                spec.outputs[-1 - group.tensor].name
            per = f"; per {group.what}" if group.what else ""
            yield (
                f"{spec.inputs[p.index].name} '{n.input_name(p.index)}' has shape {p.value} but group "
                f"{group.name} of {name} {fmt_shape(tensor) if tensor is not None else ''}"
                f"{' ' if tensor is not None else ''}takes {semantics.describe_forms(forms, tensor)}"
                f"{per}: give it one of those shapes"
            ).replace("  ", " ")
