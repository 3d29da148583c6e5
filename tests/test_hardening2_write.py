"""Hardening 2: races, signals, permissions and output paths of `qlin convert`.

* two runs writing one output never leave one run's model beside the other's data file;
* SIGINT, SIGTERM and SIGHUP remove every temporary file and exit 130 / 143 / 129 with one
  line; `qlin check` interrupted exits 130 too (not click's "Aborted!" with exit 1);
* a replaced output keeps its mode (and owner, where the system allows);
* only regular files or absent paths are outputs: a device, a FIFO is never replaced, also
  when one appears while qlin writes;
* external data of training_info graphs is copied beside a converted model;
* an unreadable data file and an absurd --ir-version are one-line errors, not internal ones.
"""

from __future__ import annotations

import os
import signal
import stat
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
    external_tensor,
    fingerprint,
    guard,
    listing,
)
from onnx import TensorProto, helper, numpy_helper
from paths import FIXTURES, MODELS, ROOT

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _source(folder, tag: str, size: int, data_name: str = "w.bin") -> str:
    """folder/m.onnx: graph named ``tag``, DequantizeLinear of an int8 weight of ``size``
    bytes (each byte derived from ``tag``) kept in folder/<data_name>."""
    rng = np.random.default_rng(sum(map(ord, tag)))
    return external_dq_source(folder, rng.integers(1, 127, size, dtype=np.int8), data_name, tag)


def _weights_of(model_path: str) -> tuple[str, bytes]:
    """(graph name, the bytes its tensor 'w' reads from its data file)."""
    m = onnx.load(model_path, load_external_data=False)
    info = {e.key: e.value for e in m.graph.initializer[0].external_data}
    with open(os.path.join(os.path.dirname(model_path), info["location"]), "rb") as f:
        f.seek(int(info["offset"]))
        return m.graph.name, f.read(int(info["length"]))


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, FIXTURES]))


# A child running qlin with one function of qlin_cli.convert.write (or the engine) paused:
# argv: ready-file, hook, seconds, qlin args... It creates ready-file when it reaches the hook.
CHILD = r"""
import os, sys, time
ready, hook, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
import qlin_cli.convert.write as w

def pause():
    open(ready, "w").close()
    release = os.environ.get("QLIN_TEST_RELEASE")  # a file another process creates: go on then
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (release and os.path.exists(release)):
        time.sleep(0.01)

if hook == "lock-waiter":  # marks (ready) the first time it finds the folder locked, then waits on
    import fcntl
    real_flock = fcntl.flock
    def flock(fd, op):
        try:
            return real_flock(fd, op)
        except BlockingIOError:
            open(ready, "w").close()
            raise
    fcntl.flock = flock
elif hook == "between-renames":  # after the data file is published, before the model is
    real, n = os.replace, [0]
    def replace(a, b):
        real(a, b)
        n[0] += 1
        if n[0] == 1:
            pause()
    w.os.replace = replace
elif hook.startswith("copy"):  # halfway through copying the weights
    if hook == "copy-named":
        w._unnamed_file = lambda folder: -1
    real_copy = w._copy_range
    def slow(src, dst, offset, length):
        real_copy(src, dst, offset, length // 2)
        dst.flush()
        pause()
        real_copy(src, dst, offset + length // 2, length - length // 2)
    w._copy_range = slow
elif hook == "check":  # while checking the first file
    import qlin_cli.check.engine as e
    real_check = e.check_file
    def check_file(*a, **k):
        pause()
        return real_check(*a, **k)
    e.check_file = check_file
from qlin_cli.cli import main
main(sys.argv[4:])
"""


