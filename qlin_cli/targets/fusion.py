"""Which QDQ groups a runtime release fuses into an integer kernel, read from a model's node
facts and looked up in the release's measured outcomes (``onnxruntime_fusion.json.gz``,
written by tools/probe_fusion.py).

A *group* is an op of ``GROUP_OPS`` of which at least one input is the output of a
DequantizeLinear, with what follows it: onnxruntime's QDQ transformer
(onnxruntime/core/optimizer/qdq_transformer/selectors_actions/qdq_selector_action_transformer.cc)
replaces such a group by a QLinear op (QLinearConv, QLinearMatMul, com.microsoft QGemm,
QLinearAdd ...), MatMulIntegerToFloat or MatMulNBits, or drops the Q/DQ around an op that
moves data only (MaxPool, Transpose, Reshape), or leaves it: then the float op runs between
the Q/DQ nodes.

``group(a, body, index)`` gives the group's facts (``Group``), whose text is the key of the
measured outcome: the op, per input what makes it (``float`` where no DequantizeLinear does;
else the quantized type, its granularity and axis, block size, symmetric weights, a constant
x, a DequantizeLinear or initializer shared with other nodes), what reads the output (a
QuantizeLinear, a Relu or Clip then a QuantizeLinear, an Add of a constant after a MatMul, or
float ops; for MaxPool, Transpose and Reshape whether the Q's output fans out), for an Add or
Mul of a constant the op whose output it reads through a Q -> DQ pair (``before``: openvino
folds an int8 one into the MatMul before it, its bias, and leaves a uint8 one in float) and,
below ai.onnx opset 21, the opset's range (``OPSET_SPLITS``: ", opset<21", ", opset<12":
the ops take the model's opset, and 1.18 / 1.19 fuse a MatMul at opset 21 into a
QLinearMatMul-21 they have no kernel for, where at opset 13 they fuse it into
QLinearMatMul-10; the Q/DQ around a MaxPool below 12 are not dropped). Only facts that
decide a fusion are in it;
tools/probe_fusion.py measures groups differing in each, and fails where two groups of one
key had different outcomes.

``FusionTable`` is one release's outcomes: ``outcome(key)`` ("fused into QLinearConv",
"runs on the quantized tensor", "float"), and ``reason(key)``: the measured groups of the
same op, differing from the key in one fact only, that the release fuses (the way out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache, cached_property

from .. import schema
from ..model.facts import shared_with
from . import data_files, nodes
from .records import Record

FILE = "onnxruntime_fusion.json"  # qlin_cli/targets/data/FILE.gz
# each measured runtime's file (openvino's: tools/probe_fusion_openvino.py)
FILES = {"onnxruntime": FILE, "openvino": "openvino_fusion.json"}
FLOAT = "float"  # the outcome of a group left as it is: the float op runs between the Q/DQ
DROPPED = "runs on the quantized tensor"  # the Q/DQ around a data-movement op removed
FUSED = "fused into "  # the prefix of a fusion's outcome ("fused into QLinearConv")
# openvino's: the layer holding the op ran in an integer precision ("runs in u8 (Convolution)")
RUNS_IN = "runs in "
INTEGER = (FUSED, DROPPED, RUNS_IN)  # the outcomes run in integer; else FLOAT, "load: ..." or "crash: ..."
# how QT501 says a group left in float, per runtime
NOT_INTEGER = {"onnxruntime": "is not fused by", "openvino": "is not run in an integer precision by"}

# ops whose QDQ group onnxruntime's CPU provider may rewrite (qdq_selector_action_transformer.cc:
# ConvQDQRules, MatMulQDQRules, GemmQDQRules, BinaryOpQDQRules, UnaryOpQDQRules,
# VariadicOpQDQRules, DropQDQNodesRules)
GROUP_OPS = frozenset({
    "Conv", "MatMul", "Gemm", "Add", "Mul", "AveragePool", "GlobalAveragePool", "Sigmoid",
    "LeakyRelu", "Softmax", "Concat", "MaxPool", "Transpose", "Reshape",
})
# ops whose Q/DQ are dropped only when the Q and the DQ quantize alike (DropQDQNodesSelector):
# their key says whether they do
SAME_PARAMS = frozenset({"MaxPool", "Transpose", "Reshape"})
# the ai.onnx opsets from which an op of the group is another version that decides: MaxPool-12
# (DropQDQNodesRules take MaxPool 12 only), QLinearMatMul-21; a key below one says so
# (", opset<12", ", opset<21"); tools/probe_fusion.py measures 8-bit groups at 11, 13 and 21
OPSET_SPLITS = (12, 21)
FOLLOW_ONS = ("Relu", "Clip")  # removed between an op and its Q (ReluQuantFusion, ClipQuantFusion)
# the ops an Add or Mul of a constant may be folded into when it reads their output through a
# Q -> DQ pair (openvino's FullyConnected takes the Add as its bias): the key names that op
# (``Group.before``, "MatMul -> Add(...) -> ...")
FOLDS_INTO = frozenset({"Conv", "MatMul", "Gemm"})
BIAS_OPS = frozenset({"Add", "Mul"})
# ``Group.after`` of a MatMul whose output an Add of a constant reads (no Q between): onnxruntime
# 1.21 .. 1.24 make the two a Gemm (MatMulAddFusion) before a blocked weight's MatMul becomes
# MatMulNBits, so it runs in float; 1.25 makes them one MatMulNBits with the Add as its bias
BIAS_ADD = "Add"
INPUT_NAMES = {
    "Conv": ("x", "w", "bias"), "MatMul": ("A", "B"), "Gemm": ("A", "B", "C"),
    "Add": ("A", "B"), "Mul": ("A", "B"),
}


class Slot(Record):
    """What makes one input of a group's op."""
    __slots__ = ("type", "gran", "axis", "block", "sym", "const", "shared")
    _defaults = ("", None, None, False, False, "")

    type: str  # the DequantizeLinear's quantized type, or "float" (no DequantizeLinear)
    gran: str  # "tensor", "channel", "blocked"
    axis: int | None  # per channel and blocked: the axis (non-negative)
    block: int | None
    sym: bool  # a constant x with every zero point 0 (or none)
    const: bool  # the DequantizeLinear's x is an initializer or a Constant's
    shared: str  # "dq": its output is read by other nodes too; "init": its x is

    @property
    def text(self) -> str:
        if self.type == FLOAT:
            return FLOAT
        out = [self.type, self.gran]
        if self.axis is not None:
            out.append(f"axis={self.axis}")
        if self.block is not None:
            out.append(f"block={self.block}")
        if self.const:
            out.append("sym const" if self.sym else "const")
        if self.shared:
            out.append(f"shared-{self.shared}")
        return " ".join(out)

    def to_json(self) -> list:
        return [self.type, self.gran, self.axis, self.block, self.sym, self.const, self.shared]


