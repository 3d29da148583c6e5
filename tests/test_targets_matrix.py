"""The target profiles held against the real runtimes on a generated matrix of spec-valid models.

The matrix: ai.onnx QuantizeLinear / DequantizeLinear at opsets 10 to 28 (versions 10 to
28) x every quantized, float and scale type the version allows x per-tensor, per-axis and
blocked scales (blocks that divide the axis and blocks that do not, ranks 1 to 3) x zero
points absent / zero / non-zero x negative scales x Q -> DQ pairs, plus com.microsoft and
com.amd.quark nodes and IR versions around the runtimes' limits. Every model must check
clean under qlin's spec rules (``check_model``: no error); the few that do not are left out
and counted.

Each model is loaded and run on random input by onnxruntime (CPU, ``InferenceSession`` +
one run) and, when the package is installed, openvino (``read_model`` + ``compile_model``
on CPU + one inference). For every model and runtime, "qlin predicts an error finding for
this target" must equal "the runtime refused the model" (load, compile or run failed):
no miss, no false alarm. Where the runtime ran and its output differs from qlin's
evaluator (the spec), qlin must have predicted a QT4xx warning for that node's target
(divergences are input-dependent, so a predicted warning on an equal output is no
failure).

A fast subset (every kind of prediction, plus a spread of the rest) runs in ``make test``;
the whole matrix runs with ``pytest -m targets_full`` (QLIN_TARGETS_FULL=1 does the same).
The other tests import ``matrix()``, ``build()`` and the runners from here.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
from collections import Counter
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from recorded_runs import Recorded, digest

from qlin_cli.check.engine import check_analysis, check_model
from qlin_cli.evaluator import evaluate
from qlin_cli.finding import Finding
from qlin_cli.model.analysis import analyze
from qlin_cli.schema import dtypes, lookup
from qlin_cli.schema.ir import TYPE_MIN_IR, ir_for_opset
from qlin_cli.targets import predict

MS = "com.microsoft"
QUARK = "com.amd.quark"
OPSETS = (10, 13, 19, 21, 23, 24, 25, 26, 27, 28)
RUNTIMES = ("onnxruntime", "openvino")

try:  # a test dependency (pyproject's dev extra); the openvino half is skipped without it
    import openvino as _ov
except ImportError:  # pragma: no cover - the dev extra installs it
    _ov = None


# ---- the cases -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One model: a QuantizeLinear of a graph input ("q"), a DequantizeLinear of a constant
    ("dq"), or a QuantizeLinear feeding a DequantizeLinear ("qdq")."""

    kind: str
    domain: str  # "" (ai.onnx), MS or QUARK
    opset: int  # the ai.onnx opset imported
    float_type: str  # x of the quantize / y of the dequantize
    scale_type: str
    q_type: str  # the quantized type
    gran: str = "tensor"  # "tensor", "tensor1" (shape [1]), "axis", "block"
    axis: int | None = None  # the attribute; None: absent
    block: int = 0
    zp: str = "zero"  # "none", "zero", "nonzero"
    shape: tuple = (4, 8)
    attrs: tuple = ()  # more (name, value) attributes of the quantize (or only) node
    ir: int | None = None  # None: the lowest IR the opset and the types need
    negative: bool = False  # some scale entries negative
    out_dtype: bool = False  # state output_dtype on the dequantize
    scale_input: bool = False  # the scale is a graph input (fed at run time)

    @property
    def id(self) -> str:
        parts = [
            self.kind,
            (self.domain or "onnx").split(".")[-1],
            str(self.opset),
            f"{self.float_type}-{self.scale_type}-{self.q_type}",
            self.gran,
        ]
        if self.axis is not None:
            parts.append(f"axis{self.axis}")
        if self.block:
            parts.append(f"b{self.block}")
        parts.append(f"zp-{self.zp}")
        if self.shape != (4, 8):
            parts.append("x".join(map(str, self.shape)) or "scalar")
        parts += [f"{k}{v}" for k, v in self.attrs]
        if self.ir is not None:
            parts.append(f"ir{self.ir}")
        for flag in ("negative", "out_dtype", "scale_input"):
            if getattr(self, flag):
                parts.append(flag)
        return "/".join(parts)

    def ir_version(self) -> int:
        if self.ir is not None:
            return self.ir
        need = ir_for_opset(self.opset)
        for t in (self.float_type, self.scale_type, self.q_type):
            need = max(need, TYPE_MIN_IR.get(t, 3))
        return need

    def scale_shape(self) -> tuple:
        if self.gran == "tensor":
            return ()
        if self.gran == "tensor1":
            return (1,)
        axis = (self.axis if self.axis is not None else (0 if self.domain == QUARK else 1)) % len(self.shape)
        if self.gran == "axis":
            return (self.shape[axis],)
        dims = list(self.shape)
        dims[axis] = math.ceil(dims[axis] / self.block)
        return tuple(dims)

    @property
    def out_type(self) -> str:
        if self.kind == "q":
            return self.q_type
        return self.float_type if self.out_dtype else self.scale_type


