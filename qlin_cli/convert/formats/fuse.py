"""The way back, planned (`--to-format qoperator`): every QDQ group with a QOperator form
(to_qoperator.py) is measured against the group (measure.py) and fused when within
``--tolerance``; a group that does not fuse stays as it is, and the report says why
(action "unfused"). The folded DequantizeLinear and QuantizeLinear nodes are rewritten
into nothing (action "folded")."""

from __future__ import annotations

import numpy as np
import onnx

from ... import schema
from ...model.tensors import read_value
from ...schema.qdq_forms import QOPERATOR_OF
from ..entries import entry_of
from ..sites import constant_tensor, constants, readers_anywhere
from ..state import Context, PassResult, Rewrite
from . import gather_block, nbits, nbits_proof
from .measure import CannotMeasure, FormatCase, measure_all
from .to_qoperator import Graph, Unfused, group, is_op


def plan_qoperator(ctx: Context, result: PassResult) -> PassResult:
    by_owner: dict[int, list] = {}
    for site in ctx.sites:
        by_owner.setdefault(id(site.owner), []).append(site)
    found: list = []  # (site, at, fused, case) of every group with a QOperator form
    anywhere = readers_anywhere(ctx.bodies)
    read: dict = {}  # id(scope) -> its ``constants``: the scales and zero points groups share, read once
    tables: dict = {}  # id(graph) -> (its initializers, their 4-bit tables read together), once asked
    pending: list = []  # (NBitsCase, its MatMulNBits, its Lookups): the page's weights read back together
    later: list = []  # the MatMulNBits whose initializers are written together (nbits.write_later)
    known: dict = {}  # the entries' op labels and node fields (convert/entries.py entry_of)
    for sites in by_owner.values():
        owner = sites[0].owner
        if not isinstance(owner, onnx.GraphProto):
            continue  # a function holds no initializers for the zero points a fusion may add
        g = Graph(list(owner.node), {o.name for o in owner.output}, anywhere)
        at = {s.index: s for s in sites}
        for site in sites:
            node = g.plain[site.index]  # (its fields read once, by the Graph)
            if schema.normalize_domain(node.domain) != schema.AI_ONNX:
                continue
            if (_plan_nbits(ctx, result, g, site, at, tables, (pending, later), known)
                    or node.op_type not in QOPERATOR_OF):
                continue
            got = _group(ctx, result, g, site, read, known)
            if got is not None:
                found.append((site, at, *got))
    nbits.write_later(later)
    for (case, *_), w in zip(pending, nbits.read_back([item for _, *item in pending]), strict=True):
        case.w = w
    measured = measure_all([case for *_, case in found])
    for (site, at, fused, _), m in zip(found, measured, strict=True):
        _decide(ctx, result, site, at, fused, m, known)
    return result


def _group(ctx: Context, result: PassResult, g: Graph, site, read: dict, known: dict):
    """(fused node, its measuring case) of the group around ``site``, or None (an unfused
    entry says why where the node reads a DequantizeLinear). Groups fold disjoint nodes: a
    DequantizeLinear folds only into its one reader, a QuantizeLinear into its one writer."""
    const, typed = _lookups(site, ctx, read)
    try:
        fused = group(g, site.index, ctx.opts.to_opset, const, ctx.namer, lambda x: typed(x)[0])
    except Unfused as e:
        _unfused(result, g, site, str(e), known)
        return None
    return fused, _case(g, fused, const, typed, ctx.opts.to_opset)


def _unfused(result: PassResult, g: Graph, site, why: str, known: dict) -> None:
    if any(g.writer.get(x) is not None and is_op(g.nodes[g.writer[x]], "DequantizeLinear")
           for x in site.node.input):
        result.entries.append(entry_of(site, "unfused", [f"stays QDQ: {why}"], known))


def _decide(ctx: Context, result: PassResult, site, at: dict, fused, m, known: dict) -> None:
    """Fuse the group when its measurement ``m`` is within --tolerance, else say why not."""
    g_node = site.node
    if isinstance(m, CannotMeasure):
        result.entries.append(entry_of(site, "unfused", [f"stays QDQ: {m}"], known))
        return
    if m.steps > ctx.opts.tolerance:
        result.entries.append(entry_of(site, "unfused", [
            f"stays QDQ: its {fused.node.op_type} differs by up to {m.steps} step"
            f"{'s' if m.steps > 1 else ''} on {m.differ:,} of {m.outputs:,} measured outputs "
            f"({', '.join(m.engines)}); --tolerance {m.steps} fuses it"], known))
        return
    name = fused.node.name
    entry = entry_of(site, "reformatted",
                     [f"{g_node.op_type} and its Q/DQ -> {fused.node.op_type} '{name}' (QOperator form)",
                      f"measured: {m.text()}"], known, measured=m)
    ctx.rewrites.append(Rewrite(site, [fused.node], fused.inits, entry))
    ctx.reformatted.add((id(site.owner), site.index))
    for i in fused.folded:
        other = at[i]
        folded = entry_of(other, "folded", [f"folded into {fused.node.op_type} '{name}'"], known)
        ctx.rewrites.append(Rewrite(other, [], [], folded))
        ctx.reformatted.add((id(other.owner), i))


# the float ops of blocked constants with a proven com.microsoft form: (the input the blocked
# DequantizeLinear feeds, the module that writes the form, what the report calls the constant)
_BLOCKED = {"MatMul": (1, nbits, "blocked weights"), "Gather": (0, gather_block, "a blocked table")}


