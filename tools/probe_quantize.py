"""The probes of what a QuantizeLinear computes (tools/probe_models.py), each telling the
page's result from what a runtime may compute instead:

- division: a QuantizeLinear whose page divides in float16 or bfloat16, or that names a
  precision (ai.onnx from version 19, com.microsoft), over values whose quotient rounds to
  different integers in float32 and in the narrower type (2.3125 / 0.513671875 is 4.5 in
  float16, 4.502 in float32);
- rounding: an integer QuantizeLinear with an odd zero point over ties of x / scale (0.5,
  1.5 ...), x and the scale float32 and, where the version takes them, float16 and
  bfloat16: the page rounds half to even, then adds the zero point (a runtime may add it
  first, or round toward zero);
- negative scale: a QuantizeLinear with scale -0.1 over values beyond the range, which the
  page saturates;
- near ties: a QuantizeLinear to int16 and to uint16 (zero points 0 and 32768: 32768 above
  the low end each) of float32 and int32 x by a float32 scale over quotients 0.00014 to
  0.0018 from a tie, away from zero (17 / 0.33663276 = 50.500137): the page rounds them to the
  nearest integer; a runtime that adds 32768 to the quotient in float32 first keeps 8 of
  its fraction bits and rounds the tie ("near ties int16 ai.onnx:QuantizeLinear-21(float,
  float) per-tensor"; the others quantize to int8 and uint8, whose sums keep 16 or more);
- float8: a QuantizeLinear to each float8 type with saturate 0 and 1 over values near
  rounding boundaries, beyond the range and NaN of either sign ("float8 float8e4m3fn
  saturate=0 ..."; the runner compares codes, so a runtime that wrote a NaN of another
  sign or payload would show as a divergence: where a release hands float8 over, onnxruntime
  1.24-1.32 write the page's NaN, openvino 2026.1-2026.4 the negative largest value);
- missing axis: a com.microsoft QuantizeLinear / DequantizeLinear without ``axis`` and with a
  1-D scale, which its page does not define (probe_keys.missing_axis_key): whether the
  runtime reads it along axis 1;
- float16 between nodes: a DequantizeLinear of float16 output feeding a QuantizeLinear, of
  each version that takes float16 (ai.onnx from 19, com.microsoft; probe_keys.float16_casts_key):
  whether the value between them is rounded to float16, as the model types it, where the
  runtime computes in float32.

The others quantize to int8 and to uint8 (outputs both runtimes' Python APIs read), filed under
``probe_keys.quantize_key_of`` (the output type left out). Besides its feeds, a probe carries
the results it tells apart (``expect:<name>`` entries, not graph inputs;
tools/probe_runner.py compares the runtime's first output with them): ``expect:spec``, the
page's result as qlin's evaluator computes it, and the results of what a runtime may do
instead ("expect:divides in float", "expect:adds the zero point before rounding"). The
probe runs ("ok") when the runtime gives the page's result; otherwise its outcome names
what it did ("differs: divides in float") or the first value that differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from itertools import product

import numpy as np
import onnx
from onnx import helper, numpy_helper

from qlin_cli import schema
from qlin_cli.evaluator.model import evaluate
from qlin_cli.evaluator.rounding import encode
from qlin_cli.schema import dtypes
from qlin_cli.schema.ir import ir_for_opset
from qlin_cli.targets import probe_keys
from qlin_cli.targets.openvino import SIXTEEN_BIT

MS_OPSET = 21  # the ai.onnx opset the com.microsoft probes import
SHAPE = (4, 8)
OUTPUTS = ("int8", "uint8")  # readable by both runtimes' Python APIs (int4 is not)
GRANULARITIES = ((schema.PER_TENSOR, "tensor"), (schema.PER_AXIS, "axis"), (schema.BLOCKED, "block"))
# near float8 rounding boundaries (through float16 they round twice: 14.999 and 29.998 land
# on float8e5m2 midpoints there), at and beyond the largest float8e4m3fn (448; 480 is the
# first value saturate=0 makes NaN) and float8e5m2 (57344), then NaN of each sign (last: the
# first value that differs, which an outcome names, stays where it was before they came)
FLOAT8_X = (15.499925, 37.998543, -45.989754, 465.0, 480.0, 490.0, 500.0, 1.0, -2.0, 60000.0, 100000.0,
            -480.0, 0.3, -0.7, 3.14159, 240.0, 14.999, 29.998, float("nan"), -float("nan"))
# the scales of the float8 probes (1: the conversion alone): float, and float8e8m0 (MX
# blocks, from QuantizeLinear-24), which the page divides by in float32 as well
FLOAT8_SCALES = ("float", "float8e8m0")
# (x, scale, precision) of the division probes: x and the scale of one narrow type, then,
# where the schema types them apart and has ``precision``, the other ways to ask for one: a
# narrow scale beside x of another type (x converted to the scale's type, then divided in it;
# openvino 2026.4 divides float16 x by a bfloat16 scale in float32), and ``precision``
SAME = tuple((t, t, None) for t in probe_keys.DIVIDED)
APART = (("float", "float16", None), ("float", "bfloat16", None), ("float", "float", "float16"),
         ("float", "float", "bfloat16"), ("float16", "float16", "float"), ("bfloat16", "bfloat16", "float"),
         ("float16", "bfloat16", None), ("bfloat16", "float16", None), ("int32", "float16", None),
         ("int32", "bfloat16", None))
# the outputs an int32 scale's division probes quantize to: its quotient is an integer, which
# a float8 output shows (an integer output rounds a float quotient to the same integer but
# near the float32 limits); x / 2 over these x is exact in each float8 type and in float16
INTEGER_OUTPUTS = ("float8e4m3fn", "float8e5m2")
HALVES = (7, 5, 1, 3, -7, -5, -1, -3)
# the near-ties probes: each 16-bit output with a zero point 32768 above its low end (int16:
# 0, uint16: 32768), integer x (exact in int32 and float32) whose float32 quotient by
# NEAR_TIES_SCALE lies within 1/512 of a tie, away from zero (17 / 0.33663276 = 50.500137,
# 221 / 0.33663276 = 656.50177): the six in -2048..2048 that a float32 sum with 32768 sends
# the other way (below 32768 the sum keeps 9 fraction bits: -153 and -221 round as the page)
NEAR_TIES_ZERO_POINTS = {"int16": 0, "uint16": 32768}
NEAR_TIES_SCALE = 0.33663276
NEAR_TIES_X = (17, -17, 85, -85, 153, 221)
NEAR_TIES_TYPES = ("float", "int32")  # x's types probed (by a float32 scale), where the version takes them


def probes(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    """(key, model, feeds with the ``expect:`` results) of every probe; ``key_of(model, what)``
    gives the key of a model's one node. What each QuantizeLinear version (ai.onnx and
    com.microsoft) is probed with is read from its schema (schema.SPECS): its granularities,
    the types of x and the scale, ``precision``, its float8 outputs."""
    for spec in schema.SPECS:
        if spec.op_type != "QuantizeLinear" or spec.domain not in (schema.AI_ONNX, schema.MICROSOFT):
            continue
        opset = MS_OPSET if spec.domain else spec.since
        grans = [name for g, name in GRANULARITIES if g in spec.granularities]
        x_types, scale_types = spec.allowed(spec.inputs[0]), spec.allowed(spec.inputs[1])
        apart = spec.inputs[0].types != spec.inputs[1].types and "precision" in spec.attributes
        divisions = [(x, s, p) for x, s, p in SAME + (APART if apart else ())
                     if x in x_types and s in scale_types]
        integer = [(x, s) for x, s in product(sorted(x_types), probe_keys.INTEGER_DIVIDED)
                   if s in scale_types and (x == s or spec.inputs[0].types != spec.inputs[1].types)]
        for gran in grans:
            for out in OUTPUTS:
                for what in ("rounding", "negative scale"):
                    yield _probe(what, spec.domain, opset, "float", "float", None, gran, out, key_of)
                for narrow in (t for t in probe_keys.DIVIDED if t in x_types and t in scale_types):
                    yield _probe("rounding", spec.domain, opset, narrow, narrow, None, gran, out, key_of)
                for x, scale, precision in divisions:
                    yield _probe("division", spec.domain, opset, x, scale, precision, gran, out, key_of)
        for out in sorted(spec.quantized_types & dtypes.SATURATE_APPLIES):  # read as their codes
            for gran in grans:
                for saturate in (0, 1):
                    yield _probe(f"float8 {out} saturate={saturate}", spec.domain, opset, "float", "float",
                                 None, gran, out, key_of)
        # the probes added since (after the others, which keep their order)
        for gran in grans:
            for out in (t for t in INTEGER_OUTPUTS if t in spec.quantized_types):
                for x, scale in integer:
                    yield _probe("division", spec.domain, opset, x, scale, None, gran, out, key_of)
        for out in sorted(spec.quantized_types & dtypes.SATURATE_APPLIES):
            for gran in grans:
                for saturate in (0, 1):
                    for scale in (t for t in FLOAT8_SCALES[1:] if t in scale_types):
                        yield _probe(f"float8 {out} saturate={saturate}", spec.domain, opset, "float",
                                     scale, None, gran, out, key_of)
        near = [x for x in NEAR_TIES_TYPES if x in x_types and "float" in scale_types
                and (x == "float" or spec.inputs[0].types != spec.inputs[1].types)]
        for gran in grans:
            for out in (t for t in NEAR_TIES_ZERO_POINTS if t in spec.quantized_types):
                for x in near:
                    yield _probe(f"{probe_keys.NEAR_TIES} {out}", spec.domain, opset, x, "float", None, gran,
                                 out, key_of)
    for spec in schema.SPECS:
        if spec.domain == schema.MICROSOFT and schema.is_linear(spec) and "axis" in spec.attributes:
            yield _missing_axis(spec, key_of)
        if spec.op_type == "DequantizeLinear" and spec.domain in (schema.AI_ONNX, schema.MICROSOFT):
            stated = "output_dtype" in spec.attributes
            outs = spec.allowed(spec.outputs[0])
            for scale in sorted(spec.allowed(spec.inputs[1])):
                for out in (t for t in probe_keys.DIVIDED if t in outs and (stated or t == scale)):
                    for constant in (False, True):
                        yield _dequantize(spec, scale, out, constant, key_of)
    for q_type in (*OUTPUTS, *sorted(SIXTEEN_BIT)):  # the 16-bit ones: pairs a runtime may remove
        for blocked in (False, True):
            yield _pair(q_type, blocked, key_of)
    for spec in schema.SPECS:
        if (spec.op_type == "QuantizeLinear" and spec.domain in (schema.AI_ONNX, schema.MICROSOFT)
                and "float16" in spec.allowed(spec.inputs[0])):
            yield _float16_casts(spec.domain, spec.since, key_of)


def _float16_casts(domain: str, since: int, key_of):
    """x (int8, every value) -> DequantizeLinear (scale 0.0517 in float16) -> y (float16) ->
    QuantizeLinear (scale 0.125, zero point 0) -> int8, both of ``domain`` at ``since``. The
    page rounds y to float16 before the QuantizeLinear reads it; a runtime that computes both
    nodes in float32 (onnxruntime dropping the Casts around kernels without float16, openvino's
    CPU plugin everywhere) quantizes x * scale unrounded ("expect:keeps float32 between the
    nodes"; 4 of the 256 codes differ). The second scale is a power of two, so dividing in
    float16 or float32 gives the same quotient."""
    opset = MS_OPSET if domain else since
    s1, s2 = np.float16(0.0517), np.float16(0.125)
    chain = [helper.make_node("DequantizeLinear", ["x", "s1"], ["y"], domain=domain),
             helper.make_node("QuantizeLinear", ["y", "s2", "z"], ["q"], domain=domain)]
    graph = helper.make_graph(
        chain, probe_keys.FLOAT16_CASTS, [helper.make_tensor_value_info("x", onnx.TensorProto.INT8, [256])],
        [onnx.ValueInfoProto(name="q")],
        initializer=[numpy_helper.from_array(np.asarray(s1), "s1"),
                     numpy_helper.from_array(np.asarray(s2), "s2"), numpy_helper.from_array(np.int8(0), "z")])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, since)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_for_opset(opset)
    x = np.arange(-128, 128, dtype=np.int8)
    unrounded = np.clip(np.rint(x.astype(np.float32) * np.float32(s1) / np.float32(s2)), -128, 127)
    feeds = {"x": x, "expect:spec": np.asarray(evaluate(model, {"x": x})[0]),
             f"expect:{probe_keys.KEEPS_FLOAT32}": unrounded.astype(np.int8)}
    return key_of(model, probe_keys.FLOAT16_CASTS), model, feeds


def _dequantize(spec, scale_type, out, constant, key_of):
    """A DequantizeLinear of int8 -128..126 by 0.3105 in ``scale_type``, to ``out`` (stated
    in ``output_dtype`` where it is not the scale's type), x a graph input or, ``constant``,
    an initializer (weights, which a runtime may dequantize when it loads the model):
    outputs compared by their codes."""
    opset = MS_OPSET if spec.domain else spec.since
    attrs = {"output_dtype": dtypes.BY_NAME[out].proto} if out != scale_type else {}
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], domain=spec.domain, **attrs)
    x = np.arange(-128, 127, dtype=np.int8)
    scale = np.asarray(0.3105).astype(dtypes.BY_NAME[scale_type].numpy)
    inits = [numpy_helper.from_array(scale, "s")]
    inputs = [] if constant else [helper.make_tensor_value_info("x", onnx.TensorProto.INT8, [x.size])]
    if constant:
        inits.append(numpy_helper.from_array(x, "x"))
    graph = helper.make_graph([node], probe_keys.DEQUANTIZE, inputs, [onnx.ValueInfoProto(name="y")],
                              initializer=inits)
    imports = [helper.make_opsetid("", opset)]
    if spec.domain:
        imports.append(helper.make_opsetid(spec.domain, spec.since))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_for_opset(opset)
    y = np.asarray(evaluate(model, {} if constant else {"x": x})[0])
    feeds = {} if constant else {"x": x}
    out_np = dtypes.BY_NAME[out].numpy
    # what a runtime may do instead: round the scale to the output type, then multiply
    first = (x.astype(np.float32) * scale.astype(out_np).astype(np.float32)).astype(out_np).view(np.uint16)
    codes = {"expect:spec": y.view(np.uint16)}
    if not np.array_equal(first, codes["expect:spec"]):
        codes[f"expect:{probe_keys.SCALE_FIRST.format(out=out)}"] = first
    return key_of(model, probe_keys.DEQUANTIZE), model, {**feeds, **codes}


PAIR_SHAPE = (64, 64)  # a blocked pair's x: blocks of PAIR_BLOCK along axis 1
PAIR_BLOCK = 16


def _pair(q_type, blocked, key_of):
    """x -> Abs -> QuantizeLinear(``q_type``, scale 0.1, zero point 0) -> DequantizeLinear ->
    Neg (ai.onnx, opset 21), per tensor or ``blocked`` (blocks of 16 along axis 1, every
    block's scale 0.1), over the ties of x / scale across the range and the float32 values on
    either side of each: whether the pair is computed as the page says (a runtime may fuse
    it into one op that rounds otherwise; the zero point is 0 so that adding it before
    rounding, QT405, changes nothing; a runtime that removes the pair gives -|x|: "expect:
    removes the pair")."""
    shape, blocks = (PAIR_SHAPE, (PAIR_SHAPE[0], PAIR_SHAPE[1] // PAIR_BLOCK)) if blocked else ((4096,), ())
    zp = np.zeros(blocks, dtypes.BY_NAME[q_type].numpy)
    inits = [numpy_helper.from_array(np.full(blocks, 0.1, np.float32), "s"),
             numpy_helper.from_array(zp, "zp")]
    attrs = {"axis": 1, "block_size": PAIR_BLOCK} if blocked else {}
    pair = [helper.make_node("QuantizeLinear", ["a", "s", "zp"], ["q"], **attrs),
            helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], **attrs)]
    models = []
    for graph_nodes, x_name, y_name in ((pair, "a", "d"), ([helper.make_node("Abs", ["x"], ["a"]), *pair,
                                                           helper.make_node("Neg", ["d"], ["y"])], "x", "y")):
        vi = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(shape)) for n in (x_name, y_name)]
        graph = helper.make_graph(graph_nodes, probe_keys.PAIR, vi[:1], vi[1:], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        model.ir_version = ir_for_opset(21)
        models.append(model)
    ties = ((np.arange(0, 300) + 0.5) * 0.1).astype(np.float32)
    x = np.resize(np.concatenate([ties, np.nextafter(ties, np.float32(np.inf)),
                                  np.nextafter(ties, np.float32(0))]), shape)
    y = -np.asarray(evaluate(models[0], {"a": np.abs(x)})[0])  # the pair alone, by qlin's evaluator
    feeds = {"x": x, "expect:spec": y, f"expect:{probe_keys.REMOVED}": -np.abs(x)}
    return key_of(models[1], probe_keys.PAIR), models[1], feeds


def _missing_axis(spec, key_of):
    """A com.microsoft Q or DQ without ``axis`` and with 1-D scale and zero point of x's last
    dimension, which the page leaves undefined (it asks for scalars): the probe tells whether
    the runtime reads them along axis 1 ("expect:reads along axis 1", qlin's evaluator on the
    node with axis=1; there is no ``expect:spec``). Scales are powers of two: every reading
    is exact."""
    quantize = spec.kind == "quantize"
    scale = np.array([2.0 ** -k for k in range(SHAPE[1])], np.float32)
    zp = np.arange(SHAPE[1], dtype=np.int8) - 3
    x = (np.linspace(-20, 20, SHAPE[0] * SHAPE[1]).reshape(SHAPE).astype(np.float32) if quantize
         else (np.arange(SHAPE[0] * SHAPE[1]).reshape(SHAPE) * 7 % 255 - 127).astype(np.int8))
    models = {}
    for axis in (None, 1):
        node = helper.make_node(spec.op_type, ["x", "s", "zp"], ["y"], domain=spec.domain,
                                **({} if axis is None else {"axis": axis}))
        graph = helper.make_graph(
            [node], probe_keys.MISSING_AXIS,
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT if quantize else onnx.TensorProto.INT8,
                                           SHAPE)],
            [onnx.ValueInfoProto(name="y")],
            initializer=[numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "zp")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", MS_OPSET),
                                                        helper.make_opsetid(spec.domain, spec.since)])
        model.ir_version = ir_for_opset(MS_OPSET)
        models[axis] = model
    along = np.asarray(evaluate(models[1], {"x": x})[0])
    feeds = {"x": x, f"expect:{probe_keys.ALONG_AXIS_1}": along}
    return key_of(models[None], probe_keys.MISSING_AXIS), models[None], feeds


