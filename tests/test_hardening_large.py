"""Hardening: a model with more than 2 GiB of external weights (a sparse file) checks and
converts, the weights stay external, and peak memory does not grow with the weights.

Each run is a child process that reports its own peak RSS (VmHWM; ru_maxrss would
include the parent's); a model with 64 MiB of weights is the baseline the > 2 GiB model is compared with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import fast_process
import numpy as np
import onnx
import pytest
from hardening_helpers import external_tensor, guard, save_raw  # noqa: F401
from onnx import TensorProto, helper, numpy_helper
from paths import ROOT

GiB = 2**30
TAIL = bytes(range(1, 256)) * 16  # 4080 non-zero bytes at the very end of the weights

CHILD = r"""
import json, sys
from click.testing import CliRunner
from qlin_cli.cli import main
def peak_rss_mib():  # this process's own high-water mark; ru_maxrss would include the parent's
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024
r = CliRunner().invoke(main, sys.argv[1:])
print(json.dumps({"exit": r.exit_code, "stdout": r.stdout, "stderr": r.stderr,
                  "exception": repr(r.exception) if r.exception and not isinstance(r.exception, SystemExit)
                  else None,
                  "peak_rss_mib": peak_rss_mib()}))
"""


def _start(*args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.Popen([sys.executable, "-c", CHILD, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _result(child: subprocess.Popen) -> dict:
    try:
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _build(folder, first_bytes: int) -> str:
    """folder/big.onnx: w0 of ``first_bytes`` int8 (a hole), then w1 whose last 4080 bytes are
    non-zero, both in one sparse folder/weights.bin; each feeds a DequantizeLinear."""
    folder.mkdir(parents=True)
    data = folder / "weights.bin"
    second = 2**20
    off1 = first_bytes
    with open(data, "wb") as f:
        f.seek(off1 + second - len(TAIL))
        f.write(TAIL)
    assert os.path.getsize(data) == off1 + second
    inits, nodes, outs = [], [], []
    for i, (off, n) in enumerate(((0, first_bytes), (off1, second))):
        inits += [external_tensor(f"w{i}", [n], "weights.bin", off, n),
                  numpy_helper.from_array(np.float32(0.5), f"s{i}"),
                  numpy_helper.from_array(np.int8(0), f"z{i}")]
        nodes.append(helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}", f"z{i}"], [f"y{i}"],
                                      name=f"dq{i}"))
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [n]))
    g = helper.make_graph(nodes, "big", [], outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return save_raw(m, folder / "big.onnx")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Check and convert a 64 MiB and a 2.5 GiB model, each in its own process."""
    base = tmp_path_factory.mktemp("large")
    got, children = {}, []
    for label, first in (("small", 64 * 2**20), ("large", 2 * GiB + GiB // 2)):
        model = _build(base / label, first)
        out = base / label / "out" / "o.onnx"
        out.parent.mkdir()
        got[label] = {"model": model, "out": out, "first": first}
        # the four runs go side by side: each reports its own peak RSS (VmHWM), not the others'
        children += [(label, "check", _start("check", "--format", "json", model)),
                     (label, "convert", _start("convert", model, "--to-opset", 23, "-o", out))]
    try:
        for label, command, child in children:
            got[label][command] = _result(child)
    finally:
        for _, _, child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    yield got
    for label in got:  # leave no multi-GiB files behind, even sparse ones
        for p in (got[label]["out"], str(got[label]["out"]) + ".data",
                  os.path.join(os.path.dirname(got[label]["model"]), "weights.bin")):
            if os.path.exists(p):
                os.unlink(p)


def test_large_model_checks(measured, guard):  # noqa: F811
    r = measured["large"]["check"]
    assert r["exception"] is None and r["exit"] == 0, r
    doc = json.loads(r["stdout"])
    assert doc["files"][0]["error"] is None and doc["summary"]["errors"] == 0


def test_large_model_converts_with_weights_left_external(measured):
    big = measured["large"]
    r = big["convert"]
    assert r["exception"] is None and r["exit"] == 0, r
    out, data = big["out"], str(big["out"]) + ".data"
    assert os.path.getsize(out) < 2**20  # the model file holds no weights
    m = onnx.load(out, load_external_data=False)
    ext = {t.name: {e.key: e.value for e in t.external_data} for t in m.graph.initializer
           if t.data_location == TensorProto.EXTERNAL}
    assert set(ext) == {"w0", "w1"} and all(e["location"] == "o.onnx.data" for e in ext.values())
    off1, n1 = int(ext["w1"]["offset"]), int(ext["w1"]["length"])
    assert off1 > 2 * GiB and os.path.getsize(data) == off1 + n1
    with open(data, "rb") as f:  # the bytes beyond 2 GiB arrived where the model says
        f.seek(off1 + n1 - len(TAIL))
        assert f.read() == TAIL
    assert os.stat(data).st_blocks * 512 < 64 * 2**20  # holes stayed holes


def test_peak_memory_does_not_grow_with_the_weights(measured):
    small, large = measured["small"], measured["large"]
    for step in ("check", "convert"):
        s, big = small[step]["peak_rss_mib"], large[step]["peak_rss_mib"]
        print(f"{step}: peak RSS {s:.0f} MiB with 64 MiB of weights, {big:.0f} MiB with 2.5 GiB")
        assert big < 400, (step, big)
        assert big - s < 32, (step, s, big)  # 40x the weights, (almost) the same memory


def test_encode_error_becomes_one_line(tmp_path, monkeypatch):
    """protobuf refuses to serialize a message over 2 GiB (EncodeError/ValueError); building one
    takes > 2 GiB of memory, so the serializer is stood in for: the error names the output."""
    from google.protobuf.message import EncodeError

    import qlin_cli.convert.write as w
    from qlin_cli.errors import QlinError

    class Huge:
        def SerializeToString(self):  # noqa: N802
            raise EncodeError("Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2147483700")

    with pytest.raises(QlinError) as e:
        w._serialize(Huge(), str(tmp_path / "o.onnx"))
    assert e.value.path == str(tmp_path / "o.onnx")
    assert "2 GiB" in e.value.reason and "external data" in e.value.reason and "\n" not in str(e.value)
