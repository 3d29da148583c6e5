"""The probe models tools/gen_target_data.py runs in a runtime version: one quantized node
each, filed under the node's key (qlin_cli/targets/probe_keys.py).

- QuantizeLinear / DequantizeLinear: the single-node cases of the target matrix, and its
  16-bit Q -> DQ pairs from graph input to graph output
  (tests/test_targets_matrix.py) without value-dependent details (negative scales, extra
  attributes, explicit IR versions, scales fed at run time), every opset, domain, type and
  granularity it has;
- every other quantized op family qlin checks: QLinearConv, QLinearMatMul, MatMulInteger,
  ConvInteger, DynamicQuantizeLinear and com.microsoft QLinearConv, QLinearAdd, QLinearMul,
  QLinearConcat, QLinearSoftmax, QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool,
  QLinearGlobalAveragePool, QGemm, MatMulNBits, GatherBlockQuantized, DynamicQuantizeLSTM,
  per-tensor and per-channel, in the types the ops allow;
- chains Q -> DQ -> op -> (Q or the output) that runtimes rewrite when they load a model
  (tools/probe_chains.py);
- x -> QuantizeLinear -> com.microsoft QLinearAdd / QLinearMul with a constant B, a scalar or
  of A's shape (probe_keys.operand_key);
- float ops a release mishandles in quantized models (probe_keys.FLOAT_OPS: the Reduce ops
  reading their axes from an input);
- 16-bit Q -> DQ pairs ending at a graph output after each op of probe_keys.PAIR_AFTER_OPS
  (probe_keys.pair_after_key; QT308);
- loading: a Relu model at each ai.onnx opset, and at each IR version;
- arithmetic: a QuantizeLinear over values that tell the page's result from what a runtime
  may compute instead: the division's type, where the zero point is added, the saturation
  with a negative scale, the conversion to float8 (tools/probe_quantize.py; its feeds carry
  the results it tells apart).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "fixtures"), str(ROOT / "tools")]

import probe_chains  # noqa: E402
import probe_quantize  # noqa: E402

from qlin_cli.model.analysis import analyze  # noqa: E402
from qlin_cli.schema import dtypes  # noqa: E402
from qlin_cli.schema.ir import ir_for_opset  # noqa: E402
from qlin_cli.targets import probe_keys  # noqa: E402
from qlin_cli.targets.openvino import SIXTEEN_BIT  # noqa: E402  (the pairs openvino strips)

MS = "com.microsoft"
_RNG = np.random.default_rng(7)


def probes() -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    """(key, model, feeds) of every probe: the same each time it is asked for (the random
    feeds start from one seed)."""
    global _RNG
    _RNG = np.random.default_rng(7)
    yield from _linear()
    for model in _families():
        yield _keyed(model), model, _feeds(model)
    yield from probe_chains.chains(_key_at)
    for op in probe_keys.BINARY_OPS:
        for t in ("uint8", "int8"):
            for scalar in (True, False):
                model = _binary_after_q(op, t, scalar)
                yield _operand_key(model), model, _feeds(model)
    for op in probe_keys.FLOAT_OPS:
        model = _reduce(op)
        yield probe_keys.float_key(model.graph.node[0], probe_keys.axes_input_since(op)), model, _feeds(model)
    yield from pair_after_probes()
    for opset in probe_keys.PROBED_OPSETS:
        yield probe_keys.opset_key(opset), _relu(opset, ir_for_opset(opset)), {"x": np.ones(4, np.float32)}
    for ir_version in probe_keys.PROBED_IR:
        yield probe_keys.ir_key(ir_version), _relu(13, ir_version), {"x": np.ones(4, np.float32)}
    yield from probe_quantize.probes(_quantize_key)


def pair_after_probes() -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    """The 16-bit Q -> DQ pairs after each op of probe_keys.PAIR_AFTER_OPS (part of probes())."""
    for q_type in sorted(SIXTEEN_BIT):
        for op in probe_keys.PAIR_AFTER_OPS:
            model = _pair_after(op, q_type)
            yield probe_keys.pair_after_key(q_type, op), model, _feeds(model)


def _linear():
    import test_targets_matrix as tm

    seen: set[str] = set()
    for case in tm.matrix():
        # attributes the key names (probe_keys.DECIDING) are probed; others are value details
        named = {a for attrs in probe_keys.DECIDING.values() for a in attrs}
        deciding = all(name in named for name, _ in case.attrs)  # output_dtype too (out_dtype)
        plain = not (case.negative or not deciding or case.ir is not None or case.scale_input)
        pair = case.kind == "qdq" and case.q_type in SIXTEEN_BIT and case.gran == "tensor"
        if (case.kind == "qdq" and not pair) or not plain:
            continue
        model, feeds = tm.build(case)
        key = probe_keys.pair_key(case.q_type) if pair else _keyed(model)
        if key is not None:
            seen.add(key)
            yield key, model, {k: stored(v, tm.input_types(case)[k]) for k, v in feeds.items()}
    yield from _type_space(seen)


def _type_space(seen: set[str]):
    """A probe for each key of the spec's type space (tests/type_space.py) the matrix has
    none of: the first spec-valid case of the key (qlin's spec rules find no error in it)."""
    import test_targets_matrix as tm
    import type_space

    from qlin_cli.check.engine import check_analysis

    for case in type_space.space():
        model, feeds = tm.build(case)
        a = analyze(model, "")
        (body, index, _), = a.nodes()
        key = probe_keys.node_key(a.any_facts(body, index))
        if key is None or key in seen:
            continue
        if any(d.severity == "error" for d in check_analysis(a, ignore=tm.VALIDITY, frames=False)):
            continue
        seen.add(key)
        yield key, model, {k: stored(v, tm.input_types(case)[k]) for k, v in feeds.items()}


def _keyed(model: onnx.ModelProto) -> str | None:
    a = analyze(model, "")
    (body, index, _), = a.nodes()
    return probe_keys.node_key(a.any_facts(body, index))


def _quantize_key(model: onnx.ModelProto, what: str) -> str | None:
    """The key of the probe of ``what`` as the targets find it: the one site that has one
    (NodeSite.arithmetic_key)."""
    from qlin_cli.targets import predict

    keys = {k for k in (site.arithmetic_key(what) for site in predict.sites(model, "")) if k is not None}
    if len(keys) > 1:
        raise AssertionError(f"a probe of {what} has nodes of several keys: {sorted(keys)}")
    return keys.pop() if keys else None


def _operand_key(model: onnx.ModelProto) -> str | None:
    """The key of a binary op after a QuantizeLinear (node 1)."""
    from qlin_cli.targets import predict

    site = list(predict.sites(model, ""))[1]
    return probe_keys.operand_key(site)


def _key_at(model: onnx.ModelProto, at: int) -> str | None:
    """The key of node ``at`` (a chain probe's DequantizeLinear)."""
    a = analyze(model, "")
    body, index, _ = list(a.nodes())[at]
    return probe_keys.node_key(a.any_facts(body, index))


def stored(array: np.ndarray, type_name: str) -> np.ndarray:
    """Feeds as the runner reads them: numpy types as they are, the others as their bits."""
    d = dtypes.BY_NAME[type_name]
    value = np.asarray(array).astype(d.numpy)
    if value.dtype.kind == "V" or value.dtype.name not in np.sctypeDict:
        return value.view(f"uint{value.dtype.itemsize * 8}")
    return value


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    out = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        name = dtypes.name_of(t.elem_type)
        value = _RNG.integers(0, 100, size=shape) if name in ("uint8", "int8") else _RNG.random(shape)
        out[vi.name] = stored(value, name)
    return out


def digests(made=None) -> dict[str, str]:
    """{key: a digest of its probes} (``made``: probes() already made): what a range of the
    target data records as measured (qlin_cli/targets/probe_store.py), so that a test can
    tell data measured on other probes than today's without running any runtime. Each
    probe counts with its key, its model's bytes and its feeds."""
    import hashlib

    by_key: dict[str, hashlib.blake2b] = {}
    for key, model, feeds in probes() if made is None else made:
        h = by_key.setdefault(key, hashlib.blake2b(digest_size=5))
        h.update(model.SerializeToString(deterministic=True))
        for name in sorted(feeds):
            value = np.ascontiguousarray(feeds[name])
            h.update(f"{name}:{value.dtype.str}:{value.shape}".encode())
            h.update(value.tobytes())
    return {key: h.hexdigest() for key, h in by_key.items()}


RECORD = ROOT / "tests" / "data" / "probe_set.json"  # record(): what make test holds the data to


def sources_digest(files: list[str]) -> str:
    """A digest of ``files`` (paths from the project's root: the sources the probes were
    made from, ``record``'s) and of the versions of onnx, numpy and ml_dtypes: unchanged, the
    probes are the ones ``record`` made."""
    import hashlib
    from importlib import metadata

    h = hashlib.blake2b(digest_size=10)
    for dist in ("onnx", "numpy", "ml_dtypes"):
        h.update(f"{dist} {metadata.version(dist)}\n".encode())
    for name in files:
        path = ROOT / name
        body = path.read_bytes() if path.is_file() else b"(none)"
        h.update(f"{name} {len(body)}\n".encode())
        h.update(body)
    return h.hexdigest()


def _sources() -> list[str]:
    """The project's files imported so far (after making the probes: what they are made from)."""
    found = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).resolve().is_relative_to(ROOT) and ".venv" not in Path(path).parts:
            found.add(Path(path).resolve().relative_to(ROOT).as_posix())
    return sorted(found)