def _values(what, x_type, scale_type, precision, out):
    """(x, scale, zero point, {name: the result of what a runtime may do instead})."""
    if what == "division" and scale_type in probe_keys.INTEGER_DIVIDED:
        # ties x / 2: the page's int32 quotient rounds them to even integers before the
        # conversion to float8 (3.5 -> 4), a division in float keeps them (3.5); both exact
        # (the zero point 0 added: -0.5 rounds to -0, which the page's -0 + 0 makes +0)
        x = np.resize(np.array(HALVES, np.float32), SHAPE)
        layout = dtypes.FLOAT_LAYOUTS[out]
        return x, 2, 0, {f"divides in {t}": encode((q + 0.0).astype(np.float32), layout, saturate=True)
                         for t, q in (("float", x / 2), (scale_type, np.rint(x / 2)))}
    if what == "rounding":
        x = np.resize(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, -2.5, 4.5]), SHAPE)
        return x, 1.0, 3, {probe_keys.ADDED_FIRST: np.rint(x + 3),
                           probe_keys.TOWARD_ZERO: np.trunc(x) + 3}
    if what == "negative scale":
        return np.linspace(-60, 60, SHAPE[0] * SHAPE[1]).reshape(SHAPE), -0.1, 0, {}
    if what.startswith(probe_keys.NEAR_TIES + " "):
        x = np.resize(np.array(NEAR_TIES_X, np.float32), SHAPE)
        zp = NEAR_TIES_ZERO_POINTS[out]
        return x, NEAR_TIES_SCALE, zp, {probe_keys.OFFSET_FIRST: _offset_first(x, NEAR_TIES_SCALE, zp, out)}
    if what.startswith("float8 "):
        x = np.resize(np.array(FLOAT8_X, np.float32), SHAPE)
        return x, 1.0, 0, {probe_keys.THROUGH_FLOAT16: _through_float16(x, out)}
    narrow = next(t for t in (precision, scale_type, x_type) if t in probe_keys.DIVIDED)
    x, s = _telling_apart(frozenset({x_type, scale_type, narrow}), narrow, out)
    return np.full(SHAPE, x), s, 0, {f"divides in {t}": np.full(SHAPE, _quantized(x, s, t, out))
                                     for t in ("float", narrow)}


