"""Plan every Q/DQ node: retarget it to the target opset and domain, or lower it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import schema
from ...finding import Finding
from ...model.facts import read_facts, shared_with
from ...model.tensors import read_value
from ...schema import dtypes, ir
from .. import domains, lower, qnode, verify
from ..entries import located, op_label, refused, where
from ..refusal import Refusal
from ..sites import Site, constant_tensor
from ..state import Context, Entry, PassResult, Rewrite


def after_opsets(opsets: dict[str, int], to_opset: int) -> dict[str, int]:
    """The opsets a rewritten node is evaluated under: ai.onnx at the target, vendors
    at the version qlin knows."""
    out = {schema.normalize_domain(k): v for k, v in opsets.items()}
    out[schema.AI_ONNX] = to_opset
    for d in schema.vendor_domains():
        out.setdefault(d, schema.domain_version(d))
    return out


def constant_values(site: Site, indices, base_dir: str) -> dict[str, np.ndarray]:
    """The values of the node's constant inputs at ``indices`` (unsafe data raises)."""
    found = {}
    node = site.node
    for i in indices:
        if i is not None and i < len(node.input) and node.input[i]:
            t = constant_tensor(site.scope, node.input[i])  # (not one a subgraph's input hides)
            if t is not None:
                v = read_value(t, base_dir)
                if v is not None:
                    found[node.input[i]] = v
    return found


def _zero_point(z: qnode.NewZeroPoint, name: str) -> onnx.TensorProto:
    return numpy_helper.from_array(np.zeros(z.shape, dtypes.BY_NAME[z.type_name].numpy), name)


def new_memo() -> dict:
    """An empty memo for ``plan``, for one conversion."""
    return {"specs": {}, "keys": {}, "labels": {}, "ops": {}, "said": {}}


def _kept_key(facts, keys: dict) -> tuple | None:
    """What the decision to keep a node as it is reads of it: its facts but names, location
    and constant values (``NodeFacts.shape_key``: the node's types, shapes, attributes and
    schema, from which ``qnode.read`` builds what retarget and its policies judge), which
    inputs it has and how many outputs. None when it cannot be a key. ``keys``: the keys
    worked out, by the facts ``NodeFacts.share`` tied these to (whose key is theirs: which
    inputs are present and how many outputs there are is in the types of the shape key)."""
    like = shared_with(facts) or facts
    found = keys.get(id(like))
    if found is not None and found[0] is like:
        return found[1]
    try:
        key = (facts.shape_key(), tuple(map(bool, facts.inputs)), len(facts.outputs))
        hash(key)
    except TypeError:
        key = None
    keys[id(like)] = (like, key)  # (``like`` held: its id stays its own)
    return key


def _kept(site: Site, facts, spec, memo: dict | None = None) -> Entry | None:
    """``memo``: ``plan``'s, whose "labels" (``op_label``'s), "ops" (``located``'s) and "said"
    (the texts) are kept across the nodes of one conversion."""
    if spec is facts.spec:
        return None
    labels, ops, said = (None, {}, {}) if memo is None else (memo["labels"], memo["ops"], memo["said"])
    key = (facts.spec.since, spec.since)
    text = said.get(key)
    if text is None:  # (one text for every node kept between the same two versions)
        text = said[key] = f"version {key[0]} -> {key[1]}: nothing to rewrite"
    return located(Entry(where(site), op_label(site, labels), "kept", [text], verified=False), site, ops)


