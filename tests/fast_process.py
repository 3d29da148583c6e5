"""Real qlin processes for tests, started by fork instead of by a new interpreter.

A test that runs ``python -m qlin_cli ...`` (or ``python -c CODE ...`` that imports qlin) as a real
process pays 0.4-0.8 s to start the interpreter and import onnx, numpy and qlin; make test did that
about 120 times. Here one server process per test worker imports them once and forks a child per
run. The child is a real process: its own pid, descriptors 0-2 (pipes, files, /dev/full, the
worker's own), working folder, environment, exit status (a signal gives -N), signals, threads and
atexit handlers, with sys.stdin / stdout / stderr rebuilt over its descriptors as an interpreter
builds them and ``-m`` / ``-c`` run as the interpreter runs them.

``run`` and ``Popen`` take subprocess's arguments. A call a fork cannot stand for goes to
subprocess unchanged: an argv that is not this interpreter with ``-m qlin_cli`` or ``-c``; an
environment that differs in what an interpreter reads as it starts (PYTHON*, LC_*, LANG, thread
counts; PYTHONPATH aside, which the child puts in sys.path); preexec_fn or any other Popen option;
``fresh=True`` (tests of start-up time or of what a run imports); and every call when
QLIN_TEST_FRESH is set (``QLIN_TEST_FRESH=1 make test`` runs the suite on fresh interpreters only,
to hold the two ways equal).
"""

from __future__ import annotations

import atexit
import io
import json
import locale
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from paths import ROOT

PIPE, STDOUT, DEVNULL = subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL
CompletedProcess, TimeoutExpired = subprocess.CompletedProcess, subprocess.TimeoutExpired

# What a server imports once: what `qlin check` / `convert` / `inspect` runs import (each a try: a
# module that fails to import is left to the child, which reports it as a fresh run would). ``-c``
# code gets a server with the third-party modules only: such code may replace a qlin function
# before qlin's modules import it by name, as it can in a fresh interpreter.
PRELOAD = ("numpy", "ml_dtypes", "onnx", "onnx.checker", "onnx.shape_inference", "onnx.numpy_helper",
           "click", "click.testing", "rich.console", "rich.table", "qlin_cli.cli", "qlin_cli.api",
           "qlin_cli.output", "qlin_cli.check.engine", "qlin_cli.rules", "qlin_cli.report.text",
           "qlin_cli.report.json_report", "qlin_cli.report.sarif", "qlin_cli.report.console",
           "qlin_cli.config", "qlin_cli.discover", "qlin_cli.fix", "qlin_cli.targets.registry",
           "qlin_cli.convert_pipeline", "qlin_cli.inspect_command", "qlin_cli.parallel", "qlin_cli.progress",
           "concurrent.futures", "multiprocessing", "qlin_cli.model.partial", "qlin_cli.signals",
           "qlin_cli.convert.run", "qlin_cli.evaluator", "qlin_cli.targets.onnxruntime",
           "qlin_cli.targets.openvino", "qlin_cli.targets.nnapi", "qlin_cli.targets.tensorrt",
           "qlin_cli.report.table")

SERVER = r"""
import gc, importlib, io, os, select, signal, socket, struct, sys, json
for _name in sys.argv[3].split(","):
    try:
        importlib.import_module(_name)
    except Exception:
        pass
# what the imports made is kept out of the collector's walks, as in a server that forks (the
# children's collections, their exit's above all, walked every object onnx and numpy made: a run of
# `python -c pass` took 0.16 s, 0.05 s with this)
gc.collect()
gc.freeze()
_srv = socket.socket(fileno=int(sys.argv[1]))
_life = int(sys.argv[2])


def _recv(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _serve():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the intermediate processes reap themselves
    while True:
        ready, _, _ = select.select([_srv, _life], [], [])
        if _life in ready:  # the test worker is gone
            os._exit(0)
        conn, _ = _srv.accept()
        try:
            head, fds, _, _ = socket.recv_fds(conn, 8, 3)
            job = json.loads(_recv(conn, struct.unpack("<q", head)[0]))
        except (OSError, EOFError, ValueError, struct.error):
            conn.close()
            continue
        if os.fork() == 0:  # the intermediate: forks the run, reports its pid and its status
            _srv.close()
            os.close(_life)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            pid = os.fork()
            if pid == 0:
                return conn, fds, job
            for fd in fds:
                os.close(fd)
            conn.sendall(struct.pack("<q", pid))
            _, status = os.waitpid(pid, 0)
            conn.sendall(struct.pack("<q", os.waitstatus_to_exitcode(status)))
            os._exit(0)
        conn.close()
        for fd in fds:
            os.close(fd)


def _stdio(fd, mode, old):
    # as the interpreter builds them: stdin buffered; stdout and stderr unbuffered and written through
    # under -u / PYTHONUNBUFFERED, else stderr and a terminal's stdout line-buffered
    try:
        os.fstat(fd)
    except OSError:
        return None
    buffered = mode == "r" or not old.write_through
    raw = open(fd, mode + "b", buffering=-1 if buffered else 0, closefd=False)
    return io.TextIOWrapper(raw, encoding=old.encoding, errors=old.errors, newline="\n",
                            line_buffering=buffered and mode == "w" and (fd == 2 or os.isatty(fd)),
                            write_through=not buffered)


def _become(conn, fds, job):
    # this process becomes the run: its descriptors, environment, folder and std streams
    conn.close()
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    for fd in job["closed"]:
        os.close(fd)
    for number in job["default_signals"]:
        signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)
    old = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    new = [p for p in job["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[1:1 + len(old)] = new  # the entries an interpreter puts after the script's folder
    os.environ.clear()
    os.environ.update(job["env"])
    if job["cwd"] is not None:
        os.chdir(job["cwd"])
    import tempfile
    tempfile.tempdir = None
    sys.stdin = sys.__stdin__ = _stdio(0, "r", sys.stdin)
    sys.stdout = sys.__stdout__ = _stdio(1, "w", sys.stdout)
    sys.stderr = sys.__stderr__ = _stdio(2, "w", sys.stderr)
    return job["argv"]


_argv = _become(*_serve())
del _srv, _life
if _argv[0] == "-m":
    import runpy
    sys.argv = ["-m", *_argv[2:]]
    sys.path[0] = os.getcwd()
    runpy._run_module_as_main(_argv[1])
else:
    import types
    _main = types.ModuleType("__main__")
    _main.__builtins__ = __builtins__
    sys.modules["__main__"] = _main
    sys.argv = ["-c", *_argv[2:]]
    exec(compile(_argv[1], "<string>", "exec"), _main.__dict__)
"""

