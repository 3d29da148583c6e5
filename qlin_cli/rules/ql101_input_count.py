from .base import Rule, op_title


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
        names = [p.name for p in spec.inputs]
        count = len(n.node.input)
        if count > len(spec.inputs):
            yield (
                f"node {n.where} ({op_title(n)}) has {count} inputs; it takes "
                f"{spec.min_inputs} to {len(spec.inputs)} ({', '.join(names)}): remove the extra "
                f"input{'s' if count - len(spec.inputs) > 1 else ''}"
            )
        for i, p in enumerate(spec.inputs):
            if not p.optional and not n.present(i):
                yield (
                    f"node {n.where} ({op_title(n)}) is missing its required input "
                    f"'{p.name}' (input {i}): connect it"
                )
        outs = [o for o in n.node.output if o]
        if len(n.node.output) != 1 or len(outs) != 1:
            yield (
                f"node {n.where} ({op_title(n)}) has {len(outs)} outputs; it has exactly one "
                f"('{spec.outputs[0].name}'): give it one output"
            )
