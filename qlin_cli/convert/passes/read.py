"""Read the model: infer types, list every node with its scope, reserve names."""

from __future__ import annotations

from ...model.infer import inferred_types
from ..sites import Namer, all_names, sites
from ..state import Context, PassResult


class ReadModel:
    name = "read"

    def __call__(self, ctx: Context) -> PassResult:
        ctx.extra = inferred_types(ctx.model)
        ctx.sites = list(sites(ctx.model, ctx.extra))
        ctx.namer = Namer(all_names(ctx.model))
        return PassResult()