def set_digest(keyed: dict[str, str]) -> str:
    """One digest of {key: probe digest} (``digests``' result, or what a release's data
    records)."""
    import hashlib

    h = hashlib.blake2b(digest_size=10)
    for key in sorted(keyed):
        h.update(f"{key}\t{keyed[key]}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def record() -> dict:
    """What tests/data/probe_set.json holds: the project's files the probes were made from
    (every one imported in making them) with their digest, the number of keys and one digest
    of every key's probe digest. ``make test`` holds each release's data to it without
    making the 10,000 probes again (about 10 s) while those files are unchanged; after an
    edit of one it makes the probes (and says to run ``python tools/probe_models.py
    --record``)."""
    keyed = digests()
    files = _sources()
    return {"files": files, "sources": sources_digest(files), "keys": len(keyed), "probes": set_digest(keyed)}


def write_record() -> dict:
    import json

    found = record()
    RECORD.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return found


# ---- the other families -------------------------------------------------------------------
def _t(name, value, type_name):
    return numpy_helper.from_array(np.asarray(value).astype(dtypes.BY_NAME[type_name].numpy), name)


def _one(op, domain, opset, inputs, inits, output, attrs=None):
    node = helper.make_node(op, inputs, [output[0]], domain=domain, **(attrs or {}))
    graph_inputs = [helper.make_tensor_value_info(n, dtypes.BY_NAME[t].proto, s)
                    for n, t, s in inits["inputs"]]
    outputs = [helper.make_tensor_value_info(output[0], dtypes.BY_NAME[output[1]].proto, None)]
    graph = helper.make_graph([node], "probe", graph_inputs, outputs, initializer=inits["constants"])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_for_opset(opset)
    return model


def _qlinear_conv(domain, xt, wt, channels):
    m = 4
    ws = np.full(m if channels else (), 0.01, np.float32)
    consts = [_t("xs", 0.02, "float"), _t("xz", 3, xt), _t("w", np.ones((m, 2, 3, 3)), wt),
              _t("ws", ws, "float"), _t("wz", np.zeros(ws.shape), wt), _t("ys", 0.05, "float"),
              _t("yz", 1, xt), _t("b", np.zeros(m), "int32")]
    return _one("QLinearConv", domain, 13, ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                {"inputs": [("x", xt, (1, 2, 5, 5))], "constants": consts}, ("y", xt), {"pads": [1, 1, 1, 1]})


def _qlinear_matmul(opset, at, bt, channels):
    bs = np.full(3 if channels else (), 0.01, np.float32)
    consts = [_t("as", 0.02, "float"), _t("az", 1, at), _t("b", np.ones((4, 3)), bt), _t("bs", bs, "float"),
              _t("bz", np.zeros(bs.shape), bt), _t("ys", 0.05, "float"), _t("yz", 1, at)]
    return _one("QLinearMatMul", "", opset, ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                {"inputs": [("a", at, (2, 4))], "constants": consts}, ("y", at))


def _integer(op, at, bt, channels):
    shape_b, shape_a = ((4, 3), (2, 4)) if op == "MatMulInteger" else ((3, 2, 3, 3), (1, 2, 5, 5))
    zb = np.zeros(3 if channels else (), np.int64)
    consts = [_t("az", 1, at), _t("b", np.ones(shape_b), bt), _t("bz", zb, bt)]
    return _one(op, "", 13, ["a", "b", "az", "bz"], {"inputs": [("a", at, shape_a)], "constants": consts},
                ("y", "int32"))


def _binary(op, t):
    consts = [_t("as", 0.02, "float"), _t("az", 1, t), _t("b", np.ones((2, 4)), t),
              _t("bs", 0.03, "float"), _t("bz", 2, t), _t("cs", 0.05, "float"), _t("cz", 1, t)]
    return _one(op, MS, 13, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"],
                {"inputs": [("a", t, (2, 4))], "constants": consts}, ("y", t))


def _binary_after_q(op, t, scalar):
    """x [2, 4] -> QuantizeLinear -> ``op`` with a constant B, a scalar or of A's shape."""
    consts = [_t("qs", 0.02, "float"), _t("az", 1, t), _t("b", np.ones(() if scalar else (2, 4)), t),
              _t("bs", 0.03, "float"), _t("bz", 2, t), _t("cs", 0.05, "float"), _t("cz", 1, t)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "qs", "az"], ["a"]),
             helper.make_node(op, ["a", "qs", "az", "b", "bs", "bz", "cs", "cz"], ["y"], domain=MS)]
    graph = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", 1, (2, 4))],
                              [helper.make_tensor_value_info("y", dtypes.BY_NAME[t].proto, (2, 4))], consts)
    return helper.make_model(graph, ir_version=7,
                             opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])


