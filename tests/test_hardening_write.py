"""Hardening: `qlin convert` never damages anything. The output appears whole or not at all, even
when the process is killed mid-write; no temporary file is left behind; the input and its data
are never modified; dangerous output paths are refused; a data file is never appended to."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import fast_process
import numpy as np
import onnx
import pytest
from hardening_helpers import (  # noqa: F401
    assert_bad_input,
    cli,
    external_dq_source,
    fingerprint,
    guard,
    listing,
)
from paths import FIXTURES, ROOT

WEIGHT_BYTES = 6 * 2**20  # > the 8 MiB copy chunk / 2 : several writes, not all zero


def _source(folder, data_name="w.bin", fill=7) -> str:
    """folder/m.onnx: DequantizeLinear of a 6 MiB int8 weight in folder/<data_name>, opset 21."""
    rng = np.random.default_rng(fill)
    data = rng.integers(-128, 127, WEIGHT_BYTES, dtype=np.int8)
    data[: 2**20] = 0  # a hole-able stretch
    return external_dq_source(folder, data, data_name)


@pytest.fixture
def setup(tmp_path, guard):  # noqa: F811
    """An input (watched) and an old output from an earlier conversion of another model."""
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    out_dir = tmp_path / "out"
    old_src = _source(tmp_path / "old", fill=3)
    out = out_dir / "o.onnx"
    out_dir.mkdir()
    r = cli("convert", old_src, "--to-opset", 13, "-o", out)
    assert r.exit_code == 0, r.output
    return src, out


# ---- killed mid-write ------------------------------------------------------------------

CHILD = r"""
import os, sys, time
ready, phase = sys.argv[1], sys.argv[2]
import qlin_cli.convert.write as w

def pause():
    open(ready, "w").close()
    time.sleep(600)

if phase == "copy":  # halfway through copying the weights into the new data file
    real_copy = w._copy_range
    def slow(src, dst, offset, length):
        half = length // 2
        real_copy(src, dst, offset, half)
        dst.flush()
        pause()
    w._copy_range = slow
else:  # fsync 1: the data file is written; fsync 2: the model file is written
    real_fsync, n = os.fsync, [0]
    def fsync(fd):
        real_fsync(fd)
        n[0] += 1
        if n[0] == {"data-written": 1, "model-written": 2}[phase]:
            pause()
    os.fsync = fsync
from qlin_cli.cli import main
main(sys.argv[3:])
"""


def _kill_mid_write(src, out, phase, ready):
    """Run `qlin convert src -o out` in a child, SIGKILL it when it reaches ``phase``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, FIXTURES]))
    child = fast_process.Popen([sys.executable, "-c", CHILD, str(ready), phase, "convert", src,
                              "--to-opset", "23", "-o", str(out)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not ready.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never reached the write"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.parametrize("phase", ["copy", "data-written", "model-written"])
def test_sigkill_mid_write_leaves_the_old_output_whole(phase, setup, tmp_path):
    src, out = setup
    before = {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)}
    _kill_mid_write(src, out, phase, tmp_path / "ready")
    after = {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)}
    assert after == before  # old model and data untouched, and no temporary file left
    r = cli("check", out)  # and still a readable model
    assert r.exit_code in (0, 1), r.output


@pytest.fixture(params=["unnamed", "named"])
def temp_mode(request, monkeypatch):
    """Both ways of writing: O_TMPFILE (no name until published) and the fallback for systems
    without it (named .qlin-*.tmp files, removed on any error)."""
    import qlin_cli.convert.write as w

    if request.param == "named":
        monkeypatch.setattr(w, "_unnamed_file", lambda folder: -1)
    return request.param


@pytest.mark.parametrize("phase", ["copy", "model-written"])
def test_sigkill_mid_write_without_an_old_output_leaves_nothing(phase, tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    _kill_mid_write(src, out, phase, tmp_path / "ready")
    assert listing(out.parent) == []


def test_interrupt_mid_write_cleans_up(setup, monkeypatch, temp_mode):
    """An exception (here KeyboardInterrupt, as from Ctrl-C) while copying: nothing left behind."""
    import qlin_cli.convert.write as w

    src, out = setup
    before = {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)}

    def boom(*a):
        raise KeyboardInterrupt

    monkeypatch.setattr(w, "_copy_range", boom)
    r = cli("convert", src, "--to-opset", 23, "-o", out)
    assert r.exit_code != 0
    assert {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)} == before


def test_write_error_is_one_line_and_cleans_up(setup, monkeypatch, temp_mode):
    import qlin_cli.convert.write as w

    src, out = setup
    before = {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)}

    def full(*a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(w, "_copy_range", full)
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out), out, "No space left")
    assert {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)} == before


def test_no_temporary_files_after_any_outcome(tmp_path, guard, temp_mode):  # noqa: F811
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    assert cli("convert", src, "--to-opset", 23, "-o", out / "ok.onnx").exit_code == 0
    assert cli("convert", src, "--to-opset", 10, "-o", out / "refused.onnx").exit_code in (0, 1)
    assert cli("convert", tmp_path / "nope.onnx", "--to-opset", 23, "-o", out / "bad.onnx").exit_code == 2
    assert cli("convert", src, "--to-opset", 23, "--dry-run").exit_code == 0
    names = listing(out)
    assert not [n for n in names if n.startswith(".") or n.endswith(".tmp")], names
    assert listing(tmp_path / "in") == ["m.onnx", "w.bin"]