class Group(Record):
    """One QDQ group's deciding facts; ``text`` is its key."""
    __slots__ = ("op", "inputs", "after", "opset", "before")
    _defaults = ("", "")

    op: str  # the op type ("Gemm transB=1" where B is transposed)
    inputs: tuple[Slot, ...]
    after: str  # "Q uint8", "Q uint8 same", "Relu Q uint8 low", "Clip Q int8", "float"
    opset: str  # "opset<12", "opset<21" (OPSET_SPLITS), or "" at 21 and above
    # an Add / Mul of a constant: the op of FOLDS_INTO whose output its other input dequantizes
    # again (op -> Q -> DQ -> Add), else ""
    before: str

    @property
    def text(self) -> str:
        out = f"{self.op}({', '.join(s.text for s in self.inputs)}) -> {self.after}"
        if self.before:
            out = f"{self.before} -> {out}"
        return f"{out}, {self.opset}" if self.opset else out

    def to_json(self) -> dict:
        out = {"op": self.op, "in": [s.to_json() for s in self.inputs], "after": self.after}
        if self.opset:
            out["opset"] = self.opset
        if self.before:
            out["before"] = self.before
        return out

    @staticmethod
    def from_json(data: dict) -> Group:
        return Group(data["op"], tuple(Slot(*s) for s in data["in"]), data["after"], data.get("opset", ""),
                     data.get("before", ""))

    def distance(self, other: Group) -> int:
        """How many facts differ: per input each field of its slot, and the words of what reads
        the output."""
        n = sum(x != y for a, b in zip(self.inputs, other.inputs, strict=False)
                for x, y in zip(a.to_json(), b.to_json(), strict=True))
        n += len(set(self.after.split()) ^ set(other.after.split()))
        return n + (self.opset != other.opset) + (self.before != other.before)

    def differences(self, other: Group) -> list[str]:
        """What ``other`` has otherwise, one phrase per input or output that differs."""
        if other.op != self.op or len(other.inputs) != len(self.inputs):
            return ["another op"]
        names = INPUT_NAMES.get(self.op.split()[0], ())
        out = []
        for i, (a, b) in enumerate(zip(self.inputs, other.inputs, strict=True)):
            if a != b:
                name = names[i] if i < len(names) else f"input {i}"
                out.append(f"{name} '{b.text}' instead of '{a.text}'")
        if self.after != other.after:
            out.append(f"the output read by '{other.after}' instead of '{self.after}'")
        if self.opset != other.opset:
            out.append(f"ai.onnx opset {_opset_words(other.opset)} instead of {_opset_words(self.opset)}")
        if self.before != other.before:
            out.append(f"its input made by '{other.before or 'another op'}' instead of "
                       f"'{self.before or 'another op'}'")
        return out


