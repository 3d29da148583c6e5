"""Hardening 3: `qlin check -j 2` when a worker process is killed, and when the parent is.

qlin's pool gives each worker one file at a time (qlin_cli/parallel.py): a killed worker's
file is reported not checked, the others are checked, the run ends with exit 2 within a
bound; workers die with their parent (PR_SET_PDEATHSIG on Linux)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import fast_process
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from paths import ROOT

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
FILES = 8
NODES = 6000


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """FILES copies of a model of 6,000 QLinearMatMul nodes (about 0.2 s of CPU to check each,
    so that a worker killed once it has spent 80 ms is still checking a file, however late a
    loaded machine runs this test's polling: at 1,500 nodes a check took 0.06 s, and a worker
    could be done with all its files first; 16 MB in all, enough for `-j 2` to use workers)."""
    import onnx

    rng = np.random.default_rng(0)
    nodes, inits = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])], [
        numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    for i in range(NODES):
        inits += [numpy_helper.from_array(rng.integers(-100, 100, (16, 16)).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.01), f"ws{i}"),
                  numpy_helper.from_array(np.int8(0), f"wz{i}")]
        inputs = [f"q{i}", "s", "z", f"w{i}", f"ws{i}", f"wz{i}", "s", "z"]
        nodes.append(helper.make_node("QLinearMatMul", inputs, [f"q{i + 1}"]))
    nodes.append(helper.make_node("DequantizeLinear", [f"q{NODES}", "s", "z"], ["y"]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], inits)
    out = tmp_path_factory.mktemp("workers")
    first = str(out / "m0.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), first)
    for i in range(1, FILES):
        shutil.copy(first, out / f"m{i}.onnx")
    return str(out)


def _children(pid: int, deadline: float) -> list[int]:
    """The pid's two worker processes, once both are there."""
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            found = [int(c) for c in f.read().split()]
        if len(found) >= 2:
            return found
        time.sleep(0.02)
    raise AssertionError("no workers started")


def _busy(pid: int, deadline: float) -> None:
    """Until the worker ``pid`` has spent 80 ms of CPU: it has a file and is checking it (an
    idle worker waits for its next file without using any; a fixed pause could end before a
    worker on a loaded machine had taken its first file)."""
    tick = os.sysconf("SC_CLK_TCK")
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= 0.08:  # utime + stime
            return
        time.sleep(0.005)
    raise AssertionError("the worker never got to work")


def _start(folder: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT, QLIN_NO_CACHE="1")
    return fast_process.Popen([sys.executable, "-m", "qlin_cli", "check", "-j", "2", folder],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_killed_worker_costs_its_file_only(folder):
    p = _start(folder)
    workers = _children(p.pid, time.monotonic() + 30)
    _busy(workers[0], time.monotonic() + 30)
    os.kill(workers[0], signal.SIGKILL)
    killed = time.monotonic()
    out, err = p.communicate(timeout=60)
    assert time.monotonic() - killed < 10
    assert p.returncode == 2, (out, err)
    lost = [line for line in err.splitlines() if "not checked" in line]
    assert len(lost) == 1 and lost[0].endswith("its worker process ended (killed by signal 9)"), err
    assert "Traceback" not in err
    assert f"in {FILES - 1} files checked; 1 file could not be checked" in out


def test_workers_die_with_their_parent(folder):
    p = _start(folder)
    workers = _children(p.pid, time.monotonic() + 30)
    p.kill()
    p.wait()
    deadline = time.monotonic() + 5  # they go within moments; polled, not a fixed sleep
    while True:
        alive = []
        for w in workers:
            try:
                with open(f"/proc/{w}/status") as f:
                    state = next(line for line in f if line.startswith("State:"))
            except FileNotFoundError:
                continue  # gone
            if "Z" not in state.split()[1]:  # a zombie has ended; its new parent reaps it
                alive.append((w, state.strip()))
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert alive == []
