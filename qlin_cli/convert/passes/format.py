"""Plan the format rewrites `--to-format qdq` asks for: every QOperator node with a form
in convert/formats/forms.py becomes DequantizeLinear -> float op -> QuantizeLinear at the
target opset. The prove pass measures each (convert/formats/measure.py). Either way
(`--to-format qoperator` too), a source initializer that only rewritten nodes read, and that
no node of the result reads, is dropped (unread.py)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import schema
from ...schema.qdq_forms import GATHER_BLOCK_QUANTIZED, N_BITS_MATMUL, form_of
from ..entries import entry_of, refused
from ..formats import dynamic, gather_block, nbits, nbits_proof
from ..formats.fuse import plan_qoperator as _plan_qoperator
from ..formats.measure import FormatCase, observed_shapes
from ..formats.to_qdq import Lookups, NoForm, Plain, plain, to_qdq
from ..sites import constants, readers_anywhere
from ..state import Context, PassResult, Rewrite
from .unread import drop_unread


class PlanFormat:
    name = "format"
    requires = ("sites", "names")
    ensures = ("format planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        if ctx.opts.to_format == "qoperator":
            _plan_qoperator(ctx, result)
        elif ctx.opts.to_format == "qdq":
            _plan_qdq(ctx, result)
        if ctx.rewrites and not result.refusals:
            drop_unread(ctx, ctx.rewrites)
        return result


def _plan_qdq(ctx: Context, result: PassResult) -> None:
    """Every node with a QDQ form planned (or refused)."""
    planned = []
    graphs: dict = {}  # id(owner) -> (writer, readers, site by node id) of its nodes
    read: dict = {}  # id(scope) -> its Lookups: the scales and zero points nodes share, read once
    known: dict = {}  # the entries' op labels and node fields (common.entry_of)
    weights = _nbits_weights(ctx)
    for site in ctx.sites:
        if (_plan_nbits(site, ctx, result, weights, known)
                or _plan_dynamic(site, ctx, result, graphs, known)):
            continue
        form = form_of(site.node.domain, site.node.op_type)
        if form is None:
            continue
        look = _lookups(site, ctx, read)
        node = plain(site.node)
        try:
            built = to_qdq(node, form, ctx.opts.to_opset, look)
        except NoForm as e:
            result.refusals.append(refused(site, "QC202", str(e)))
            continue
        case = _case(site, node, built, look, ctx)
        entry = entry_of(site, "reformatted", built.changes, known)
        ctx.rewrites.append(Rewrite(site, built.nodes, built.inits, entry, case, built.plain or None))
        ctx.reformatted.add((id(site.owner), site.index))
        planned.append((site, case))
    _fill_shapes(ctx, planned)


def _nbits(node, opset: int, look: Lookups, read: tuple | None = None):
    built, w = nbits.to_qdq(node, opset, look, read)
    return built, nbits_proof.NBitsCase(w, built.nodes[0], built.inits)


def _gather_block(node, opset: int, look: Lookups, read: tuple | None = None):
    return gather_block.to_qdq(node, opset, look)


# the com.microsoft ops of blocked constants whose QDQ form is proven: (built, its proof)
_BLOCKED = {N_BITS_MATMUL: _nbits, GATHER_BLOCK_QUANTIZED: _gather_block}


def _nbits_weights(ctx: Context) -> dict[int, tuple]:
    """id(site) -> (its Lookups, its node's nbits.weights_of or None) of every MatMulNBits site,
    their codes unpacked together; {} unless the target opset has their QDQ form."""
    if ctx.opts.to_opset < nbits.BLOCKED_SINCE:
        return {}
    sites = [site for site in ctx.sites
             if (schema.normalize_domain(site.node.domain), site.node.op_type) == N_BITS_MATMUL]
    looks = [(site.node, _lookups(site, ctx)) for site in sites]
    found = nbits.weights_of(looks)
    return {id(site): (look, w) for site, (_, look), w in zip(sites, looks, found, strict=True)}


def _plan_nbits(site, ctx: Context, result: PassResult, weights: dict, known: dict) -> bool:
    """A com.microsoft MatMulNBits or GatherBlockQuantized node: its QDQ form planned (or
    refused); False for any other node. ``weights``: ``_nbits_weights``; ``known``: entry_of's."""
    node = site.node
    make = _BLOCKED.get((schema.normalize_domain(node.domain), node.op_type))
    if make is None:
        return False
    look, read = weights.get(id(site), (None, None))
    try:
        built, case = make(node, ctx.opts.to_opset, look or _lookups(site, ctx), read)
    except NoForm as e:
        result.refusals.append(refused(site, "QC202", str(e)))
        return True
    entry = entry_of(site, "reformatted", built.changes, known)
    ctx.rewrites.append(Rewrite(site, built.nodes, built.inits, entry, case, built.plain or None))
    ctx.reformatted.add((id(site.owner), site.index))
    return True


def _plan_dynamic(site, ctx: Context, result: PassResult, graphs: dict, known: dict) -> bool:
    """A MatMulInteger / ConvInteger fed by DynamicQuantizeLinear (its Cast and scale Muls
    removed) or a DynamicQuantizeLSTM (refused: no QDQ form); False for any other node."""
    node = site.node
    if node.op_type == "DynamicQuantizeLSTM" and schema.normalize_domain(node.domain):
        result.refusals.append(refused(site, "QC202", dynamic.lstm_refusal(node)))
        return True
    if schema.normalize_domain(node.domain) or node.op_type not in dynamic.INTEGER_OPS:
        return False
    writer, readers, by_id = _graph_of(site, ctx, graphs)
    look = _lookups(site, ctx)
    found = dynamic.chain(node, writer, readers, look.const)
    if "anywhere" not in graphs:  # a subgraph's node may read the values the chain drops
        graphs["anywhere"] = readers_anywhere(ctx.bodies)
    if found is None or any(graphs["anywhere"].get(n.output[0], 0) != 1 for n in (node, *found[1:3])):
        return False
    try:
        built = dynamic.to_qdq(node, found, ctx.opts.to_opset, look)
    except NoForm as e:
        result.refusals.append(refused(site, "QC202", str(e)))
        return True
    before = {"": schema.opset_of(site.scope.opsets, schema.AI_ONNX) or ctx.opts.to_opset}
    case = dynamic.case(node, found, built, look, before, ctx.opts.to_opset)
    entry = entry_of(site, "reformatted", built.changes, known)
    ctx.rewrites.append(Rewrite(site, built.nodes, built.inits, entry, case))
    ctx.reformatted.add((id(site.owner), site.index))
    for gone in found[1:]:
        other = by_id[id(gone)]
        folded = entry_of(other, "folded", [f"folded into {node.op_type}'s QDQ form"], known)
        ctx.rewrites.append(Rewrite(other, [], [], folded))
        ctx.reformatted.add((id(other.owner), other.index))
    return True


def _graph_of(site, ctx: Context, graphs: dict) -> tuple:
    key = id(site.owner)
    if key not in graphs:
        writer, readers, by_id = {}, {}, {}
        for s in ctx.sites:
            if id(s.owner) != key:
                continue
            by_id[id(s.node)] = s
            writer.update({o: s.node for o in s.node.output if o})
            for x in s.node.input:
                readers.setdefault(x, []).append(s.node)
        for out in getattr(site.owner, "output", []):  # a graph output: a reader the chain cannot drop
            readers.setdefault(getattr(out, "name", out), []).append(None)
        graphs[key] = (writer, readers, by_id)
    return graphs[key]


def _fill_shapes(ctx: Context, planned: list) -> None:
    """Inputs of the main graph's reformatted nodes whose shape inference leaves unknown
    (the outputs of vendor ops): their shapes as onnxruntime computes them."""
    unknown = {name: elem for site, case in planned if site.scope.path == "main"
               for name, (elem, shape) in case.inputs.items()
               if shape is None or not all(isinstance(d, int) and d > 0 for d in shape)}
    if not unknown:
        return
    found = observed_shapes(ctx.model, unknown, ctx.base_dir)
    for _, case in planned:
        for name in case.inputs:
            if name in found:
                shape, elem = found[name]
                case.inputs[name] = (case.inputs[name][0] or elem, shape)


def _lookups(site, ctx: Context, read: dict | None = None) -> Lookups:
    """What ``site``'s scope holds; with ``read``, one Lookups per scope, kept there (the
    scales and zero points its nodes share read once)."""
    if read is not None and id(site.scope) in read:
        return read[id(site.scope)]
    scope = site.scope
    look = Lookups(constants(site, ctx.base_dir), lambda n: scope.find_type(n) if n else None, ctx.namer)
    if read is not None:
        read[id(scope)] = look
    return look


def _written_type(node, built, look: Lookups) -> int:
    """The element type the rewrite's last node writes: its QuantizeLinear's zero point's, or
    float32 (QGemm without y_scale)."""
    last = built.nodes[-1]
    if last.op_type != "QuantizeLinear":
        return onnx.TensorProto.FLOAT
    zp = last.input[2]
    value = look.const(zp)
    if value is None:
        value = next((numpy_helper.to_array(t) for t in built.inits if t.name == zp), None)
    return 0 if value is None else helper.np_dtype_to_tensor_dtype(np.asarray(value).dtype)


def _case(site, node: Plain, built, look: Lookups, ctx: Context) -> FormatCase:
    """What measures the rewrite ``built`` of ``site``'s node (``node``: its Plain)."""
    consts, inputs = {}, {}
    for name in node.input:
        if not name or name in consts or name in inputs:
            continue
        value = look.const(name)
        if value is not None:
            consts[name] = value
        else:
            t = look.find_type(name)
            inputs[name] = (0, None) if t is None else (t[0], t[1])
    out = look.find_type(node.output[0])
    if out is None or out[0] == 0:  # a vendor op's output: the type its form writes
        out = (_written_type(node, built, look), None)
    opsets = site.scope.opsets
    domain = schema.normalize_domain(node.domain)
    before = {"": schema.opset_of(opsets, schema.AI_ONNX) or ctx.opts.to_opset}
    if domain:
        before[domain] = schema.opset_of(opsets, domain) or 1
    step = None
    if node.op_type == "QGemm" and not (len(node.input) > 7 and node.input[7]):
        a, b = look.const(node.input[1]), look.const(node.input[4])
        if a is not None and b is not None:
            alpha = next((x.f for x in node.attribute if x.name == "alpha"), 1.0)
            step = float(np.min(np.abs(np.asarray(a, np.float64) * np.asarray(b, np.float64)))) * abs(alpha)
    return FormatCase([site.node], built.nodes, built.inits, consts, inputs, 0 if out is None else out[0],
                      before, ctx.opts.to_opset, step,
                      plain={"before": [node], "after": built.plain} if built.plain else None)