def _opset_words(bucket: str) -> str:
    if not bucket:
        return f"{OPSET_SPLITS[-1]} or above"
    high = int(bucket.split("<")[1])
    low = max((v for v in OPSET_SPLITS if v < high), default=None)
    return f"below {high}" if low is None else f"{low} .. {high - 1}"


def group(a, body, index: int) -> Group | None:
    """The QDQ group of node ``index`` of ``body`` (an analysis' BodyView): None where the
    node is not an ai.onnx op of GROUP_OPS or no input of it is a DequantizeLinear's output."""
    parts = _parts(a, body, index, None)
    return None if parts is None else Group(*parts)


def texts(a, body):
    """text_of(index): ``group(a, body, index).text`` (None where there is no group) for the
    nodes of one body, with what its nodes share worked out once: each input's ``Slot`` per
    (shape of its DequantizeLinear's facts, constant, symmetric, shared), whether a constant
    zero point is all zeros per its content, and each key's text per its parts."""
    memo: dict = {}

    def text_of(index: int) -> str | None:
        parts = _parts(a, body, index, memo)
        if parts is None:
            return None
        op, slots, after, opset, before = parts
        key = (op, *map(id, slots), after, opset, before)  # slots are memo's: one object per value
        found = memo.get(key)
        if found is None:
            found = memo[key] = Group(*parts).text
        return found
    return text_of


_GRANULARITY = {schema.PER_TENSOR: "tensor", schema.PER_AXIS: "channel", schema.BLOCKED: "blocked"}


