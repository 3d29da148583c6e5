"""Opset imports after the rewrite: ai.onnx at the target; a vendor domain added where
a node now uses it, removed where none does any more (only if the input imported it)."""

from __future__ import annotations

from onnx import helper

from ... import schema
from ...model.graphs import MAIN, Body, bodies
from ..state import Context, PassResult


def one_body(ctx: Context) -> list[Body] | None:
    """The copy's bodies without walking its nodes, where the source has its main graph alone
    (no pass writes a function or a node holding a graph): that graph, its nodes' attributes
    not looked at (None: unknown). None otherwise."""
    model = ctx.model
    if len(ctx.copies) == 1 and next(iter(ctx.copies.values())) is model.graph and not len(model.functions):
        return [Body(MAIN, model.graph, None)]
    return None


def _set_imports(imports, used: set[str], to_opset: int, had: set[str]) -> bool:
    before = [(o.domain, o.version) for o in imports]
    keep, present = [], set()
    vendors = set(schema.vendor_domains())
    for o in imports:
        dom = schema.normalize_domain(o.domain)
        version = to_opset if dom == schema.AI_ONNX else o.version
        if dom in vendors and dom not in used and dom in had:
            continue
        present.add(dom)
        keep.append(helper.make_opsetid(o.domain, version))
    for dom in (schema.AI_ONNX, *schema.vendor_domains()):
        if dom in used and dom not in present:
            version = to_opset if dom == schema.AI_ONNX else schema.domain_version(dom)
            keep.append(helper.make_opsetid(dom, version))
    del imports[:]
    imports.extend(keep)
    return before != [(o.domain, o.version) for o in imports]


def _spelled(ctx: Context, b: Body) -> set[str]:
    """The domains of a body's nodes as spelled: from the caller's analysis where the passes
    finish on the analysed source itself (a header-only finish: one graph, no node changed),
    else from the nodes."""
    a = ctx.analysis
    if a is not None and a.model is ctx.model and len(a.bodies) == 1 and a.bodies[0].owner is b.owner:
        return {domain for domain, _ in set(a.bodies[0].kinds)}
    return {n.domain for n in b.owner.node}


class FixImports:
    name = "imports"
    requires = ("rewritten",)
    ensures = ("imports",)

    def __call__(self, ctx: Context) -> PassResult:
        model, to = ctx.model, ctx.opts.to_opset
        used: dict[str, set[str]] = {}  # root body path -> domains its nodes use
        root_of: dict[str, str] = {}
        walked = one_body(ctx) or list(bodies(model))
        for b in walked:
            root = b.path if b.parent is None else root_of[b.parent]
            root_of[b.path] = root
            spelled = _spelled(ctx, b)
            used.setdefault(root, set()).update(map(schema.normalize_domain, spelled))
        changed = False
        model_used = {schema.AI_ONNX}
        fn_by_path = {b.path: b.owner for b in walked if b.parent is None and b.is_function}
        for root, domains in used.items():
            fn = fn_by_path.get(root)
            if fn is None:
                model_used |= domains
                continue
            had = {schema.normalize_domain(o.domain) for o in fn.opset_import}
            changed |= _set_imports(fn.opset_import, domains, to, had)
        changed |= _set_imports(model.opset_import, model_used, to, set(ctx.opsets_from))
        return PassResult(modified=changed)
