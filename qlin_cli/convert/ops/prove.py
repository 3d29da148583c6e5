"""Prove a non-Q/DQ rewrite with onnx.reference: the node before and its replacement run
on the same probe inputs must give bit-identical outputs.

Probe inputs come from the node's types and shapes: the model's own values for
constant inputs; random values otherwise (floats of both signs and several
magnitudes, small non-negative integers so indices stay in range, random booleans).
An unknown dimension becomes 3, and a probe of more than ``MAX_ELEMENTS`` elements
is not built (the declared shapes of a model are not trusted to be small).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ...model.tensors import dims_text, element_count
from ...schema import dtypes

MAX_ELEMENTS = 1 << 16
UNKNOWN_DIM = 3
SEED = 20240611


class CannotProve(Exception):
    """No probe could be built, or the original node does not run in onnx.reference."""


def _probe(type_name: str | None, shape, rng) -> np.ndarray:
    if type_name is None or type_name not in dtypes.BY_NAME and type_name not in ("bool", "string"):
        raise CannotProve(f"an input's type ({type_name or 'unknown'}) gives no probe")
    dims = [UNKNOWN_DIM if not isinstance(d, int) or d < 0 else d for d in (shape or ())]
    if shape is None:
        raise CannotProve("an input's shape is unknown")
    if element_count(dims) > MAX_ELEMENTS:
        raise CannotProve(f"a probe of shape {dims_text(dims)} would be too large")
    if type_name == "bool":
        return rng.integers(0, 2, size=dims).astype(bool)
    if type_name == "string":
        raise CannotProve("string inputs give no probe")
    d = dtypes.BY_NAME[type_name]
    if d.kind == "int":
        return rng.integers(0, 3, size=dims).astype(d.numpy)
    values = rng.standard_normal(dims) * np.exp2(rng.integers(-4, 5, size=dims))
    return np.asarray(values, np.float64).astype(d.numpy)


def _model(nodes, opset: int, inputs: dict, outputs: list[str], consts: dict, ir_version: int):
    graph = helper.make_graph(
        list(nodes), "probe",
        [helper.make_tensor_value_info(n, dtypes.BY_NAME[dtypes.name_of_array(v)].proto if
                                       dtypes.name_of_array(v) else onnx.TensorProto.BOOL, v.shape)
         for n, v in inputs.items()],
        [helper.make_tensor_value_info(o, 0, None) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in consts.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return m


def _run(model, feeds):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model, new_ops=_kernels()).run(None, feeds)


@functools.cache
def _kernels() -> list:
    """Kernels the proof uses in place of onnx.reference's, where onnx.reference departs from
    the op's page (each says how)."""
    from onnx.reference.op_run import OpRun

    class BatchNormalization(OpRun):
        """Every version's page: "Y = (X - input_mean) / sqrt(input_var + epsilon) * scale + B"
        in inference; before version 14 the page ties training to the outputs asked for
        ("Output case #2: Y (test mode)"), from 14 to `training_mode`. onnx.reference's
        version 9 takes its `momentum` attribute (whose default 0.9 it fills in) as the switch,
        so it always computes training statistics: its Y then differs from version 14's for
        the same node. Here Y alone is the inference formula, for every version; training is
        not proven."""

        op_domain = ""

        def _run(self, x, scale, bias, mean, var, **_):
            node = self.onnx_node
            given = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            if given.get("training_mode") or len([o for o in node.output if o]) > 1:
                raise CannotProve("a BatchNormalization in training mode is not proven")
            eps = given.get("epsilon", 1e-5)  # every version's default
            shape = (-1,) + (1,) * (x.ndim - 2)
            y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + np.asarray(eps, var.dtype))
            return ((y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype),)

    return [BatchNormalization]


def _same(a, b) -> bool:
    """Bit for bit, but a NaN equals a NaN: the pages define no NaN payload, and two kernels
    computing one formula may leave different ones (a sign bit); where one output is NaN the
    other must be NaN too."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            return False
        a, b = np.where(nan_a, 0, a), np.where(nan_b, 0, b)
    return a.tobytes() == b.tobytes()


# Inputs whose page allows only positive values: a probe outside that domain proves nothing
# (BatchNormalization's variance: "input_var", under a square root).
POSITIVE = {("BatchNormalization", 4)}


def prove(before: onnx.NodeProto, from_opset: int, after: list[onnx.NodeProto], to_opset: int, *,
          types: dict, shapes: dict, const, ir_version: int, rounds: int = 2) -> str | None:
    """None when before and after agree bit for bit on every probe; else what differs.
    Raises CannotProve when no probe can be made or the original does not run."""
    names = list(dict.fromkeys(n for n in before.input if n))
    outputs = [o for o in before.output if o]
    consts = {n: const(n) for n in names if const(n) is not None}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for r in range(rounds):
            rng = np.random.default_rng(SEED + r)
            feeds = {n: _probe(types.get(n), shapes.get(n), rng) for n in names if n not in consts}
            for i, n in enumerate(before.input):
                if (before.op_type, i) in POSITIVE and n in feeds:
                    feeds[n] = np.abs(feeds[n]) + np.asarray(0.5, feeds[n].dtype)
            try:
                want = _run(_model([before], from_opset, feeds, outputs, consts, ir_version), feeds)
            except Exception as e:  # the original does not run: nothing to compare with
                raise CannotProve(f"onnx.reference cannot run the original: {_line(e)}") from None
            try:
                got = _run(_model(after, to_opset, feeds, outputs, consts, ir_version), feeds)
            except Exception as e:
                return f"the rewrite does not run in onnx.reference: {_line(e)}"
            for o, a, b in zip(outputs, want, got, strict=False):
                if not _same(a, b):
                    return f"output {o!r} differs on a probe ({np.asarray(a).dtype}{np.shape(a)})"
    return None


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[-1] if text else type(e).__name__)[:160]
