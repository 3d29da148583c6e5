"""Hardening 2: bombs. Sizes a model declares never drive qlin's time or memory.

* shape products saturate (model/tensors.py ``element_count``): 200,000 dims of 2**62 on an
  external weight took 127 s and ended in an internal error; now a fraction of a second and
  one short line;
* probes are capped (convert/verify.py MAX_PROBE_ELEMENTS): a 150-byte model declaring an
  input of 2**40 elements, or shapes near 2**63, never allocates;
* `qlin check` peaks at most at 2x the file size on a model with inline weights (it was 6x):
  the file is parsed in pieces (model/load.py) and shape inference sees a skeleton without
  the weights (model/infer.py);
* parsing in pieces gives the same model, and the same verdicts, as one whole parse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types

import fast_process
import numpy as np
import onnx
import pytest
from google.protobuf.internal.encoder import _VarintBytes
from hardening_helpers import (  # noqa: F401
    assert_bad_input,
    assert_reported,
    cli,
    external_tensor,
    fingerprint,
    guard,
    save_raw,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS, ROOT

from qlin_cli.model import load as loader
from qlin_cli.model.tensors import COUNT_CAP, dims_text, element_count

EXAMPLES = int(os.environ.get("QLIN_FUZZ_EXAMPLES", "60"))
FIXTURE_FILES = sorted(os.path.join(r, f) for r, _, fs in os.walk(MODELS) for f in fs if f.endswith(".onnx"))

# A child process that runs qlin commands one after the other and reports each outcome and
# its own peak RSS (VmHWM; ru_maxrss would include the parent's).
CHILD = r"""
import json, sys, time
from click.testing import CliRunner
from qlin_cli.cli import main
runs = []
for args in json.loads(sys.argv[1]):
    t = time.monotonic()
    r = CliRunner().invoke(main, args)
    runs.append({"args": args, "exit": r.exit_code, "stdout": r.stdout[-2000:], "stderr": r.stderr[-4000:],
                 "seconds": time.monotonic() - t,
                 "exception": repr(r.exception) if r.exception and not isinstance(r.exception, SystemExit)
                 else None})
status = open("/proc/self/status").read()
print(json.dumps({"runs": runs, "peak_mib": int(status.split("VmHWM:")[1].split()[0]) / 1024}))
"""


def _child(*commands) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = fast_process.run([sys.executable, "-c", CHILD, json.dumps([[str(a) for a in c] for c in commands])],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


# ---- saturating products ------------------------------------------------------------------

def test_element_count_saturates_and_is_exact_below_the_cap():
    assert element_count([]) == 1
    assert element_count([3, 4, 5]) == 60
    assert element_count([2**32, 2**32]) == 2**64 == COUNT_CAP
    assert element_count([2**32, 2**32, 2]) == COUNT_CAP + 1
    assert element_count([2**62] * 200_000 + [0]) == 0  # a zero anywhere wins
    t = time.monotonic()
    assert element_count([2**62] * 1_000_000) == COUNT_CAP + 1
    assert time.monotonic() - t < 1.0
    assert dims_text([1, 2]) == "[1, 2]"
    assert dims_text(range(100)) == "[0, 1, 2, 3, 4, 5, 6, 7, ... (100 dims)]"


def test_200000_dims_of_2_62_is_fast_and_one_short_line(tmp_path, guard):  # noqa: F811
    """Before: 127 s for each command, then an internal error (the product was too long to
    print). Now: refused at once, the message names the first dims only."""
    (tmp_path / "w.bin").write_bytes(bytes(64))
    w = external_tensor("w", [2**62] * 200_000, "w.bin")
    sc = numpy_helper.from_array(np.float32(0.5), "sc")
    node = helper.make_node("DequantizeLinear", ["w", "sc"], ["y"], name="dq")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    path = save_raw(_model([node], [], [y], [w, sc]),
                    tmp_path / "m.onnx")
    guard.watch(tmp_path)
    for args in (["check", path], ["convert", path, "--to-opset", 23, "-o", tmp_path / "o.onnx"]):
        t = time.monotonic()
        r = cli(*args)
        took = time.monotonic() - t
        if args[0] == "check":  # a finding on the tensor (QL008); the rest is checked
            line = assert_reported(r, path, "QL008", "more than", "(200000 dims)")
        else:
            line = assert_bad_input(r, path, "more than", "(200000 dims)")
        assert took < 10, took
        assert len(line) < 600 and "internal error" not in line
    assert not (tmp_path / "o.onnx").exists()


# ---- declared shapes: no allocation from what a model claims -------------------------------

def _declared(tmp_path, name, x_dims, scale_dims, axis=0):
    """QuantizeLinear whose x and scale are graph inputs with the given declared shapes."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, scale_dims)
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, x_dims)
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=axis)
    return save_raw(_model([node], [x, s], [y]), tmp_path / f"{name}.onnx")


