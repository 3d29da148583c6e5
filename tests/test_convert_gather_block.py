"""`qlin convert --to-format qdq / qoperator` of com.microsoft GatherBlockQuantized: the table
dequantized by a blocked DequantizeLinear (opset 21) and a Gather, and back
(qlin_cli/convert/formats/gather_block.py). Each rewrite is proven (the page's dequantized
table against onnx.reference's DequantizeLinear, bit for bit); the results are held to
onnx.checker's full check, `qlin check` and onnxruntime, which gives the source's outputs
bit for bit on random indices (negative ones included) both ways.

The models are built once per module: onnxruntime's n-bits quantizer's embedding table
(fixtures/corpus.py) and one generated model of many GatherBlockQuantized nodes (int4 /
uint4 / uint8 holding 4-bit or 8-bit codes, blocks of 16 to 128, with and without zero
points, along each axis), each node with its own indices and output.
"""

from __future__ import annotations

import os

import corpus
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from qlin_cli.check.engine import check_file
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.write import write_model

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
FIXTURE = "transformer_nbits4_gather_b32_op21"


def _codes(rng, elem: int, shape, bits: int = 4) -> np.ndarray:
    lo, hi = {T.INT4: (-8, 8), T.UINT4: (0, 16), T.UINT8: (0, 1 << bits), T.INT8: (-128, 128)}[elem]
    return rng.integers(lo, hi, shape)


def _tensor(name: str, elem: int, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values).astype(helper.tensor_dtype_to_np_dtype(elem)), name)