# com.microsoft ops of one quantized input, as onnxruntime's QOperator quantizer writes them
UNARY = {"QLinearSoftmax": {"axis": -1, "opset": 13}, "QLinearSigmoid": {},
         "QLinearLeakyRelu": {"alpha": 0.1}, "QLinearGlobalAveragePool": {"channels_last": 0},
         "QLinearAveragePool": {"kernel_shape": [2, 2]}}


def _unary(op, t):
    consts = [_t("xs", 0.02, "float"), _t("xz", 1, t), _t("ys", 0.05, "float"), _t("yz", 2, t)]
    shape = (1, 2, 4, 4)
    return _one(op, MS, 13, ["x", "xs", "xz", "ys", "yz"], {"inputs": [("x", t, shape)], "constants": consts},
                ("y", t), UNARY[op])


def _concat(t):
    consts = [_t("ys", 0.05, "float"), _t("yz", 2, t), _t("as", 0.02, "float"), _t("az", 1, t),
              _t("b", np.ones((2, 4)), t), _t("bs", 0.03, "float"), _t("bz", 2, t)]
    return _one("QLinearConcat", MS, 13, ["ys", "yz", "a", "as", "az", "b", "bs", "bz"],
                {"inputs": [("a", t, (2, 4))], "constants": consts}, ("y", t), {"axis": 1})


