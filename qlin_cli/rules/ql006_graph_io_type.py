from .base import ModelRule, Violation


class GraphIoType(ModelRule):
    """
    ## What it checks
    That every input and output of a graph has a name, and that each input and
    output of the main graph has a type, an element type and a shape (its rank;
    the dimensions may be unknown).

    ## Why is this bad?
    IR.md: "Each main (top-level) graph MUST define the names, types and shapes of
    its inputs and outputs ... The main graph inputs and outputs are required to
    have a shape, indicating the rank, even though the exact dimensions need not
    be specified." A caller cannot know what to feed or what comes back:
    onnx.checker rejects the model ("Field 'shape' of 'type' is required but
    missing"). Subgraph inputs and outputs may leave types out (they follow from
    the op).

    ## Example
    ```
    graph input: x (no type)
    graph output: y: float (no shape)
    ```

    ## Fix
    Declare the type and shape, e.g. `x: float[1, 3, 224, 224]` (a dimension may be
    a name such as `N`, or unknown).
    """

    code = "QL006"
    name = "graph-io-type"
    summary = "A main-graph input or output without a name, type or shape."

    def check_model(self, view):
        for body in view.graphs():
            g = body.owner
            for kind, values in (("input", g.input), ("output", g.output)):
                for k, vi in enumerate(values):
                    at = view.site(body.path, vi.name or f"{kind} #{k}", f"{kind} {vi.name!r} of {body.path}")
                    if not vi.name:
                        yield Violation(f"{kind} #{k} of the graph has no name", at=at)
                    elif body.path == "main":
                        why = _missing(vi)
                        if why:
                            yield Violation(f"main-graph {kind} {vi.name!r} {why}", at=at)


def _missing(vi) -> str | None:
    if not vi.HasField("type"):
        return "has no type"
    t = vi.type
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(t, which)
        if not tt.elem_type:
            return "has no element type"
        if not tt.HasField("shape"):
            return "has no shape (its rank, at least, must be declared)"
    elif which is None:
        return "has a type of no kind"
    return None
