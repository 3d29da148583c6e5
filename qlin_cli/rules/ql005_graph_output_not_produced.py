from .base import ModelRule, Violation
from .base_validity import is_defined


class GraphOutputNotProduced(ModelRule):
    """
    ## What it checks
    That every output a graph declares is defined in that graph: by one of its
    nodes, or as one of its inputs or initializers.

    ## Why is this bad?
    IR.md: a graph's outputs are values of the graph ("Each main (top-level) graph
    MUST define the names, types and shapes of its inputs and outputs"), and a
    value name "must have a unique definition". An output nothing produces has no
    value to return: onnx.checker rejects the model ("Graph output 'y' is not an
    output of any node in graph"), and runtimes fail to load it.

    ## Example
    ```
    graph outputs: [y, z]
    nodes: Relu(x) -> y          # nothing produces z
    ```

    ## Fix
    Remove the output, or connect it to the value it was meant to return.
    """

    code = "QL005"
    name = "graph-output-not-produced"
    summary = "A graph output that no node, input or initializer of the graph defines."

    def check_model(self, view):
        for body in view.graphs():
            g = body.owner
            # (inference by kind noted which of the graph's outputs no node wrote, where it walked
            # the graph; none of them is an input or initializer there, nor "")
            unwritten = body.walked.unwritten if body.walked is not None else None
            for vi in g.output:  # (is_defined: not "", which an absent output is)
                name = vi.name
                missing = (name in unwritten if unwritten is not None else
                           not is_defined(view, body, name) and not (name == "" and _empty_defined(body)))
                if missing:
                    yield Violation(f"graph output {vi.name!r} is produced by no node of the graph",
                                    at=view.site(body.path, vi.name, f"output {vi.name!r} of {body.path}"))


def _empty_defined(body) -> bool:
    """Whether the name "" is an input, initializer or node output of the body."""
    return "" in body.defined or any("" in outs for _, outs in body.io)
