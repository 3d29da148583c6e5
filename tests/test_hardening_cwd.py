"""Hardening: results do not depend on the working directory. External data is found beside the
model, never in the current folder (a decoy data file there is ignored)."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from hardening_helpers import cli, external_tensor, fingerprint, guard, procs, save_raw  # noqa: F401
from onnx import TensorProto, helper, numpy_helper


def _model(folder):
    """folder/m.onnx: DequantizeLinear with its weight AND its per-axis scale in folder/data.bin."""
    folder.mkdir(parents=True)
    w = np.arange(-32, 32, dtype=np.int8).reshape(4, 16)
    s = np.array([0.5, 0.25, 0.125, 1.0], np.float32)
    with open(folder / "data.bin", "wb") as f:
        f.write(w.tobytes() + s.tobytes())
    wt = external_tensor("w", [4, 16], "data.bin", 0, 64)
    st = external_tensor("s", [4], "data.bin", 64, 16, data_type=TensorProto.FLOAT)
    z = numpy_helper.from_array(np.zeros(4, np.int8), "z")
    node = helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq", axis=0)
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
                          initializer=[wt, st, z])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return save_raw(m, folder / "m.onnx")


def _decoy(folder):
    """A data.bin whose scales are zero: if qlin read it, QL501 would fire."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "data.bin", "wb") as f:
        f.write(bytes(64) + np.full(4, 0.0, np.float32).tobytes())


@pytest.fixture
def world(tmp_path, guard):  # noqa: F811
    model = _model(tmp_path / "models" / "a")
    _decoy(tmp_path / "decoy")
    _decoy(tmp_path / "models")  # the parent of the model's folder
    guard.watch(tmp_path / "models", tmp_path / "decoy")
    return tmp_path, model


def _places(tmp_path, model):
    """(cwd, how the model is named from there)."""
    a = os.path.dirname(model)
    return [
        ("/", model),
        (a, "m.onnx"),
        (a, "./m.onnx"),
        (str(tmp_path / "models"), "a/m.onnx"),
        (str(tmp_path / "decoy"), "../models/a/m.onnx"),
        (str(tmp_path / "decoy"), model),
    ]


def _diagnostics(stdout):
    doc = json.loads(stdout)
    return [(f["error"], f["diagnostics"]) for f in doc["files"]], doc["summary"]


def test_check_is_the_same_from_every_folder(world, monkeypatch):
    tmp_path, model = world
    seen = []
    for cwd, name in _places(tmp_path, model):
        monkeypatch.chdir(cwd)
        r = cli("check", "--format", "json", name)
        assert r.exit_code == 0, (cwd, name, r.stdout, r.stderr)
        seen.append(_diagnostics(r.stdout))
    assert all(s == seen[0] for s in seen), seen
    assert seen[0][1]["errors"] == 0  # the decoy's zero scales were never read


def test_convert_is_the_same_from_every_folder(world, monkeypatch):
    tmp_path, model = world
    results = []
    for i, (cwd, name) in enumerate(_places(tmp_path, model)):
        out = tmp_path / "out" / str(i)
        out.mkdir(parents=True)
        monkeypatch.chdir(cwd)
        target = os.path.relpath(out / "o.onnx") if cwd != "/" else str(out / "o.onnx")
        r = cli("convert", name, "--to-opset", 23, "-o", target)
        assert r.exit_code == 0, (cwd, name, r.stdout, r.stderr)
        results.append(((out / "o.onnx").read_bytes(), (out / "o.onnx.data").read_bytes()))
    assert all(r == results[0] for r in results)
    m = onnx.load_from_string(results[0][0])
    info = {e.key: int(e.value) for t in m.graph.initializer if t.name == "s"
            for e in t.external_data if e.key in ("offset", "length")}
    scales = results[0][1][info["offset"]: info["offset"] + info["length"]]
    assert np.frombuffer(scales, np.float32).tolist() == [0.5, 0.25, 0.125, 1.0]  # not the decoy's


def test_real_process_from_root_and_from_the_model_folder(world):
    tmp_path, model = world
    before = fingerprint(model)
    out = tmp_path / "rel"
    out.mkdir()
    a, b, r = procs((("check", "--format", "json", model), "/"),
                    (("check", "--format", "json", "m.onnx"), os.path.dirname(model)),
                    (("convert", "../models/a/m.onnx", "--to-opset", 23, "-o", "o.onnx"), out))
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert _diagnostics(a.stdout) == _diagnostics(b.stdout)
    assert r.returncode == 0, r.stderr
    assert (out / "o.onnx").exists() and (out / "o.onnx.data").exists()
    assert fingerprint(model) == before