def _packed(codes: np.ndarray, bits: int) -> np.ndarray:
    """Codes packed low bits first along the last axis (the page's uint8 layout)."""
    per = 8 // bits
    rows = codes.reshape(-1, codes.shape[-1]).astype(np.uint8)
    padded = np.zeros((rows.shape[0], -(-rows.shape[1] // per) * per), np.uint8)
    padded[:, : rows.shape[1]] = rows
    grouped = padded.reshape(rows.shape[0], -1, per) << (np.arange(per, dtype=np.uint8) * bits)
    return grouped.sum(axis=2, dtype=np.uint32).astype(np.uint8).reshape(*codes.shape[:-1], -1)


# name: (data type, logical shape, attributes (None: left to the default), zero points, scale type)
GENERATED = {
    "u4_b16_zp": (T.UINT4, (32, 64), {"block_size": 16}, True, np.float32),
    "u4_b32": (T.UINT4, (32, 64), {"block_size": 32}, False, np.float32),
    "i4_b64": (T.INT4, (32, 128), {"block_size": 64}, False, np.float32),
    "i4_b128_zp": (T.INT4, (32, 128), {"block_size": 128}, True, np.float32),
    "i4_b64_ragged_zp": (T.INT4, (32, 96), {"block_size": 64}, True, np.float32),
    "u4_q0_g1_zp": (T.UINT4, (48, 40), {"block_size": 16, "quantize_axis": 0, "gather_axis": 1}, True,
                    np.float32),
    "u4_q0_g0_zp": (T.UINT4, (64, 32), {"block_size": 32, "quantize_axis": 0}, True, np.float32),
    "i4_rank3_q2_g1_zp": (T.INT4, (4, 32, 48), {"block_size": 16, "quantize_axis": 2, "gather_axis": 1},
                          True, np.float32),
    "u4_negative_axes_zp": (T.UINT4, (32, 64), {"block_size": 32, "quantize_axis": -1, "gather_axis": -2},
                            True, np.float32),
    "u4_f16_zp": (T.UINT4, (32, 64), {"block_size": 32}, True, np.float16),
    "u8_bits4_b16_zp": (T.UINT8, (32, 64), {"block_size": 16, "bits": 4}, True, np.float32),
    "u8_bits4_b32": (T.UINT8, (32, 96), {"block_size": 32, "bits": 4}, False, np.float32),
    "u8_defaults": (T.UINT8, (32, 128), {}, False, np.float32),  # bits 4, blocks of 128, axis 1
    "u8_bits8_b16_zp": (T.UINT8, (32, 64), {"block_size": 16, "bits": 8}, True, np.float32),
    "u8_bits8_b64": (T.UINT8, (32, 64), {"block_size": 64, "bits": 8}, False, np.float32),
}


def _gbq_model(configs: dict, opset: int = 21, seed: int = 5) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    nodes, inits, inputs, outputs = [], [], [], []
    for name, (elem, shape, attrs, zp, scale_type) in configs.items():
        bits = attrs.get("bits", 4)
        qa = attrs.get("quantize_axis", 1) % len(shape)
        ga = attrs.get("gather_axis", 0) % len(shape)
        bs = attrs.get("block_size", 128)
        blocks = list(shape)
        blocks[qa] = -(-shape[qa] // bs)
        codes, zero = _codes(rng, elem, shape, bits), _codes(rng, elem, blocks, bits)
        if elem == T.UINT8 and bits < 8:
            codes, zero = _packed(codes, bits), _packed(zero, bits)
        scales = (rng.random(blocks) * 0.1 + 0.01).astype(scale_type)
        inits += [_tensor(f"{name}_data", elem, codes), numpy_helper.from_array(scales, f"{name}_scales")]
        ins = [f"{name}_data", f"{name}_ids", f"{name}_scales"]
        if zp:
            inits.append(_tensor(f"{name}_zp", elem, zero))
            ins.append(f"{name}_zp")
        nodes.append(helper.make_node("GatherBlockQuantized", ins, [f"{name}_out"], name=name, domain=MS,
                                      **attrs))
        inputs.append(helper.make_tensor_value_info(f"{name}_ids", T.INT64, [2, 5]))
        out_shape = [*shape[:ga], 2, 5, *shape[ga + 1:]]
        outputs.append(helper.make_tensor_value_info(f"{name}_out", helper.np_dtype_to_tensor_dtype(
            np.dtype(scale_type)), out_shape))
    graph = helper.make_graph(nodes, "tables", inputs, outputs, inits)
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _feeds(path: str, seed: int = 11) -> dict:
    """Random indices for every input, negative ones included, within the gathered axis."""
    model = onnx.load(path)
    rng = np.random.default_rng(seed)
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    feeds, given = {}, {i.name for i in model.graph.input}
    for n in model.graph.node:
        if n.op_type in ("GatherBlockQuantized", "Gather") and n.input[1] in given:
            axis = next((a.i for a in n.attribute if a.name in ("gather_axis", "axis")), 0)
            table = inits.get(n.input[0])
            if table is None:  # the Gather of a DequantizeLinear: the DequantizeLinear's table
                dq = next(d for d in model.graph.node if n.input[0] in d.output)
                table = inits[dq.input[0]]
            size = table[axis]
            feeds[n.input[1]] = rng.integers(-size, size, (2, 5)) if n.input[1] != "ids" else \
                rng.integers(-size, size, (1, 8))
    return feeds


def _run(path: str, feeds: dict) -> list:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def _written(model: onnx.ModelProto, base: str, out) -> str:
    """``model`` written to ``out``: it passes onnx.checker's full check, and qlin check finds
    no error in it."""
    out = str(out)
    write_model(model, base, out)
    onnx.checker.check_model(out, full_check=True)
    assert [(d.code, d.message) for d in check_file(out).diagnostics if d.severity == "error"] == []
    return out


def _same(a: list, b: list) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
               for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """Each source (the fixture's, the generated one), its QDQ form and that form back to
    GatherBlockQuantized, with the conversion results: {name: (paths, results)}."""
    folder = tmp_path_factory.mktemp("gather_block")
    sources = {FIXTURE: corpus.build(folder / "src", [FIXTURE])[FIXTURE]}
    sources["generated"] = str(folder / "generated.onnx")
    onnx.save(_gbq_model(GENERATED), sources["generated"])
    out = {}
    for name, path in sources.items():
        there = convert_model(onnx.load(path), os.path.dirname(path), Options(21, to_format="qdq"))
        assert there.model is not None, [x.detail for x in there.refused]
        mid = _written(there.model, os.path.dirname(path), folder / f"{name}_qdq.onnx")
        back = convert_model(onnx.load(mid), str(folder), Options(21, to_format="qoperator"))
        assert back.model is not None, [x.detail for x in back.refused]
        end = _written(back.model, str(folder), folder / f"{name}_back.onnx")
        out[name] = ((path, mid, end), (there, back))
    return out


def _gathers(r) -> list:
    return [e for e in r.entries if e.action == "reformatted" and "Gather" in e.changes[0]]


@pytest.mark.parametrize("name", [FIXTURE, "generated"])
def test_gather_block_quantized_becomes_dequantize_linear_and_gather_and_back(name, converted):
    """Every GatherBlockQuantized becomes a blocked DequantizeLinear + Gather, proven, and back;
    onnxruntime gives the source's outputs bit for bit at each step."""
    (src, mid, end), (there, back) = converted[name]
    count = 1 if name == FIXTURE else len(GENERATED)
    for r in (there, back):
        done = _gathers(r)
        assert len(done) == count and all(e.verified for e in done), [e.changes for e in r.entries]
        assert not r.refused
    ops = [n.op_type for n in onnx.load(mid).graph.node]
    assert "GatherBlockQuantized" not in ops and ops.count("Gather") == count
    ops = [n.op_type for n in onnx.load(end).graph.node]
    assert ops.count("GatherBlockQuantized") == count and "DequantizeLinear" not in ops
    feeds = _feeds(src)
    want = _run(src, feeds)
    assert _same(want, _run(mid, feeds)) and _same(want, _run(end, feeds))


def test_the_forms_written(converted):
    """int4 / uint4 tables are read where they are; uint8 tables of 4-bit codes are unpacked
    into uint4 and come back as uint4 (bits 4); 8-bit uint8 stays uint8 (bits 8); the page's
    default zero point of uint8 data (2^(bits-1)) is written out for DequantizeLinear, and
    left to the default again on the way back."""
    (_, mid, end), (there, _) = converted["generated"]
    qdq, back = onnx.load(mid), onnx.load(end)
    types = {t.name: t.data_type for t in qdq.graph.initializer}
    dqs = {n.name: n for n in qdq.graph.node if n.op_type == "DequantizeLinear"}
    for name, (elem, *_rest) in GENERATED.items():
        dq = dqs[f"{name}_dq"]
        bits = GENERATED[name][2].get("bits", 4)
        want = elem if elem != T.UINT8 else (T.UINT4 if bits == 4 else T.UINT8)
        assert types[dq.input[0]] == want, name
        if elem != T.UINT8:
            assert dq.input[0] == f"{name}_data"  # read where it is
        assert (len(dq.input) > 2) == (GENERATED[name][3] or elem == T.UINT8), name
    assert any("default zero point (8) written out" in c for e in _gathers(there) for c in e.changes)
    assert any("default zero point (128) written out" in c for e in _gathers(there) for c in e.changes)
    types = {t.name: t.data_type for t in back.graph.initializer}
    for n in back.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        assert types[n.input[0]] in (T.INT4, T.UINT4, T.UINT8)
        assert attrs["bits"] == (8 if types[n.input[0]] == T.UINT8 else 4)
        if types[n.input[0]] == T.UINT8:
            assert len(n.input) == 3 or not np.all(numpy_helper.to_array(
                next(t for t in back.graph.initializer if t.name == n.input[3])) == 128)


def test_quantizer_blocked_qdq_gather_tables_become_gather_block_quantized(tmp_path):
    """int8 and uint8 blocked tables (with and without zero points) become 8-bit uint8
    GatherBlockQuantized (int8 shifted by 128): proven, and onnxruntime gives the source's
    outputs bit for bit."""
    rng = np.random.default_rng(2)
    nodes, inits, inputs, outputs = [], [], [], []
    for name, elem, zp, bs in (("s8_zp", T.INT8, True, 32), ("s8", T.INT8, False, 16),
                               ("u8", T.UINT8, False, 64), ("u8_zp", T.UINT8, True, 16)):
        inits += [_tensor(f"{name}_q", elem, _codes(rng, elem, (32, 64))),
                  numpy_helper.from_array((rng.random((32, 64 // bs)) * 0.1).astype(np.float32), f"{name}_s")]
        dq_in = [f"{name}_q", f"{name}_s"]
        if zp:
            inits.append(_tensor(f"{name}_z", elem, _codes(rng, elem, (32, 64 // bs))))
            dq_in.append(f"{name}_z")
        nodes += [helper.make_node("DequantizeLinear", dq_in, [f"{name}_w"], axis=1, block_size=bs),
                  helper.make_node("Gather", [f"{name}_w", f"{name}_ids"], [f"{name}_out"], name=name)]
        inputs.append(helper.make_tensor_value_info(f"{name}_ids", T.INT32, [2, 5]))
        outputs.append(helper.make_tensor_value_info(f"{name}_out", T.FLOAT, [2, 5, 64]))
    model = helper.make_model(helper.make_graph(nodes, "qdq", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    src = str(tmp_path / "qdq.onnx")
    onnx.save(model, src)
    r = convert_model(model, str(tmp_path), Options(21, to_format="qoperator"))
    done = _gathers(r)
    assert len(done) == 4 and all(e.verified for e in done), [e.changes for e in r.entries]
    out = _written(r.model, str(tmp_path), tmp_path / "gbq.onnx")
    assert [n.op_type for n in onnx.load(out).graph.node] == ["GatherBlockQuantized"] * 4
    feeds = {k: v.astype(np.int32) for k, v in _feeds(src).items()}
    assert _same(_run(src, feeds), _run(out, feeds))


def _one(elem, shape, attrs, zp=True, opset=21, scale_type=np.float32) -> onnx.ModelProto:
    return _gbq_model({"t": (elem, shape, attrs, zp, scale_type)}, opset=opset)


@pytest.mark.parametrize("model, reason", [
    (lambda: _one(T.UINT8, (32, 64), {"block_size": 16, "bits": 2}), "bits=2"),
    (lambda: _one(T.UINT8, (32, 64), {"block_size": 16, "bits": 4, "gather_axis": 1, "quantize_axis": 0}),
     "gather_axis=1 with uint8 data 't_data'"),
    (lambda: _one(T.UINT8, (32, 64), {"block_size": 16, "bits": 8, "quantize_axis": 0}),
     "quantize_axis=0 with uint8 data 't_data'"),
    (lambda: _one(T.INT4, (32, 64), {"block_size": 16, "bits": 8}), "bits=8 with int4 data 't_data'"),
    (lambda: _one(T.UINT4, (32, 64), {"block_size": 24}), "block_size=24"),
    (lambda: _one(T.UINT4, (32, 64), {"block_size": 16}, opset=19), "--to-opset 21"),
    (lambda: _one(T.UINT4, (32, 64), {"block_size": 16, "quantize_axis": 2}), "quantize_axis=2 is outside"),
], ids=["2-bit", "uint8-gather-axis", "uint8-quantize-axis", "int4-bits-8", "block-24", "opset-19",
        "axis-range"])
def test_what_has_no_qdq_form_is_refused_naming_the_value(model, reason):
    m = model()
    opset = {o.domain: o.version for o in m.opset_import}[""]
    r = convert_model(m, "", Options(opset, to_format="qdq"))
    assert r.model is None and [x.code for x in r.refused] == ["QC202"]
    assert reason in r.refused[0].detail and r.refused[0].where


def test_float4_and_run_time_tables_are_refused():
    """(float8 tables convert: tests/test_convert_formats_two_bits.py)"""
    m = _one(T.UINT4, (32, 64), {"block_size": 16})
    t = next(x for x in m.graph.initializer if x.name == "t_data")
    m.graph.initializer.remove(t)
    m.graph.input.append(helper.make_tensor_value_info("t_data", T.UINT4, [32, 64]))
    r = convert_model(m, "", Options(21, to_format="qdq"))
    assert [x.code for x in r.refused] == ["QC202"]
    assert "'t_data' is computed at run time" in r.refused[0].detail
    m = _one(T.UINT4, (32, 64), {"block_size": 16}, zp=False)
    data = next(x for x in m.graph.initializer if x.name == "t_data")
    data.CopyFrom(_tensor("t_data", T.FLOAT4E2M1, np.ones((32, 64), np.float32)))
    r = convert_model(m, "", Options(23, to_format="qdq"))
    assert [x.code for x in r.refused] == ["QC202"] and "float4e2m1" in r.refused[0].detail


@pytest.mark.parametrize("elem, axis, gather_axis, bs, reason", [
    (T.UINT4, 1, 0, 24, "blocks of 24"),
    (T.UINT8, 0, 0, 16, "uint8 tables gathered along axis 0 and quantized along their last axis only"),
    (T.INT8, 1, 1, 16, "quantized along axis 1 and gathered along axis 1"),
    (T.INT16, 1, 0, 16, "int16"),
    (T.FLOAT8E4M3FN, 1, 0, 24, "blocks of 24, and GatherBlockQuantized takes a power of two >= 16 or one"),
])
def test_what_has_no_gather_block_quantized_form_stays_qdq_saying_why(elem, axis, gather_axis, bs, reason):
    shape = (32, 64)
    blocks = list(shape)
    blocks[axis] = -(-shape[axis] // bs)
    codes = np.zeros(shape, np.int32) if elem != T.INT16 else np.arange(64 * 32).reshape(shape) - 1000
    inits = [_tensor("q", elem, codes), numpy_helper.from_array(np.full(blocks, 0.5, np.float32), "s")]
    nodes = [helper.make_node("DequantizeLinear", ["q", "s"], ["w"], axis=axis, block_size=bs),
             helper.make_node("Gather", ["w", "ids"], ["y"], axis=gather_axis)]
    model = helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("ids", T.INT64, [3])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)], inits),
        opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    r = convert_model(model, "", Options(21, to_format="qoperator"))
    stays = [e.changes[0] for e in r.entries if e.action == "unfused"]
    assert len(stays) == 1 and stays[0].startswith("stays QDQ: ") and reason in stays[0], stays


def test_the_proof_catches_a_wrong_table():
    """A planted error in the unpacked codes is caught by the proof."""
    from qlin_cli.convert.formats import gather_block
    from qlin_cli.convert.formats.to_qdq import Lookups

    m = _one(T.UINT8, (4, 32), {"block_size": 16, "bits": 4})
    values = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    look = Lookups(values.get, lambda name: None, lambda name: name + "_new")
    built, case = gather_block.to_qdq(m.graph.node[0], 21, look)
    assert case.prove() is None
    case.w["codes"] = case.w["codes"].copy()
    case.w["codes"][1, 5] ^= 1
    assert "where the page gives" in case.prove()


@pytest.mark.parametrize("zero, fused", [(0.0, True), (-0.0, False), (1.0, False)])
def test_a_float8_zero_point_other_than_plus_zero_stays_qdq(zero, fused):
    """GatherBlockQuantized reads float8 data without zero points: a DequantizeLinear zero point
    of +0 (x - 0 = x) is left out; -0 (which turns a -0 code into +0) or any other stays QDQ."""
    shape, bs = (32, 64), 32
    codes = np.random.default_rng(2).uniform(-2, 2, shape).astype(np.float32)
    inits = [_tensor("q", T.FLOAT8E4M3FN, codes),
             numpy_helper.from_array(np.full((32, 2), 0.5, np.float32), "s"),
             _tensor("z", T.FLOAT8E4M3FN, np.full((32, 2), zero, np.float32))]
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["w"], axis=1, block_size=bs),
             helper.make_node("Gather", ["w", "ids"], ["y"], axis=0)]
    model = helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("ids", T.INT64, [3])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)], inits),
        opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    r = convert_model(model, "", Options(21, to_format="qoperator"))
    assert r.model is not None
    ops = [n.op_type for n in r.model.graph.node]
    assert (ops == ["GatherBlockQuantized"]) == fused, [e.changes for e in r.entries]
    if fused:
        assert len(r.model.graph.node[0].input) == 3  # no zero point
    else:
        (stays,) = [e.changes[0] for e in r.entries if e.action == "unfused"]
        assert "is not +0 everywhere" in stays, stays
