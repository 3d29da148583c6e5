from ..model.graphs import node_named
from ..model.infer_kinds import in_order
from ..model.order import body_order
from .base import Fix, ModelRule, SortNodes, Violation


class TopologicalOrder(ModelRule):
    """
    ## What it checks
    That every node comes after the nodes that produce its inputs, in the main
    graph, in every If / Loop / Scan subgraph at any depth, in training graphs
    and in model-local functions. A node whose subgraph reads a value of an
    enclosing graph (an outer-scope value) counts as reading it, so it must come
    after that value's producer too.

    ## Why is this bad?
    The ONNX IR requires it: "Each computation node ... nodes MUST be sorted
    topologically". onnx.checker rejects the model; runtimes that execute nodes
    in file order (and tools that rewrite graphs in one pass, quantizers and
    converters among them) read values before they exist.

    ## Example
    ```
    node 0: DequantizeLinear(xq, s, zp) -> x
    node 1: QuantizeLinear(f, s, zp) -> xq       # produces node 0's input after it
    ```

    ## Fix
    Sort the nodes topologically; the message names the producer that comes too
    late. `qlin check --fix` does it (each node after what it reads, the others in
    their order) unless the nodes read each other in a cycle, which no order mends.
    """

    code = "QL108"
    name = "topological-order"
    summary = "A node reads a value that a later node of its graph produces."
    fixable = True

    def check_model(self, view):
        owned: dict[tuple[str, int], list] = {}
        for child_path, (parent, index) in view.owners.items():
            owned.setdefault((parent.path, index), []).append(child_path)
        reads = view.outer_reads if owned else {}
        for body in view.bodies:
            if in_order(body.walked) and not owned:  # (the walk of inference by kind found it so)
                continue
            seen = set(body.defined)
            seen.add("")  # an absent optional input
            there, add = seen.issuperset, seen.update
            for i, (ins, outs) in enumerate(body.io):
                children = owned.get((body.path, i)) if owned else None
                if children is None and there(ins):
                    add(outs)  # the usual node: every input already there
                    continue
                names = list(ins)
                for child in children or ():
                    names.extend(sorted(reads.get(child, ())))
                producers = body.producers  # built on the first input not seen yet
                late = [n for n in dict.fromkeys(names) if n not in seen and n in producers]
                if late:
                    j = producers[late[0]]
                    other = body.nodes[j]
                    who = node_named(other.name, j)
                    how = "it" if j == i else f"node {who} ({other.op_type}), which comes after it"
                    more = f" (and {len(late) - 1} more)" if len(late) > 1 else ""
                    sub = "" if late[0] in ins else " through its subgraph"
                    yield Violation(
                        f"reads '{late[0]}'{sub}{more}, produced by {how}: sort the nodes "
                        f"topologically", _sort_fix(view, body),
                        at=view.node_site(body, i))
                seen.update(outs)



def _sort_fix(view, body) -> Fix | None:
    """The fix that sorts the body, when an order exists (no cycle)."""
    if body_order(view, body) is None:
        return None
    return Fix(f"sort the nodes of {body.path} topologically", (SortNodes(body.path),))
