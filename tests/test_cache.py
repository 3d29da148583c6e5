"""The results cache of `qlin check` (qlin_cli/cache.py): an unchanged file is not checked
again and reports exactly what a check reports; a changed model, a changed external data
file, a changed configuration or another qlin build is checked again; --no-cache,
--fix and --diff never read it; a cache that cannot be written or read is no error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS, ROOT

import qlin_cli.api as api
from qlin_cli import cache
from qlin_cli.cli import main


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder of the fixture models as the working folder, the cache on, each check counted."""
    monkeypatch.delenv("QLIN_NO_CACHE", raising=False)
    monkeypatch.delenv(cache.ENV, raising=False)
    shutil.copytree(MODELS, tmp_path / "models")
    monkeypatch.chdir(tmp_path)
    checked: list[str] = []
    real = api.check_file

    def counting(path, *args, **kwargs):
        checked.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(api, "check_file", counting)
    return tmp_path, checked


def _run(*args):
    r = CliRunner().invoke(main, ["check", "--jobs", "1", *map(str, args)])
    assert r.exit_code in (0, 1, 2), r.output
    return r


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_an_unchanged_folder_is_read_back_as_checked(work, fmt):
    folder, checked = work
    first = _run("--format", fmt, "models")
    n = len(checked)
    assert n > 50
    again = _run("--format", fmt, "models")
    assert len(checked) == n  # nothing checked again
    fresh = _run("--no-cache", "--format", fmt, "models")
    assert len(checked) == 2 * n  # --no-cache checks every file
    assert again.stdout == first.stdout == fresh.stdout and again.exit_code == first.exit_code
    assert (folder / ".qlin_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    tag = (folder / ".qlin_cache" / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_statistics_and_targets_are_read_back_as_checked(work):
    folder, checked = work
    args = ("--target", "onnxruntime,openvino", "--statistics", "models/rules")
    first = _run(*args)
    n = len(checked)
    assert _run(*args).stdout == first.stdout and len(checked) == n
    _run("--target", "openvino", "--statistics", "models/rules")  # other targets: another key
    assert len(checked) == 2 * n


def test_a_changed_model_is_checked_again_even_with_its_old_size_and_time(work):
    folder, checked = work
    path = folder / "models" / "clean" / "per_channel_chain.onnx"
    assert _run(path).exit_code == 0
    model = onnx.load(path)
    st = os.stat(path)
    model.graph.node[0].name = "X" * len(model.graph.node[0].name)  # same size, other bytes
    onnx.save(model, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.path.getsize(path) == st.st_size
    r = _run(path)
    assert checked == ["per_channel_chain.onnx"] * 2
    assert r.exit_code == 0


def _external_model(folder, scale: float):
    w = numpy_helper.from_array(np.arange(8, dtype=np.int8), "w")
    s = numpy_helper.from_array(np.array(scale, np.float32), "s")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
                              initializer=[w, s])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = folder / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.bin",
              size_threshold=0)
    return path


def test_a_changed_external_data_file_is_checked_again(work):
    folder, checked = work
    path = _external_model(folder, 0.5)
    assert _run(path).exit_code == 0
    assert _run(path).exit_code == 0 and checked == ["ext.onnx"]
    data = folder / "ext.bin"
    raw = bytearray(data.read_bytes())
    raw[-4:] = np.array(0.0, np.float32).tobytes()  # the scale, stored last: now zero
    data.write_bytes(bytes(raw))
    r = _run(path)
    assert checked == ["ext.onnx"] * 2
    assert r.exit_code == 1 and "QL501" in r.stdout  # the new data's finding, not the old result
    data.unlink()
    r = _run(path)
    assert checked == ["ext.onnx"] * 3 and "QL008" in r.stdout


def test_a_changed_configuration_is_checked_again(work):
    folder, checked = work
    path = folder / "models" / "rules" / "QL401-bad.onnx"
    assert "QL401" in _run(path).stdout
    (folder / "qlin.toml").write_text('ignore = ["QL401"]\n')
    r = _run(path)
    assert checked == ["QL401-bad.onnx"] * 2 and "QL401" not in r.stdout
    assert "QL401" not in _run(path).stdout and len(checked) == 2  # the new configuration's result kept
    # no configuration: the first run's settings, whose result is still kept
    assert "QL401" in _run("--no-config", path).stdout and len(checked) == 2
    assert "QL401" not in _run("--select", "QL5", path).stdout and len(checked) == 3


def test_another_qlin_build_checks_again_and_removes_the_old_results(work, monkeypatch):
    folder, checked = work
    path = folder / "models" / "rules" / "QL401-bad.onnx"
    _run(path)
    old = {p.name for p in (folder / ".qlin_cache").iterdir() if p.is_dir()}
    monkeypatch.setattr(cache, "build", lambda: "0123456789abcdef0123")
    _run(path)
    assert checked == ["QL401-bad.onnx"] * 2
    assert {p.name for p in (folder / ".qlin_cache").iterdir() if p.is_dir()} == {"0123456789abcdef0123"}
    assert old and old.isdisjoint({"0123456789abcdef0123"})


