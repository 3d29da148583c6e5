"""What a format rewrite computes against the node it replaces.

The node and its rewrite are each written as a model of their own (the node's constant
inputs as initializers) and run on the same inputs: random codes over the whole range of
each quantized input's type, and edge inputs (every element the type's lowest code, its
highest, the zero point). The node runs in onnxruntime (graph optimizations off: the op
as written), and, for an ai.onnx node, in onnx.reference too; the rewrite in both. The
bound is the largest difference between an output of the node and the rewrite's, in
quantization steps of the output (codes; for QGemm's float output, steps of
a_scale * b_scale * alpha), over every pair of engines: a measurement on these inputs,
not a proof for all inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import schema
from ...schema import ir

SAMPLES = 6  # random inputs, besides the edge inputs


@dataclass
class FormatCase:
    before: list[onnx.NodeProto]  # the node (or the QDQ group) replaced; its last writes the output
    after: list[onnx.NodeProto]
    added: list[onnx.TensorProto]  # the rewrite's new initializers
    consts: dict[str, np.ndarray]  # the node's constant inputs
    inputs: dict[str, tuple[int, tuple]]  # its other inputs: element type, shape
    output_type: int  # element type of the node's output (0: unknown)
    opsets_before: dict[str, int]
    opset_after: int
    float_step: float | None = None  # QGemm's float output: the size of one step
    opsets_after: dict[str, int] | None = None  # default: ai.onnx at opset_after
    outputs: list | None = None  # (name, element type) of each output; default: the last node's

    def output_list(self) -> list:
        return self.outputs or [(self.before[-1].output[0], self.output_type)]


@dataclass
class Measured:
    steps: int  # the largest difference, in quantization steps of the output
    differ: int  # outputs that differ (of ``outputs``)
    outputs: int
    engines: tuple[str, ...]

    def to_json(self) -> dict:
        return {"steps": self.steps, "differ": self.differ, "outputs": self.outputs,
                "engines": list(self.engines)}

    def text(self) -> str:
        how = ", ".join(self.engines)
        if self.steps == 0:
            return f"exact on {self.outputs:,} measured outputs ({how})"
        return (f"within {self.steps} step{'s' if self.steps > 1 else ''}: {self.differ:,} of "
                f"{self.outputs:,} measured outputs differ ({how})")


class CannotMeasure(Exception):
    pass


BATCH = 512  # cases measured in one pair of models (one onnxruntime session each, not one per case)


def measure_all(cases: list[FormatCase], seed: int = 0) -> list:
    """What each case's rewrite computes against its source (a Measured, or the
    CannotMeasure saying why), in batches:
    the cases of a batch are run side by side as one model before and one after, so that a
    model of thousands of nodes costs a few sessions; a batch that cannot run is measured
    case by case, which names the case at fault."""
    out: list = [None] * len(cases)
    kinds: dict[tuple, list[int]] = {}  # cases the same engines compute, batched together
    for i, c in enumerate(cases):
        source_opset = schema.opset_of(c.opsets_before, schema.AI_ONNX) or c.opset_after
        kinds.setdefault((_reference_reads(c.before, source_opset), _reference_reads(c.after, c.opset_after)),
                         []).append(i)
    for members in kinds.values():
        for start in range(0, len(members), BATCH):
            batch = members[start:start + BATCH]
            got = None
            if len(batch) > 1:
                try:
                    got = _measure([cases[i] for i in batch], seed)
                except CannotMeasure:
                    pass
            for j, i in enumerate(batch):
                out[i] = got[j] if got is not None else _one(cases[i], seed)
    return out


def _one(case: FormatCase, seed: int):
    try:
        return _measure([case], seed)[0]
    except CannotMeasure as e:
        return e


def _measure(cases: list[FormatCase], seed: int) -> list[Measured]:
    case = _joined(cases)
    feeds = _feeds(case, np.random.default_rng(seed))
    source = _model(case.before, case.consts, [], case, case.opsets_before)
    rewrite = _model(case.after, case.consts, case.added, case, case.opsets_after or {"": case.opset_after})
    ort = _onnxruntime()
    runs_after = []
    if ort is not None:
        runs_after.append((f"onnxruntime {ort.__version__}", _run_ort(ort, rewrite, feeds)))
    if _reference_reads(case.after, case.opset_after):
        runs_after.append(("onnx.reference", _run_reference(_for_reference(rewrite), feeds)))
    # what the source computes: for ai.onnx nodes their pages, as onnx.reference computes them
    # (a runtime's kernel may differ from the page: onnxruntime's u8s8 QLinearConv saturates
    # pairs of products on CPUs without VNNI); a vendor node's is its runtime's kernel
    vendor = [n.domain for n in case.before if schema.normalize_domain(n.domain) != schema.AI_ONNX]
    source_opset = schema.opset_of(case.opsets_before, schema.AI_ONNX) or case.opset_after
    if _reference_reads(case.before, source_opset):
        truth = ("onnx.reference", _run_reference(_for_reference(source), feeds))
    elif ort is not None:
        truth = (f"onnxruntime {ort.__version__}", _run_ort(ort, source, feeds))
    else:
        raise CannotMeasure("onnxruntime is not installed, and nothing else computes the "
                            f"{vendor[0] if vendor else 'source'} node to measure against")
    engines = tuple(dict.fromkeys([truth[0]] + [name for name, _ in runs_after]))
    found = []
    for k, c in enumerate(cases):  # output k of every run is case k's
        steps, differ = 0, 0
        for _, got_after in runs_after:
            d = [_steps(a[k], b[k], c.float_step) for a, b in zip(truth[1], got_after, strict=True)]
            steps = max([steps] + [int(x.max(initial=0)) for x in d])
            differ = max(differ, sum(int((x > 0).sum()) for x in d))
        found.append(Measured(steps, differ, sum(a[k].size for a in truth[1]), engines))
    return found


def _joined(cases: list[FormatCase]) -> FormatCase:
    """The cases side by side as one model: each case's values renamed apart (a chain's
    case reads the output of the case before it, which here is an input of its own), the
    constants shared by name, an output per case."""
    if len(cases) == 1:
        return cases[0]
    before, after, inputs, outputs = [], [], {}, []
    consts = {k: v for c in cases for k, v in c.consts.items()}
    added = [t for c in cases for t in c.added]
    fixed = set(consts) | {t.name for t in added} | {""}
    for k, c in enumerate(cases):
        def apart(name: str, k=k) -> str:
            return name if name in fixed else f"{name}@{k}"
        before += [_renamed(n, apart) for n in c.before]
        after += [_renamed(n, apart) for n in c.after]
        inputs.update({apart(x): v for x, v in c.inputs.items()})
        outputs += [(apart(x), t) for x, t in c.output_list()]
    first = cases[0]
    opsets = {k: v for c in cases for k, v in (c.opsets_after or {"": c.opset_after}).items()}
    return FormatCase(before, after, added, consts, inputs, first.output_type, first.opsets_before,
                      first.opset_after, None, opsets, outputs)


def _renamed(node: onnx.NodeProto, apart) -> onnx.NodeProto:
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.input[:] = [apart(x) for x in node.input]
    n.output[:] = [apart(x) for x in node.output]
    n.name = apart(node.name) if node.name else ""
    return n


def _reference_reads(nodes: list, opset: int) -> bool:
    """Whether onnx.reference computes ``nodes`` as written: ai.onnx nodes only, and it
    implements DequantizeLinear and QuantizeLinear from opset 19 only, so they are run at
    19, which computes what 10 and 13 do for 8-bit codes and float32 scales (19 adds
    types), except Softmax, whose axis 13 reads otherwise than 11."""
    if any(schema.normalize_domain(n.domain) != schema.AI_ONNX for n in nodes):
        return False
    return opset >= 13 or not any(n.op_type == "Softmax" for n in nodes)


REFERENCE_SINCE = 19  # onnx.reference implements QuantizeLinear / DequantizeLinear from 19


def _for_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if schema.normalize_domain(o.domain) == schema.AI_ONNX and o.version < REFERENCE_SINCE:
            o.version = REFERENCE_SINCE
            m.ir_version = max(m.ir_version, ir.ir_for_opset(REFERENCE_SINCE))
    return m


def _steps(a: np.ndarray, b: np.ndarray, float_step: float | None) -> np.ndarray:
    if a.shape != b.shape:
        raise CannotMeasure(f"the rewrite's output has shape {b.shape}, the node's {a.shape}")
    if a.dtype.kind in "iu":
        return np.abs(a.astype(np.int64) - b.astype(np.int64))
    step = float_step or 1.0
    return np.ceil(np.abs(a.astype(np.float64) - b.astype(np.float64)) / step - 1e-9).clip(0)


def _feeds(case: FormatCase, rng) -> list[dict[str, np.ndarray]]:
    edges: list[dict[str, np.ndarray]] = [{}, {}, {}]
    randoms: list[dict[str, np.ndarray]] = [{} for _ in range(SAMPLES)]
    for name, (elem, shape) in case.inputs.items():
        if not all(isinstance(d, int) and d > 0 for d in shape or ()) or shape is None:
            raise CannotMeasure(f"the shape of input '{name}' is not known")
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        if dtype.kind not in "iu":
            raise CannotMeasure(f"input '{name}' is {dtype.name}, not a quantized integer")
        info = np.iinfo(dtype)
        edges[0][name] = np.full(shape, info.min, dtype)
        edges[1][name] = np.full(shape, info.max, dtype)
        edges[2][name] = np.full(shape, (int(info.min) + int(info.max) + 1) // 2, dtype)
        for r in randoms:
            r[name] = rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
    return edges + randoms


def _model(nodes, consts: dict, added: list, case: FormatCase, opsets: dict) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()] + list(added)
    inputs = [helper.make_tensor_value_info(n, e, s) for n, (e, s) in case.inputs.items()]
    outputs = [helper.make_tensor_value_info(name, elem, None) for name, elem in case.output_list()]
    graph = helper.make_graph(list(nodes), "measure", inputs, outputs, inits)
    imports = [helper.make_opsetid(d, v) for d, v in opsets.items()]
    ai = schema.opset_of(opsets, schema.AI_ONNX)
    if ai is None:
        ai = case.opset_after
        imports.append(helper.make_opsetid(schema.AI_ONNX, ai))
    return helper.make_model(graph, opset_imports=imports, ir_version=ir.ir_for_opset(ai))


def _onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def _run_ort(ort, model: onnx.ModelProto, feeds: list[dict]) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return [session.run(None, f) for f in feeds]
    except Exception as e:
        raise CannotMeasure(f"onnxruntime cannot run it: {str(e).strip().splitlines()[-1][:200]}") from None


def _run_reference(model: onnx.ModelProto, feeds: list[dict]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    try:
        ref = ReferenceEvaluator(model)
        return [[np.asarray(x) for x in ref.run(None, f)] for f in feeds]
    except Exception as e:
        raise CannotMeasure(f"onnx.reference cannot run it: {str(e).strip()[:200]}") from None


def observed_shapes(model: onnx.ModelProto, wanted: dict[str, int]) -> dict[str, tuple[tuple, int]]:
    """The shapes of main-graph values ``wanted`` ({name: element type}) as onnxruntime
    computes them running ``model`` once (inputs of the declared shapes, 1 for a dimension
    without a value): where inference leaves a vendor op's output without a shape. Empty
    when onnxruntime is not installed or cannot run the model."""
    ort = _onnxruntime()
    if ort is None or not wanted:
        return {}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    names = list(wanted)
    m.graph.output.extend(helper.make_tensor_value_info(n, wanted[n], None) if wanted[n]
                          else onnx.ValueInfoProto(name=n) for n in names)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[vi.name] = (rng.standard_normal(shape) if dtype.kind == "f" else np.zeros(shape)).astype(dtype)
    try:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.log_severity_level = 4
        s = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        values = s.run(None, feeds)
    except Exception:
        return {}
    return {n: (tuple(int(d) for d in v.shape), helper.np_dtype_to_tensor_dtype(v.dtype))
            for n, v in zip(names, values, strict=True)}