def _qgemm(at, bt, channels, quantized_out):
    bs = np.full(3 if channels else (), 0.01, np.float32)
    consts = [_t("as", 0.02, "float"), _t("az", 1, at), _t("b", np.ones((4, 3)), bt),
              _t("bs", bs, "float"), _t("bz", np.zeros(bs.shape), bt), _t("c", np.zeros(3), "int32")]
    inputs = ["a", "as", "az", "b", "bs", "bz", "c"]
    if quantized_out:
        consts += [_t("ys", 0.05, "float"), _t("yz", 1, at)]
        inputs += ["ys", "yz"]
    return _one("QGemm", MS, 13, inputs, {"inputs": [("a", at, (2, 4))], "constants": consts},
                ("y", at if quantized_out else "float"))


def _nbits(ft, bits, zero_points, block, ranked, one_block):
    """MatMulNBits with K = 128 (256 for blocks of 128: two blocks at least), or K = the
    block size (``one_block``), and N = 16, K differing from N as in real models; scales and
    zero points [N * blocks] as onnxruntime's operator document writes them or, ``ranked``,
    [N, blocks] as its quantizer does."""
    k, n = block if one_block else max(128, 2 * block), 16
    blocks = k // block
    packed = -(-blocks * bits // 8)
    consts = [_t("B", np.full((n, blocks, block * bits // 8), 0x11), "uint8"),
              _t("scales", np.full((n, blocks) if ranked else (n * blocks,), 0.01), ft)]
    inputs = ["A", "B", "scales"]
    if zero_points:
        consts.append(_t("zp", np.full((n, packed) if ranked else (n * packed,), 0x88), "uint8"))
        inputs.append("zp")
    return _one("MatMulNBits", MS, 21, inputs, {"inputs": [("A", ft, (1, k))], "constants": consts},
                ("Y", ft), {"K": k, "N": n, "bits": bits, "block_size": block})


def _gather_block(dt, zero_points):
    consts = [_t("data", np.full((4, 16), 0x21 if dt == "uint8" else 1), dt),
              _t("scales", np.full((4, 1), 0.1), "float")]
    inputs = ["data", "idx", "scales"]
    if zero_points:
        consts.append(_t("zp", np.full((4, 1), 0x88 if dt == "uint8" else 0), dt))
        inputs.append("zp")
    cols = 32 if dt == "uint8" else 16
    attrs = {"block_size": cols, "gather_axis": 0, "quantize_axis": 1}
    return _one("GatherBlockQuantized", MS, 21, inputs,
                {"inputs": [("idx", "int64", (2,))], "constants": consts}, ("y", "float"), attrs)


def _families():
    i8 = ("uint8", "int8")
    for channels in (False, True):
        for xt in i8:
            for wt in i8:
                yield _qlinear_conv("", xt, wt, channels)
                yield _qlinear_conv(MS, xt, wt, channels)
                yield _qlinear_matmul(13, xt, wt, channels)
                yield _qlinear_matmul(21, xt, wt, channels)
                yield _integer("MatMulInteger", xt, wt, channels)
                yield _integer("ConvInteger", xt, wt, channels)
                yield _qgemm(xt, wt, channels, False)
                yield _qgemm(xt, wt, channels, True)
    for t in i8:
        yield _binary("QLinearAdd", t)
        yield _binary("QLinearMul", t)
        yield _concat(t)
        for op in UNARY:
            yield _unary(op, t)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])
    # outputs typed as the schema fixes them (uint8, float, uint8): an UNDEFINED output type
    # is a defect of the probe, which onnxruntime rejects ("Invalid tensor data type 0")
    typed = (("y", TensorProto.UINT8, (2, 4)), ("ys", TensorProto.FLOAT, ()), ("yz", TensorProto.UINT8, ()))
    outputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in typed]
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("x", 1, (2, 4))], outputs)
    yield helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    for ft in ("float", "float16"):
        for bits in (2, 4, 8):
            for zp, block, ranked, one in itertools.product((False, True), (16, 32, 64, 128), (False, True),
                                                            (False, True)):
                yield _nbits(ft, bits, zp, block, ranked, one)
    for dt in ("uint8", "int4", "uint4"):
        for zp in (False, True):
            yield _gather_block(dt, zp)
    for wt in ("int8", "uint8"):
        for channels in (False, True):
            yield _lstm(wt, channels)