def _start(ready, hook, seconds, *args, release=None):
    """The child starts with its signals at their default, as from a terminal: a suite run under
    nohup or in a background job (SIGHUP / SIGINT ignored, which qlin then keeps ignoring) tests the same
    thing."""
    env = _env() if release is None else dict(_env(), QLIN_TEST_RELEASE=str(release))
    return fast_process.Popen([sys.executable, "-c", CHILD, str(ready), hook, str(seconds), *map(str, args)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              default_signals=[number for number, _ in SIGNALS.values()])


def _wait_for(path, child, timeout=90):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never reached its hook"
        time.sleep(0.02)


# ---- writers that do not mix ----------------------------------------------------------------

def test_two_writers_of_one_output_never_mix(tmp_path, guard):  # noqa: F811
    """A publishes its data file and pauses before its model; B converts to the same output
    meanwhile. Without the folder lock B's pair lands inside A's, and A's model then points
    into B's data file. With it, B waits: the output is one run's model and that run's data."""
    a = _source(tmp_path / "a", "A", 3 * 2**20)
    b = _source(tmp_path / "b", "B", 2 * 2**20 + 123)
    guard.watch(tmp_path / "a", tmp_path / "b")
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    # A holds its pause until B has found the folder locked (B marks "waiting"), so B is
    # known to have waited; no fixed sleep (A gives up pausing after 60 s)
    first = _start(tmp_path / "ready", "between-renames", 60, "convert", a, "--to-opset", 23, "-o", out,
                   release=tmp_path / "waiting")
    second = None
    try:
        _wait_for(tmp_path / "ready", first)
        second = _start(tmp_path / "waiting", "lock-waiter", 0, "convert", b, "--to-opset", 23, "-o", out)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 0, err
        assert first.wait(timeout=60) == 0, first.communicate()
    finally:
        for child in (first, second):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
    assert os.path.exists(tmp_path / "waiting")  # B found the folder locked and waited
    name, weights = _weights_of(str(out))
    expect = {"A": _weights_of(a)[1], "B": _weights_of(b)[1]}
    assert weights == expect[name], f"model of run {name} reads another run's weights"
    assert name == "B"  # B waited for A, then replaced A's pair with its own
    assert listing(out.parent) == ["o.onnx", "o.onnx.data"]


def test_lock_wait_is_bounded(tmp_path, guard, monkeypatch):  # noqa: F811
    """A folder locked by someone else for longer than LOCK_WAIT: one line, nothing left."""
    import fcntl

    import qlin_cli.convert.write as w

    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(w, "LOCK_WAIT", 0.3)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out / "o.onnx"), out,
                         "another process")
    finally:
        os.close(fd)
    assert listing(out) == []


# ---- signals ----------------------------------------------------------------------------------

SIGNALS = {"SIGINT": (signal.SIGINT, 130), "SIGTERM": (signal.SIGTERM, 143), "SIGHUP": (signal.SIGHUP, 129)}


@pytest.mark.parametrize("mode", ["copy-named", "copy"])
@pytest.mark.parametrize("sig", sorted(SIGNALS))
def test_signal_mid_write_removes_temporary_files(sig, mode, tmp_path, guard):  # noqa: F811
    """Named temporary files (the fallback without O_TMPFILE) and unnamed ones: after the
    signal the output folder is as before (here: empty), one line says why, exit 128 + N."""
    src = _source(tmp_path / "in", "A", 6 * 2**20)
    guard.watch(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    child = _start(tmp_path / "ready", mode, 600, "convert", src, "--to-opset", 23, "-o", out / "o.onnx")
    try:
        _wait_for(tmp_path / "ready", child)
        if mode == "copy-named":
            assert [n for n in listing(out) if n.startswith(".qlin-")]  # the temp file exists now
        number, status = SIGNALS[sig]
        os.kill(child.pid, number)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == status, err
    assert err.decode().splitlines() == [f"qlin: error: interrupted by {sig}"]
    assert listing(out) == []


def test_signal_keeps_an_old_output_whole(tmp_path, guard):  # noqa: F811
    old_src = _source(tmp_path / "old", "OLD", 4096)
    src = _source(tmp_path / "in", "NEW", 6 * 2**20)
    guard.watch(tmp_path / "in", tmp_path / "old")
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    assert cli("convert", old_src, "--to-opset", 23, "-o", out).exit_code == 0
    before = {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)}
    child = _start(tmp_path / "ready", "copy-named", 600, "convert", src, "--to-opset", 23, "-o", out)
    try:
        _wait_for(tmp_path / "ready", child)
        os.kill(child.pid, signal.SIGTERM)
        child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 143
    assert {p: fingerprint(os.path.join(out.parent, p)) for p in listing(out.parent)} == before


def test_interrupted_check_exits_130(tmp_path, guard):  # noqa: F811
    child = _start(tmp_path / "ready", "check", 600, "check", os.path.join(MODELS, "clean"))
    try:
        _wait_for(tmp_path / "ready", child)
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert err.decode().splitlines() == ["qlin: error: interrupted by SIGINT"]
    assert b"Traceback" not in err and b"Aborted" not in err