def _tensor(name: str, type_name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(
        np.asarray(values, dtype=np.float64).astype(dtypes.BY_NAME[type_name].numpy), name
    )


def _scale_values(case: Case, rng) -> np.ndarray:
    shape = case.scale_shape()
    if case.scale_type == "float8e8m0":
        v = np.exp2(rng.integers(-4, 1, size=shape)).astype(np.float64)
    elif case.scale_type == "int32":
        v = rng.integers(1, 4, size=shape).astype(np.float64)
    else:
        v = rng.uniform(0.05, 0.5, size=shape)
    if case.negative:
        v = -v if v.ndim == 0 else np.where(np.arange(v.size).reshape(v.shape) % 2 == 0, -v, v)
    return np.asarray(v)


def _zero_points(case: Case, rng) -> np.ndarray:
    shape = case.scale_shape()
    if case.zp == "zero":
        return np.zeros(shape)
    d = dtypes.BY_NAME[case.q_type]
    lo, hi = (0, 3) if d.lo == 0 else (-2, 2)
    return rng.integers(lo, hi + 1, size=shape).astype(np.float64)


def _quantized(case: Case, rng) -> np.ndarray:
    d = dtypes.BY_NAME[case.q_type]
    if d.kind == "int":
        return rng.integers(max(d.lo, -100), min(d.hi, 100) + 1, size=case.shape).astype(np.float64)
    if case.q_type in ("float16", "bfloat16"):
        return rng.uniform(-100, 100, size=case.shape)
    return rng.uniform(-4, 4, size=case.shape)


def _float_input(type_name: str, shape: tuple, rng) -> np.ndarray:
    if type_name == "int32":
        return rng.integers(-200, 200, size=shape).astype(np.int32)
    return rng.normal(0.0, 12.0, size=shape).astype(dtypes.BY_NAME[type_name].numpy)


def _ops(domain: str) -> tuple[str, str]:
    if domain == QUARK:
        return "ExtendedQuantizeLinear", "ExtendedDequantizeLinear"
    return "QuantizeLinear", "DequantizeLinear"


def build(case: Case, seed: int = 0) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model and its feeds (numpy / ml_dtypes arrays by input name)."""
    rng = np.random.default_rng(seed)
    q_op, dq_op = _ops(case.domain)
    scale = _scale_values(case, rng)
    inits, inputs, feeds = [], [], {}
    if case.scale_input:
        inputs.append(
            helper.make_tensor_value_info("s", dtypes.BY_NAME[case.scale_type].proto, case.scale_shape())
        )
        feeds["s"] = scale.astype(dtypes.BY_NAME[case.scale_type].numpy)
    else:
        inits.append(_tensor("s", case.scale_type, scale))
    names = ["x", "s"]
    if case.zp != "none":
        inits.append(_tensor("zp", case.q_type, _zero_points(case, rng)))
        names.append("zp")
    attrs = dict(case.attrs)
    if case.axis is not None:
        attrs["axis"] = case.axis
    if case.block:
        attrs["block_size"] = case.block
    q_attrs = dict(attrs)
    if case.zp == "none" and not case.domain and case.opset >= 21 and case.q_type != "uint8":
        q_attrs["output_dtype"] = dtypes.BY_NAME[case.q_type].proto
    dq_attrs = {k: v for k, v in attrs.items() if k in ("axis", "block_size")}
    if case.out_dtype:
        dq_attrs["output_dtype"] = dtypes.BY_NAME[case.float_type].proto
    graph_nodes = []
    if case.kind in ("q", "qdq"):
        inputs.insert(
            0, helper.make_tensor_value_info("x", dtypes.BY_NAME[case.float_type].proto, case.shape)
        )
        feeds["x"] = _float_input(case.float_type, case.shape, rng)
        graph_nodes.append(
            helper.make_node(q_op, names, ["q"], name="quantize", domain=case.domain, **q_attrs)
        )
    else:
        inits.insert(0, _tensor("q", case.q_type, _quantized(case, rng)))
    if case.kind in ("dq", "qdq"):
        graph_nodes.append(
            helper.make_node(
                dq_op, ["q", *names[1:]], ["y"], name="dequantize", domain=case.domain, **dq_attrs
            )
        )
    out = "q" if case.kind == "q" else "y"
    graph = helper.make_graph(
        graph_nodes, "matrix", inputs, [onnx.ValueInfoProto(name=out)], initializer=inits
    )
    imports = [helper.make_opsetid("", case.opset)]
    if case.domain:
        imports.append(helper.make_opsetid(case.domain, 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = case.ir_version()
    return model, feeds


def input_types(case: Case) -> dict[str, str]:
    return {"x": case.float_type, "s": case.scale_type}


def _spec(domain: str, op: str, opset: int):
    return lookup(domain, op, opset if not domain else 1)


def _add_ai_onnx(add, opset: int) -> None:
    qspec = _spec("", "QuantizeLinear", opset)
    dqspec = _spec("", "DequantizeLinear", opset)
    grans = qspec.granularities
    for qt in sorted(qspec.quantized_types):
        add(Case("q", "", opset, "float", "float", qt))
        add(Case("qdq", "", opset, "float", "float", qt))
    for qt in sorted(dqspec.quantized_types):
        add(Case("dq", "", opset, "float", "float", qt))
    if opset >= 27:  # beyond onnxruntime: one look at each type is enough
        return
    for ft in sorted(qspec.allowed(qspec.inputs[0])):
        add(Case("q", "", opset, ft, "float" if opset < 19 else ft, "int8"))
    for st in sorted(dqspec.allowed(dqspec.inputs[1])):
        add(
            Case(
                "dq",
                "",
                opset,
                "float" if st == "float8e8m0" else st,
                st,
                "int8",
                out_dtype=st == "float8e8m0",
            )
        )
    if opset >= 23:
        for ft, st in (
            ("float", "float16"),
            ("float16", "float"),
            ("bfloat16", "float"),
            ("float", "bfloat16"),
        ):
            add(Case("q", "", opset, ft, st, "int8"))
            add(Case("dq", "", opset, ft, st, "int8", out_dtype=True))
        if opset >= 24:
            add(Case("q", "", opset, "float", "float8e8m0", "int8"))
            add(Case("q", "", opset, "float16", "float8e8m0", "int8"))
    if "per-axis" in grans:
        for qt in ("int8", "uint8", "int16", "int4", "float8e4m3fn", "float4e2m1", "int2"):
            if qt in qspec.quantized_types:
                for axis in (None, 0, -1):
                    add(Case("q", "", opset, "float", "float", qt, "axis", axis))
                    add(Case("dq", "", opset, "float", "float", qt, "axis", axis))
        add(Case("q", "", opset, "float", "float", "int8", "tensor1"))
        add(Case("dq", "", opset, "float", "float", "int8", "tensor1"))
        add(Case("q", "", opset, "float", "float", "int8", "axis", 0, negative=True))
        add(Case("dq", "", opset, "float", "float", "int8", "axis", 0, negative=True))
        add(Case("qdq", "", opset, "float", "float", "int8", "axis", 1))
        if "int16" in qspec.quantized_types:
            add(Case("qdq", "", opset, "float", "float", "int16", "axis", 0))
    if "blocked" in grans:
        for qt in (
            "int8",
            "uint8",
            "int16",
            "uint16",
            "int4",
            "uint4",
            "float8e4m3fn",
            "float8e5m2fnuz",
            "float4e2m1",
            "int2",
        ):
            if qt not in qspec.quantized_types:
                continue
            for axis, block in ((1, 4), (0, 2), (1, 3), (0, 3), (-1, 8)):
                add(Case("q", "", opset, "float", "float", qt, "block", axis, block))
                add(Case("dq", "", opset, "float", "float", qt, "block", axis, block))
            add(Case("q", "", opset, "float", "float", qt, "block", 1, 4, zp="none"))
            add(Case("dq", "", opset, "float", "float", qt, "block", 1, 4, zp="none"))
        for qt in ("int8", "int16", "int4"):
            add(Case("qdq", "", opset, "float", "float", qt, "block", 1, 4))
        add(Case("q", "", opset, "float16", "float16", "int4", "block", 1, 4))
        add(Case("dq", "", opset, "float16", "float16", "int4", "block", 1, 4))
        add(Case("q", "", opset, "float", "float", "int8", "block", 1, 4, negative=True))
        if opset in (21, 25):
            for qt in ("int8", "int4"):
                for shape, gran, axis, block in (
                    ((8,), "tensor", None, 0),
                    ((8,), "axis", 0, 0),
                    ((8,), "block", 0, 4),
                    ((2, 4, 6), "axis", 1, 0),
                    ((2, 4, 6), "axis", -1, 0),
                    ((2, 4, 6), "block", 2, 3),
                    ((2, 4, 6), "block", -2, 2),
                    ((3, 5), "tensor", None, 0),
                ):
                    add(Case("q", "", opset, "float", "float", qt, gran, axis, block, shape=shape))
                    add(Case("dq", "", opset, "float", "float", qt, gran, axis, block, shape=shape))
            add(Case("q", "", opset, "float", "float", "int8", scale_input=True))
            add(Case("dq", "", opset, "float", "float", "int8", "axis", 0, scale_input=True))
    for qt in ("int8", "uint8", "int16", "uint16", "int4"):
        if qt in qspec.quantized_types:
            for kind in ("q", "dq", "qdq"):
                add(Case(kind, "", opset, "float", "float", qt, zp="nonzero"))
    add(Case("q", "", opset, "float", "float", "uint8", zp="none"))
    add(Case("dq", "", opset, "float", "float", "uint8", zp="none"))
    add(Case("dq", "", opset, "float", "float", "int32", zp="none"))
    for kind in ("q", "dq", "qdq"):
        add(Case(kind, "", opset, "float", "float", "int8", negative=True))
    add(Case("q", "", opset, "float", "float", "uint8", negative=True))


def matrix() -> list[Case]:
    """Every case, in a fixed order, without repeats."""
    cases: list[Case] = []
    add = cases.append
    for opset in OPSETS:
        _add_ai_onnx(add, opset)
    for opset in (19, 21, 23, 25):
        for qt in ("float8e4m3fn", "float8e5m2", "float8e4m3fnuz"):
            add(
                Case(
                    "q",
                    "",
                    opset,
                    "float",
                    "float",
                    qt,
                    zp="none" if opset >= 21 else "zero",
                    attrs=(("saturate", 0),),
                )
            )
    for opset in (23, 25):
        for precision in (1, 10, 11, 16):
            add(Case("q", "", opset, "float", "float", "int8", attrs=(("precision", precision),)))
    for opset, ir in ((21, 13), (21, 14), (25, 14), (26, 13), (10, 11), (10, 12)):
        add(Case("q", "", opset, "float", "float", "int8", ir=ir))
        add(Case("dq", "", opset, "float", "float", "int8", ir=ir))
    ms_types = sorted(_spec(MS, "QuantizeLinear", 1).quantized_types)
    for opset in (13, 21, 25):
        for qt in ms_types:
            for ft in ("float", "float16"):
                add(Case("q", MS, opset, ft, ft, qt))
                add(Case("dq", MS, opset, ft, ft, qt))
            add(Case("q", MS, opset, "float", "float", qt, "axis", 0))
            add(Case("dq", MS, opset, "float", "float", qt, "axis", 0))
            add(Case("qdq", MS, opset, "float", "float", qt))
        add(Case("dq", MS, opset, "float", "float", "int32"))
        add(Case("q", MS, opset, "float", "float", "int8", "axis", 1, zp="nonzero"))
        add(Case("q", MS, opset, "float", "float", "uint8", zp="none"))
        add(Case("dq", MS, opset, "float", "float", "int8", "tensor1"))
        add(Case("dq", MS, opset, "float", "float", "int8", negative=True))
    for opset in (13, 21):
        for qt in sorted(_spec(QUARK, "ExtendedQuantizeLinear", 1).quantized_types):
            add(Case("q", QUARK, opset, "float", "float", qt))
            add(Case("dq", QUARK, opset, "float", "float", qt))
        add(Case("q", QUARK, opset, "float", "float", "int8", "axis", 0))
        add(Case("dq", QUARK, opset, "float", "float", "int8", "axis", 1))
    seen: set = set()
    return [c for c in cases if not (c in seen or seen.add(c))]


# ---- the runtimes ----------------------------------------------------------------------------
@dataclass
class Outcome:
    stage: str  # "ok", "load" (includes compile), "run"
    message: str = ""
    output: np.ndarray | None = None


def _ort_value(array: np.ndarray, type_name: str):
    import onnxruntime as ort

    d = dtypes.BY_NAME[type_name]
    if type_name == "bfloat16":
        bits = np.ascontiguousarray(array.astype(ml_dtypes.bfloat16)).view(np.uint16)
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, d.proto)
    return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array.astype(d.numpy)))


def run_onnxruntime(model: onnx.ModelProto, feeds: dict, types: dict) -> Outcome:
    """Load with default SessionOptions on the CPU provider, run once."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        return Outcome("load", str(exc))
    try:
        values = {k: _ort_value(v, types[k]) for k, v in feeds.items()}
        out = session.run_with_ort_values(None, values)[0]
    except Exception as exc:
        return Outcome("run", str(exc))
    try:
        array = out.numpy()
    except Exception:  # int4 and friends cannot come back to numpy
        array = None
    return Outcome("ok", "", array)


_CORE = []


def run_openvino(model: onnx.ModelProto, feeds: dict, types: dict) -> Outcome:
    """read_model + compile_model on CPU + one inference."""
    if not _CORE:
        _CORE.append(_ov.Core())
    core = _CORE[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx.save(model, path)
        try:
            ov_model = core.read_model(path)
        except Exception as exc:
            return Outcome("load", f"read_model: {exc}")
    try:
        compiled = core.compile_model(ov_model, "CPU")
    except Exception as exc:
        return Outcome("load", f"compile_model: {exc}")
    try:
        request = compiled.create_infer_request()
        for name, value in feeds.items():
            t = request.get_tensor(name)
            if types[name] == "bfloat16":
                t.data[...] = value.astype(ml_dtypes.bfloat16).view(np.uint16).view(t.data.dtype)
            else:
                t.data[...] = value.astype(t.data.dtype)
        request.infer()
        array = np.array(request.get_output_tensor(0).data, copy=True)
    except Exception as exc:
        return Outcome("run", str(exc))
    return Outcome("ok", "", array)


RUNNERS = {"onnxruntime": run_onnxruntime, "openvino": run_openvino}


def runtimes() -> tuple[str, ...]:
    return RUNTIMES if _ov is not None else ("onnxruntime",)


# ---- comparing outputs ------------------------------------------------------------------------
def codes(array: np.ndarray, type_name: str) -> np.ndarray:
    """Integers for integer types, bit codes for float8/float4 (-0 read as +0), values for
    wider floats (compared with NaN equal to NaN)."""
    d = dtypes.BY_NAME[type_name]
    if d.kind == "int":
        return array.astype(np.int64).reshape(-1)
    if d.kind in ("float8", "float4", "float8e8m0"):
        c = array.view(np.uint8).astype(np.int64).reshape(-1)
        return _plus_zero(c, type_name)
    return array.astype(np.float64).reshape(-1)


def _plus_zero(c: np.ndarray, type_name: str) -> np.ndarray:
    layout = dtypes.FLOAT_LAYOUTS.get(type_name)
    if layout is None or layout.unsigned_zero:
        return c
    return np.where(c == 1 << layout.sign_shift, 0, c)


def _unpack(raw: np.ndarray, type_name: str, count: int) -> np.ndarray:
    bits = dtypes.BY_NAME[type_name].bits
    b = raw.reshape(-1).view(np.uint8).astype(np.int64)
    per = 8 // bits
    vals = np.stack([(b >> (bits * i)) & ((1 << bits) - 1) for i in range(per)], axis=1).reshape(-1)[:count]
    if type_name in ("int4", "int2"):
        vals = np.where(vals >= (1 << (bits - 1)), vals - (1 << bits), vals)
    return vals


def runtime_codes(array: np.ndarray, type_name: str, count: int) -> np.ndarray:
    """A runtime's output as ``codes`` gives the evaluator's (openvino packs sub-byte types
    and hands float8 and bfloat16 over as raw bits)."""
    d = dtypes.BY_NAME[type_name]
    if d.bits < 8:
        if array.size == count and array.dtype == d.numpy:
            return codes(array, type_name)
        vals = _unpack(array, type_name, count)
        return _plus_zero(vals, type_name) if d.kind != "int" else vals
    if d.kind in ("float8", "float8e8m0"):
        return _plus_zero(array.reshape(-1).view(np.uint8).astype(np.int64), type_name)
    if type_name == "bfloat16" and array.dtype != d.numpy:
        return array.reshape(-1).view(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    return codes(array, type_name)


def differs(want: np.ndarray, got: np.ndarray) -> bool:
    if want.shape != got.shape:
        return True
    if want.dtype.kind == "f":
        return bool((~((np.isnan(want) & np.isnan(got)) | (want == got))).any())
    return bool((want != got).any())


# ---- holding predictions against outcomes -----------------------------------------------------
@dataclass
class Result:
    case: Case
    skipped: str = ""  # why the case is not spec-valid
    outcomes: dict | None = None  # runtime -> Outcome
    predicted: dict | None = None  # runtime -> list of Finding
    diverged: dict | None = None  # runtime -> True / False / None (not comparable)


# The matrix models declare their graph outputs by name alone: the runtimes accept that, IR.md
# does not (QL006). The matrix is about the quantization ops, so the validity rules stay out.
VALIDITY = ["QL0"]


def evaluate_case(case: Case, names: tuple[str, ...], recorded: Recorded | None = None) -> Result:
    """The case's predictions (computed here) and what each runtime did with it: run here,
    or as ``recorded`` (tests/recorded_runs.py) for the installed release."""
    model, feeds = build(case)
    a = analyze(model, "")  # one analysis for the rules and the targets, as `qlin check --target`
    errors = [d for d in check_analysis(a, ignore=VALIDITY) if d.severity == "error"]
    if errors:
        return Result(case, skipped=f"{errors[0].code} {errors[0].message}")
    found = _PREDICTED.get(case) if tuple(names) == RUNTIMES else None  # fast_subset's, when it has them
    if found is None:
        found = predict.findings_in(a, list(names))
    predicted = {n: [p for p in found if p.target == n] for n in names}
    outcomes, diverged = {}, {}
    key = digest(model, feeds)
    for n in names:
        got = recorded.get(case.id, n, key) if recorded is not None else None
        if got is not None:
            outcomes[n], diverged[n] = Outcome(got[0], got[1]), got[2]
    want = None
    for n in names:
        if n in outcomes:
            continue
        if want is None:
            want = codes(evaluate(model, feeds)[0], case.out_type)
        o = RUNNERS[n](model, feeds, input_types(case))
        outcomes[n] = o
        diverged[n] = None
        if o.stage == "ok" and o.output is not None:
            try:
                diverged[n] = differs(want, runtime_codes(o.output, case.out_type, want.size))
            except ValueError:
                diverged[n] = None
    return Result(case, outcomes=outcomes, predicted=predicted, diverged=diverged)


def disagreements(result: Result) -> list[str]:
    """What the prediction got wrong for this case (empty: it agrees with every runtime)."""
    if result.skipped:
        return []
    out = []
    for n, o in result.outcomes.items():
        errors = [p for p in result.predicted[n] if p.severity == "error"]
        refused = o.stage != "ok"
        if refused and not errors:
            out.append(
                f"{result.case.id}: {n} refused it at {o.stage} ({o.message.strip()[-300:]}) but qlin "
                "predicts no error"
            )
        elif errors and not refused:
            out.append(
                f"{result.case.id}: {n} ran it but qlin predicts {[p.code for p in errors]}: "
                f"{errors[0].message}"
            )
        elif result.diverged.get(n) and not any(p.code.startswith("QT4") for p in result.predicted[n]):
            out.append(
                f"{result.case.id}: {n}'s output differs from the spec but qlin predicts no QT4xx divergence"
            )
    return out


# The predictions (every runtime's) of the cases fast_subset chose, which evaluate_case takes
# as they are: a case's model is built alike every time, and so predicted alike
_PREDICTED: dict[Case, list[Finding]] = {}


def fast_subset(cases: list[Case]) -> list[Case]:
    """For every distinct prediction (target, code) set, its first two cases; then every
    15th case of the rest. Predictions are cheap; runtimes are not."""
    chosen: list[Case] = []
    seen: Counter = Counter()
    for i, case in enumerate(cases):
        model, _ = build(case)
        found = predict.findings(model, "", list(RUNTIMES))
        key = frozenset((p.target, p.code) for p in found)
        seen[key] += 1
        if seen[key] <= 2 or i % 15 == 0:
            chosen.append(case)
            _PREDICTED[case] = found
    return chosen


@functools.cache
def fast_cases() -> tuple[Case, ...]:
    """``fast_subset(matrix())``, chosen once in a process: this module's tests and
    tests/test_targets_plan.py's take it (1,635 models predicted, 3.4 s)."""
    return tuple(fast_subset(matrix()))


def summary(results: list[Result]) -> dict:
    valid = [r for r in results if not r.skipped]
    out = {"models": len(results), "spec_invalid_skipped": len(results) - len(valid)}
    for n in runtimes():
        refused = sum(r.outcomes[n].stage != "ok" for r in valid)
        diverged = sum(bool(r.diverged[n]) for r in valid)
        bad = sum(1 for r in valid for d in disagreements(r) if f": {n} " in d)
        out[n] = {
            "refused": refused,
            "ran": len(valid) - refused,
            "diverged": diverged,
            "agreements": len(valid) - bad,
            "disagreements": bad,
        }
    return out


# ---- the tests ------------------------------------------------------------------------------------
RECORDED = "matrix_runs.json"  # tests/data/: what the installed runtimes did with the fast subset


@pytest.fixture(scope="module")
def fast_results() -> list[Result]:
    recorded = Recorded(RECORDED)
    return [evaluate_case(c, runtimes(), recorded) for c in fast_cases()]


def as_recorded(result: Result) -> dict:
    """{runtime: [stage, the end of its message, diverged]} of a result run here."""
    return {n: [o.stage, o.message.strip()[-300:], result.diverged[n]] for n, o in result.outcomes.items()}


@pytest.mark.remeasure
def test_the_recorded_runs_of_the_fast_subset_are_the_installed_runtimes():
    """`make remeasure`: the fast subset run in the installed runtimes agrees with
    tests/data/matrix_runs.json (stage and divergence); QLIN_WRITE_RECORDED=1 writes it."""
    recorded, fresh = Recorded(RECORDED), Recorded(RECORDED)
    fresh.data = {"releases": {}, "cases": {}}
    differ = []
    for case in fast_cases():
        r = evaluate_case(case, runtimes())
        if r.skipped:
            continue
        key = digest(*build(case))
        for n, value in as_recorded(r).items():
            fresh.put(case.id, n, key, value)
            old = recorded.get(case.id, n, key)
            if old is None or [old[0], old[2]] != [value[0], value[2]]:
                differ.append((case.id, n, old, value[0], value[2]))
    if os.environ.get("QLIN_WRITE_RECORDED") == "1":
        fresh.write()
        return
    assert not differ, (f"{len(differ)} cases differ from {RECORDED} (QLIN_WRITE_RECORDED=1 writes "
                        f"it): {differ[:5]}")


def test_the_matrix_is_large_and_spec_valid():
    cases = matrix()
    assert len(cases) >= 1500
    assert len({c.id for c in cases}) == len(cases)
    sample = cases[::40]
    invalid = [c.id for c in sample
               if any(d.severity == "error" for d in check_model(build(c)[0], "", ignore=VALIDITY))]
    assert len(invalid) <= len(sample) // 10, invalid


def test_fast_subset_agrees_with_the_runtimes(fast_results):
    bad = [d for r in fast_results for d in disagreements(r)]
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])


def test_fast_subset_covers_refusals_and_runs(fast_results):
    s = summary(fast_results)
    assert s["models"] >= 100
    for n in runtimes():
        assert s[n]["refused"] >= 25 and s[n]["ran"] >= 25, s
    codes_seen = {p.code for r in fast_results if not r.skipped for ps in r.predicted.values() for p in ps}
    assert {"QT101", "QT103", "QT104", "QT202", "QT203", "QT401", "QT402"} <= codes_seen
    if _ov is not None:  # QT408 (a 16-bit pair between two ops removed) has no case here: its tests are
        # test_targets_arithmetic.py's (each release) and test_targets_divergence.py's (installed)
        assert {"QT204", "QT302", "QT303", "QT308", "QT405", "QT406", "QT407"} <= codes_seen


def test_disagreements_are_found():
    """The comparison itself can fail: a case onnxruntime refuses, with the prediction
    removed, is a miss; a case it runs, with an error planted, is a false alarm."""
    refused = evaluate_case(Case("q", "", 28, "float", "float", "int8"), ("onnxruntime",))
    assert not disagreements(refused)
    refused.predicted = {"onnxruntime": []}
    assert disagreements(refused) and "refused" in disagreements(refused)[0]
    ran = evaluate_case(Case("q", "", 21, "float", "float", "int8"), ("onnxruntime",))
    assert not disagreements(ran)
    ran.predicted = {
        "onnxruntime": [Finding("QT202", "error", "planted", "", "", "", 0, "main", target="onnxruntime")]
    }
    assert disagreements(ran) and "ran it" in disagreements(ran)[0]
    diverged = evaluate_case(Case("q", "", 21, "float16", "float16", "int8"), ("onnxruntime",))
    assert diverged.diverged["onnxruntime"] and not disagreements(diverged)
    diverged.predicted = {"onnxruntime": []}
    assert disagreements(diverged) and "differs" in disagreements(diverged)[0]


def _full_selected(config) -> bool:
    return (
        "targets_full" in (config.getoption("markexpr") or "") or os.environ.get("QLIN_TARGETS_FULL") == "1"
    )


@pytest.mark.targets_full
def test_full_matrix_agrees_with_the_runtimes(request):
    if not _full_selected(request.config):
        pytest.skip("the full matrix runs with `pytest -m targets_full` (or QLIN_TARGETS_FULL=1)")
    results = [evaluate_case(c, runtimes()) for c in matrix()]
    s = summary(results)
    print("\ntarget matrix:", s)
    bad = [d for r in results for d in disagreements(r)]
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:60])