def _plan_nbits(ctx: Context, result: PassResult, g: Graph, site, at: dict, tables: dict,
                pending: tuple, known: dict) -> bool:
    """A MatMul of blocked weights (a DequantizeLinear with block_size of a constant [K, N]),
    or a Gather of a blocked table: its MatMulNBits or GatherBlockQuantized planned, the
    constants proven; False for any other node. ``tables``, ``pending`` (pending and later),
    ``known``: see plan_qoperator (a MatMulNBits node's initializers are written there, and its
    case's weights read back, with the others'); ``known`` keeps the DequantizeLinear nodes'
    attributes read last too (nbits.Attributes)."""
    seen = g.plain[site.index]  # (its fields read once, by the Graph)
    slot, form, what = _BLOCKED.get(seen.op_type, (None, None, ""))
    writer = g.writer.get(seen.input[slot]) if slot is not None and len(seen.input) > slot else None
    if writer is None:
        return False
    node = site.node
    dq = g.nodes[writer]
    # (the DequantizeLinear nodes' attributes mostly equal: read once, nbits.Attributes)
    memo = known.get("attributes") or known.setdefault("attributes", nbits.Attributes())
    if not is_op(dq, "DequantizeLinear") or not memo.of(dq).blocked:
        return False
    names = dq.input[:]
    # each input's tensor found once (a ``constants`` lookup of the scale and zero point, and
    # the proof's tensors)
    found = [constant_tensor(site.scope, x) if x else None for x in names]
    weight = found[0]
    scale = None if found[1] is None else read_value(found[1], ctx.base_dir)
    zero = None
    if len(names) > 2 and names[2] and found[2] is not None:
        zero = read_value(found[2], ctx.base_dir)
    read = _read(site, form, names, found, (None, scale, zero), tables, ctx.base_dir)
    try:
        if weight is None or scale is None or (len(names) > 2 and names[2] and zero is None):
            raise nbits.NoForm("its weights, scale or zero point are computed at run time")
        back: list = []
        fused, inits, w = form.from_qdq(dq, node, weight, np.asarray(scale), zero, ctx.namer,
                                        **({"read": read, "back": back, "later": pending[1], "memo": memo}
                                           if form is nbits else {"codes": read.get(names[0])}))
    except nbits.NoForm as e:
        result.entries.append(entry_of(site, "unfused", [f"stays QDQ: {e}"], known))
        return True
    source = [t for t in found if t is not None]  # (the weight, and the tensors of inputs named)
    case = (gather_block.GatherCase(w, dq, source, read) if form is gather_block
            else nbits_proof.NBitsCase(w, dq, source, read))
    pending[0].extend((case, *item) for item in back)
    entry = entry_of(site, "reformatted",
                     [f"{node.op_type} of {what} -> {fused.op_type} '{fused.name}' (QOperator form)"], known)
    ctx.rewrites.append(Rewrite(site, [fused], inits, entry, case))
    ctx.reformatted.add((id(site.owner), site.index))
    if g.only_reader(dq.output[0], site.index):
        other = at[writer]
        folded = entry_of(other, "folded", [f"folded into {fused.op_type} '{fused.name}'"], known)
        ctx.rewrites.append(Rewrite(other, [], [], folded))
        ctx.reformatted.add((id(other.owner), writer))
    return True


def _read(site, form, names: list, found: list, values: tuple, tables: dict, base_dir: str) -> dict:
    """The DequantizeLinear's constants as the rewrite and its proof take them read, by name
    (nbits_proof.NBitsCase.read): an n-bits weight among the graph's 4-bit tables read
    together, and each constant stored outside the model file, read from its data file beside
    the model (model/tensors.py read_value, which checks where it points; ``values``: those
    read already, None where not). numpy_helper.to_array, which reads the others, would look
    for that file in the working directory."""
    read: dict = {}
    weight = found[0]
    if form is nbits and weight is not None:
        if id(site.owner) not in tables:  # (the tensors kept with their tables: ids stay theirs)
            tensors = list(site.owner.initializer)
            tables[id(site.owner)] = (tensors, nbits.read_codes(tensors))
        codes = tables[id(site.owner)][1]
        if id(weight) in codes:
            read[weight.name] = codes[id(weight)]
    for name, t, value in zip(names, found, values, strict=False):
        if t is not None and name not in read and t.data_location == onnx.TensorProto.EXTERNAL:
            read[name] = np.asarray(value if value is not None else read_value(t, base_dir))
    return read


def _lookups(site, ctx: Context, read: dict):
    """(const, typed) seen from ``site``'s scope; one ``constants`` per scope (``read``), which
    reads each constant once."""
    const = read.get(id(site.scope))
    if const is None:
        const = read[id(site.scope)] = constants(site, ctx.base_dir)

    def typed(name: str) -> tuple:
        t = site.scope.find_type(name) if name else None
        return (0, None) if t is None else (t[0], t[1])

    return const, typed


def _case(g: Graph, fused, const, typed, opset: int) -> FormatCase:
    before = [g.plain[i] for i in fused.group]
    made = {o for n in before for o in n.output}
    consts, inputs = {}, {}
    for n in before:
        for x in n.input:
            if not x or x in made or x in consts or x in inputs:
                continue
            value = const(x)
            if value is not None:
                consts[x] = value
            else:
                inputs[x] = typed(x)
    out = fused.node.output[0]
    after = {"": opset}
    if fused.node.domain:
        after[fused.node.domain] = 1
    out_type = typed(out)[0] or _q_type(before[-1], const)
    return FormatCase([g.nodes[i] for i in fused.group], [fused.node], fused.inits, consts, inputs, out_type,
                      {"": opset}, opset, opsets_after=after, plain={"before": before})


def _q_type(q, const) -> int:
    """The element type a QuantizeLinear writes: its zero point's, else uint8."""
    from onnx import TensorProto, helper

    zp = const(q.input[2]) if len(q.input) > 2 and q.input[2] else None
    return TensorProto.UINT8 if zp is None else helper.np_dtype_to_tensor_dtype(zp.dtype)