_START = ("PYTHON", "LC_", "LANG", "OPENBLAS", "OMP_", "MKL_")
_OPTIONS = {"stdin", "stdout", "stderr", "cwd", "env", "text", "universal_newlines", "encoding", "errors",
            "closed", "default_signals"}


def _start_env(env) -> dict:
    """What an interpreter reads from the environment as it starts (PYTHONPATH only sets sys.path,
    which the child sets itself)."""
    return {k: v for k, v in env.items() if k.startswith(_START) and k != "PYTHONPATH"}


def _fresh_options(options: dict) -> dict:
    """``closed`` and ``default_signals`` as subprocess does them: in a preexec_fn."""
    closed, signals = options.pop("closed", ()), options.pop("default_signals", ())
    if closed or signals:
        def preexec():
            for fd in closed:
                os.close(fd)
            for number in signals:
                signal.signal(number, signal.SIG_DFL)
        options["preexec_fn"] = preexec
    return options


class _Server:
    """A fork server of this test process, started when first asked for."""

    def __init__(self, preload: tuple[str, ...]):
        self.env = dict(os.environ, PYTHONPATH=ROOT)
        self.address = f"\0qlin-tests-{os.getpid()}-{time.monotonic_ns()}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.address)
        listener.listen(64)
        life_r, self.life_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(listener.fileno()), str(life_r), ",".join(preload)],
            pass_fds=(listener.fileno(), life_r), env=self.env, stdin=DEVNULL, stdout=DEVNULL,
            cwd=ROOT)
        listener.close()
        os.close(life_r)
        atexit.register(self.stop)

    def stop(self):
        os.close(self.life_w)
        try:
            self.process.wait(timeout=10)
        except TimeoutExpired:
            self.process.kill()


def _rule_modules() -> tuple[str, ...]:
    """The rule modules, which a check imports when it first asks for the rules (30 ms a run)."""
    import pkgutil

    import qlin_cli.rules

    return tuple(f"qlin_cli.rules.{m.name}" for m in pkgutil.iter_modules(qlin_cli.rules.__path__))


_servers: dict[bool, _Server] = {}
_lock = threading.Lock()


def server(qlin: bool = True) -> _Server:
    """The server for ``-m qlin_cli`` runs (qlin imported) or for ``-c`` code (third-party only)."""
    with _lock:
        if qlin not in _servers or _servers[qlin].process.poll() is not None:
            third_party = tuple(m for m in PRELOAD if not m.startswith("qlin_cli"))
            preload = PRELOAD + _rule_modules() if qlin else third_party
            _servers[qlin] = _Server(preload)
        return _servers[qlin]


def forkable(args, options: dict, fresh: bool = False) -> bool:
    """Whether a fork of the server runs ``args`` as a new interpreter would."""
    if fresh or os.environ.get("QLIN_TEST_FRESH") or os.name != "posix" or set(options) - _OPTIONS:
        return False
    if isinstance(args, (str, bytes)) or len(args) < 2 or args[0] != sys.executable:
        return False
    if not ((args[1] == "-m" and len(args) > 2 and args[2] == "qlin_cli") or args[1] == "-c"):
        return False
    env = options.get("env")
    return _start_env(os.environ if env is None else env) == _start_env(server(args[1] == "-m").env)


