"""Read the model: its analysis (types inferred and propagated, every node with its
scope), names in use.

The analysis is model/analysis.py's, the one check and the targets read: inference
sees vendor Q/DQ nodes as their ai.onnx twins, and types are filled forward where it
stops. A conversion given the types of an earlier analysis of the same model
(``Context.types``, convert_command's) does not infer again.
"""

from __future__ import annotations

from ...model.analysis import analyze
from ..sites import Namer, Site, all_names
from ..state import Context, PassResult


class ReadModel:
    name = "read"
    requires = ()
    ensures = ("sites", "names")

    def __call__(self, ctx: Context) -> PassResult:
        a = ctx.analysis if ctx.analysis is not None else analyze(ctx.model, ctx.base_dir, types=ctx.types)
        ctx.extra = a.inferred
        ctx.sites = [Site(body.scope, body.owner, index, node) for body, index, node in a.nodes()]
        ctx.bodies = a.bodies
        views = {id(body.owner): body for body in a.bodies}
        # the facts check read of a node already (read_facts of the same node, index, scope and
        # folder), or read once here for every pass that asks: the source does not change
        if a.base_dir == ctx.base_dir:
            ctx.node_facts = lambda site: a.facts(views[id(site.owner)], site.index)
        model = ctx.model  # (the source: the names are found before any pass changes a model)
        ctx.namer = Namer(lambda: all_names(model, a.bodies))
        return PassResult()