def test_a_cache_dir_of_the_users_own_loses_nothing(work, monkeypatch):
    """--cache-dir pointed at a folder that holds other things: the clean-up of older builds
    removes only folders qlin made (named as a build and marked), never the user's."""
    folder, checked = work
    path = folder / "models" / "rules" / "QL401-bad.onnx"
    mine = folder / "mine"
    (mine / "0123456789abcdef0123").mkdir(parents=True)  # named like a build, not qlin's
    (mine / "0123456789abcdef0123" / "data.txt").write_text("keep")
    (mine / "abcdefghijklmnopqrst").mkdir()
    _run("--cache-dir", mine, path)
    monkeypatch.setattr(cache, "build", lambda: "fedcba9876543210fedc")
    _run("--cache-dir", mine, path)  # another build: the first build's folder goes
    assert (mine / "0123456789abcdef0123" / "data.txt").read_text() == "keep"
    assert (mine / "abcdefghijklmnopqrst").is_dir()
    builds = {p.name for p in mine.iterdir() if (p / "qlin-results").is_file()}
    assert builds == {"fedcba9876543210fedc"} and len(checked) == 2
    assert not (mine / ".gitignore").exists()  # a folder qlin did not make is not hidden from git


def test_the_build_digest_follows_qlins_version_and_files(tmp_path, monkeypatch):
    """cache.build: another qlin version, or a file of the package edited (a development
    install), is another build."""
    from importlib import metadata

    here = cache.build()
    cache.build.cache_clear()
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda d: "99.0" if d == "qlin" else real(d))
    try:
        assert cache.build() != here
        monkeypatch.setattr(metadata, "version", real)
        cache.build.cache_clear()
        assert cache.build() == here
        rules_file = os.path.join(ROOT, "qlin_cli", "rules", "ql401_axis_range.py")
        st = os.stat(rules_file)
        os.utime(rules_file, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        try:
            cache.build.cache_clear()
            assert cache.build() != here
        finally:
            os.utime(rules_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        cache.build.cache_clear()


def test_fix_and_diff_never_read_the_cache(work):
    folder, checked = work
    path = folder / "models" / "rules" / "QL409-bad.onnx"  # a fixable finding (QL409 selected)
    _run("--select", "QL409", path)
    _run("--select", "QL409", "--diff", path)
    _run("--select", "QL409", "--fix", path)
    assert len(checked) == 3


def test_a_cache_that_cannot_be_written_or_read_is_no_error(work):
    folder, checked = work
    path = folder / "models" / "rules" / "QL401-bad.onnx"
    blocker = folder / "a-file"
    blocker.write_text("")
    first = _run("--cache-dir", blocker / "cache", path)  # under a file: cannot be made
    assert first.exit_code == 1 and "QL401" in first.stdout and not first.stderr
    _run(path)
    entries = list((folder / ".qlin_cache").rglob("*.json"))
    assert len(entries) == 1
    entries[0].write_text("{not json")  # a damaged entry is a miss, written again
    again = _run(path)
    assert again.stdout == first.stdout and len(checked) == 3
    assert json.loads(entries[0].read_text())["result"]["diagnostics"]


def test_qlin_cache_dir_and_no_cache_from_the_environment(work, monkeypatch):
    folder, checked = work
    path = folder / "models" / "rules" / "QL401-bad.onnx"
    monkeypatch.setenv(cache.ENV, str(folder / "elsewhere"))
    _run(path)
    _run(path)
    assert len(checked) == 1 and (folder / "elsewhere" / "CACHEDIR.TAG").exists()
    assert not (folder / ".qlin_cache").exists()
    monkeypatch.setenv("QLIN_NO_CACHE", "1")
    _run(path)
    assert len(checked) == 2


def test_a_run_from_the_cache_loads_neither_onnx_nor_the_rules(work):
    """Every file read back: the process reports without importing onnx, numpy or a rule."""
    folder, _ = work
    env = {k: v for k, v in os.environ.items() if k != "QLIN_NO_CACHE"}
    env["PYTHONPATH"] = ROOT
    cmd = [sys.executable, "-X", "importtime", "-m", "qlin_cli", "check", "models"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert again.stdout == first.stdout and again.returncode == first.returncode == 1
    imported = {line.rsplit("|", 1)[-1].strip() for line in again.stderr.splitlines() if "|" in line}
    assert "qlin_cli.cache" in imported
    assert not imported & {"onnx", "numpy", "qlin_cli.rules", "qlin_cli.check.engine", "rich"}, imported
