from ..schema import semantics
from .base import Rule


class InputCount(Rule):
    """
    ## What it checks
    That a node has the inputs and outputs its schema defines: x and a scale are
    required, the zero point is optional, and there is exactly one output.

    ## Why is this bad?
    A node with a missing scale or an extra input cannot be run; runtimes refuse
    the model when they load it, far from where the model was made.

    ## Example
    ```
    QuantizeLinear(x, y_scale, y_zero_point, extra) -> y   # 4 inputs
    ```

    ## Fix
    Give the node exactly x, the scale and, if needed, the zero point, and one
    output.
    """

    code = "QL101"
    name = "input-count"
    summary = "Wrong number of inputs or outputs for the op's schema."

    def check(self, n):
        spec = n.spec
        for p in n.problems():
            if p.kind != semantics.INPUT_COUNT:
                continue
            if p.index is None:
                extra = len(n.present) - len(spec.inputs)
                names = ", ".join(q.name for q in spec.inputs)
                yield (f"{p.text} ({names}): remove the extra input{'s' if extra > 1 else ''}")
            else:
                yield f"{p.text}: connect it"
        outs = sum(n.out_present)
        if len(n.out_present) != 1 or outs != 1:
            yield (
                f"{outs} outputs; the op has exactly one ('{spec.outputs[0].name}'): give it one "
                f"output"
            )