def _parts(a, body, index: int, memo: dict | None) -> tuple | None:
    """``Group``'s fields of node ``index`` (``group``), None where it has no group; ``memo``:
    what ``texts`` keeps for the body (None: nothing kept)."""
    domain, op = body.kinds[index]
    if op not in GROUP_OPS or schema.normalize_domain(domain) != schema.AI_ONNX:
        return None
    ins, outs = body.io[index]
    producers, consumers, kinds = body.producers, body.consumers, body.kinds
    scope = body.scope
    find_value = scope.find_value if scope is not None else (lambda name: None)
    slots, first = [], None
    for name in ins:
        j = producers.get(name) if name else None
        if j is None or kinds[j][1] != "DequantizeLinear":
            slots.append(_FLOAT_SLOT)
            continue
        f = a.facts(body, j)
        if f is None or not nodes.is_linear(f):
            slots.append(_FLOAT_SLOT)
            continue
        first = first or f
        slots.append(_slot(f, body, j, producers, consumers, find_value, memo))
    if first is None:
        return None
    if op == "Gemm" and a.any_facts(body, index).attrs.get("transB", 0):
        op += " transB=1"  # which axis of B holds the output channels
    opset = _body_opset(a, body, memo)
    before = _before(body, ins, slots) if op in BIAS_OPS else ""
    return op, tuple(slots), _after(a, body, op, outs, first), opset, before


def _body_opset(a, body, memo: dict | None) -> str:
    """``opset_bucket`` of the ai.onnx opset the body imports (the model's, where it has no scope)."""
    if memo is not None and "opset" in memo:
        return memo["opset"]
    scope = body.scope
    opset = schema.opset_of(scope.opsets, schema.AI_ONNX) if scope is not None else None
    if opset is None:
        opset = next((o.version for o in a.model.opset_import
                      if schema.normalize_domain(o.domain) == schema.AI_ONNX), None)
    found = opset_bucket(opset)
    if memo is not None:
        memo["opset"] = found
    return found


def opset_bucket(opset: int | None) -> str:
    """``Group.opset`` of a group at ai.onnx ``opset``: "opset<12", "opset<21", or "" at 21
    and above (and where the model imports no ai.onnx)."""
    below = [v for v in OPSET_SPLITS if opset is not None and opset < v]
    return f"opset<{below[0]}" if below else ""


def _before(body, ins: tuple, slots: list[Slot]) -> str:
    """For an Add / Mul with a constant DequantizeLinear input: the op of FOLDS_INTO whose
    output another input reads through a QuantizeLinear -> DequantizeLinear pair ("MatMul"),
    else ""."""
    if not any(s.const for s in slots):
        return ""
    producers, kinds, io = body.producers, body.kinds, body.io
    for name, s in zip(ins, slots, strict=False):
        if s.type == FLOAT or s.const:
            continue
        dq = producers.get(name)
        x = io[dq][0][0] if dq is not None and io[dq][0] else ""
        q = producers.get(x) if x else None
        if q is None or kinds[q][1] != "QuantizeLinear" or not io[q][0]:
            continue
        made = producers.get(io[q][0][0])
        if made is not None and kinds[made][1] in FOLDS_INTO and schema.normalize_domain(
                kinds[made][0]) == schema.AI_ONNX:
            return kinds[made][1]
    return ""


def _slot(f, body, j, producers, consumers, find_value, memo: dict | None = None) -> Slot:
    x = f.inputs[0] if f.inputs else ""
    made = producers.get(x) if x else None
    const = bool(x) and made is None and find_value(x) is not None
    if not const and made is not None and body.kinds[made][1] == "Constant":
        const = True
    sym = const and _symmetric(f, memo, find_value)
    y = f.outputs[0] if f.outputs else ""
    shared = ""
    if len(consumers.get(y, ())) > 1:
        shared = "dq"
    elif x and len(consumers.get(x, ())) > 1:
        shared = "init" if const else ""
    if memo is None:
        return _slot_of(f, sym, const, shared)
    # the rest is read from the facts' shape key alone (quantized type, granularity, axis,
    # block size): facts that share a shape (NodeFacts.share) share their slots
    key = (id(shared_with(f) or f), const, sym, shared)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _slot_of(f, sym, const, shared)
    return found