def _recv(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the fork server closed the connection")
        data += chunk
    return data


def _decode(data, text: bool, encoding, errors):
    if not isinstance(data, bytes) or not text:
        return data
    out = data.decode(encoding or locale.getpreferredencoding(False), errors or "strict")
    return out.replace("\r\n", "\n").replace("\r", "\n")


class Forked:
    """A run forked from the server, with the part of subprocess.Popen tests use."""

    def __init__(self, args, stdin=None, stdout=None, stderr=None, cwd=None, env=None, text=False,
                 universal_newlines=None, encoding=None, errors=None, closed=(), default_signals=()):
        self.args = list(args)
        self.text = bool(text or universal_newlines or encoding or errors)
        self.encoding, self.errors = encoding, errors
        self.returncode = None
        self.stdin = self.stdout = self.stderr = None
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(server(self.args[1] == "-m").address)
        theirs: list[int] = []
        child = [self._fd(stdin, 0, "stdin", theirs), self._fd(stdout, 1, "stdout", theirs)]
        child.append(child[1] if stderr == STDOUT else self._fd(stderr, 2, "stderr", theirs))
        job = json.dumps({"argv": [str(a) for a in self.args[1:]],
                          "cwd": None if cwd is None else os.fspath(cwd),
                          "env": dict(os.environ if env is None else env), "closed": list(closed),
                          "default_signals": [int(n) for n in default_signals]}).encode()
        try:
            socket.send_fds(self._sock, [struct.pack("<q", len(job))], child)
            self._sock.sendall(job)
        finally:
            for fd in theirs:
                os.close(fd)
        self.pid = struct.unpack("<q", _recv(self._sock, 8))[0]
        self._out: dict[str, bytes] = {}
        self._threads: list[threading.Thread] = []

    def _fd(self, spec, own, name, theirs) -> int:
        if spec is None:
            return own
        if spec == DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
            theirs.append(fd)
            return fd
        if spec == PIPE:
            r, w = os.pipe()
            keep, give = (w, r) if name == "stdin" else (r, w)
            theirs.append(give)
            stream = open(keep, "wb" if name == "stdin" else "rb")
            if self.text:
                stream = io.TextIOWrapper(stream, encoding=self.encoding, errors=self.errors,
                                          write_through=name == "stdin")
            setattr(self, name, stream)
            return give
        return spec if isinstance(spec, int) else spec.fileno()

    def _finish(self, code: bytes) -> int:
        self.returncode = struct.unpack("<q", code)[0]
        self._sock.close()
        return self.returncode

    def poll(self):
        if self.returncode is None:
            self._sock.setblocking(False)
            try:
                code = self._sock.recv(8, socket.MSG_PEEK)
            except BlockingIOError:
                return None
            finally:
                self._sock.setblocking(True)
            if len(code) == 8:
                self._finish(_recv(self._sock, 8))
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            self._sock.settimeout(timeout)
            try:
                self._finish(_recv(self._sock, 8))
            except TimeoutError:
                raise TimeoutExpired(self.args, timeout) from None
            finally:
                if self.returncode is None:
                    self._sock.settimeout(None)
        return self.returncode

    def send_signal(self, sig):
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self):
        self.send_signal(9)

    def terminate(self):
        self.send_signal(15)

    def _pump(self, input):
        def read(name):
            self._out[name] = getattr(self, name).read()
            getattr(self, name).close()

        def write():
            try:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            except BrokenPipeError:
                pass

        for name in ("stdout", "stderr"):
            if getattr(self, name) is not None:
                self._threads.append(threading.Thread(target=read, args=(name,), daemon=True))
        if self.stdin is not None:
            self._threads.append(threading.Thread(target=write, daemon=True))
        for t in self._threads:
            t.start()

    def communicate(self, input=None, timeout=None):
        if not self._threads:
            self._pump(input)
        deadline = None if timeout is None else time.monotonic() + timeout
        for t in self._threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                raise TimeoutExpired(self.args, timeout)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return tuple(_decode(self._out.get(n), self.text, self.encoding, self.errors)
                     for n in ("stdout", "stderr"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None and not f.closed:
                f.close()
        self.wait()


def Popen(args, *, fresh: bool = False, **options):  # noqa: N802 (subprocess's name)
    """subprocess.Popen, forked from the server where that is the same run. Two options of its own
    stand for the preexec_fn a fork cannot take: ``closed`` (descriptors the run starts without) and
    ``default_signals`` (signals the run starts with at their default, as from a terminal)."""
    if forkable(args, options, fresh):
        return Forked(args, **options)
    return subprocess.Popen(args, **_fresh_options(options))


def run(args, *, input=None, capture_output=False, timeout=None, check=False, fresh=False, **options):
    """subprocess.run, forked from the server where that is the same run."""
    if not forkable(args, options, fresh):
        return subprocess.run(args, input=input, capture_output=capture_output, timeout=timeout, check=check,
                              **_fresh_options(options))
    if capture_output:
        options["stdout"] = options["stderr"] = PIPE
    if input is not None:
        options["stdin"] = PIPE
    with Forked(args, **options) as p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        except TimeoutExpired:
            p.kill()
            p.wait()
            raise
    done = CompletedProcess(p.args, p.returncode, out, err)
    if check:
        done.check_returncode()
    return done
