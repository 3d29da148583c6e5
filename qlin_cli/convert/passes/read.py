"""Read the model: infer types, list every node with its scope, reserve names.

onnx shape inference knows no vendor op, so every value after a com.microsoft or
com.amd.quark QuantizeLinear / DequantizeLinear would lose its type. For the
inference only, those nodes are shown as their ai.onnx twins (same inputs, same
attributes, the same output type rule) and put back right after.
"""

from __future__ import annotations

from contextlib import contextmanager

import onnx

from ... import schema
from ...model.graphs import bodies
from ...model.infer import inferred_types
from ...model.propagate import fill, fill_ranks
from ..sites import Namer, all_names, sites
from ..state import Context, PassResult


@contextmanager
def vendor_qdq_as_ai_onnx(model: onnx.ModelProto):
    changed = []
    for b in bodies(model):
        for n in b.owner.node:
            d = schema.normalize_domain(n.domain)
            if d == schema.AI_ONNX or not schema.is_known_op(d, n.op_type):
                continue
            spec = schema.versions(d, n.op_type)[-1]
            if schema.is_linear(spec):
                changed.append((n, n.domain, n.op_type))
                n.domain, n.op_type = "", schema.op_for(schema.AI_ONNX, spec.kind)
    try:
        yield
    finally:
        for n, domain, op in changed:
            n.domain, n.op_type = domain, op


class ReadModel:
    name = "read"

    def __call__(self, ctx: Context) -> PassResult:
        with vendor_qdq_as_ai_onnx(ctx.model):
            ctx.extra = inferred_types(ctx.model)
        ctx.sites = list(sites(ctx.model, ctx.extra))
        fill((s.scope, s.index, s.node) for s in ctx.sites)
        fill_ranks((s.scope, s.index, s.node) for s in ctx.sites)
        ctx.namer = Namer(all_names(ctx.model))
        return PassResult()
