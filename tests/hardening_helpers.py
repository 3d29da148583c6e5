"""Shared pieces of the hardening tests (tests/test_hardening_*.py).

* ``inputs_unchanged``: an autouse fixture (import it into a test module) that
  hashes the committed fixture models and every file a test registers with
  ``guard.watch(...)`` before the test runs qlin, and fails the test if any of
  them changed afterwards (content, size or inode).
* ``cli`` / ``proc``: run qlin in-process (click's runner) or as a real process.
* ``assert_bad_input``: exit status 2 and exactly one ``qlin: error: PATH: ...``
  line on stderr, no traceback.
* Builders for models with external data.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import time

import fast_process
import numpy as np
import onnx
import pytest
from builders import make
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS, ROOT

from qlin_cli.cli import main

SEEK_DATA = getattr(os, "SEEK_DATA", None)
SEEK_HOLE = getattr(os, "SEEK_HOLE", None)


# sha256 of each file as last hashed, by (path, inode, size, mtime, ctime): a write to a file or
# a change of its times moves its ctime to the clock's time, which no process can set back, so a
# file whose stat is the same holds the same bytes and is not read again (the guard watches ~70
# fixture files around each of ~1,000 tests). Only a file last changed over a second before it
# was hashed is kept: a write within the same tick of the file clock could leave its ctime as it was.
_HASHED: dict[tuple, str] = {}


def fingerprint(path: str) -> tuple:
    """(inode, size, sha256 of the content); holes of a sparse file are skipped,
    they read as zeros by definition, so a 3 GiB sparse file hashes at once."""
    st = os.stat(path, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return ("other", stat.S_IFMT(st.st_mode))
    seen = (path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    digest = _HASHED.get(seen)
    if digest is None:
        digest = _sha256(path, st.st_size)
        if time.time_ns() - st.st_ctime_ns > 10**9:
            _HASHED[seen] = digest
    return (st.st_ino, st.st_size, digest)


def _sha256(path: str, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        fd = f.fileno()
        pos = 0
        while pos < size:
            if SEEK_DATA is not None:
                try:
                    pos = os.lseek(fd, pos, SEEK_DATA)
                    end = os.lseek(fd, pos, SEEK_HOLE)
                except OSError:  # ENXIO: no data after pos
                    break
            else:
                end = size
            h.update(pos.to_bytes(8, "little"))
            os.lseek(fd, pos, os.SEEK_SET)
            while pos < end:
                chunk = os.read(fd, min(8 * 2**20, end - pos))
                if not chunk:
                    break
                h.update(chunk)
                pos += len(chunk)
    return h.hexdigest()


class Guard:
    def __init__(self):
        self.before: dict[str, tuple] = {}

    def watch(self, *paths) -> None:
        """Remember these files (or every file under these folders) as they are now."""
        for p in map(str, paths):
            if os.path.isdir(p) and not os.path.islink(p):
                for root, _, files in os.walk(p):
                    for f in files:
                        full = os.path.join(root, f)
                        self.before[full] = fingerprint(full)
            else:
                self.before[p] = fingerprint(p)

    def verify(self) -> None:
        changed = []
        for p, fp in self.before.items():
            if not os.path.lexists(p):
                changed.append(f"{p} was removed")
            elif fingerprint(p) != fp:
                changed.append(f"{p} was modified")
        assert not changed, "qlin damaged its input: " + "; ".join(changed)


@pytest.fixture(autouse=True)
def guard():
    g = Guard()
    g.watch(MODELS)
    yield g
    g.verify()


def cli(*args):
    """qlin in-process; click's runner keeps stdout and stderr apart."""
    return CliRunner().invoke(main, [str(a) for a in args])