def test_a_second_signal_does_not_cut_the_cleanup_short(monkeypatch):
    """While cleaning up after the first signal, later ones are ignored; a signal inside a
    critical block is held until it ends."""
    from qlin_cli import signals
    from qlin_cli.errors import Interrupted

    with signals.handled():
        with pytest.raises(Interrupted) as first:
            with signals.critical():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler has run: it held the signal
                done = True
        assert done and first.value.signum == signal.SIGTERM
        os.kill(os.getpid(), signal.SIGINT)  # during the cleanup: ignored
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# ---- mode and owner ---------------------------------------------------------------------------

def test_in_place_keeps_mode_and_owner(tmp_path):
    src = _source(tmp_path / "in", "A", 4096)
    os.chmod(src, 0o600)
    owner = (4321, 4322) if IS_ROOT else (os.getuid(), os.getgid())
    if IS_ROOT:
        os.chown(src, *owner)
    r = cli("convert", src, "--to-opset", 23, "--in-place")
    assert r.exit_code == 0, r.output
    st = os.stat(src)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert (st.st_uid, st.st_gid) == owner
    data = os.stat(src + ".data")  # a new data file takes the model's mode: private stays private
    assert stat.S_IMODE(data.st_mode) == 0o600 and (data.st_uid, data.st_gid) == owner


def test_replaced_output_keeps_its_mode_and_its_data_file_too(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    out = tmp_path / "o.onnx"
    assert cli("convert", src, "--to-opset", 23, "-o", out).exit_code == 0
    os.chmod(out, 0o640)
    os.chmod(str(out) + ".data", 0o604)
    old_inode = os.stat(out).st_ino
    assert cli("convert", src, "--to-opset", 21, "-o", out).exit_code == 0
    assert os.stat(out).st_ino != old_inode  # really a new file
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(str(out) + ".data").st_mode) == 0o604


def test_new_output_gets_the_umask_mode(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    old = os.umask(0o027)
    try:
        assert cli("convert", src, "--to-opset", 23, "-o", tmp_path / "o.onnx").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "o.onnx").st_mode) == 0o640


# ---- only regular files as outputs ----------------------------------------------------------

def _device(path) -> bool:
    """A character device like /dev/null at ``path`` (root only), else False."""
    if not IS_ROOT:
        return False
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return True


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_output_that_is_not_a_regular_file_is_refused(kind, tmp_path, guard):  # noqa: F811
    """Only nodes the test makes itself: a bug here must not cost the machine its /dev/null."""
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(target)
    elif not _device(target):
        pytest.skip("making a device node needs root")
    before = os.stat(target)
    r = cli("convert", src, "--to-opset", 23, "-o", target)
    assert_bad_input(r, target, "not a regular file")
    after = os.stat(target)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert not [n for n in os.listdir(os.path.dirname(str(target))) if n.startswith(".qlin-")]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_data_path_that_is_not_a_regular_file_is_refused(kind, tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    data = tmp_path / "out" / "o.onnx.data"
    if kind == "fifo":
        os.mkfifo(data)
    elif not _device(data):
        pytest.skip("making a device node needs root")
    r = cli("convert", src, "--to-opset", 23, "-o", out)
    assert_bad_input(r, data, "not a regular file")
    assert listing(out.parent) == ["o.onnx.data"] and not stat.S_ISREG(os.lstat(data).st_mode)


def test_output_that_becomes_a_fifo_while_qlin_writes_is_not_replaced(tmp_path, guard, monkeypatch):  # noqa: F811
    """The targets are checked again under the lock, just before the renames."""
    import qlin_cli.convert.write as w

    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    real = w._serialize

    def swap(model, path, *rest):
        os.mkfifo(path)  # someone puts a FIFO there after qlin's first check
        return real(model, path, *rest)

    monkeypatch.setattr(w, "_serialize", swap)
    assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out), out, "not a regular file")
    assert listing(out.parent) == ["o.onnx"] and stat.S_ISFIFO(os.lstat(out).st_mode)


# ---- training_info external data ----------------------------------------------------------

