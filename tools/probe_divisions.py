"""The division probes of tools/probe_models.py: how a runtime divides x by the scale in a
QuantizeLinear whose page puts the division in float16 or bfloat16, or names a precision.

Each probe is one QuantizeLinear (ai.onnx at every version from 19, com.microsoft) over
values chosen so that the division in float32 and the division in the narrower type round
to different integers (x = 78.0625, scale = 0.669921875 give 116 in float16 and 117 in
float32). Besides its feeds, a probe carries the results it tells apart (``expect:<type>``
entries, not graph inputs; tools/probe_runner.py compares the runtime's output with them):
``expect:spec``, the page's result as qlin's evaluator computes it, and ``expect:float`` and
``expect:float16`` or ``expect:bfloat16``, the division done in float32 and in the narrower
type (the page's result is one of them). The probe runs
("ok") when the runtime gives the page's result; otherwise its outcome says which division
it did ("differs: divides in float").
"""

from __future__ import annotations

from collections.abc import Iterator

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper

from qlin_cli.evaluator.model import evaluate
from qlin_cli.schema import dtypes
from qlin_cli.schema.ir import ir_for_opset
from qlin_cli.targets import probe_keys

MS = "com.microsoft"
SHAPE = (4, 8)
OUTPUTS = ("int8", "uint8")  # readable by both runtimes' Python APIs (int4 is not)
NUMPY = {"float": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
# (x, scale, precision) at versions 19+ (x and the scale share T1), then from 23 (types apart)
SAME = (("float16", "float16", None), ("bfloat16", "bfloat16", None))
APART = (("float", "float16", None), ("float", "bfloat16", None), ("float", "float", "float16"),
         ("float", "float", "bfloat16"), ("float16", "float16", "float"), ("bfloat16", "bfloat16", "float"))


def divisions(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    """(key, model, feeds with the ``expect:`` results) of every division probe; ``key_of``
    gives a model's key (probe_models' node key of its one node)."""
    from qlin_cli.convert import opsteps

    for version in (v for v in opsteps.history("QuantizeLinear") if v >= 19):
        for x, scale, precision in SAME + (APART if version >= 23 else ()):
            for gran in ("tensor", "axis", "block") if version >= 21 else ("tensor", "axis"):
                for out in OUTPUTS:
                    yield _probe("", version, x, scale, precision, gran, out, key_of)
    for gran in ("tensor", "axis"):
        for out in OUTPUTS:
            yield _probe(MS, 21, "float16", "float16", None, gran, out, key_of)


def _probe(domain, opset, x_type, scale_type, precision, gran, out, key_of):
    narrow = next(t for t in (precision, scale_type, x_type) if t in probe_keys.DIVIDED)
    x_value, s_value = values({x_type, scale_type, narrow}, narrow, out)
    scale_shape = {"tensor": (), "axis": (SHAPE[1],), "block": (SHAPE[0], SHAPE[1] // 2)}[gran]
    attrs = {"axis": 1} if gran != "tensor" else {}
    if gran == "block":
        attrs["block_size"] = 2
    if precision is not None:
        attrs["precision"] = dtypes.BY_NAME[precision].proto
    inits = [numpy_helper.from_array(np.full(scale_shape, s_value, NUMPY[scale_type]), "s"),
             numpy_helper.from_array(np.zeros(scale_shape, dtypes.BY_NAME[out].numpy), "zp")]
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "division", [helper.make_tensor_value_info(
        "x", dtypes.BY_NAME[x_type].proto, SHAPE)], [onnx.ValueInfoProto(name="y")], initializer=inits)
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_for_opset(opset)
    x = np.full(SHAPE, x_value, NUMPY[x_type])
    feeds = {"x": x.view(np.uint16) if x_type == "bfloat16" else x}
    spec = np.asarray(evaluate(model, {"x": x})[0]).astype(np.int64)
    feeds["expect:spec"] = spec
    for t in ("float", narrow):
        feeds[f"expect:{t}"] = np.full(SHAPE, _quantized(x_value, s_value, t, out), np.int64)
    page = precision or scale_type  # the division's type on the page: precision's, else the scale's
    if not np.array_equal(spec, feeds[f"expect:{page}"]):
        raise AssertionError(f"qlin's evaluator and the division in {precision or scale_type} differ: {node}")
    return key_of(model), model, feeds


def _quantized(x: float, s: float, in_type: str, out: str) -> int:
    """x / s divided in ``in_type`` (numpy divides float16 and bfloat16 in float32 and rounds
    once more, which for a quotient equals the correctly rounded one: 24 bits are more than
    twice 11 + 2), rounded half to even and saturated to ``out``."""
    t = NUMPY[in_type]
    q = float(t(np.float32(t(x)) / np.float32(t(s))))
    d = dtypes.BY_NAME[out]
    return int(min(max(np.rint(q), d.lo), d.hi))


def values(types: set[str], narrow: str, out: str) -> tuple[float, float]:
    """x and scale, exact in each of ``types``, whose quotient rounds to different integers
    of ``out`` in ``narrow`` and in float32 (found by search, smallest x first)."""
    def exact(v):
        return all(float(NUMPY[t](v)) == v for t in types)

    for a in range(1, 4096):
        x = a / 16
        if not exact(x):
            continue
        for b in range(1, 512):
            s = b / 512
            if exact(s) and x / s < 100 and _quantized(x, s, narrow, out) != _quantized(x, s, "float", out):
                return x, s
    raise LookupError(f"no values tell {narrow} from float32 division for {out}")