def _per_tensor(tmp_path, name, x_dims):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, x_dims)
    sc = numpy_helper.from_array(np.float32(0.5), "sc")
    node = helper.make_node("QuantizeLinear", ["x", "sc"], ["y"], name="q")
    return save_raw(_model([node], [x], [y], [sc]), tmp_path / f"{name}.onnx")


def _weight(tmp_path, name, dims):
    w = TensorProto(name="w", data_type=TensorProto.INT8, dims=dims, raw_data=b"\x01")
    sc = numpy_helper.from_array(np.float32(0.5), "sc")
    node = helper.make_node("DequantizeLinear", ["w", "sc"], ["y"], name="dq")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return save_raw(_model([node], [], [y], [w, sc]), tmp_path / f"{name}.onnx")


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """Tiny models declaring huge shapes, each checked and converted (moved to com.microsoft,
    so every node is rewritten and proven) in one child process."""
    d = tmp_path_factory.mktemp("bombs")
    paths = [
        _declared(d, "axis-2e40", [2**40, 3], [2**40]),
        _declared(d, "axis-2e33", [2**33, 2], [2**33]),  # 32 GiB of float32 scale, if allocated
        _declared(d, "near63", [2**63 - 1, 2], [2**63 - 1]),
        _declared(d, "wrap64", [2**31, 2**31, 4], [2**31]),  # a product that wraps to 0 in int64
        _per_tensor(d, "t-near63", [2**62, 4]),
        _per_tensor(d, "t-200k", [2**62] * 200_000),
        _weight(d, "w-near63", [2**63 - 1, 2]),
        _weight(d, "w-wrap64", [2**31, 2**31, 4]),
    ]
    commands = []
    for p in paths:
        commands.append(["check", "--format", "json", p])
        commands.append(["convert", p, "--to-opset", "21", "--to-domain", "com.microsoft", "--dry-run",
                         "--format", "json"])
    before = {p: fingerprint(p) for p in paths}
    got = _child(*commands)
    got["inputs_unchanged"] = before == {p: fingerprint(p) for p in paths}
    return paths, got


def test_declared_shapes_give_verdicts_not_crashes(bombs):
    paths, got = bombs
    assert got["inputs_unchanged"]
    for run in got["runs"]:
        assert run["exception"] is None, run
        assert run["exit"] in (0, 1, 2), run
        assert "internal error" not in run["stderr"] and "Traceback" not in run["stderr"], run
        assert run["seconds"] < 30, run
        if run["exit"] == 2:
            assert len(run["stderr"].splitlines()) == 1, run


def test_declared_shapes_allocate_nothing_large(bombs):
    paths, got = bombs
    print(f"peak RSS over {len(got['runs'])} runs: {got['peak_mib']:.0f} MiB")
    assert got["peak_mib"] < 600, got["peak_mib"]  # 2**33 float32 scales alone would be 32 GiB


def test_probe_too_large_names_the_limit_and_the_way_out(bombs):
    paths, got = bombs
    refused = [r for r in got["runs"] if r["args"][0] == "convert" and "axis-2e40" in r["args"][1]]
    assert refused and refused[0]["exit"] == 1, refused
    doc = json.loads(refused[0]["stdout"])
    reason = doc["refused"][0]["message"]
    assert "probe limit" in reason and "--no-verify" in reason, reason


def test_probe_shape_caps_blocked_x():
    """A blocked node fixes x's shape through its scale; above the cap it is refused, not built."""
    from qlin_cli.convert import verify
    from qlin_cli.schema import BLOCKED

    q = types.SimpleNamespace(granularity=BLOCKED, axis_in_force=lambda: 1, x_rank=2,
                              attrs={"block_size": 2**27})
    scale = np.ones((2, 1), np.float32)
    with pytest.raises(verify.ProbeTooLarge, match="probe limit"):
        verify.probe_shape(q, scale, (2, 2**27))
    with pytest.raises(verify.ProbeTooLarge):
        verify.probe_shape(q, scale, (2**31, 2**31, 4))  # 2**64: wraps to 0 in int64 arithmetic
    shape, axis = verify.probe_shape(q, scale, (2, 64))
    assert shape == (2, 64) and axis == 1