def plan(ctx: Context, site: Site, facts, memo: dict | None = None) -> Rewrite | Entry | Finding | None:
    """``memo`` (``new_memo``): "specs", key (``_kept_key``) -> the schema a node of that key is
    kept at, valid as it is (the decision read no name and no value: nodes of one key are
    decided once); "keys", "labels", "ops" and "said", what ``_kept_key`` and ``_kept`` worked out."""
    node, opts = site.node, ctx.opts
    key = _kept_key(facts, memo["keys"]) if memo is not None else None
    if key is not None and key in memo["specs"]:
        return _kept(site, facts, memo["specs"][key], memo)
    q = qnode.read(facts)
    w, op = where(site), op_label(site)
    unread = _vendor_axis(site, facts, q, opts)
    if unread is not None:
        return unread
    before_opsets = {schema.normalize_domain(k): v for k, v in site.scope.opsets.items()}
    after = after_opsets(site.scope.opsets, opts.to_opset)
    newest = ir.newest_opset()
    values = lambda: constant_values(site, (facts.scale_index, facts.zero_point_index), ctx.base_dir)  # noqa: E731
    res = domains.convert_node(q, opts.to_domain, opts.to_opset)
    if isinstance(res, Refusal):
        outs = domains.ways_out(q, opts.to_domain, opts.to_opset, newest)
        if not opts.lower:
            if lower.can_lower(q, opts):
                outs.append("--lower")
            return refused(site, "QC102", res.reason, outs)
        vals = values()
        low = lower.lower(q, node, opts, ctx.namer, vals)
        if isinstance(low, Refusal):
            return refused(site, "QC102", f"{res.reason}; --lower cannot help: {low.reason}", outs)
        case = verify.Case(w, q, [node], before_opsets, low.nodes, after, vals, low.added,
                           facts.in_shape(0))
        nodes = low.nodes if site.in_function else [n for n in low.nodes if n.op_type != "Constant"]
        inits = [] if site.in_function else low.inits
        return Rewrite(site, nodes, inits, Entry(w, op, "lowered", [low.summary]), case)
    if not res.changes:
        # same op, domain and attributes: the node is valid at the target as it is, and
        # means the same (retarget checked its types and granularity): nothing to prove
        if key is not None and res.new_zero_point is None and not q.changes:
            memo["specs"][key] = res.spec
        return _kept(site, facts, res.spec, memo)
    new = qnode.emit(res, node)
    nodes, inits, added = [new], [], {}
    if res.new_zero_point is not None:
        zname = ctx.namer(f"{node.name or node.output[0]}_zero_point")
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
    case = verify.Case(w, q, [node], before_opsets, [new], after, values(), added, facts.in_shape(0))
    return Rewrite(site, nodes, inits, Entry(w, op, "converted", list(res.changes)), case)


def _vendor_axis(site: Site, facts, q, opts) -> Finding | None:
    """A vendor node per axis without ``axis``, whose page and kernel disagree on the
    default: the axis --quark-axis names, or QC101 asking for it."""
    spec = facts.spec
    if (spec.kernel_axis_default is None or facts.has("axis")
            or facts.granularity not in (schema.PER_AXIS, schema.BLOCKED)):
        return None
    if opts.vendor_axis is None:
        return refused(site, "QC101", f"per-axis without axis: {spec.domain_name}'s page says the "
                                      f"default is {spec.axis_default}, its kernel uses "
                                      f"{spec.kernel_axis_default}; say which reading applies", [
            f"--quark-axis {spec.axis_default}", f"--quark-axis {spec.kernel_axis_default}"])
    q.attrs["axis"] = opts.vendor_axis
    q.changes.append(f"axis={opts.vendor_axis} from --quark-axis")
    return None


class PlanQDQ:
    name = "qdq"
    requires = ("sites", "names")
    ensures = ("qdq planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        memo = new_memo()
        known: dict[tuple[str, str], bool] = {}  # (domain, op type) -> an op of a family qlin knows
        for site in ctx.sites:
            node = site.node
            kind = (node.domain, node.op_type)
            ours = known.get(kind)
            if ours is None:
                ours = known[kind] = schema.is_known_op(*kind)
            if not ours or (id(site.owner), site.index) in ctx.reformatted:
                continue
            facts = ctx.node_facts(site) if ctx.node_facts is not None else None
            if facts is None:
                facts = read_facts(site.node, site.index, site.scope, ctx.base_dir)
            if not schema.is_linear(facts.spec):
                continue
            got = plan(ctx, site, facts, memo)
            if isinstance(got, Finding):
                result.refusals.append(got)
            elif isinstance(got, Entry):
                result.entries.append(got)
            elif got is not None:
                ctx.rewrites.append(got)
        return result