def proc(*args, cwd=None, timeout=120):
    """qlin as a real process (python -m qlin_cli)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.run([sys.executable, "-m", "qlin_cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def procs(*calls, timeout=120):
    """Several real qlin processes side by side: each call is (args, cwd); their
    CompletedProcess results in order (independent runs only: nothing is shared)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    children = [fast_process.Popen([sys.executable, "-m", "qlin_cli", *map(str, args)], cwd=cwd, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for args, cwd in calls]
    results = []
    try:
        for child in children:
            out, err = child.communicate(timeout=timeout)
            results.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return results


def assert_bad_input(result, path, *words):
    """Exit 2, one line ``qlin: error: PATH: reason`` on stderr naming ``words``, no traceback."""
    code = getattr(result, "exit_code", getattr(result, "returncode", None))
    err = result.stderr
    out = getattr(result, "output", None) or result.stdout
    assert code == 2, f"exit {code}\nstdout: {out}\nstderr: {err}"
    exc = getattr(result, "exception", None)
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"qlin: error: {path}: "), lines[0]
    assert "Traceback" not in err + out
    for w in words:
        assert w.lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def assert_reported(result, path, code, *words):
    """Exit 1 with a finding ``code`` (an error) on PATH whose line names ``words``: what
    `qlin check` does with a defect of the model it can place (unreadable external data is
    QL008's), checking the rest; no traceback, nothing on stderr."""
    exit_code = getattr(result, "exit_code", getattr(result, "returncode", None))
    out = getattr(result, "output", None) or result.stdout
    assert exit_code == 1, f"exit {exit_code}\nstdout: {out}\nstderr: {result.stderr}"
    assert "Traceback" not in out + result.stderr and not result.stderr.strip(), result.stderr
    lines = [ln for ln in out.splitlines() if f" {code} error " in ln]
    assert len(lines) == 1 and lines[0].startswith(f"{path}:"), out
    for w in words:
        assert w.lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def assert_external_refused(path, *words, out=None, opset=23, run=None):
    """Unreadable external data: `qlin check` reports it (QL008) and `qlin convert` refuses
    PATH as bad input naming ``words`` (writing nowhere). Returns check's finding line."""
    run = run or cli
    line = assert_reported(run("check", path), path, "QL008", *words)
    target = ["-o", out] if out is not None else ["--dry-run"]
    assert_bad_input(run("convert", path, "--to-opset", opset, *target), path, *words)
    if out is not None:
        assert not os.path.exists(out)
    return line


def assert_both_refuse(path, *words, out=None, opset=23, run=None):
    """`qlin check` and `qlin convert` both refuse PATH as bad input naming ``words``.

    With ``out`` (a file path) convert writes nowhere: ``out`` does not exist after;
    without it convert runs with --dry-run. Returns check's error line.
    """
    run = run or cli
    line = assert_bad_input(run("check", path), path, *words)
    target = ["-o", out] if out is not None else ["--dry-run"]
    assert_bad_input(run("convert", path, "--to-opset", opset, *target), path, *words)
    if out is not None:
        assert not os.path.exists(out)
    return line


def dq_graph(weight: TensorProto, dims) -> onnx.GraphProto:
    """DequantizeLinear(weight, 0.5, 0) -> y."""
    s = numpy_helper.from_array(np.float32(0.5), "s")
    z = numpy_helper.from_array(np.int8(0), "z")
    node = helper.make_node("DequantizeLinear", [weight.name, "s", "z"], ["y"], name="dq")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))
    return helper.make_graph([node], "g", [], [y], initializer=[weight, s, z])


def external_tensor(name, dims, location, offset=None, length=None, data_type=TensorProto.INT8):
    t = TensorProto(name=name, data_type=data_type, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=str(location))
    if offset is not None:
        t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    return t


def model_of(graph, opset=21, functions=()) -> onnx.ModelProto:
    return make(graph, {"": opset}, functions)


def save_raw(model: onnx.ModelProto, path) -> str:
    """Write the proto as is (onnx.save would try to resolve external data)."""
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return str(path)


def external_dq_model(folder, location="w.bin", *, dims=(16,), offset=None, length=None,
                      data: bytes | None = None, name="m.onnx") -> str:
    """folder/m.onnx: a DequantizeLinear of an int8 weight stored at ``location``;
    ``data`` (default 16 bytes 1..16) is written to folder/w.bin when given or by default."""
    folder = str(folder)
    os.makedirs(folder, exist_ok=True)
    if data is None:
        data = bytes(range(1, 17))
    if location == "w.bin":
        with open(os.path.join(folder, "w.bin"), "wb") as f:
            f.write(data)
    w = external_tensor("w", dims, location, offset, length)
    return save_raw(model_of(dq_graph(w, dims)), os.path.join(folder, name))


def listing(folder) -> list[str]:
    """Every name under folder, relative, sorted (hidden temp files included)."""
    out = []
    for root, dirs, files in os.walk(str(folder)):
        for n in dirs + files:
            out.append(os.path.relpath(os.path.join(root, n), str(folder)))
    return sorted(out)


# ---- hostile names (tests/test_hardening2_*.py) -------------------------------------------

# A name an attacker would give a node, a graph, a function or a file: a forged GitHub
# annotation on a new line, a carriage return, ANSI sequences (clear screen, set the window
# title), a bidi override, Unicode line separators, NEL, a pre-escaped newline and rich markup.
EVIL = ("n\n::error file=forged.py,line=1::forged annotation\r\x1b[2J\x1b]0;title\x07"
        "\u202eevil\u2028\x85%0A[bold red]markup[/bold red]\\")
EVIL_SEQUENCES = ("\n::error", "\x1b[2J", "\x1b]0;", "\x07", "\u202e", "\u2028", "\x85", "\r")


def unsafe_characters(text: str, allow: str = "\n") -> list[str]:
    """The characters of ``text`` that are not printable, except those in ``allow``."""
    return sorted({c for c in text if not c.isprintable() and c not in allow})


