from collections import Counter

from ..model.tensors import census
from .base import ModelRule, Violation


class GraphNames(ModelRule):
    """
    ## What it checks
    The names a graph declares: the graph's own name, its inputs (each once), its
    initializers and sparse initializers (each named, each name once across both),
    and, in IR 3 and older, every initializer listed among the graph inputs. In the
    main graph, every subgraph and every training graph.

    ## Why is this bad?
    IR.md: "Each graph MUST specify a name", and "a value name used in a graph must
    have a unique definition, with the exception that the same name MAY appear in
    both the graph input list and graph initializer list". With two definitions of
    one name a reader cannot tell which value a node reads: onnx.checker rejects
    the model ("initializer name is not unique", "has been used as graph input
    names multiple times"), and so does onnxruntime.

    ## Example
    ```
    graph name: ""
    initializer: [w (float[4]), w (float[4])]
    ```

    ## Fix
    Name the graph; remove the second definition or give it a name of its own (and
    rename its readers).
    """

    code = "QL002"
    name = "graph-names"
    summary = "A graph without a name, or an input or initializer name defined twice."

    def check_model(self, view):
        ir = view.model.ir_version
        for body in view.graphs():
            g = body.owner
            here = view.site(body.path, "graph", f"graph {body.path}")
            if not g.name:
                yield Violation("the graph has no name (IR.md: each graph MUST specify a name)", at=here)
            if body.walked is not None:  # inference by kind gave up on a name declared twice or ""
                continue                  # (and on IR below 4): its walk met none (infer_kinds.ByKind)
            inputs = [i.name for i in g.input]
            for name, n in sorted(Counter(inputs).items()):
                if n > 1:
                    yield Violation(f"graph input {name!r} is declared {n} times", at=here)
            yield from _initializers(view, body, set(inputs), ir)


def _initializers(view, body, inputs: set, ir: int):
    g = body.owner
    names = census(g).names + [s.values.name for s in g.sparse_initializer]
    counts = Counter(names)
    if len(counts) == len(names) and "" not in counts:
        return  # every name once, none empty: the usual case, without a look at each
    for name, n in sorted(counts.items()):
        at = view.site(body.path, name or "initializer", f"initializer {name!r}")
        if not name:
            yield Violation(f"{n} initializer{'s have' if n > 1 else ' has'} no name", at=at)
        elif n > 1:
            yield Violation(f"initializer {name!r} is defined {n} times", at=at)
    if ir and ir <= 3:
        for t in g.initializer:
            if t.name and t.name not in inputs:
                yield Violation(f"initializer {t.name!r} is not a graph input, which IR {ir} requires "
                                "of every initializer",
                                at=view.site(body.path, t.name, f"initializer {t.name!r}"))