def test_result_is_complete_and_sparse_where_the_input_is_zero(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    out = tmp_path / "o.onnx"
    assert cli("convert", src, "--to-opset", 23, "-o", out).exit_code == 0
    data = (tmp_path / "o.onnx.data").read_bytes()
    assert data[:WEIGHT_BYTES] == (tmp_path / "in" / "w.bin").read_bytes()
    m = onnx.load(out, load_external_data=False)
    info = {e.key: e.value for e in m.graph.initializer[0].external_data}
    assert info == {"location": "o.onnx.data", "offset": "0", "length": str(WEIGHT_BYTES)}


# ---- refused output paths ---------------------------------------------------------------

def test_output_hard_link_to_the_input_is_refused_without_in_place(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    same = tmp_path / "in" / "same.onnx"
    os.link(src, same)
    for out in (src, same, os.path.relpath(src)):
        assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out), out, "--in-place")


def test_in_place_replaces_the_model_and_leaves_old_data_alone(tmp_path):
    src = _source(tmp_path / "in")
    w_before = fingerprint(tmp_path / "in" / "w.bin")
    r = cli("convert", src, "--to-opset", 23, "--in-place")
    assert r.exit_code == 0, r.output
    assert fingerprint(tmp_path / "in" / "w.bin") == w_before
    assert {o.domain: o.version for o in onnx.load(src, load_external_data=False).opset_import}[""] == 23
    assert listing(tmp_path / "in") == ["m.onnx", "m.onnx.data", "w.bin"]
    assert cli("check", src).exit_code == 0


def test_in_place_when_the_data_file_is_already_named_for_the_output(tmp_path):
    """m.onnx with its weights in m.onnx.data, converted in place: read whole before replaced."""
    src = _source(tmp_path / "in", data_name="m.onnx.data")
    weights = (tmp_path / "in" / "m.onnx.data").read_bytes()
    r = cli("convert", src, "--to-opset", 23, "--in-place")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "in" / "m.onnx.data").read_bytes()[:WEIGHT_BYTES] == weights
    assert listing(tmp_path / "in") == ["m.onnx", "m.onnx.data"]
    assert cli("check", src).exit_code == 0


@pytest.mark.parametrize("target", ["file", "dangling", "input"])
def test_symlink_output_is_refused(target, tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    keep = tmp_path / "keep.onnx"
    keep.write_bytes(b"keep")
    guard.watch(tmp_path / "in", keep)
    link = tmp_path / "link.onnx"
    link.symlink_to({"file": keep, "dangling": tmp_path / "gone.onnx", "input": src}[target])
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", link), link, "symbolic link")
    assert not (tmp_path / "gone.onnx").exists()
    assert not (tmp_path / "link.onnx.data").exists()


def test_symlink_data_output_is_refused(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    keep = tmp_path / "keep.bin"
    keep.write_bytes(b"keep")
    guard.watch(tmp_path / "in", keep)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "o.onnx.data").symlink_to(keep)
    r = cli("convert", src, "--to-opset", 23, "-o", out_dir / "o.onnx")
    assert_bad_input(r, out_dir / "o.onnx.data", "symbolic link")
    assert listing(out_dir) == ["o.onnx.data"]


def test_output_that_is_an_input_data_file_is_refused(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    guard.watch(tmp_path / "in")
    data = tmp_path / "in" / "w.bin"
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", data), data, "data")
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", data, "--in-place"), "--in-place and -o")


def test_output_whose_data_file_is_the_inputs_data_is_refused(tmp_path, guard):  # noqa: F811
    """-o other.onnx where the input keeps its weights in other.onnx.data: writing would
    replace the input's weights under it."""
    src = _source(tmp_path / "in", data_name="o.onnx.data")
    guard.watch(tmp_path / "in")
    out = tmp_path / "in" / "o.onnx"
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out), tmp_path / "in" / "o.onnx.data",
                     "data")
    assert listing(tmp_path / "in") == ["m.onnx", "o.onnx.data"]


def test_output_data_is_never_appended_to_an_old_file(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    old = out_dir / "o.onnx.data"
    old.write_bytes(b"J" * (WEIGHT_BYTES * 2))  # bigger than the new data
    elsewhere = tmp_path / "elsewhere.data"
    os.link(old, elsewhere)  # another name for the old data file's inode
    guard.watch(tmp_path / "in", elsewhere)
    r = cli("convert", src, "--to-opset", 23, "-o", out_dir / "o.onnx")
    assert r.exit_code == 0, r.output
    new = old.read_bytes()
    assert len(new) == WEIGHT_BYTES and b"JJJJ" not in new
    assert new == (tmp_path / "in" / "w.bin").read_bytes()
    assert os.stat(old).st_ino != os.stat(elsewhere).st_ino  # a new file, the old inode untouched
