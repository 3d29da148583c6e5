"""One conversion, start to finish, in memory: plan every node, prove, apply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import schema
from ..check.engine import inferred_types
from ..check.node import NodeView
from ..errors import QlinError
from ..model.tensors import UnsafeData, read_value
from ..schema import AI_ONNX, MICROSOFT, QUARK, dtypes, ir
from . import domains, lower, other_ops, qnode, verify
from .retarget import Refusal
from .sites import Namer, Site, all_names, sites


@dataclass
class Options:
    to_opset: int
    to_domain: str | None = None  # None: every node keeps its domain
    ir_version: int | None = None
    lower: bool = False
    verify: bool = True


@dataclass
class Entry:
    where: str
    op: str
    action: str  # "converted" | "lowered" | "other-op"
    changes: list[str] = field(default_factory=list)
    verified: bool = False


@dataclass
class Refused:
    where: str
    op: str
    reason: str
    ways_out: list[str] = field(default_factory=list)


@dataclass
class Result:
    model: onnx.ModelProto | None
    entries: list[Entry]
    refused: list[Refused]
    opsets_from: dict[str, int]
    opsets_to: dict[str, int]
    ir_from: int
    ir_to: int

    def count(self, action: str) -> int:
        return sum(1 for e in self.entries if e.action == action)

    @property
    def verified(self) -> int:
        return sum(1 for e in self.entries if e.verified)


@dataclass
class _Pending:
    site: Site
    nodes: list[onnx.NodeProto]
    inits: list[onnx.TensorProto]
    entry: Entry
    case: verify.Case | None = None


def _where(site: Site) -> str:
    n = site.node
    label = f"'{n.name}'" if n.name else f"#{site.index}"
    return f"{label} in {site.scope.path}"


def _op(node: onnx.NodeProto, opsets: dict[str, int]) -> str:
    dom = schema.normalize_domain(node.domain)
    name = schema.DOMAIN_NAMES.get(dom, dom)
    v = opsets.get(dom, opsets.get("ai.onnx") if dom == "" else None)
    return f"{node.op_type} ({name} {v})"


def _ai_opset(opsets: dict[str, int]) -> int | None:
    return opsets.get(AI_ONNX, opsets.get("ai.onnx"))


def _after_opsets(opsets: dict[str, int], to_opset: int) -> dict[str, int]:
    out = {schema.normalize_domain(k): v for k, v in opsets.items()}
    out[AI_ONNX] = to_opset
    out.setdefault(MICROSOFT, 1)
    out.setdefault(QUARK, 1)
    return out


def _values(view: NodeView, base_dir: str) -> dict[str, np.ndarray]:
    found = {}
    for i in (1, 2):
        if view.present(i):
            t = view.scope.find_value(view.node.input[i])
            if t is not None:
                v = read_value(t, base_dir)  # UnsafeData: convert_model names the model
                if v is not None:
                    found[view.node.input[i]] = v
    return found


def _zero_point(z: qnode.NewZeroPoint, name: str) -> onnx.TensorProto:
    arr = np.zeros(z.shape, dtypes.BY_NAME[z.type_name].numpy)
    return numpy_helper.from_array(arr, name)


def plan_qdq(site: Site, view: NodeView, opts: Options, base_dir: str, namer: Namer,
             newest: int) -> _Pending | Refused | None:
    node = site.node
    q = qnode.read(view)
    before_opsets = {schema.normalize_domain(k): v for k, v in site.scope.opsets.items()}
    res = domains.convert_node(q, opts.to_domain, opts.to_opset)
    where, op = _where(site), _op(node, site.scope.opsets)
    after_opsets = _after_opsets(site.scope.opsets, opts.to_opset)
    if isinstance(res, Refusal):
        if opts.lower:
            low = lower.lower(q, view, opts, namer, _values(view, base_dir))
            if not isinstance(low, Refusal):
                entry = Entry(where, op, "lowered", [low.summary])
                case = verify.Case(where, q, [node], before_opsets, low.nodes, after_opsets,
                                   _values(view, base_dir), low.added, view.in_shape(0))
                nodes = low.nodes if site.in_function else [n for n in low.nodes if n.op_type != "Constant"]
                inits = [] if site.in_function else low.inits
                return _Pending(site, nodes, inits, entry, case)
            reason = f"{res.reason}; --lower cannot help: {low.reason}"
            return Refused(where, op, reason, domains.ways_out(q, opts.to_domain, opts.to_opset, newest))
        outs = domains.ways_out(q, opts.to_domain, opts.to_opset, newest)
        if lower.can_lower(q, view, opts):
            outs.append("--lower")
        return Refused(where, op, res.reason, outs)
    if res.spec is q.spec and not res.changes:
        return None
    new = qnode.emit(res, node)
    nodes, inits, added = [new], [], {}
    if res.new_zero_point is not None:
        zname = namer(f"{node.name or node.output[0]}_zero_point")
        zt = _zero_point(res.new_zero_point, zname)
        added[zname] = numpy_helper.to_array(zt)
        while len(new.input) < 2:
            new.input.append("")
        new.input[2:] = [zname]
        if site.in_function:
            value = onnx.TensorProto()
            value.CopyFrom(zt)
            value.name = ""
            nodes.insert(0, helper.make_node("Constant", [], [zname], value=value))
        else:
            inits.append(zt)
    changes = res.changes or [f"version {q.spec.since} -> {res.spec.since}: nothing to rewrite"]
    entry = Entry(where, op, "converted", changes)
    case = verify.Case(where, q, [node], before_opsets, [new], after_opsets,
                       _values(view, base_dir), added, view.in_shape(0))
    return _Pending(site, nodes, inits, entry, case)


def convert_model(model: onnx.ModelProto, base_dir: str, opts: Options,
                  progress: Callable[[int, int], None] | None = None, source: str | None = None) -> Result:
    """The converted model (None when something is refused) and what happened.

    A tensor qlin cannot read raises QlinError naming ``source`` (the model file).
    """
    try:
        return _convert(model, base_dir, opts, progress)
    except UnsafeData as e:
        raise QlinError(source or base_dir, str(e)) from None


def _convert(model: onnx.ModelProto, base_dir: str, opts: Options,
             progress: Callable[[int, int], None] | None) -> Result:
    if opts.to_domain is not None:  # "ai.onnx" or "" both mean the default domain
        opts = Options(opts.to_opset, domains.NAMES.get(opts.to_domain, opts.to_domain),
                       opts.ir_version, opts.lower, opts.verify)
    new = onnx.ModelProto()
    new.CopyFrom(model)
    opsets_from = {o.domain or AI_ONNX: o.version for o in model.opset_import}
    newest = ir.newest_opset()
    oldest = schema.versions(AI_ONNX, "QuantizeLinear")[0].since
    if not oldest <= opts.to_opset <= newest:
        raise QlinError("--to-opset", f"{opts.to_opset} is outside {oldest}..{newest}")
    extra = inferred_types(new)
    namer = Namer(all_names(new))
    pending: list[_Pending] = []
    refused: list[Refused] = []
    for site in list(sites(new, extra)):
        node = site.node
        view = NodeView(node, site.index, site.scope, base_dir)
        dom = schema.normalize_domain(node.domain)
        if schema.is_known_op(dom, node.op_type) and view.spec is not None:
            got = plan_qdq(site, view, opts, base_dir, namer, newest)
        elif dom == AI_ONNX and _ai_opset(site.scope.opsets) is not None:
            got = _plan_other(site, opts, namer, model.ir_version)
        else:
            got = None
        if isinstance(got, Refused):
            refused.append(got)
        elif got is not None:
            pending.append(got)

    if opts.verify:
        cases = [p for p in pending if p.case is not None]
        for i, p in enumerate(cases):
            why = verify.prove(p.case)
            if why is None:
                p.entry.verified = True
            else:
                refused.append(Refused(p.entry.where, p.entry.op, f"the proof failed: {why}"))
            if progress:
                progress(i + 1, len(cases))
    entries = [p.entry for p in pending]
    if refused:
        return Result(None, entries, refused, opsets_from, {}, model.ir_version, model.ir_version)

    _apply(pending)
    _fix_imports(new, opsets_from, opts.to_opset)
    opsets_to = {o.domain or AI_ONNX: o.version for o in new.opset_import}
    new.ir_version = opts.ir_version or ir.ir_needed(
        opsets_to, _types_used(new), bool(new.functions), _has_node_metadata(new))
    return Result(new, entries, refused, opsets_from, opsets_to, model.ir_version, new.ir_version)


def _plan_other(site: Site, opts: Options, namer: Namer, ir_version: int) -> _Pending | Refused | None:
    node = site.node
    src = _ai_opset(site.scope.opsets)
    if src == opts.to_opset or not other_ops.needs_conversion(node.op_type, src, opts.to_opset):
        return None
    where = _where(site)
    try:
        nodes = other_ops.convert_node(site, where, src, opts.to_opset, namer, ir_version)
    except other_ops.OpNotConvertible as e:
        return Refused(where, _op(node, site.scope.opsets), str(e))
    entry = Entry(where, _op(node, site.scope.opsets), "other-op",
                  [f"onnx.version_converter {src} -> {opts.to_opset}"])
    return _Pending(site, nodes, [], entry)


def _apply(pending: list[_Pending]) -> None:
    """Replace nodes, children before parents, so a rebuilt parent carries new subgraphs."""
    order: list = []
    by_owner: dict[int, list[_Pending]] = {}
    for p in pending:
        key = id(p.site.owner)
        if key not in by_owner:
            by_owner[key] = []
            order.append(p.site.owner)
        by_owner[key].append(p)
    for owner in reversed(order):
        repl = {p.site.index: p for p in by_owner[id(owner)]}
        rebuilt = []
        for i, n in enumerate(owner.node):
            if i in repl:
                rebuilt.extend(repl[i].nodes)
            else:
                c = onnx.NodeProto()
                c.CopyFrom(n)
                rebuilt.append(c)
        del owner.node[:]
        owner.node.extend(rebuilt)
        if isinstance(owner, onnx.GraphProto):
            for p in by_owner[id(owner)]:
                owner.initializer.extend(p.inits)


def _domains_used(nodes_by_graph) -> set[str]:
    return {schema.normalize_domain(n.domain) for n in nodes_by_graph}


def _graph_nodes(graph: onnx.GraphProto):
    stack = [graph]
    while stack:
        g = stack.pop()
        for n in g.node:
            yield n
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    stack.extend(a.graphs)


def _set_imports(imports, used: set[str], to_opset: int, had: set[str]) -> None:
    """ai.onnx at ``to_opset``; Q/DQ vendor domains added when used, removed when no longer."""
    keep = []
    present = set()
    for o in imports:
        dom = schema.normalize_domain(o.domain)
        if dom == AI_ONNX:
            o.version = to_opset
        if dom in (MICROSOFT, QUARK) and dom not in used and dom in had:
            continue
        present.add(dom)
        keep.append(helper.make_opsetid(o.domain, o.version))
    for dom in (AI_ONNX, MICROSOFT, QUARK):
        if dom in used and dom not in present:
            keep.append(helper.make_opsetid(dom, to_opset if dom == AI_ONNX else 1))
    del imports[:]
    imports.extend(keep)


def _fix_imports(model: onnx.ModelProto, opsets_from: dict[str, int], to_opset: int) -> None:
    used = _domains_used(_graph_nodes(model.graph))
    for fn in model.functions:
        fn_nodes = list(fn.node)
        for n in fn.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fn_nodes.extend(_graph_nodes(a.g))
        fn_used = _domains_used(fn_nodes)
        fn_had = {schema.normalize_domain(o.domain) for o in fn.opset_import}
        _set_imports(fn.opset_import, fn_used, to_opset, fn_had)
    used.add(AI_ONNX)
    _set_imports(model.opset_import, used, to_opset, set(opsets_from))


def _types_used(model: onnx.ModelProto) -> set[str]:
    found: set[str] = set()
    stack = [model.graph]
    while stack:
        g = stack.pop()
        for t in g.initializer:
            found.add(dtypes.name_of(t.data_type))
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.HasField("tensor_type"):
                found.add(dtypes.name_of(v.type.tensor_type.elem_type))
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    found.add(dtypes.name_of(a.t.data_type))
                elif a.type == onnx.AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    stack.extend(a.graphs)
    return found


def _has_node_metadata(model: onnx.ModelProto) -> bool:
    nodes = list(_graph_nodes(model.graph))
    for fn in model.functions:
        nodes.extend(fn.node)
    return any(len(n.metadata_props) for n in nodes)
