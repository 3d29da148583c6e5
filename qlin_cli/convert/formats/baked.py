"""Many measuring cases of one structure run in one onnxruntime session, each case's constants
its own initializers (for measure.py).

stacked.Session feeds a structure's constants as inputs, which only ai.onnx DequantizeLinear
and QuantizeLinear may read (stacked.shareable): a kernel that packs a constant weight when
the session is made, as QLinearMatMul's and QLinearConv's do, computes from the packed copy,
and is given one only where the weight is an initializer, as in the model the case comes from.
Those structures ran as models of 64 cases, every case's inputs and outputs a graph input
and output of its own. Here every case's nodes read their constants as initializers of their
own, as in the written model (one initializer for constants of equal type, shape and bytes,
which a node computes alike from either), and only the inputs and outputs are joined:

* every input slot is one graph input holding every case's value joined along its first
  axis, which one Split gives back to each case, an exact copy of the value and its shape;
* each output's parts are joined along their first axis by one Concat (an exact copy), and
  come apart by length: a structure is taken only where every node is an op whose page fixes
  its outputs' shapes from its inputs' shapes and its attributes alone (``SHAPED_BY_INPUTS``),
  so that the cases, whose inputs and constants have one shape, give outputs of one shape;
* one run computes every case on one input row.

tests/test_convert_formats_baked.py holds the measurements to running the cases as models.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ... import schema
from ...schema.qdq_forms import FORMS
from .stacked import Declined, Structure, _joined_model, _session, _split
from .to_qdq import _RAW_TYPES, made_node, raw_tensor

# ops whose pages fix their outputs' shapes from their inputs' shapes and their attributes
# (no input's values): the QOperator ops of schema/qdq_forms.py, the float ops of their QDQ
# forms, and the DequantizeLinear and QuantizeLinear around them
SHAPED_BY_INPUTS = frozenset(
    set(FORMS) | {(schema.AI_ONNX, f.float_op) for f in FORMS.values()}
    | {(schema.AI_ONNX, "DequantizeLinear"), (schema.AI_ONNX, "QuantizeLinear")})
CASES = 1024  # cases in one session at most
BYTES = 1 << 26  # what the cases' constants in one session may take


def bakeable(st: Structure) -> bool:
    """Whether ``Baked`` runs cases of ``st``: every node an op of SHAPED_BY_INPUTS, every input
    of a known first dimension (which the Split cuts along), every constant of a plain numeric
    type (written as it is read: to_qdq.raw_tensor)."""
    if not all((domain, op) in SHAPED_BY_INPUTS for domain, op, *_ in st.nodes):  # (domains normalized)
        return False
    for kind in st.kinds:
        if kind[0] == "input" and not (kind[2] and kind[2][0] > 0):
            return False
        if kind[0] == "const" and np.dtype(kind[1]) not in _RAW_TYPES:
            return False
    return True


def parts(st: Structure, count: int) -> list[range]:
    """``count`` cases of ``st`` cut into the runs of cases one session takes (CASES, BYTES)."""
    each = sum(int(np.prod(k[2], dtype=np.int64)) * np.dtype(k[1]).itemsize
               for k in st.kinds if k[0] == "const")
    size = max(1, min(CASES, BYTES // max(each, 1)))
    return [range(start, min(count, start + size)) for start in range(0, count, size)]


class Baked:
    """One onnxruntime session of the cases whose constants are ``consts`` (one {slot: array}
    a case), each case's nodes side by side, reading its own constants as initializers."""

    def __init__(self, ort, st: Structure, consts: list[dict], opsets: dict, ir_version: int,
                 session_options):
        copies = len(consts)
        self.st, self.copies = st, copies
        opset = schema.opset_of(opsets, schema.AI_ONNX)
        if not opset:
            raise Declined("no ai.onnx import for the Split and the Concat")
        self.fed = [i for i, k in enumerate(st.kinds) if k[0] == "input"]
        nodes, inputs, inits = [], [], {}
        for i in self.fed:
            _, elem, shape = st.kinds[i]
            inputs.append(helper.make_tensor_value_info(f"s{i}", elem, [copies * shape[0], *shape[1:]]))
            nodes.append(_split(f"s{i}", [f"v{i}_{j}" for j in range(copies)], shape[0], opset, inits))
        names = _constants(st, consts, inits)
        for j in range(copies):
            named = names[j]
            for (domain, op, _, ins, outs), protos in zip(st.nodes, st.protos, strict=True):
                n = made_node(op, [(named.get(i) or f"v{i}_{j}") if i >= 0 else "" for i in ins],
                              [f"v{o}_{j}" for o in outs], "", domain)
                n.attribute.extend(protos)
                nodes.append(n)
        outputs = [([f"v{s}_{j}" for j in range(copies)], elem) for s, elem in st.outputs]
        imports = [helper.make_opsetid(d, v) for d, v in opsets.items()]
        self.session = _session(ort, _joined_model(nodes, inputs, outputs, inits, imports, ir_version),
                                session_options, joined=len(outputs))
        if self.session is None:  # (an output onnxruntime does not know the rank of, say)
            raise Declined("onnxruntime takes no joined session of these cases")

    def run(self, values: list, rows: int) -> list[np.ndarray]:
        """The outputs, [rows, cases, ...] each; ``values``: each input slot's [rows, cases, ...]."""
        got = []
        for f in range(rows):
            feed = {f"s{i}": np.ascontiguousarray(values[i][f]).reshape((-1,) + values[i].shape[3:])
                    for i in self.fed}
            got.append(self.session.run(None, feed))
        out = []
        for at in range(len(self.st.outputs)):
            runs = [g[at] for g in got]
            length = runs[0].shape[0] // self.copies if runs[0].ndim else 0
            if not length or any(r.shape[0] != length * self.copies for r in runs):
                raise Declined("parts of other lengths")
            y = np.stack(runs)  # [rows, copies * length, ...]
            out.append(y.reshape((rows, self.copies, length) + y.shape[2:]))
        return out


def _constants(st: Structure, consts: list[dict], inits: dict) -> list[dict]:
    """Each case's constant slots' initializer names ({slot: name}), the initializers added to
    ``inits``: one initializer for every constant of equal type, shape and bytes (the same
    value: a node reading either computes the same), however many cases read it."""
    seen: dict = {}  # (dtype, shape, bytes) -> its initializer's name
    names: list[dict] = []
    slots = [i for i, k in enumerate(st.kinds) if k[0] == "const"]
    for values in consts:
        named = {}
        for i in slots:
            v = np.asarray(values[i])
            key = (v.dtype.str, v.shape, v.tobytes())
            name = seen.get(key)
            if name is None:
                name = seen[key] = f"c{len(seen)}"
                inits[name] = raw_tensor(v, name)
            named[i] = name
        names.append(named)
    return names
