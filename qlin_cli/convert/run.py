"""One conversion, start to finish, in memory: the passes of convert/passes/ in order.

The planning passes (read, Q/DQ, other ops, prove) record rewrites and refusals
without touching the model; only when nothing is refused do the finishing passes
(apply, imports, IR) change the working copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import onnx

from .. import schema
from ..errors import QlinError
from ..finding import Finding
from ..model.graphs import bodies, changing
from ..model.tensors import UnsafeData
from ..schema import ir
from .entries import locate
from .passes import FINISH, PLAN
from .passes.unify import one_per_node
from .state import Context, Entry, Options, Result

__all__ = ["Entry", "Options", "Result", "convert_model"]


def convert_model(model: onnx.ModelProto, base_dir: str, opts: Options,
                  progress: Callable[[int, int], None] | None = None, source: str | None = None,
                  types: dict | None = None, analysis=None, share_graph: bool = False) -> Result:
    """The converted model (None when something is refused) and what happened.

    A tensor qlin cannot read raises QlinError naming ``source`` (the model file).
    ``types``: inference's types from the caller's analysis of ``model`` (``Analysis.inferred``),
    so the conversion does not infer again; ``analysis``: that analysis itself
    (model/analysis.py), which the read pass then takes as it is (no walk of the model again).
    ``share_graph``: a result that rewrites no node of a model of one graph is its header
    alone, sharing ``model``'s graph (``Result.graph_from``; ``Result.whole`` copies it).
    """
    try:
        with changing():  # the working copy changes: nothing of it is kept for the source's readers
            return _convert(model, base_dir, opts, progress, types, analysis, share_graph)
    except UnsafeData as e:
        raise QlinError(source or base_dir, str(e)) from None


def _convert(model: onnx.ModelProto, base_dir: str, opts: Options,
             progress: Callable[[int, int], None] | None, types: dict | None, analysis=None,
             share_graph: bool = False) -> Result:
    if opts.to_domain is not None:  # any spelling of a domain qlin knows
        opts = dataclasses.replace(opts, to_domain=schema.domain_from_name(opts.to_domain) or opts.to_domain)
    newest = ir.newest_opset()
    oldest = schema.oldest_opset()
    if not oldest <= opts.to_opset <= newest:
        raise QlinError("--to-opset", f"{opts.to_opset} is outside {oldest}..{newest}")
    opsets_from = {schema.normalize_domain(o.domain): o.version for o in model.opset_import}
    # the planning passes read the source (they change nothing); the finishing passes change
    # a copy, made only when there is something to finish
    ctx = Context(model, base_dir, opts, model.ir_version, opsets_from, progress, types)
    ctx.analysis = analysis if analysis is not None and analysis.model is model else None
    entries_refusals = _run(PLAN, ctx)
    ctx.rewrites = one_per_node(ctx.rewrites)
    entries = [r.entry for r in ctx.rewrites] + _one_each(entries_refusals[0])
    locate(entries, ctx.sites)
    if entries_refusals[1]:
        return Result(None, entries, entries_refusals[1], opsets_from, {}, model.ir_version,
                      model.ir_version)
    found = list(bodies(model))  # (read once: the source does not change)
    if share_graph and _header_only(ctx, found, model):
        return _finish_header(ctx, model, entries)
    work = onnx.ModelProto()
    work.CopyFrom(model)
    if len(found) == 1 and found[0].owner is model.graph:  # the copy's one body: its graph
        ctx.copies = {id(model.graph): work.graph}
    else:
        ctx.copies = {id(a.owner): b.owner for a, b in zip(found, bodies(work), strict=True)}
    ctx.model = work
    _run(FINISH, ctx)
    opsets_to = {schema.normalize_domain(o.domain): o.version for o in work.opset_import}
    return Result(work, entries, [], opsets_from, opsets_to, model.ir_version, work.ir_version,
                  changed=ctx.changed, rewritten=len(ctx.rewrites) + len(ctx.retyped) + len(ctx.dropped),
                  made=_made_in_main(ctx, work), added=ctx.added)


def _header_only(ctx: Context, found: list, model: onnx.ModelProto) -> bool:
    """Whether the finishing passes can change nothing but the header of ``model`` (no node
    rewritten, no value retyped, no initializer dropped, one body: its graph, no function)."""
    return (not (ctx.rewrites or ctx.retyped or ctx.dropped or len(model.functions))
            and len(found) == 1 and found[0].owner is model.graph)


def _finish_header(ctx: Context, model: onnx.ModelProto, entries: list[Entry]) -> Result:
    """The finishing passes run on the source itself, whose header alone they change (no
    rewrite: ``_header_only``); the result is the header they leave, the source gets its own
    back, and the result shares its graph (``Result.graph_from``)."""
    from ..model.header import header_kept, header_of

    ctx.copies = {id(model.graph): model.graph}
    ctx.model = model
    with header_kept(model):
        _run(FINISH, ctx)
        head = header_of(model)
    opsets_to = {schema.normalize_domain(o.domain): o.version for o in head.opset_import}
    return Result(head, entries, [], ctx.opsets_from, opsets_to, model.ir_version, head.ir_version,
                  changed=ctx.changed, rewritten=0, made={}, graph_from=model)


def _made_in_main(ctx: Context, work: onnx.ModelProto) -> dict | None:
    """``Result.made``: the apply pass's indices of the main graph's written nodes, where it
    replaced nodes of that graph alone and nothing was retyped; initializers dropped from the
    main graph alone (nothing read them: no node's type changes) are allowed."""
    if ctx.retyped or set(ctx.made) - {id(work.graph)}:
        return None
    if any(ctx.copies.get(key) is not work.graph for key, _ in ctx.dropped):
        return None
    return ctx.made.get(id(work.graph), {})


def _one_each(entries: list[Entry]) -> list[Entry]:
    """Entries without repeats (a function body read once per call signature)."""
    if len({e.where for e in entries}) == len(entries):
        return list(entries)  # each of its own node: none repeats another
    seen: set = set()
    out = []
    for e in entries:
        key = (e.where, e.op, e.action, tuple(e.changes))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _run(passes, ctx: Context) -> tuple[list[Entry], list[Finding]]:
    """Run ``passes`` in order, each held to its contract (passes/__init__.py)."""
    entries: list[Entry] = []
    refused: list[Finding] = []
    for p in passes:
        missing = [r for r in p.requires if r not in ctx.ensured]
        if missing:
            raise RuntimeError(f"conversion pass {p.name!r} runs before {', '.join(missing)}")
        r = p(ctx)
        ctx.ensured.update(p.ensures)
        ctx.changed |= r.modified
        entries += r.entries
        refused += r.refusals
    return entries, refused
