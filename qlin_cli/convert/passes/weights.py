"""`--weights fold`, `--weights unfold` and `--weights strip`: constant weights computed once,
at conversion; or every Q -> DQ pair stripped (the float model, to compare against).

fold (QL604's fix): a QuantizeLinear of a constant float weight (its scale and zero point
constants too) becomes an initializer holding what it computes, under its output's name;
the DequantizeLinear after it stays. unfold: a DequantizeLinear of a constant quantized
weight becomes a float initializer holding what it computes, for tools that need float
weights; unfold-bias does so only where the constant is int32 (a bias at input scale x
weight scale: a runtime that quantizes no int32, TensorRT, adds a float bias). Either way
the graph reads, at the same name, the values the node computed (the pages define them
exactly: "y = saturate((x / y_scale) + y_zero_point)", "y = (x -
x_zero_point) * x_scale"), computed by qlin's evaluator and checked bit for bit against
onnx.reference where it runs the node. Only in graphs (a function holds no initializers). The
initializers the rewritten nodes read go where nothing reads them any more, as unread.py's
rule says for every rewrite (never one a graph lists as an output or declares as an input).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from ... import schema
from ..entries import op_label, where
from ..formats.measure import REFERENCE_SINCE
from ..sites import constants, readers_anywhere
from ..state import Context, Entry, PassResult, Rewrite
from .unread import drop_unread

FAMILY = {"fold": schema.LINEAR_QUANTIZE, "unfold": schema.LINEAR_DEQUANTIZE,
          "unfold-bias": schema.LINEAR_DEQUANTIZE, "strip": schema.LINEAR_DEQUANTIZE}


class PlanWeights:
    name = "weights"
    requires = ("sites", "names")
    ensures = ("weights planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        mode = ctx.opts.weights
        if mode is None:
            return result
        readers = readers_anywhere(ctx.bodies)
        mine = len(ctx.rewrites)  # this pass's rewrites start here
        writers: dict[int, dict] = {}  # per graph: output name -> the site writing it
        for site in ctx.sites:
            writers.setdefault(id(site.owner), {}).update({o: site for o in site.node.output if o})
        stripped: list = []  # the QuantizeLinear sites whose DequantizeLinear readers went
        # (id(owner), index) -> the names a node this pass rewrote no longer reads: a subgraph of a
        # function called with two signatures is read twice, and each reading counted as a reader
        unread: dict[tuple, tuple] = {}
        for site in ctx.sites:
            gone = unread.get((id(site.owner), site.index))
            for x in gone or ():
                readers[x] -= 1
            if not isinstance(site.owner, onnx.GraphProto) or (id(site.owner), site.index) in ctx.reformatted:
                continue
            node = site.node
            opset = schema.opset_of(site.scope.opsets, node.domain)
            spec = schema.lookup(node.domain, node.op_type, opset) if opset else None
            if spec is None or not schema.is_linear(spec) or spec.family != FAMILY[mode]:
                continue
            planned = _plan(ctx, site, opset, mode)
            if planned is None and mode == "strip":
                q = writers[id(site.owner)].get(site.node.input[0])
                planned = _strip(site, q)
                if planned is not None:
                    unread[(id(site.owner), site.index)] = (site.node.input[0],)
                    readers[site.node.input[0]] -= 1
                    stripped.append(q)
                    ctx.rewrites.append(planned)
                    ctx.reformatted.add((id(site.owner), site.index))
                continue
            if planned is not None:
                ctx.rewrites.append(planned)
                ctx.reformatted.add((id(site.owner), site.index))
                unread[(id(site.owner), site.index)] = names = tuple(filter(None, site.node.input))
                for x in names:
                    readers[x] -= 1
        _drop_quantizers(ctx, stripped, readers)
        drop_unread(ctx, ctx.rewrites[mine:])  # (unread.py: the format rewrites' rule too)
        return result


def _drop_quantizers(ctx: Context, quantizers: list, readers: dict) -> None:
    """The QuantizeLinear nodes nothing reads any more after strip go too."""
    for q in {id(q): q for q in quantizers}.values():
        out = q.node.output[0]
        if readers.get(out, 0) == 0 and out not in {o.name for o in q.owner.output} \
                and (id(q.owner), q.index) not in ctx.reformatted:
            ctx.rewrites.append(Rewrite(q, [], [], Entry(where(q), op_label(q), "weights",
                                                         ["QuantizeLinear unread after strip: removed"])))
            ctx.reformatted.add((id(q.owner), q.index))


def _strip(site, q) -> Rewrite | None:
    """--weights strip: a DequantizeLinear of a QuantizeLinear's output becomes an Identity of
    the QuantizeLinear's input (the value before quantization; the QuantizeLinear stays for
    other readers and is then unread). Not equivalent by design: the float model, to compare
    against. A DequantizeLinear of a constant was unfolded (exact) by ``_plan``."""
    node = site.node
    if q is None:
        return None
    writer = q.node
    op = schema.lookup(writer.domain, writer.op_type,
                       schema.opset_of(site.scope.opsets, writer.domain) or 0)
    if op is None or op.family != schema.LINEAR_QUANTIZE:
        return None
    ident = onnx.helper.make_node("Identity", [writer.input[0]], [node.output[0]], name=node.name)
    entry = Entry(where(site), op_label(site), "weights",
                  [f"Q -> DQ pair of '{writer.input[0]}' stripped: the float value, not what the pair "
                   "computes (not equivalent, by design)"])
    return Rewrite(site, [ident], [], entry)


def _plan(ctx: Context, site, opset: int, mode: str) -> Rewrite | None:
    node, owner = site.node, site.owner
    outputs = {o.name for o in owner.output}
    inputs = {i.name for i in owner.input}
    if not node.input or node.output[0] in outputs or node.input[0] in inputs:
        return None  # a graph output, or a weight the caller may feed: not a constant
    const = constants(site, ctx.base_dir, True)  # (a scale the caller may feed is not computed with)
    values = [const(x) if x else None for x in node.input]
    if any(v is None for x, v in zip(node.input, values, strict=True) if x):
        return None
    if mode == "fold" and np.asarray(values[0]).dtype.kind != "f":
        return None
    if mode == "unfold-bias" and np.asarray(values[0]).dtype != np.int32:
        return None
    from ...evaluator import EvaluationError, run_node  # (its import only where a pass computes)

    try:
        computed = run_node(node, opset, values)
    except EvaluationError:
        return None
    if computed.dtype.kind == "V" or computed.dtype.name not in np.sctypeDict:
        return None  # a type numpy_helper cannot write from an array (int4, float8): kept
    init = numpy_helper.from_array(computed, node.output[0])
    proven = _reference_agrees(node, opset, values, computed)
    what = "QuantizeLinear" if mode == "fold" else "DequantizeLinear"
    change = (f"{what} of constant '{node.input[0]}' computed once: '{node.output[0]}' stored as a "
              f"{computed.dtype.name} initializer")
    entry = Entry(where(site), op_label(site), "weights", [change], verified=proven)
    if not proven:
        entry.changes.append("not proven: onnx.reference does not run this node")
    return Rewrite(site, [], [init], entry)


def _reference_agrees(node: onnx.NodeProto, opset: int, values: list, computed: np.ndarray) -> bool:
    """onnx.reference's value of the node (at opset 19, which computes what 10 and 13 do for
    the types they share) is ``computed``, bit for bit."""
    if schema.normalize_domain(node.domain) != schema.AI_ONNX:
        return False
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = [x for x in node.input]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in zip(names, values, strict=True) if n]
    out = helper.make_tensor_value_info(node.output[0], 0, None)
    graph = helper.make_graph([node], "weights", [], [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(opset, REFERENCE_SINCE))],
                              ir_version=9)
    try:
        got = np.asarray(ReferenceEvaluator(model).run(None, {})[0])
    except Exception:
        return False
    return got.dtype == computed.dtype and got.shape == computed.shape and got.tobytes() == computed.tobytes()