def test_made_up_parameters_are_capped():
    from qlin_cli.convert import verify

    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"])
    case = types.SimpleNamespace(before=[node], constants={})
    rng = np.random.default_rng(0)
    with pytest.raises(verify.ProbeTooLarge):
        verify._param(case, 1, "float", (2**33,), rng, positive=True)
    with pytest.raises(verify.ProbeTooLarge):
        verify._param(case, 1, "float", (2,) * 100, rng)
    name, value = verify._param(case, 1, "float", (3,), rng, positive=True)
    assert name == "s" and value.shape == (3,) and (value > 0).all()


# ---- check's peak memory on inline weights ---------------------------------------------------

def test_check_peak_memory_is_at_most_twice_the_file(tmp_path, guard):  # noqa: F811
    """~250 MiB of inline weights: nine 16 MiB tensors and one of 96 MiB, each behind a
    DequantizeLinear. Before: 6.1x the file size (the bytes and the parsed model, then a copy
    for shape inference, its serialization, onnx's parse and the result's parse)."""
    rng = np.random.default_rng(1)
    pattern = rng.integers(-128, 127, 2**16, dtype=np.int8)  # repeated: random bytes cost seconds
    inits, nodes, outs = [], [], []
    for i, size in enumerate([16 * 2**20] * 9 + [96 * 2**20]):
        inits += [numpy_helper.from_array(np.resize(pattern, size), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.5), f"s{i}"),
                  numpy_helper.from_array(np.int8(0), f"z{i}")]
        nodes.append(helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}", f"z{i}"], [f"y{i}"],
                                      name=f"dq{i}"))
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [size]))
    path = save_raw(_model(nodes, [], outs, inits), tmp_path / "inline.onnx")
    del inits
    guard.watch(path)
    size_mib = os.path.getsize(path) / 2**20
    got = _child(["check", "--format", "json", path])
    run = got["runs"][0]
    assert run["exception"] is None and run["exit"] in (0, 1), run
    assert json.loads(run["stdout"])["files"][0]["error"] is None
    ratio = got["peak_mib"] / size_mib
    print(f"check: peak {got['peak_mib']:.0f} MiB for a {size_mib:.0f} MiB file ({ratio:.2f}x)")
    assert ratio <= 2.0, (got["peak_mib"], size_mib)