def _slot_of(f, sym: bool, const: bool, shared: str) -> Slot:
    gran = _GRANULARITY.get(f.granularity, str(f.granularity))
    axis = f.normalized_axis() if gran != "tensor" else None
    block = f.block_size if gran == "blocked" else None
    return Slot(nodes.quant_type(f) or "?", gran, axis, block, sym, const, shared)


def _symmetric(f, memo: dict | None, find_value=None) -> bool:
    """Whether every value of the node's zero point is 0 (an absent one is): worked out once
    per zero point constant, kept in ``memo`` by its identity where it has one (the nodes
    of a scope reading one initializer share its constant); ``nodes.zero_point_is_zero``
    reads the stored bytes, no slower than a key of their content would (each blocked
    weight's zero points are its own: a content key was read, hashed and missed for each)."""
    i = f.zero_point_index
    c = f.values[i] if memo is not None and i is not None and i < len(f.values) and f.present_at(i) else None
    if c is None:
        return nodes.zero_point_is_zero(f, find_value)
    key = ("sym", id(c))
    found = memo.get(key)
    if found is None or found[0] is not c:  # (the id of a constant gone: not this one)
        found = memo[key] = (c, nodes.zero_point_is_zero(f, find_value))
    return found[1]


_FLOAT_SLOT = Slot(FLOAT)


def _after(a, body, op: str, outs: tuple, first) -> str:
    """What reads the op's output 0: a QuantizeLinear ("Q TYPE", with " same" for an op of
    SAME_PARAMS whose Q has the scale and zero point of its first DQ), a Relu / Clip read by a
    QuantizeLinear alone ("Relu Q TYPE", " low" where the Q's zero point is its type's lowest
    value), for a MatMul an Add of a constant ("Add": its bias), a graph output ("output"), or
    anything else ("float")."""
    y = outs[0] if outs else ""
    readers = body.consumers.get(y, ()) if y else ()
    if not readers and body.path == "main" and y in {o.name for o in a.model.graph.output}:
        return "output"
    if len(readers) != 1:
        return FLOAT
    j = readers[0][0]
    via = body.kinds[j][1]
    if op == "MatMul" and via == "Add" and _adds_constant(body, j, y):
        return BIAS_ADD
    if via in FOLLOW_ONS:
        then = body.io[j][1]
        more = body.consumers.get(then[0], ()) if then and then[0] else ()
        if len(more) != 1:
            return FLOAT
        q = _quantize(a, body, more[0][0])
        if q is None:
            return FLOAT
        t = nodes.quant_type(q)
        low = _zero_point_is_lowest(q, t) if via == "Relu" else _clip_covers(body, j, q, t)
        return f"{via} Q {t}" + (" low" if low else "")
    q = _quantize(a, body, j)
    if q is None:
        return FLOAT
    same = op in SAME_PARAMS and _same_params(q, first)
    fan = op in SAME_PARAMS and _fans_out(a, body, j)
    return f"Q {nodes.quant_type(q)}" + (" same" if same else "") + (" fan-out" if fan else "")


def _adds_constant(body, j: int, y: str) -> bool:
    """Whether node ``j`` (an Add reading ``y``) is an ai.onnx Add whose other input is a
    constant (an initializer or a Constant's output): a bias onnxruntime's MatMulAddFusion may
    take into the MatMul before."""
    if schema.normalize_domain(body.kinds[j][0]) != schema.AI_ONNX:
        return False
    others = [x for x in body.io[j][0] if x != y]
    if len(others) != 1 or not others[0]:
        return False
    made = body.producers.get(others[0])
    if made is not None:
        return body.kinds[made][1] == "Constant"
    return body.scope is not None and body.scope.find_value(others[0]) is not None