def _lstm(wt: str, channels: bool) -> onnx.ModelProto:
    """com.microsoft DynamicQuantizeLSTM (hidden 4, input 3, 2 steps), which onnxruntime's
    quantize_dynamic writes for an LSTM; per-channel: one scale per gate column (what
    quantize_dynamic writes with per_channel=True)."""
    hidden, size, steps = 4, 3, 2
    per = (1, 4 * hidden) if channels else (1,)
    consts = [_t("W", np.ones((1, size, 4 * hidden)), wt),
              _t("R", np.ones((1, hidden, 4 * hidden)), wt),
              _t("B", np.zeros((1, 8 * hidden)), "float"),
              _t("W_scale", np.full(per, 0.01), "float"), _t("W_zero_point", np.zeros(per), wt),
              _t("R_scale", np.full(per, 0.01), "float"), _t("R_zero_point", np.zeros(per), wt)]
    inputs = ["X", "W", "R", "B", "", "", "", "", "W_scale", "W_zero_point", "R_scale", "R_zero_point"]
    node = helper.make_node("DynamicQuantizeLSTM", inputs, ["Y"], domain=MS, hidden_size=hidden)
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("X", 1, (steps, 1, size))],
                              [helper.make_tensor_value_info("Y", 1, (steps, 1, 1, hidden))], consts)
    return helper.make_model(graph, ir_version=7,
                             opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])


