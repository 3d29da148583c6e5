"""The one rule for the initializers a conversion's rewrites leave unread (the format rewrites
of format.py and the `--weights` rewrites of weights.py): one of a graph that a rewritten
node read in the source, and that no node of the result reads (in any graph or function), no
graph lists as an output and no graph declares as an input, is dropped (apply.py removes
``ctx.dropped``). One that nothing read in the source stays: the rewrites did not leave it
unread. An initializer a graph lists as an output, or declares as an input its caller may
feed, stays: dropping it would leave the output unwritten or the input required; so does one
a training_info binding names (onnx.proto: its keys "must appear in names of
ModelProto.graph.initializer or TrainingInfoProto.algorithm.initializer"). Names are
counted across the model: a node of a subgraph may read a value of the graph around it, and
the initializer dropped is the one the rewritten node saw (its own graph's, or a graph's
around it)."""

from __future__ import annotations

from itertools import repeat

import onnx

from ...model.walk import graph_paths
from ..state import Context


def drop_unread(ctx: Context, rewrites: list) -> None:
    """Add to ``ctx.dropped`` what the rule drops of the initializers the nodes ``rewrites``
    replace read. Every rewrite planned so far (``ctx.rewrites``) counts: their nodes are gone
    from the result, and the nodes they write read what the result reads."""
    read: dict[int, tuple] = {}  # id(scope) -> (the scope, the inputs of its rewritten nodes)
    for r in rewrites:
        site = r.site
        at = read.get(id(site.scope))
        if at is None:
            at = read[id(site.scope)] = (site.scope, [])
        at[1].append(site.node.input)
    if not read:
        return
    made: list = []  # the rewrites' own nodes (as to_qdq.Plain where kept: inputs a tuple)
    for r in ctx.rewrites:
        twins = r.twins
        made += twins if twins is not None and len(twins) == len(r.nodes) else r.nodes
    gone = {id(r.site.node) for r in ctx.rewrites}
    read = {key: (scope, set().union(*inputs)) for key, (scope, inputs) in read.items()}
    left = set().union(*[names for _, names in read.values()]).difference(*[n.input for n in made])
    left.discard("")
    for site in ctx.sites if left else ():  # (one pass over the nodes, while a name is left)
        if id(site.node) not in gone:
            left.difference_update(site.node.input)
            if not left:
                break
    for _, graph in graph_paths(ctx.model) if left else ():
        left.difference_update([v.name for v in graph.output])
        left.difference_update([v.name for v in graph.input])
    for info in ctx.model.training_info if left else ():  # (keys that "must appear in names of
        left.difference_update([b.key for b in info.update_binding])  # ModelProto.graph.initializer")
        left.difference_update([b.key for b in info.initialization_binding])
    for scope, names in read.values() if left else ():
        ctx.dropped |= _held(scope, names & left)


def _held(scope, names: set) -> set:
    """(id(graph), name) of each of ``names`` that is an initializer of a graph, seen from
    ``scope`` (not a Constant's output, nor a function's value)."""
    found = set()
    s = scope
    while names and s is not None:
        here = names & s.values.keys()  # (an initializer or a Constant of this scope)
        if here and isinstance(s.owner, onnx.GraphProto):
            found.update(zip(repeat(id(s.owner)), here.intersection(s.initializer_names())))
        names = names - here
        s = s.parent
    return found