def evil_model(path, name: str = EVIL) -> str:
    """A model whose every name (nodes, tensors, graphs) starts with ``name``: an error
    (QL405, a per-axis scale of the wrong length) on a node of the main graph and on one
    in each branch of an If, so names reach messages, node labels and graph paths."""
    def q(tag):
        return helper.make_node("QuantizeLinear", [f"{name}x", f"{name}s", f"{name}z"],
                                [f"{name}y{tag}"], name=f"{name}{tag}", axis=1)

    x = helper.make_tensor_value_info(f"{name}x", TensorProto.FLOAT, [2, 3])
    inits = [numpy_helper.from_array(np.ones(4, np.float32), f"{name}s"),
             numpy_helper.from_array(np.zeros(4, np.uint8), f"{name}z")]
    then = helper.make_graph([q("then")], f"{name}then", [],
                             [helper.make_tensor_value_info(f"{name}ythen", TensorProto.UINT8, [2, 3])])
    other = helper.make_graph([q("else")], f"{name}else", [],
                              [helper.make_tensor_value_info(f"{name}yelse", TensorProto.UINT8, [2, 3])])
    cond = numpy_helper.from_array(np.array(True), f"{name}c")
    branch = helper.make_node("If", [f"{name}c"], [f"{name}yif"], name=f"{name}if", then_branch=then,
                              else_branch=other)
    outs = [helper.make_tensor_value_info(f"{name}ymain", TensorProto.UINT8, [2, 3]),
            helper.make_tensor_value_info(f"{name}yif", TensorProto.UINT8, [2, 3])]
    g = helper.make_graph([q("main"), branch], f"{name}graph", [x], outs, initializer=inits + [cond])
    return save_raw(model_of(g), path)


# ---- names for the fuzz tests -------------------------------------------------------------

def _hypothesis_names():
    from hypothesis import strategies as st

    names = st.one_of(
        st.sampled_from([EVIL, "", "\n::error::x", "\x1b[2J", "\x1b]0;t\x07", "\u202e", "\r", "%0A",
                         "[bold]x[/bold]", "a,b:c", "\\", "\x85\u2028", "x" * 5000]),
        st.text(max_size=40),
    )
    targets = st.sampled_from(["node", "graph", "tensor", "tensor-refs", "input-refs", "function", "domain"])
    return names, targets


# Names an attacker would choose (forged annotations, escape sequences, bidi, markup) and any
# text; and what ``rename`` can give them to.
NAMES, NAME_TARGETS = _hypothesis_names()


def model_nodes(m: onnx.ModelProto) -> list:
    """The nodes of the main graph and of the model-local functions."""
    out = list(m.graph.node)
    for fn in m.functions:
        out += list(fn.node)
    return out


def rename(m: onnx.ModelProto, k: int, target: str, name: str) -> None:
    """Give something in the model a hostile name: a node, the graph, a tensor (alone, or with
    every use of it), a graph input (with its uses), a function (with its calls), a domain."""
    nodes = model_nodes(m)
    if target == "node" and nodes:
        nodes[k % len(nodes)].name = name
    elif target == "graph":
        m.graph.name = name
    elif target in ("tensor", "tensor-refs") and m.graph.initializer:
        t = m.graph.initializer[k % len(m.graph.initializer)]
        old, t.name = t.name, name
        if target == "tensor-refs":
            _rename_uses(m, old, name)
    elif target == "input-refs" and m.graph.input:
        vi = m.graph.input[k % len(m.graph.input)]
        old, vi.name = vi.name, name
        _rename_uses(m, old, name)
    elif target == "function" and m.functions:
        fn = m.functions[k % len(m.functions)]
        for n in model_nodes(m):
            if n.domain == fn.domain and n.op_type == fn.name:
                n.op_type = name
        fn.name = name
    elif target == "domain" and nodes:
        nodes[k % len(nodes)].domain = name


def _rename_uses(m: onnx.ModelProto, old: str, new: str) -> None:
    for n in model_nodes(m):
        for i, x in enumerate(n.input):
            if x == old:
                n.input[i] = new
        for i, x in enumerate(n.output):
            if x == old:
                n.output[i] = new
    for vi in list(m.graph.output) + list(m.graph.value_info):
        if vi.name == old:
            vi.name = new


def external_dq_source(folder, data: np.ndarray, data_name: str = "w.bin", graph: str = "g") -> str:
    """folder/m.onnx: a DequantizeLinear (opset 21) of the int8 weight ``data``, kept in
    folder/<data_name>; returns the model's path."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, data_name), "wb") as f:
        f.write(data.tobytes())
    size = data.size
    w = external_tensor("w", [size], data_name, 0, size)
    s = numpy_helper.from_array(np.float32(0.25), "s")
    z = numpy_helper.from_array(np.int8(1), "z")
    node = helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])
    m = helper.make_model(helper.make_graph([node], graph, [], [y], initializer=[w, s, z]),
                          opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    path = os.path.join(folder, "m.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path