def _reduce(op: str) -> onnx.ModelProto:
    """x [1, 8, 4, 4] -> ``op`` over the axes [2, 3] given as an input (keepdims) -> Reshape to
    [1, 8]: a release that ignores the axes input reduces to one value, which the Reshape
    cannot take, so the probe fails instead of computing something else."""
    opset = probe_keys.axes_input_since(op)
    nodes = [helper.make_node(op, ["x", "axes"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["y"])]
    consts = [_t("axes", [2, 3], "int64"), _t("shape", [1, 8], "int64")]
    graph = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", 1, (1, 8, 4, 4))],
                              [helper.make_tensor_value_info("y", 1, (1, 8))], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_for_opset(opset))


def _pair_after(op: str, q_type: str) -> onnx.ModelProto:
    """x (1, 4, 8, 8) -> ``op`` -> QuantizeLinear(``q_type``, scale 0.01) -> DequantizeLinear ->
    graph output (ai.onnx, opset 21): a pair whose removal leaves the op's output as the
    graph's."""
    pool = {"kernel_shape": [2, 2], "strides": [2, 2]}
    attrs = {"MaxPool": pool, "AveragePool": pool,
             "Transpose": {"perm": [0, 1, 3, 2]}}.get(op, {})
    out = [1, 4, 4, 4] if op.endswith("Pool") else [1, 4, 8, 8]
    nodes = [helper.make_node(op, ["x"], ["a"], **attrs),
             helper.make_node("QuantizeLinear", ["a", "s", "zp"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])]
    x, y = helper.make_tensor_value_info("x", 1, [1, 4, 8, 8]), helper.make_tensor_value_info("y", 1, out)
    inits = [_t("s", 0.01, "float"), _t("zp", 0, q_type)]
    graph = helper.make_graph(nodes, "probe", [x], [y], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=ir_for_opset(21))


def _relu(opset: int, ir_version: int) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "probe",
                              [helper.make_tensor_value_info("x", 1, (4,))],
                              [helper.make_tensor_value_info("y", 1, (4,))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tools/probe_models.py --record  (writes tests/data/probe_set.json)")
    print(write_record())
