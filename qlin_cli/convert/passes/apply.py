"""Replace the planned nodes, children before parents, so a rebuilt parent carries
its new subgraphs."""

from __future__ import annotations

import onnx

from ..state import Context, PassResult, Rewrite


class ApplyRewrites:
    name = "apply"
    requires = ("proven",)
    ensures = ("rewritten",)

    def __call__(self, ctx: Context) -> PassResult:
        order: list = []
        by_owner: dict[int, list[Rewrite]] = {}
        for r in ctx.rewrites:
            key = id(r.site.owner)
            if key not in by_owner:
                by_owner[key] = []
                order.append(r.site.owner)
            by_owner[key].append(r)
        for source in reversed(order):
            key = id(source)  # the sites, rewrites and marks name the source's bodies
            owner = ctx.copies[key]  # what is changed: the working copy's
            repl = {r.site.index: r for r in by_owner[key]}
            rebuilt, made = [], {}
            for i, n in enumerate(owner.node):
                if i in repl:
                    made.update(enumerate(_twins(repl[i]), len(rebuilt)))
                    rebuilt.extend(repl[i].nodes)
                else:
                    c = onnx.NodeProto()
                    c.CopyFrom(n)
                    rebuilt.append(c)
            del owner.node[:]
            owner.node.extend(rebuilt)
            ctx.made[id(owner)] = made
            if isinstance(owner, onnx.GraphProto):
                added = [t for r in by_owner[key] for t in r.inits]
                if added:  # (one extend: the same order, the per-call overhead once)
                    owner.initializer.extend(added)
                    ctx.added.update([t.name for t in added])
                for vi in list(owner.value_info) + list(owner.output):  # --to-int8: the declared type moves
                    elem = ctx.retyped.get((key, vi.name))
                    if elem is not None and vi.type.HasField("tensor_type"):
                        vi.type.tensor_type.elem_type = elem
        _drop(ctx)
        return PassResult(modified=bool(ctx.rewrites) or bool(ctx.retyped))


def _drop(ctx: Context) -> None:
    """The initializers the planning passes left unread (``ctx.dropped``) removed from their
    graphs, which need not hold a rewritten node (a subgraph's node may have read them). Each
    run of neighbours goes at once, from the end back; the others stay where they are (not
    copied out and back: a model's weights may be large)."""
    gone: dict[int, set] = {}
    for key, name in ctx.dropped:
        gone.setdefault(key, set()).add(name)
    for key, names in gone.items():
        inits = ctx.copies[key].initializer
        at = [i for i, t in enumerate(inits) if t.name in names]
        end = len(at)
        while end:
            start = end - 1
            while start and at[start - 1] == at[start] - 1:
                start -= 1
            del inits[at[start]:at[end - 1] + 1]
            end = start


def _twins(r: Rewrite) -> list:
    """The rewrite's nodes as to_qdq.Plain twins where the rewrite kept them, else None each."""
    twins = r.twins
    return twins if twins is not None and len(twins) == len(r.nodes) else [None] * len(r.nodes)