def _fans_out(a, body, j: int) -> bool:
    """Whether the QuantizeLinear ``j``'s output is read by more than one node or graph output,
    through the DequantizeLinear(s) after it: then onnxruntime's int8 -> uint8 conversion of
    Q/DQ pairs (x86) passes it by and converts the pair before the op, so the Q and DQ around
    the op no longer quantize alike."""
    outs = {o.name for o in a.model.graph.output} if body.path == "main" else set()
    y = body.io[j][1][0] if body.io[j][1] else ""
    readers = body.consumers.get(y, ())
    if len(readers) + (y in outs) != 1 or not readers:
        return len(readers) + (y in outs) > 1
    k = readers[0][0]
    if body.kinds[k][1] != "DequantizeLinear":
        return False
    z = body.io[k][1][0] if body.io[k][1] else ""
    return len(body.consumers.get(z, ())) + (z in outs) > 1


def _quantize(a, body, j):
    if body.kinds[j][1] != "QuantizeLinear":
        return None
    f = a.facts(body, j)
    if f is None or not nodes.is_linear(f):
        return None
    if shared_with(f) is None:
        a.shape_of(f)  # tied to its shape: its quantized type is the shape's, worked out once
    return f


def _zero_point_is_lowest(q, t) -> bool:
    zp = nodes.zero_point_values(q)
    low = {"int8": -128, "uint8": 0, "int16": -32768, "uint16": 0, "int4": -8, "uint4": 0}.get(t)
    return zp is not None and low is not None and zp.size == 1 and zp[0] == low


def _clip_covers(body, j: int, q, t) -> bool:
    """Whether the Clip (node ``j``) lets through every value the Q after it can write: its
    minimum at most, its maximum at least, the Q's range (then the Q's saturation clips)."""
    import numpy as np
    from onnx import numpy_helper

    s, zp = nodes.scale_values(q), nodes.zero_point_values(q)
    rng = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535)}.get(t)
    if s is None or zp is None or s.size != 1 or zp.size != 1 or rng is None:
        return False
    ins = body.io[j][0]
    scope = body.scope
    bounds = []
    for k, default in ((1, -np.inf), (2, np.inf)):
        name = ins[k] if k < len(ins) else ""
        if not name:
            bounds.append(default)
            continue
        v = scope.find_value(name) if scope is not None else None
        if v is None:
            return False
        bounds.append(float(numpy_helper.to_array(v).reshape(-1)[0]))
    lo, hi = ((rng[0] - zp[0]) * s[0], (rng[1] - zp[0]) * s[0])
    tol = 1e-5 * max(abs(lo), abs(hi))  # the scale is float32: 255 * (6 / 255) is not 6 exactly
    return bounds[0] <= lo + tol and bounds[1] >= hi - tol


def _same_params(q, dq) -> bool:
    s1, s2 = nodes.scale_values(q), nodes.scale_values(dq)
    z1, z2 = nodes.zero_point_values(q), nodes.zero_point_values(dq)
    if s1 is None or s2 is None or z1 is None or z2 is None:
        return False
    return s1.shape == s2.shape and z1.shape == z2.shape and (s1 == s2).all() and (z1 == z2).all()