def test_skeleton_keeps_structure_and_drops_heavy_data():
    from qlin_cli.model.infer import KEEP_DATA_BYTES, skeleton

    big = numpy_helper.from_array(np.ones(KEEP_DATA_BYTES + 1, np.int8), "big")
    small = numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.ones(5000, np.float32)))
    sub = helper.make_graph([helper.make_node("Constant", [], ["d"], value=big)], "sub", [],
                            [helper.make_tensor_value_info("d", TensorProto.INT8, None)], initializer=[big])
    branch = helper.make_node("If", ["cond"], ["d"], then_branch=sub, else_branch=sub)
    m = _model([const, branch], [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
               [helper.make_tensor_value_info("d", TensorProto.INT8, None)], [big, small])
    m.training_info.add().algorithm.CopyFrom(sub)
    sk = skeleton(m)
    assert sk.graph.initializer[1] == small  # small data kept whole
    for t in (sk.graph.initializer[0], sk.graph.node[0].attribute[0].t,
              sk.graph.node[1].attribute[0].g.initializer[0], sk.training_info[0].algorithm.initializer[0]):
        assert list(t.dims) and not t.raw_data and not t.float_data and t.data_type
    assert len(sk.SerializeToString()) < 20_000 < len(m.SerializeToString())
    assert [n.op_type for n in sk.graph.node] == ["Constant", "If"]


@pytest.mark.parametrize("where", ["inline-8KiB", "external", "small", "constant-8KiB"])
def test_shape_inference_still_runs_on_the_skeleton(where, tmp_path, monkeypatch):
    """The skeleton is built only when it differs from the model by more than external
    references (an inline tensor above KEEP_DATA_BYTES); the types are the same either way."""
    from qlin_cli.model import infer
    from qlin_cli.model.infer import inferred_types

    built = []
    real = infer.skeleton
    monkeypatch.setattr(infer, "skeleton", lambda m: built.append(1) or real(m))

    w = numpy_helper.from_array(np.ones((64, 128), np.int8), "w")  # 8 KiB: data left out
    if where == "external":
        w = external_tensor("w", [64, 128], "w.bin")
    elif where in ("small", "constant-8KiB"):
        w = numpy_helper.from_array(np.ones((64, 16), np.int8), "w")  # 1 KiB: kept whole
    shape = numpy_helper.from_array(np.array([128, 64] if where != "small" and where != "constant-8KiB"
                                             else [16, 64], np.int64), "shape")  # Reshape reads it
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["f"]),
             helper.make_node("Reshape", ["f", "shape"], ["r"])]
    if where == "constant-8KiB":
        nodes.append(helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
            np.ones(8192, np.int8))))
    m = _model(nodes, [], [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
               [w, shape, numpy_helper.from_array(np.float32(0.5), "s")])
    types_ = inferred_types(m)
    assert types_ is not None
    (r,) = [t for name, t in types_["main"] if name == "r"]
    assert r == (TensorProto.FLOAT, (128, 64) if where not in ("small", "constant-8KiB") else (16, 64))
    assert built == ([1] if where in ("inline-8KiB", "constant-8KiB") else [])


def test_an_external_reference_gives_inference_no_data_on_either_path():
    """Why the model may go to inference as it is when only external references would be
    dropped: a Reshape whose shape is external infers the same (nothing) as one whose shape
    is a dataless inline tensor, which is what the skeleton makes of it."""
    from qlin_cli.model.infer import inferred_types, skeleton

    shape = external_tensor("shape", [2], "shape.bin", data_type=TensorProto.INT64)
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"])]
    m = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
               [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)], [shape])
    whole = onnx.shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=False)
    light = onnx.shape_inference.infer_shapes(skeleton(m), check_type=False, strict_mode=False,
                                              data_prop=False)
    assert whole.graph.output[0] == light.graph.output[0]
    assert not whole.graph.output[0].type.tensor_type.HasField("shape")
    assert inferred_types(m)["main"] == [("r", (TensorProto.FLOAT, None))]


def _single_tensor_model(path, size: int) -> str:
    """One int8 weight of ``size`` bytes inline, and a DequantizeLinear with a zero scale
    (QL501), so the check has a finding to agree on."""
    w = numpy_helper.from_array(np.full(size, 3, np.int8), "w")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")]
    return save_raw(_model(nodes, [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])],
                           [w, numpy_helper.from_array(np.float32(0.0), "s")]), path)


LOAD_CHILD = r"""
import json, os, sys
from qlin_cli.check.engine import check_model
from qlin_cli.model.load import load_model
path = sys.argv[1]
m = load_model(path, weights=sys.argv[2] == "1")
found = [(d.code, d.node) for d in check_model(m, os.path.dirname(path))]
status = open("/proc/self/status").read()
print(json.dumps({"found": found, "raw": len(m.graph.initializer[0].raw_data),
                  "dims": list(m.graph.initializer[0].dims),
                  "peak_mib": int(status.split("VmHWM:")[1].split()[0]) / 1024}))
"""


def test_loading_without_weights_for_checking(tmp_path, guard):  # noqa: F811
    """A single 160 MiB tensor: parsed whole it costs the file plus the tensor again (2.1x
    with qlin's own memory); without its data, the structure only, with the same findings."""
    size = 160 * 2**20
    path = _single_tensor_model(tmp_path / "single.onnx", size)
    guard.watch(path)
    env = dict(os.environ, PYTHONPATH=ROOT)
    got = {}
    # the two loads run side by side: each process reports its own peak (VmHWM), so neither
    # measure includes the other
    children = {w: fast_process.Popen([sys.executable, "-c", LOAD_CHILD, path, w], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env) for w in ("1", "0")}
    try:
        for weights, child in children.items():
            out, err = child.communicate(timeout=300)
            assert child.returncode == 0, err[-2000:]
            got[weights] = json.loads(out.strip().splitlines()[-1])
    finally:
        for child in children.values():
            if child.poll() is None:
                child.kill()
                child.wait()
    print({k: round(v["peak_mib"]) for k, v in got.items()}, "MiB for", size // 2**20, "MiB")
    assert got["1"]["found"] == got["0"]["found"] and ["QL501", "dq"] in got["0"]["found"]
    assert got["1"]["raw"] == size and got["0"]["raw"] == 0 and got["0"]["dims"] == [size]
    assert got["0"]["peak_mib"] < size / 2**20 / 2, got


# ---- parsing in pieces ----------------------------------------------------------------------

@pytest.fixture
def pieces(monkeypatch):
    """Every file parsed in pieces, a few bytes per piece and per header window."""
    monkeypatch.setattr(loader, "PIECES_ABOVE", 0)
    monkeypatch.setattr(loader, "PIECE", 7)
    monkeypatch.setattr(loader._Window, "SIZE", 32)


def _whole(data: bytes):
    m = onnx.ModelProto()
    m.ParseFromString(data)
    return m


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: os.path.relpath(p, MODELS))
def test_pieces_give_the_same_model(path, pieces):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "rb", buffering=0) as f:
        m = onnx.ModelProto()
        loader._parse_in_pieces(f, len(data), m)
    assert m.SerializeToString() == _whole(data).SerializeToString()
    assert loader.load_model(path).SerializeToString() == _whole(data).SerializeToString()


