from .base import ModelRule, Violation
from .base_validity import undefined


class UndefinedValue(ModelRule):
    """
    ## What it checks
    That every value a node reads is defined somewhere it can see: a graph input,
    an initializer or a node output of its own graph, or of a graph around it (for
    a subgraph); a function's inputs or node outputs (for a node of a function).
    A value produced later in the same graph is QL108's (the order); here nothing
    defines the value at all.

    ## Why is this bad?
    IR.md: "Each node represents a call to an operator ... Each node has zero or
    more inputs", each input the name of a value of the graph, and the node list is
    "topologically sorted": a name nothing defines is a dangling reference. onnx
    .checker rejects the model ("is not output of any previous nodes"); onnxruntime
    fails to load it.

    ## Example
    ```
    Relu(x) -> y        # nothing defines x
    ```

    ## Fix
    Connect the input to the value it was meant to read, or add the missing input
    or initializer.
    """

    code = "QL003"
    name = "undefined-value"
    summary = "A node reads a value that nothing in its scope defines."

    def check_model(self, view):
        for body in view.bodies:
            missing = undefined(view, body)
            if not missing:
                continue
            for i, (ins, _) in enumerate(body.io):
                for name in ins:
                    if name in missing:
                        yield Violation(f"input {name!r} is defined nowhere in its scope (no graph input, "
                                        f"initializer or node output of that name)",
                                        at=view.node_site(body, i))
