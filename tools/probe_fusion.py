"""Measure which QDQ groups onnxruntime's CPU provider fuses at its default optimization level.

    python tools/probe_fusion.py                      # the onnxruntime installed here
    python tools/probe_fusion.py --python VENV/bin/python   # the one of another venv
    python tools/probe_fusion.py --check              # compare with the data, write nothing

Every group of ``matrix()`` (DequantizeLinear -> op -> QuantizeLinear and its variants: op,
activation and weight types, per tensor / per channel and the axis, symmetric weights, a
QuantizeLinear after the op or not, a Relu / Clip before it, a DequantizeLinear or an
initializer shared by two groups, a bias, a blocked weight of MatMul, the Q's output of a
MaxPool / Transpose / Reshape read by two nodes, an Add / Mul of a constant reading a Conv's,
MatMul's or Gemm's output through Q -> DQ (the op before it is named "before_...", and is not
read for its own key: ``measured_groups``), a MatMul read by an Add of a constant, the groups
onnxruntime's quantizers write beyond one fact at a time (``quantizer_cases``); every 8-bit
group at ai.onnx opset 13 and 21, per tensor at 11 too) is written as a model;
the runtime loads each with default SessionOptions (graph_optimization_level is
ORT_ENABLE_ALL by default) and ``optimized_model_filepath`` set, so it saves the graph it
runs; what the group's op became there is its outcome: "fused into QLinearConv" (any
QLinear*, QGemm, MatMulIntegerToFloat, DynamicQuantizeMatMul, MatMulNBits, MatMulInteger,
ConvInteger), "runs on the quantized tensor" (the Q/DQ around MaxPool, Transpose, Reshape
dropped), or "float". Each group's key is qlin's own reading of the model
(qlin_cli/targets/fusion.py ``group``), so the data answers what the reader asks; two groups of
one key with different outcomes are reported (the key misses a deciding fact) and nothing
is written.

The runtime runs in a child process (``--inside FOLDER``, which imports only onnxruntime:
it runs in a throwaway venv of another release as it is); a crash is recorded as the
group's outcome and the run goes on with the next group. The result goes to
qlin_cli/targets/data/onnxruntime_fusion.json.gz (``fusion.dumps``), per key the outcome of
each measured release, with the command that made it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

INTEGER_OPS = ("QGemm", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "MatMulNBits", "MatMulInteger",
               "ConvInteger", "QAttention")

LAYOUT = ("Transpose", "ReorderInput", "ReorderOutput")  # what the provider puts around a kernel


# ---- inside the runtime's venv: onnxruntime alone ---------------------------------------------
def each_case(folder: str, release: str, run) -> None:
    """Write ``release`` to version.txt, then for each case of ``folder`` (cases.json: the ids in
    order) not yet in results.jsonl append [id, "start"], then [id, run(id)]: a case that kills
    the process leaves its "start" for the parent to see (both tools' child processes)."""
    with open(os.path.join(folder, "version.txt"), "w", encoding="utf-8") as f:
        f.write(release)
    with open(os.path.join(folder, "cases.json"), encoding="utf-8") as f:
        order = json.load(f)
    done = _done(folder)
    with open(os.path.join(folder, "results.jsonl"), "a", encoding="utf-8") as out:
        for case in order:
            if case in done:
                continue
            out.write(json.dumps([case, "start"]) + "\n")
            out.flush()
            out.write(json.dumps([case, run(case)]) + "\n")
            out.flush()


def inside(folder: str) -> None:
    """Load each case of ``folder`` with default session options and ``optimized_model_filepath``
    = <id>.opt.onnx (``each_case``): "ok" or "load: error"."""
    import platform

    import onnxruntime as ort

    def run(case: str) -> str:
        options = ort.SessionOptions()  # graph_optimization_level: its default
        options.log_severity_level = 4
        options.optimized_model_filepath = os.path.join(folder, f"{case}.opt.onnx")
        try:
            ort.InferenceSession(os.path.join(folder, f"{case}.onnx"), options,
                                 providers=["CPUExecutionProvider"])
            return "ok"
        except Exception as exc:  # the runtime refused the model
            # (the case's path named as MODEL.onnx: no temporary folder in the data)
            said = str(exc).replace(os.path.join(folder, f"{case}.onnx"), "MODEL.onnx")
            lines = [s for s in said.splitlines() if s.strip()]
            return "load: " + (lines[0] if lines else type(exc).__name__)[:300]

    each_case(folder, f"{ort.__version__} {platform.machine()}", run)


def _done(folder: str) -> dict:
    try:
        with open(os.path.join(folder, "results.jsonl"), encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return {}
    return {case: said for case, said in rows if said != "start"}


def run_all(python: str, folder: str, script: str = __file__) -> tuple[str, dict]:
    """(the release, {id: "ok" | "load: ..." | "crash: ..."}) of every case, with ``python``
    running ``script --inside folder`` (this file's, or another runtime's reader); a case that
    kills the process is recorded as a crash and the next process goes on after it."""
    with open(os.path.join(folder, "cases.json"), encoding="utf-8") as f:
        order = json.load(f)
    while True:
        ended = subprocess.run([python, os.path.abspath(script), "--inside", folder],
                               capture_output=True, text=True)
        done = _done(folder)
        left = [c for c in order if c not in done]
        if ended.returncode == 0 or not left:
            break
        with open(os.path.join(folder, "results.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps([left[0], f"crash: exit status {ended.returncode}"]) + "\n")
    with open(os.path.join(folder, "version.txt"), encoding="utf-8") as f:
        return f.read().strip(), done  # "1.31.1 x86_64": the release and the machine


# ---- the models (qlin's venv: onnx) --------------------------------------------------------
ACT = ("uint8", "int8", "uint16", "int16")
WEIGHTS = ("int8", "uint8", "int16", "uint16", "int4", "uint4")
ZERO = {"uint8": 128, "int8": 0, "uint16": 32768, "int16": 0, "uint4": 8, "int4": 0}
LOW = {"uint8": 0, "int8": -128, "uint16": 0, "int16": -32768}


def _spec(base: dict | None = None, **kw) -> dict:
    out = {"op": "Conv", "act": "uint8", "w": "int8", "gran": "tensor", "axis": None, "sym": True,
            "after": "q", "bias": "dq", "shared": "", "opset": 21, "block": None, "b": "const"}
    out.update(base or {})
    out.update(kw)
    return out


def matrix() -> list[dict]:
    """Every group measured: the deciding facts one at a time around a common base, and the
    types crossed with the presence of a QuantizeLinear after the op."""
    out = []
    weighted = {"Conv": 0, "MatMul": 1, "Gemm": 1}  # the per-channel axis of the output channels
    for op, axis in weighted.items():
        for act in ACT:
            for w in WEIGHTS:
                for gran in ("tensor", "channel"):
                    for after in ("q", "output"):
                        out.append(_spec(op=op, act=act, w=w, gran=gran,
                                         axis=axis if gran == "channel" else None,
                                         after=after, bias="dq" if op != "MatMul" else "none"))
        for act, w in (("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8"), ("uint16", "int8")):
            b = "dq" if op != "MatMul" else "none"
            base = {"op": op, "act": act, "w": w, "bias": b}
            out += [
                _spec(base, sym=False),
                _spec(base, gran="channel", axis=1 - axis),
                _spec(base, gran="channel", axis=axis, sym=False),
                _spec(base, after="float"),
                _spec(base, after="relu"),
                _spec(base, after="relu_low"),
                _spec(base, after="clip"),
                _spec(base, after="clip_low"),
                _spec(base, shared="dq"),
                _spec(base, shared="init"),
                _spec(base, shared="act"),
                _spec(base, shared="dq", after="output"),
                _spec(base, opset=13) if w in ("int8", "uint8") and act in ("uint8", "int8") else None,
                _spec(base, after="output", opset=13) if act in ("uint8", "int8") else None,
            ]
            if op != "MatMul":
                out += [_spec(base, bias="none"), _spec(base, bias="float"),
                        _spec(base, bias="none", after="output")]
            if op == "MatMul":
                out += [_spec(base, b="act"), _spec(base, b="act", after="output"), _spec(base, after="add")]
    for act, w in (("uint8", "int8"), ("uint8", "uint8"), ("int8", "int8"), ("uint16", "int8")):
        for gran, axis in (("tensor", None), ("channel", 0), ("channel", 1)):
            for after in ("q", "output"):
                out.append(_spec(op="Gemm", act=act, w=w, gran=gran, axis=axis, after=after, transB=1))
    # blocked weights of MatMul (DQMatMulToMatMulNBits)
    for w in ("int4", "uint4", "int8", "uint8"):
        for block in (16, 32, 128):
            for axis in (0, 1):
                for sym in (True, False):
                    out.append(_spec(op="MatMul", act="float", w=w, gran="blocked", axis=axis, block=block,
                                     sym=sym, after="output", bias="none"))
        for shared in ("dq", "init"):
            out.append(_spec(op="MatMul", act="float", w=w, gran="blocked", axis=0, block=32, after="output",
                             bias="none", shared=shared))
        for act, after in (("uint8", "output"), ("uint8", "q"), ("float", "float"), ("float", "add"),
                           ("uint8", "add")):
            out.append(_spec(op="MatMul", act=act, w=w, gran="blocked", axis=0, block=32, after=after,
                             bias="none"))
    for op in ("Add", "Mul"):
        for act in ACT:
            for after in ("q", "output", "float"):
                out.append(_spec(op=op, act=act, after=after, b="act"))
        out += [_spec(op=op, act="uint8", b="mixed"), _spec(op=op, act="uint8", b="const"),
                _spec(op=op, act="int8", b="const"), _spec(op=op, act="uint8", b="act", shared="act"),
                _spec(op=op, act="uint8", b="act", opset=13), _spec(op=op, act="uint8", b="float")]
        for before in sorted(fusion_ops()):  # a constant after an op it may be folded into (its bias)
            out += [_spec(op=op, act=act, b="const", before=before, sym=sym, after=after)
                    for act in ACT for sym in (True, False) for after in ("q", "output")]
    out += quantizer_cases()
    for op in ("AveragePool", "GlobalAveragePool", "Sigmoid", "LeakyRelu", "Softmax", "Concat"):
        for act in ACT:
            for after in ("q", "output"):
                out.append(_spec(op=op, act=act, after=after))
        out += [_spec(op=op, act="uint8", opset=13), _spec(op=op, act="uint8", after="q_other_type"),
                _spec(op=op, act="uint8", shared="act")]
    for op in ("MaxPool", "Transpose", "Reshape"):
        for act in ACT + ("int4", "uint4"):
            for after in ("q_same", "q", "output"):
                out.append(_spec(op=op, act=act, after=after))
        out += [_spec(op=op, act="uint8", after="q_same", opset=13),
                _spec(op=op, act="uint8", after="q_same", shared="act")]
        for act in ("uint8", "int8", "uint16", "int16"):  # the Q's output read by two nodes
            out += [_spec(op=op, act=act, after=after, fan=True) for after in ("q_same", "q")]
    # every group valid below opset 21 (8-bit types, no blocked weight) at opset 13 too, and per
    # tensor at 11: the key says "opset<21", "opset<12" there (fusion.OPSET_SPLITS)
    eight = ("uint8", "int8", "float")
    old = [s for s in out if s is not None and s["opset"] == 21 and s["act"] in eight
           and s["w"] in eight and s["gran"] != "blocked"]
    out += [_spec(s, opset=13) for s in old] + [_spec(s, opset=11) for s in old if s["gran"] == "tensor"]
    seen, unique = set(), []
    for s in out:
        if s is None:
            continue
        text = json.dumps(s, sort_keys=True)
        if text not in seen:
            seen.add(text)
            unique.append(s)
    return unique


def quantizer_cases() -> list[dict]:
    """The groups onnxruntime's quantizers write (fixtures/corpus.py) beyond the facts one at a
    time: a Conv / MatMul / Gemm of each type pair without a bias, with asymmetric weights, and
    reading an activation's DequantizeLinear shared with another group; a Conv / Gemm with
    symmetric 8-bit float weights quantized in the graph (Q -> DQ); int4 / uint4 weights below opset 21
    (com.microsoft Q/DQ); an Add / Mul whose second input's (or both inputs') DequantizeLinear
    is shared (a residual), of a symmetric constant, or after a MatMul whose Q -> DQ another
    group reads too; asymmetric blocked weights read by float ops or an Add;
    MaxPool, Transpose, Reshape and Add read by float ops; a blocked weight transposed before its
    MatMul."""
    out = []
    for op, axis in (("Conv", 0), ("MatMul", 1), ("Gemm", 0)):
        extra = {"transB": 1} if op == "Gemm" else {}
        bias = "none" if op == "MatMul" else "dq"
        for act in ACT:
            for w in WEIGHTS:
                for gran, sym in (("tensor", True), ("tensor", False), ("channel", True), ("channel", False)):
                    base = _spec(op=op, act=act, w=w, gran=gran, axis=axis if gran == "channel" else None,
                                 sym=sym, bias=bias, **extra)
                    out += [base, _spec(base, bias="none"), _spec(base, shared="act")]
                    # the weights quantized in the graph (Q -> DQ), symmetric as the quantizer's: the
                    # key does not tell a non-constant x's zero point (openvino runs sym in i8), nor
                    # such a weight from an activation (a MatMul of two: its own cases)
                    if w in ("int8", "uint8") and sym and op != "MatMul":
                        out += [_spec(base, pair=True), _spec(base, bias="none", pair=True),
                                _spec(base, shared="act", pair=True)]
                    if act == "uint8" and w in ("int4", "uint4"):  # the quantizer's com.microsoft Q/DQ
                        out += [_spec(base, opset=13, contrib=True),
                                _spec(base, bias="none", opset=13, contrib=True),
                                _spec(base, shared="act", opset=13, contrib=True)]
    for op in ("Add", "Mul"):
        for act in ACT:
            out += [_spec(op=op, act=act, b="act", shared="b"), _spec(op=op, act=act, b="act", shared="ab"),
                    _spec(op=op, act=act, b="sym_const"), _spec(op=op, act=act, b="float", after="float")]
            out += [_spec(op=op, act=act, b="const", before="MatMul", sym=sym, after="q", shared="act")
                    for sym in (True, False)]
    for w in ("int4", "uint4", "int8", "uint8"):
        for block in (32, 64, 128):
            out += [_spec(op="MatMul", act="float", w=w, gran="blocked", axis=0, block=block, sym=sym,
                          after=after, bias="none") for sym in (True, False) for after in ("float", "add")]
    for op in ("MaxPool", "Transpose", "Reshape"):
        out += [_spec(op=op, act=act, after="float") for act in ACT]
    for w in ("int4", "uint4"):  # the n-bits quantizer's weight blocked along axis 1, transposed
        out += [_spec(op="Transpose", act=w, w=w, gran="blocked", axis=1, block=block, sym=sym, after="float",
                      weight_t=True) for block in (32, 64, 128) for sym in (True, False)]
    return out


def _transposed_weight(s: dict):
    """A spec's (``weight_t``) MatMul weight: a constant blocked along axis 1, dequantized,
    transposed (the group) and read by a MatMul of a float input."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    b, tp = s["block"], {"int4": TensorProto.INT4, "uint4": TensorProto.UINT4}[s["w"]]
    rows, cols = 64, max(64, b)
    n = rows * -(-cols // b)
    data = np.random.default_rng(7).integers(-7 if s["w"] == "int4" else 0, 8, size=rows * cols)
    inits = [helper.make_tensor("w", tp, [rows, cols], data.tolist()),
             helper.make_tensor("s", TensorProto.FLOAT, [rows, n // rows], [0.01] * n)]
    if not s["sym"]:
        inits.append(helper.make_tensor("z", tp, [rows, n // rows], [3] * n))
    nodes = [helper.make_node("DequantizeLinear", [i.name for i in inits], ["wd"], name="dq0", axis=1,
                              block_size=b),
             helper.make_node("Transpose", ["wd"], ["wt"], name="group_t", perm=[1, 0]),
             helper.make_node("MatMul", ["x", "wt"], ["y"], name="mm")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, cols])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "group", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    return onnx.shape_inference.infer_shapes(model)


def fusion_ops() -> frozenset:
    """The ops an Add / Mul may be folded into (qlin's fusion.FOLDS_INTO)."""
    from qlin_cli.targets import fusion

    return fusion.FOLDS_INTO


def build(s: dict):
    """The model of one spec (``matrix``): one group, or two that share what ``shared`` says."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    TP = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint16": TensorProto.UINT16,
          "int16": TensorProto.INT16, "int4": TensorProto.INT4, "uint4": TensorProto.UINT4,
          "int32": TensorProto.INT32, "float": TensorProto.FLOAT}
    if s.get("weight_t"):
        return _transposed_weight(s)
    op, act, w = s["op"], s["act"], s["w"]
    nodes, inits, inputs, outputs = [], [], [], []
    names = iter(range(10_000))
    domain = "com.microsoft" if s.get("contrib") else ""  # the Q/DQ's (int4 below opset 21)

    def new(prefix):
        return f"{prefix}{next(names)}"

    def const(value, type_name, shape):
        name = new("c")
        value = np.broadcast_to(np.asarray(value), shape).reshape(-1).tolist() if shape else [value]
        inits.append(helper.make_tensor(name, TP[type_name], list(shape), value))
        return name

    def dq(x, t, scale, zp, axis=None, block=None, scale_shape=()):
        y = new("dq")
        ins = [x, const(scale, "float", scale_shape)]
        if zp is not None:
            ins.append(const(zp, t, scale_shape))
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if block is not None:
            attrs["block_size"] = block
        nodes.append(helper.make_node("DequantizeLinear", ins, [y], name=y, domain=domain, **attrs))
        return y

    def q(x, t, scale=0.05, zp=None):
        y = new("q")
        zp = ZERO.get(t, 0) if zp is None else zp
        ins = [x, const(scale, "float", ()), const(zp, t, ())]
        nodes.append(helper.make_node("QuantizeLinear", ins, [y], name=y, domain=domain))
        return y

    def graph_input(shape):
        name = new("in")
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        return name

    def activation(shape, t, x=None):
        x = x or graph_input(shape)
        if t == "float":
            return x
        return dq(q(x, t), t, 0.05, ZERO.get(t, 0))

    shapes = {"Conv": ((1, 8, 6, 6), (8, 8, 3, 3)), "MatMul": ((1, 4, 32), (32, 16)),
              "Gemm": ((4, 32), (32, 16))}
    blocked = s["gran"] == "blocked"
    if blocked:
        shapes["MatMul"] = ((1, 4, 128), (128, 64))
    if s.get("transB"):
        shapes["Gemm"] = ((4, 32), (16, 32))

    def weight_init():
        shape = shapes[op][1]
        rng = np.random.default_rng(7)
        lo, hi = {"int8": (-127, 127), "uint8": (0, 255), "int16": (-300, 300), "uint16": (0, 600),
                  "int4": (-7, 7), "uint4": (0, 15)}[w]
        data = rng.integers(lo, hi + 1, size=shape)
        name = new("w")
        if s.get("pair"):  # float weights quantized in the graph: QuantizeLinear -> DequantizeLinear
            inits.append(numpy_helper.from_array((data * 0.01).astype(np.float32), name))
            y, a = new("wq"), s["axis"]
            sshape = (shape[a],) if s["gran"] == "channel" else ()
            zp = 0 if s["sym"] else 3
            ins = [name, const(0.01, "float", sshape), const(zp, w, sshape)]
            nodes.append(helper.make_node("QuantizeLinear", ins, [y], name=y, domain=domain,
                                          **({"axis": a} if sshape else {})))
            return y
        inits.append(helper.make_tensor(name, TP[w], list(shape), data.reshape(-1).tolist()))
        return name

    def weight_dq(x):
        shape = shapes[op][1]
        zp = (0 if w.startswith("int") else ZERO[w]) if s["sym"] else 3
        if w.startswith("u") and s["sym"]:
            zp = 0  # symmetric: zero point 0 whatever the type
        if s["gran"] == "tensor":
            return dq(x, w, 0.01, zp)
        a = s["axis"]
        if s["gran"] == "channel":
            return dq(x, w, 0.01, zp, axis=a, scale_shape=(shape[a],))
        b = s["block"]
        sshape = tuple(-(-d // b) if i == a else d for i, d in enumerate(shape))
        return dq(x, w, 0.01, zp, axis=a, block=b, scale_shape=sshape)

    def tail(y, out_shape):
        after = s["after"]
        if after == "output":
            outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, None))
            return
        if after == "add":  # an Add of a float constant shaped as the op's bias (fusion.BIAS_ADD)
            z = new("add")
            nodes.append(helper.make_node("Add", [y, const(0.1, "float", (shapes[op][1][-1],))], [z], name=z))
            outputs.append(helper.make_tensor_value_info(z, TensorProto.FLOAT, None))
            return
        if after == "float":
            z = new("sig")
            nodes.append(helper.make_node("Sigmoid", [y], [z], name=z))
            outputs.append(helper.make_tensor_value_info(z, TensorProto.FLOAT, None))
            return
        t = act if act != "float" else "uint8"
        if after in ("relu", "relu_low", "clip", "clip_low"):
            z = new("relu")
            if after.startswith("clip"):
                bounds = [const(0.0, "float", ()), const(6.0, "float", ())]
                nodes.append(helper.make_node("Clip", [y, *bounds], [z], name=z))
            else:
                nodes.append(helper.make_node("Relu", [y], [z], name=z))
            y = z
        zp = LOW.get(t) if after in ("relu_low", "clip_low") else None
        if after == "clip_low":  # the Q's range is the Clip's, 0 .. 6
            scale = 6.0 / (2 ** (8 if t.endswith("8") else 16) - 1)
        elif after == "q_same":
            scale, zp = 0.05, ZERO.get(t, 0)
        elif after == "q_other_type":
            t = "int8" if t == "uint8" else "uint8"
            scale = 0.1
        else:
            scale = 0.1
        qy = q(y, t, scale, zp)
        out = dq(qy, t, scale, ZERO.get(t, 0) if zp is None else zp)
        for _ in range(2 if s.get("fan") else 0):  # the DQ's output read by two nodes
            z = new("sig")
            nodes.append(helper.make_node("Sigmoid", [out], [z], name=z))
            outputs.append(helper.make_tensor_value_info(z, TensorProto.FLOAT, None))
        if not s.get("fan"):
            outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))

    count = 2 if s["shared"] else 1
    x_in = graph_input(shapes.get(op, ((1, 8, 4, 4),))[0])
    shared_act = activation(None, act, x_in) if s["shared"] in ("act", "ab") else None
    shared_b = activation((1, 8, 4, 4), act) if s["shared"] in ("b", "ab") else None
    made = None  # the op before, its Q -> DQ read by both groups (shared "act")
    w_init = weight_init() if op in shapes and s["shared"] in ("init", "dq") else None
    w_dq = weight_dq(w_init) if op in shapes and s["shared"] == "dq" else None
    for _ in range(count):
        a_in = shared_act or activation(None, act, x_in)
        if s.get("before"):  # op -> Q -> DQ -> Add / Mul of a constant shaped as the op's bias
            made = (made if s["shared"] == "act" else None) or _made_before(s, SimpleNamespace(
                const=const, dq=dq, q=q, new=new, nodes=nodes, input=graph_input, act=activation))
            a_in, bias_shape = made
        if op in shapes:
            if op == "MatMul" and s["b"] == "act":
                b_in = activation(shapes[op][1], act)
            else:
                b_in = w_dq or weight_dq(w_init if s["shared"] == "init" else weight_init())
            ins = [a_in, b_in]
            n_out = shapes[op][1][0] if op == "Conv" or s.get("transB") else shapes[op][1][1]
            if s["bias"] == "dq":
                if s["gran"] == "channel":  # the bias quantized as the weights are: x_scale * w_scale
                    ins.append(dq(const(5, "int32", (n_out,)), "int32", 0.0005, None, axis=0,
                                  scale_shape=(n_out,)))
                else:
                    ins.append(dq(const(5, "int32", (n_out,)), "int32", 0.0005, None))
            elif s["bias"] == "float":
                ins.append(const(0.1, "float", (n_out,)))
            attrs = {"pads": [1, 1, 1, 1]} if op == "Conv" else {}
            if op == "Gemm" and s.get("transB"):
                attrs = {"transB": 1}
        elif op in ("Add", "Mul", "Concat"):
            b = s["b"] if op != "Concat" else "act"
            if b == "act":
                b_in = shared_b or activation((1, 8, 4, 4), act)
            elif b == "sym_const":  # every zero point 0, whatever the type
                b_in = dq(const(3, act, (1, 8, 4, 4)), act, 0.02, 0)
            elif b == "mixed":
                b_in = activation((1, 8, 4, 4), "int8" if act == "uint8" else "uint8")
            elif b == "float":
                b_in = graph_input((1, 8, 4, 4))
            else:
                # (an asymmetric constant not its zero point: a Mul by 0 folds the model to a constant)
                b_in = (dq(const(3 if s["sym"] else 5, act, bias_shape), act, 0.02, 0 if s["sym"] else 3)
                        if s.get("before")
                        else dq(const(3, act, (1, 8, 4, 4)), act, 0.02, ZERO.get(act, 0)))
            ins, attrs = [a_in, b_in], ({"axis": 1} if op == "Concat" else {})
        else:
            ins, attrs = [a_in], {}
            if op in ("AveragePool", "MaxPool"):
                attrs = {"kernel_shape": [2, 2]}
            elif op == "Transpose":
                attrs = {"perm": [0, 2, 3, 1]}
            elif op == "Reshape":
                name = new("shape")
                inits.append(numpy_helper.from_array(np.array([1, 8, 16], np.int64), name))
                ins.append(name)
        y = new("y")
        nodes.append(helper.make_node(op, ins, [y], name=f"group_{y}", **attrs))
        tail(y, None)
    graph = helper.make_graph(nodes, "group", inputs, outputs, inits)
    opset = s["opset"]
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports,
                              ir_version=10 if opset >= 21 or domain else 7 if opset >= 13 else 6)
    return onnx.shape_inference.infer_shapes(model)


# the op before an Add / Mul (spec "before"): its input's and weight's shapes, the shape of a
# bias of its output
BEFORE_SHAPES = {"MatMul": ((1, 4, 32), (32, 16), (16,)), "Gemm": ((4, 32), (32, 16), (16,)),
                 "Conv": ((1, 8, 6, 6), (8, 8, 3, 3), (1, 8, 1, 1))}


def _made_before(s: dict, kit) -> tuple[str, tuple]:
    """The op ``s["before"]`` (fusion.FOLDS_INTO) of a spec's Add / Mul: a fused-shaped group
    (the spec's activation type, int8 symmetric per-tensor weights, a Q after it) whose Q is
    dequantized again for the Add; (that DequantizeLinear's output, the shape of the op's bias)."""
    from onnx import helper

    op = s["before"]
    x_shape, w_shape, bias = BEFORE_SHAPES[op]
    x = kit.act(None, s["act"], kit.input(x_shape))
    w = kit.dq(kit.const(1, "int8", w_shape), "int8", 0.01, 0)
    y = kit.new("made")
    attrs = {"pads": [1, 1, 1, 1]} if op == "Conv" else {}
    kit.nodes.append(helper.make_node(op, [x, w], [y], name=f"before_{y}", **attrs))
    return kit.dq(kit.q(y, s["act"], 0.1), s["act"], 0.1, ZERO.get(s["act"], 0)), bias


def group_ops(model) -> list[tuple[str, str]]:
    """(node name, key) of each QDQ group of ``model``, as qlin reads it (targets/fusion.py)."""
    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import fusion

    a = analyze(model, ".")
    out = []
    for body in a.bodies:
        for i, n in enumerate(body.nodes):
            g = fusion.group(a, body, i)
            if g is not None:
                out.append((n.name, g))
    return out


def measured_groups(model) -> list[tuple[str, str]]:
    """``group_ops`` but the helper ops a case puts before its group (``_made_before``: "before_..."),
    whose keys their own cases measure: openvino folds such an op with the Add after it, and a
    load error names the node, so two cases of one key would differ."""
    return [(name, g) for name, g in group_ops(model) if not name.startswith("before_")]


def outcome_of(original, optimized, name: str) -> str:
    """What the node ``name`` of ``original`` became in ``optimized`` (the graph onnxruntime
    saved): "fused into OP" (an integer op makes its output, its follow-on's or its Q's),
    "runs on the quantized tensor" (the same data-movement op, reading no DequantizeLinear), or
    "float"."""
    from qlin_cli.targets import fusion

    node = next(n for n in original.graph.node if n.name == name)
    readers = {}
    for n in original.graph.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    chain = [node.output[0]]
    nxt = readers.get(node.output[0], [])
    while len(nxt) == 1 and nxt[0].op_type in (*fusion.FOLLOW_ONS, "QuantizeLinear") and len(chain) < 3:
        chain.append(nxt[0].output[0])
        if nxt[0].op_type == "QuantizeLinear":
            break
        nxt = readers.get(nxt[0].output[0], [])
    chain.append(node.name)  # a fused node's output is named after the node it replaces
    made = {o: n for n in optimized.graph.node for o in n.output}
    for name_out in chain:
        n = made.get(name_out)
        # through the layout nodes the CPU provider adds (NHWC QLinearConv, NCHWc Conv)
        while n is not None and n.op_type in LAYOUT and n.op_type != node.op_type:
            n = made.get(n.input[0])
        if n is None:
            continue
        if n.op_type.startswith("QLinear") or n.op_type in INTEGER_OPS:
            return fusion.FUSED + n.op_type + (f" ({n.domain})" if n.domain not in ("", "ai.onnx") else "")
        if n.op_type.endswith(node.op_type) and node.op_type in fusion.SAME_PARAMS:  # NhwcMaxPool too
            return fusion.FLOAT if _reads_dq(optimized, n) else fusion.DROPPED
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            continue
        return fusion.FLOAT
    n = _remade(original, optimized, node)
    if n is not None and (n.op_type.startswith("QLinear") or n.op_type in INTEGER_OPS):
        return fusion.FUSED + n.op_type + (f" ({n.domain})" if n.domain not in ("", "ai.onnx") else "")
    if n is not None and n.op_type.endswith(node.op_type) and node.op_type in fusion.SAME_PARAMS:
        return fusion.FLOAT if _reads_dq(optimized, n) else fusion.DROPPED
    return fusion.FLOAT


def _remade(original, optimized, node):
    """The node of ``optimized`` that a fusion or the layout transformer made of ``node`` under
    another output name: named as it is, "<name>/..." (MatMulAddFusion names the MatMulNBits
    that takes the Add after the MatMul as its bias "<name>/MatMulAddFusion"), or with outputs
    "<name>_token_N"; 1.18 and 1.19 name an NhwcMaxPool after its type: the one such node for
    the one such op; else None."""
    n = next((m for m in optimized.graph.node if m.name == node.name or m.name.startswith(f"{node.name}/")
              or any(o.startswith(f"{node.name}_token_") for o in m.output)), None)
    remade = [m for m in optimized.graph.node if m.op_type.endswith(node.op_type)]
    if n is None and len(remade) == 1 and [m.op_type for m in original.graph.node].count(node.op_type) == 1:
        n = remade[0]
    return n


def _reads_dq(optimized, n) -> bool:
    """Whether node ``n`` of ``optimized`` reads a DequantizeLinear's output, through the layout
    nodes (ReorderInput of an NCHWc MaxPool, Transpose of an NHWC one) put before it."""
    made = {o: m for m in optimized.graph.node for o in m.output}
    m = made.get(n.input[0])
    while m is not None and m.op_type in LAYOUT:
        m = made.get(m.input[0])
    return m is not None and m.op_type == "DequantizeLinear"


def write_cases(folder: str, specs: list[dict] | None = None) -> tuple[list[str], dict]:
    """(ids in order, {id: model}) of every spec (``matrix()`` by default), each saved as
    ``folder``/<id>.onnx, with cases.json listing the ids (``inside`` reads it)."""
    import onnx

    ids, models = [], {}
    for i, s in enumerate(matrix() if specs is None else specs):
        model = build(s)
        cid = f"g{i}"
        onnx.save(model, os.path.join(folder, f"{cid}.onnx"))
        ids.append(cid)
        models[cid] = model
    with open(os.path.join(folder, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(ids, f)
    return ids, models


def measure(python: str, folder: str) -> tuple[str, dict, list]:
    """("RELEASE MACHINE", {key: (outcome, Group)}, conflicts) of every group of ``matrix()``."""
    import onnx

    ids, models = write_cases(folder)
    release, said = run_all(python, folder)
    found: dict = {}
    conflicts = []
    for cid in ids:
        result = said.get(cid, "crash: no result")
        groups = measured_groups(models[cid])
        if result == "ok":
            opt = onnx.load(os.path.join(folder, f"{cid}.opt.onnx"), load_external_data=False)
        for name, g in groups:
            done = outcome_of(models[cid], opt, name) if result == "ok" else result
            key = g.text
            have = found.get(key)
            if have is not None and have[0] != done:
                conflicts.append((key, have[0], done, cid))
            found.setdefault(key, (done, g))
    return release, found, conflicts


def arguments(argv, runtime: str, doc: str):
    """The command line both fusion tools take (this one and probe_fusion_openvino.py), the
    tool's description the first paragraph of its ``doc``."""
    import argparse

    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--inside", help=argparse.SUPPRESS)
    p.add_argument("--python", default=sys.executable, help=f"the python whose {runtime} is measured")
    p.add_argument("--check", action="store_true", help="compare with the data file, write nothing")
    return p.parse_args(argv)


def checked(runtime: str, version: str, found: dict, conflicts: list, data: dict, name: str,
            check: bool) -> int | None:
    """Print the conflicts; with ``check``, whether the data file holds what was measured (the
    exit status); without, 1 where a conflict forbids writing; None: write the data."""
    for key, a, b, cid in conflicts:
        print(f"conflict: {key}: {a} / {b} ({cid})", file=sys.stderr)
    if check:
        have = {k: e["outcomes"].get(version) for k, e in data["groups"].items() if version in e["outcomes"]}
        same = have == {k: d for k, (d, _) in found.items()}
        print(f"{name}: {'matches' if same else 'differs from'} {runtime} {version}")
        return 0 if same and not conflicts else 1
    if conflicts:
        print("not written: the key misses a deciding fact", file=sys.stderr)
        return 1
    return None


def merged(data: dict, version: str, found: dict) -> dict:
    """The data file's groups with ``version``'s outcomes replaced by ``found``'s."""
    entries = {}
    for key, e in data["groups"].items():
        outcomes = {v: d for v, d in e["outcomes"].items() if v != version}
        if outcomes:
            entries[key] = {"group": e["group"], "outcomes": outcomes}
    for key, (done, g) in found.items():
        entry = entries.setdefault(key, {"group": g.to_json(), "outcomes": {}})
        entry["outcomes"][version] = done
    return entries


def main(argv=None) -> int:
    import tempfile
    from pathlib import Path

    args = arguments(argv, "onnxruntime", __doc__)
    if args.inside:
        inside(args.inside)
        return 0
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root)]
    from qlin_cli.targets import data_files, fusion

    with tempfile.TemporaryDirectory(prefix="qlin-fusion-") as tmp:
        release, found, conflicts = measure(args.python, tmp)
    version, machine = release.split()
    counts: dict = {}
    for done, _ in found.values():
        counts[done] = counts.get(done, 0) + 1
    print(f"onnxruntime {version} ({machine}): {len(matrix())} groups, {len(found)} keys: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    path = root / "qlin_cli" / "targets" / "data" / fusion.FILE
    data = data_files.load(path) or {"releases": {}, "groups": {}}
    status = checked("onnxruntime", version, found, conflicts, data, fusion.FILE, args.check)
    if status is not None:
        return status
    releases = dict(data["releases"])
    other = " --python VENV/bin/python" if args.python != sys.executable else ""
    releases[version] = {"command": "python tools/probe_fusion.py" + other,
                         "groups": len(matrix()), "keys": len(found), "machine": machine,
                         "how": "InferenceSession on the CPU provider, default SessionOptions "
                                "(ORT_ENABLE_ALL), optimized_model_filepath read back"}
    data_files.write(path, fusion.dumps(releases, merged(data, version, found)))
    print(f"wrote {path.name}.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