def _ld(field: int, payload: bytes) -> bytes:
    return _VarintBytes(field << 3 | 2) + _VarintBytes(len(payload)) + payload


def _nested_ifs(depth: int) -> bytes:
    """ModelProto bytes: ``depth`` Ifs, each in the then_branch of the one before."""
    graph = _ld(2, b"g")
    for _ in range(depth):
        attr = _ld(1, b"then_branch") + _ld(6, graph) + _VarintBytes(20 << 3) + _VarintBytes(5)
        node = _ld(4, b"If") + _ld(5, attr)
        graph = _ld(1, node) + _ld(2, b"g")
    opset = _ld(1, b"") + _VarintBytes(2 << 3) + _VarintBytes(21)
    return _VarintBytes(1 << 3) + _VarintBytes(10) + _ld(8, opset) + _ld(7, graph)


def _verdict(path):
    from qlin_cli.errors import QlinError

    try:
        return ("model", loader.load_model(str(path)).SerializeToString())
    except QlinError as e:
        return ("error", e.reason)


def test_pieces_keep_protobufs_nesting_limit(tmp_path, monkeypatch):
    """The deepest nesting a whole parse accepts is the deepest the pieces accept."""
    def parses(depth):
        try:
            _whole(_nested_ifs(depth))
            return True
        except Exception:
            return False

    lo, hi = 1, 200
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if parses(mid) else (lo, mid - 1)
    for depth in (lo - 1, lo, lo + 1, lo + 2):
        path = tmp_path / f"d{depth}.onnx"
        path.write_bytes(_nested_ifs(depth))
        whole = _verdict(path)
        with monkeypatch.context() as mp:
            mp.setattr(loader, "PIECES_ABOVE", 0)
            mp.setattr(loader, "PIECE", 5)
            with open(path, "rb", buffering=0) as f:  # the pieces themselves, not the fallback
                m = onnx.ModelProto()
                try:
                    loader._parse_in_pieces(f, path.stat().st_size, m)
                    piecewise = True
                except Exception:
                    piecewise = False
            assert _verdict(path) == whole, depth
        assert piecewise == (depth <= lo), depth


SEED_BYTES = [open(p, "rb").read() for p in FIXTURE_FILES]


@pytest.mark.fuzz
@settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.sampled_from(range(len(FIXTURE_FILES))),
       edits=st.lists(st.tuples(st.integers(0, 2**31), st.binary(min_size=0, max_size=8), st.integers(0, 8)),
                      min_size=1, max_size=4),
       piece=st.integers(1, 64))
def test_pieces_give_the_same_verdict_on_mutated_bytes(seed, edits, piece, tmp_path_factory):
    data = bytearray(SEED_BYTES[seed])
    for where, insert, cut in edits:
        i = where % (len(data) + 1)
        data[i:i + cut] = insert
    path = tmp_path_factory.mktemp("pieces") / "m.onnx"
    path.write_bytes(bytes(data))
    whole = _verdict(path) if data else None
    saved = (loader.PIECES_ABOVE, loader.PIECE)
    loader.PIECES_ABOVE, loader.PIECE = 0, piece
    try:
        assert (_verdict(path) if data else None) == whole
    finally:
        loader.PIECES_ABOVE, loader.PIECE = saved
