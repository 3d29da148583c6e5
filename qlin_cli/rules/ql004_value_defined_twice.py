from .base import ModelRule, Violation
from .base_validity import redefined, redefinitions


class ValueDefinedTwice(ModelRule):
    """
    ## What it checks
    Single static assignment: that no node output takes a name already defined
    where the node is: a graph input, an initializer, an earlier node's output of
    the same graph, or (in a subgraph) a name of a graph around it; in a function,
    one of its inputs or an earlier node's output.

    ## Why is this bad?
    IR.md: "The graph MUST use single static assignment for all node outputs, which
    means that all node output names MUST be unique within a graph. In the case of
    a nested subgraph, a node output name ... MUST be distinct from the names from
    the outer scopes that are visible in the nested subgraph. That is, variable
    shadowing is not allowed." With two definitions, readers of the name see one
    of two values depending on the runtime. onnx.checker rejects the model ("has
    been used as output names multiple times").

    ## Example
    ```
    Relu(x) -> y
    Sigmoid(x) -> y
    ```

    ## Fix
    Rename one output (and the inputs that meant to read it).
    """

    code = "QL004"
    name = "value-defined-twice"
    summary = "A node output reuses a name already defined in its graph or an outer one."

    def check_model(self, view):
        for body in view.bodies:
            suspects = redefinitions(view, body)
            if not suspects:
                continue
            for i, (_, outs) in enumerate(body.io):
                if suspects.isdisjoint(outs):
                    continue
                for name, how in redefined(view, body, outs):
                    yield Violation(f"output {name!r} {how}", at=view.node_site(body, i))