def _probe(what, domain, opset, x_type, scale_type, precision, gran, out, key_of):
    x_values, s_value, zp, others = _values(what, x_type, scale_type, precision, out)
    scale_shape = {"tensor": (), "axis": (SHAPE[1],), "block": (SHAPE[0], SHAPE[1] // 2)}[gran]
    attrs = {"axis": 1} if gran != "tensor" else {}
    if gran == "block":
        attrs["block_size"] = 2
    if precision is not None:
        attrs["precision"] = dtypes.BY_NAME[precision].proto
    inits = [numpy_helper.from_array(np.full(scale_shape, s_value, dtypes.BY_NAME[scale_type].numpy), "s"),
             numpy_helper.from_array(np.full(scale_shape, zp, dtypes.BY_NAME[out].numpy), "zp")]
    if what.startswith("float8 "):
        attrs["saturate"] = int(what.rpartition("=")[2])
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], what, [helper.make_tensor_value_info(
        "x", dtypes.BY_NAME[x_type].proto, SHAPE)], [onnx.ValueInfoProto(name="y")], initializer=inits)
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_for_opset(opset)
    x = np.asarray(x_values).astype(dtypes.BY_NAME[x_type].numpy)
    feeds = {"x": x.view(np.uint16) if x_type == "bfloat16" else x}
    y = np.asarray(evaluate(model, {"x": x})[0])
    codes = out in dtypes.SATURATE_APPLIES  # float8 outputs are compared by their codes
    feeds["expect:spec"] = (y.view(np.uint8) if codes else y).astype(np.int64)
    d = dtypes.BY_NAME[out]
    for name, value in others.items():  # float8: codes already
        feeds[f"expect:{name}"] = (value if codes else np.clip(value, d.lo, d.hi)).astype(np.int64)
    page = f"expect:divides in {precision or scale_type}"  # the page's: precision's type, else the scale's
    if what == "division" and not np.array_equal(feeds["expect:spec"], feeds[page]):
        raise AssertionError(f"qlin's evaluator and the division in {precision or scale_type} differ: {node}")
    return key_of(model, what), model, feeds