def test_training_info_external_data_is_copied(tmp_path, guard):  # noqa: F811
    folder = tmp_path / "in"
    src = _source(folder, "A", 4096)
    train = bytes(range(7, 7 + 200)) * 3
    (folder / "train.bin").write_bytes(train)
    m = onnx.load(src, load_external_data=False)
    t = external_tensor("tw", [len(train)], "train.bin", 0, len(train))
    node = helper.make_node("Identity", ["tw"], ["tw_out"])
    info = m.training_info.add()
    info.algorithm.CopyFrom(helper.make_graph(
        [node], "train", [], [helper.make_tensor_value_info("tw_out", TensorProto.INT8, [len(train)])],
        initializer=[t]))
    with open(src, "wb") as f:
        f.write(m.SerializeToString())
    guard.watch(folder)
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    r = cli("convert", src, "--to-opset", 23, "-o", out)
    assert r.exit_code == 0, r.output
    got = onnx.load(out, load_external_data=False).training_info[0].algorithm.initializer[0]
    ext = {e.key: e.value for e in got.external_data}
    assert ext["location"] == "o.onnx.data"
    with open(str(out) + ".data", "rb") as f:
        f.seek(int(ext["offset"]))
        assert f.read(int(ext["length"])) == train
    assert listing(out.parent) == ["o.onnx", "o.onnx.data"]


# ---- unreadable data, absurd IR version ---------------------------------------------------

def _deny(monkeypatch, module, path_end: str):
    """Make ``open`` in ``module`` fail with EACCES for files ending in ``path_end`` (root reads
    any file, so a chmod alone cannot make one unreadable)."""
    import builtins

    def fake_open(file, *a, **k):
        if str(file).endswith(path_end):
            raise PermissionError(13, "Permission denied", str(file))
        return builtins.open(file, *a, **k)

    monkeypatch.setattr(module, "open", fake_open, raising=False)


def _scale_model(folder) -> str:
    """A DequantizeLinear whose scale lives in folder/s.bin (an external scale)."""
    os.makedirs(folder, exist_ok=True)
    (folder / "s.bin").write_bytes(np.float32(0.5).tobytes())
    s = external_tensor("s", [], "s.bin", 0, 4, data_type=TensorProto.FLOAT)
    w = numpy_helper.from_array(np.arange(8, dtype=np.int8), "w")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
                          initializer=[w, s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    path = str(folder / "m.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def test_unreadable_scale_file_is_one_line(tmp_path, guard, monkeypatch):  # noqa: F811
    import qlin_cli.model.tensors as tensors

    path = _scale_model(tmp_path / "in")
    guard.watch(tmp_path / "in")
    _deny(monkeypatch, tensors, "s.bin")
    r = cli("convert", path, "--to-opset", 23, "-o", tmp_path / "o.onnx")
    line = assert_bad_input(r, path, "'s.bin'", "cannot be read", "Permission denied")
    assert "internal error" not in line
    assert not (tmp_path / "o.onnx").exists()
    # `qlin check` reports it as a finding on the tensor (QL008) and checks the rest
    r = cli("check", path)
    assert r.exit_code == 1, r.output
    assert "QL008" in r.output and "'s.bin'" in r.output and "Permission denied" in r.output
    assert "internal error" not in r.output


@pytest.mark.skipif(IS_ROOT, reason="root reads files whatever their mode")
def test_unreadable_scale_file_by_its_mode(tmp_path, guard):  # noqa: F811
    path = _scale_model(tmp_path / "in")
    os.chmod(tmp_path / "in" / "s.bin", 0)
    try:
        line = assert_bad_input(cli("check", path), path, "cannot be read")
        assert "internal error" not in line
    finally:
        os.chmod(tmp_path / "in" / "s.bin", 0o644)


def test_data_file_unreadable_while_copying_is_one_line(tmp_path, guard, monkeypatch):  # noqa: F811
    import qlin_cli.convert.write as w

    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    _deny(monkeypatch, w, "w.bin")
    line = assert_bad_input(cli("convert", src, "--to-opset", 23, "-o", out / "o.onnx"), src,
                            "cannot read external data file 'w.bin'", "Permission denied")
    assert "cannot write" not in line
    assert listing(out) == []


@pytest.mark.parametrize("ir", [-1, 0, 2, 99, 2**31, 2**64, 10**30])
def test_absurd_ir_version_is_one_line(ir, tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    r = cli("convert", src, "--to-opset", 23, "--ir-version", ir, "-o", tmp_path / "o.onnx")
    line = assert_bad_input(r, "--ir-version", str(ir))
    assert "internal error" not in line
    assert not (tmp_path / "o.onnx").exists()


def test_newest_ir_version_is_accepted(tmp_path, guard):  # noqa: F811
    src = _source(tmp_path / "in", "A", 4096)
    guard.watch(tmp_path / "in")
    r = cli("convert", src, "--to-opset", 23, "--ir-version", onnx.IR_VERSION, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 0, r.output
    assert onnx.load(tmp_path / "o.onnx", load_external_data=False).ir_version == onnx.IR_VERSION