class FusionTable:
    """One release's measured outcomes: ``outcome(key)`` reads the key's entry of the data
    file alone (data_files.block: bisected, one small parse), nothing in advance; every
    outcome (``outcomes``) and each key's ``Group`` (``groups``) are read whole only when
    asked, as ``reason`` does to find a nearest group (parsing the whole file for a 1-node
    check took 13 ms)."""

    def __init__(self, runtime: str, version: str, entries: Mapping, command: str = "", machine: str = ""):
        self.runtime, self.version, self.command, self.machine = runtime, version, command, machine
        self._entries = entries  # {key: {"group": ..., "outcomes": {release: outcome}}}
        self._by_op: dict[str, list] = {}  # op -> ``_integer``

    @cached_property
    def outcomes(self) -> dict[str, str]:
        """{key: outcome} of every key the release was measured on."""
        return {k: done for k, e in self._entries.items()
                if (done := e.get("outcomes", {}).get(self.version)) is not None}

    @cached_property
    def groups(self) -> dict[str, Group]:
        return {k: Group.from_json(self._entries[k]["group"]) for k in self.outcomes}

    def _integer(self, op: str) -> list[tuple[str, Group, str]]:
        """(key, group, outcome) of every group of ``op`` the release was measured to run in
        integer (``reason``'s candidates: a load error or crash is no way out), in key order:
        only the entries whose key (the group's text) names ``op`` are parsed (all of them took
        60 ms where ``reason`` was asked once), and a Group made of those it runs in integer."""
        found = self._by_op.get(op)
        if found is not None:
            return found
        entries = self._entries

        def of_op(key: str) -> bool:
            return _key_op(key) == op
        if not hasattr(entries, "items_from"):
            items: Iterable[tuple[str, dict]] = ((k, entries[k]) for k in entries if of_op(k))
        elif op in BIAS_OPS:  # (a bias op's key may start "MatMul -> ": every key read, its own parsed)
            items = entries.items_from(None, of_op)
        else:  # the op's groups without ``before``, together in key order
            items = entries.items_from(op + "(", None, lambda key: not key.startswith(op + "("))
        found = self._by_op[op] = []
        for k, e in items:
            if not of_op(k):
                continue
            done = e.get("outcomes", {}).get(self.version)
            if done is not None and done.startswith(INTEGER):
                found.append((k, Group.from_json(e["group"]), done))
        return found

    def outcome(self, key: str | None) -> str | None:
        if key is None:
            return None
        entry = self._entries.get(key)
        return None if entry is None else entry.get("outcomes", {}).get(self.version)

    def reason(self, key: str) -> tuple[str, str] | None:
        """(what the nearest measured group the release fuses has otherwise, what it becomes):
        among the groups of the same op that differ from ``key`` in at most two of its inputs
        and output, the one the release fuses that differs in the fewest facts
        (``Group.distance``); None where none is measured."""
        entry = self._entries.get(key)
        if entry is None or entry.get("outcomes", {}).get(self.version) is None:
            return None
        mine = Group.from_json(entry["group"])
        best = None
        for other_key, other, done in self._integer(mine.op):
            if other.op != mine.op or len(other.inputs) != len(mine.inputs):
                continue
            diff = mine.differences(other)
            if not diff or len(diff) > 2:
                continue
            rank = (mine.distance(other), other_key)
            if best is None or rank < best[0]:
                best = (rank, " and ".join(diff), done)
        return None if best is None else (best[1], best[2])


def _key_op(key: str) -> str:
    """The op of the group whose text is ``key`` (``Group.text``: "[before -> ]op(inputs) -> ...")."""
    return key.split("(", 1)[0].rsplit(" -> ", 1)[-1]


@cache
def table(runtime: str, version: str) -> FusionTable | None:
    """The release's measured outcomes (None where the release was not measured)."""
    name = FILES.get(runtime)
    if name is None:
        return None
    release = data_files.head(name).get("releases", {}).get(version)
    if release is None:
        return None
    return FusionTable(runtime, version, data_files.block(name, "groups"), release.get("command", ""),
                       release.get("machine", ""))


def dumps(releases: dict, entries: dict, runtime: str = "onnxruntime") -> str:
    """The data file's text: the releases, then one line per key (sorted)."""
    import json

    lines = ['{', '"format": 1,', f'"runtime": {json.dumps(runtime)},', '"releases": {']
    rel = [f"{json.dumps(v)}: {json.dumps(r, sort_keys=True)}" for v, r in releases.items()]
    lines.append(",\n".join(rel))
    lines += ['},', '"groups": {']
    rows = [f"{json.dumps(k)}: {json.dumps(entries[k], sort_keys=True)}" for k in sorted(entries)]
    lines.append(",\n".join(rows))
    lines += ['}', '}']
    return "\n".join(lines) + "\n"
