"""Plan every other ai.onnx node whose schema differs between the two opsets
(convert/ops/), and say how each rewrite is proven (onnx.reference)."""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from ... import schema
from ...schema import dtypes, ir
from .. import opsteps
from ..entries import op_label, refused, where
from ..sites import Site, constants
from ..state import Context, Entry, PassResult, Rewrite


@dataclass
class OpCase:
    """A non-Q/DQ rewrite and what its proof needs."""

    before: onnx.NodeProto
    from_opset: int
    after: list[onnx.NodeProto]
    to_opset: int
    types: dict
    shapes: dict
    const: object
    exact: bool

    def prove(self) -> str | None:
        """None when proven; else why not. CannotProve when no proof can run."""
        from ..ops.prove import prove

        return prove(self.before, self.from_opset, self.after, self.to_opset, types=self.types,
                     shapes=self.shapes, const=self.const,
                     ir_version=ir.ir_for_opset(max(self.from_opset, self.to_opset)))


def _lookups(site: Site, base_dir: str):
    scope = site.scope
    const = constants(site, base_dir)

    def find(name: str):
        return scope.find_type(name) if name else None

    def rank(name: str):
        t = find(name)
        return None if t is None or t[1] is None else len(t[1])

    return const, find, rank


class PlanOtherOps:
    name = "other-ops"
    requires = ("sites", "names")
    ensures = ("other ops planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        to = ctx.opts.to_opset
        passed: dict[tuple, bool] = {}  # (id(scope), domain, op type) -> whether its nodes stay as they are
        for site in ctx.sites:
            node = site.node
            kind = (id(site.scope), node.domain, node.op_type)  # (the scopes live as long as the sites)
            stays = passed.get(kind)
            if stays is None:
                stays = passed[kind] = _stays(site, node, to)
            if stays or (id(site.owner), site.index) in ctx.reformatted:
                continue
            src = schema.opset_of(site.scope.opsets, schema.AI_ONNX)
            const, find, rank = _lookups(site, ctx.base_dir)
            names = [n for n in (*node.input, *node.output) if n]
            found = {n: find(n) for n in names}
            types = {n: (None if t is None or t[0] == 0 else dtypes.name_of(t[0])) for n, t in found.items()}
            elem = {n: (0 if t is None else t[0]) for n, t in found.items()}
            from .. import ops  # its adapters, read from onnx.defs at import: only for a node that steps

            got = ops.convert(node, src, to, types=types, elem_types=elem, const=const, rank=rank,
                              namer=ctx.namer, ir_version=ctx.source_ir)
            if got is None:
                continue
            w, op = where(site), op_label(site)
            if isinstance(got, ops.Refusal):
                result.refusals.append(refused(site, "QC201", got.reason))
                continue
            shapes = {n: (None if t is None else t[1]) for n, t in found.items()}
            case = OpCase(node, src, got.nodes, to, types, shapes, const, got.exact)
            ctx.rewrites.append(Rewrite(site, got.nodes, [], Entry(w, op, "other-op", got.changes), case))
        return result


def _stays(site, node, to: int) -> bool:
    """Whether a node is none of this pass' (a Q/DQ op, another domain's) or its op is at one
    version at both opsets: the same for every node of its scope, domain and op type."""
    domain, op = node.domain, node.op_type
    if schema.normalize_domain(domain) != schema.AI_ONNX or schema.is_known_op(domain, op):
        return True
    src = schema.opset_of(site.scope.opsets, schema.AI_ONNX)
    return src is None or src == to or _same_version(op, src, to)


def _same_version(op: str, src: int, to: int) -> bool:
    """Whether ``op`` is at one schema version at both opsets (ops.convert keeps such a node
    as it is without reading its types: they are not looked up for it)."""
    s_from = opsteps.since_at(op, src)
    return s_from is not None and s_from == opsteps.since_at(op, to)


def prove_case(case: OpCase) -> tuple[bool, str | None]:
    """(verified, refusal reason or None) for one non-Q/DQ rewrite."""
    from ..ops.prove import CannotProve

    try:
        why = case.prove()
    except CannotProve as e:
        if case.exact:
            return False, None  # exact by construction; reported as not proven
        return False, f"the rewrite is not exact by construction and cannot be proven: {e}"
    return (why is None), (None if why is None else f"the proof failed: {why}")