def _offset_first(x: np.ndarray, scale: float, zp: int, out: str) -> np.ndarray:
    """What openvino's FakeQuantize computes for a QuantizeLinear to ``out`` (measured on
    2026.4.1 with float32 x: every value of about a million, int16 and uint16, zero points 0,
    1, 101 and -20000, 0, 30000, 32768 and 65000, three scales, quotients near and away from
    ties; uint8 too; unsaturated): x * (hi - lo) / (input range) + (zero point - lo) in
    float32, rounded half to even, + lo, the input range (hi - zp) * scale - (lo - zp) * scale.
    With zero point - lo = 32768 the sum keeps 8 fraction bits: 17 / 0.33663276 = 50.500137
    becomes 32818.5, which rounds to even (50 where the page gives 51)."""
    f32, d = np.float32, dtypes.BY_NAME[out]
    s = f32(scale)
    low, high = f32(d.lo - zp) * s, f32(d.hi - zp) * s
    times = f32(f32(d.hi - d.lo) / f32(high - low))
    shift = f32(-low * times)
    return np.rint((np.asarray(x, f32) * times).astype(f32) + shift) + d.lo


def _through_float16(x: np.ndarray, out: str) -> np.ndarray:
    """The codes of float8 ``out`` that x (already divided by a scale of 1) becomes when it is
    rounded to float16 first, then to ``out`` saturating to its largest value whatever
    saturate says, a NaN of either sign written as the negative largest value (what
    openvino's FakeConvert does, tests/test_targets_divergence.py)."""
    layout = dtypes.FLOAT_LAYOUTS[out]
    with np.errstate(over="ignore"):  # beyond float16's range: infinity, then saturated
        half = x.astype(np.float16).astype(np.float32)
    y = encode(half, layout, saturate=True)  # the page's conversion with saturate=1
    y[np.isnan(x)] = encode(np.array([-np.inf], np.float32), layout, saturate=True)[0]  # the negative largest
    return y


def _quantized(x: float, s, in_type: str, out: str) -> np.ndarray:
    """x / s divided in ``in_type`` (numpy divides float16 and bfloat16 in float32 and rounds
    once more, which for a quotient equals the correctly rounded one: 24 bits are more than
    twice 11 + 2), rounded half to even and saturated to ``out``: an int64 per scale of ``s``
    (a scale or an array of them)."""
    t = dtypes.BY_NAME[in_type].numpy
    with np.errstate(over="ignore"):
        q = (np.float32(t.type(x)) / np.asarray(s).astype(t).astype(np.float32)).astype(t)
    d = dtypes.BY_NAME[out]
    return np.clip(np.rint(q.astype(np.float64)), d.lo, d.hi).astype(np.int64)


@cache  # a search of up to two million quotients, asked for the same types by many probes
def _telling_apart(types: frozenset[str], narrow: str, out: str) -> tuple[float, float]:
    """x and scale, exact in each of ``types`` (int32 asks that of x alone: it is x's type
    only), whose quotient rounds to different integers of ``out`` in ``narrow`` and in
    float32 (found by search, smallest x first)."""
    def exact(v, among=types):
        return all(float(dtypes.BY_NAME[t].numpy.type(v)) == v for t in among)

    # every scale b / 512 at once, the first b in order for the smallest x that has one
    scales = np.arange(1, 512) / 512
    fit = np.ones(scales.size, bool)
    for t in types - {"int32"}:
        fit &= scales.astype(dtypes.BY_NAME[t].numpy).astype(np.float64) == scales
    for a in range(1, 4096):
        x = a / 16
        if not exact(x):
            continue
        apart = _quantized(x, scales, narrow, out) != _quantized(x, scales, "float", out)
        found = fit & (x / scales < 100) & apart
        if found.any():
            return x, float(scales[int(np.argmax(found))])
    raise LookupError(f"no values tell {narrow} from float32 division for {out}")
