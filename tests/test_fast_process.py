"""tests/fast_process.py: a run forked from the server is the run a new interpreter makes.

Each case runs the same command both ways (subprocess with a fresh interpreter, and a fork of the
server) and compares what a test can see: exit status, stdout, stderr, folder, environment, argv,
std streams, signals and timeouts.
"""

from __future__ import annotations

import os
import signal
import sys

import fast_process
import pytest
from paths import MODELS, ROOT

pytestmark = pytest.mark.skipif(bool(os.environ.get("QLIN_TEST_FRESH")),
                                reason="QLIN_TEST_FRESH: nothing is forked")

BROKEN = os.path.join(MODELS, "rules", "QL405-bad.onnx")
PY = sys.executable


def _both(args, **options):
    options.setdefault("env", dict(os.environ, PYTHONPATH=ROOT))
    popen = {k: v for k, v in options.items() if k not in ("input", "capture_output")}
    assert fast_process.forkable(args, popen)
    fresh = fast_process.run(args, fresh=True, **options)
    forked = fast_process.run(args, **options)
    return fresh, forked


def _same(fresh, forked):
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_qlin_run_is_forked_and_gives_what_a_fresh_one_gives():
    env = dict(os.environ, PYTHONPATH=ROOT)
    args = [PY, "-m", "qlin_cli", "check", "--format", "json", "--no-config", BROKEN]
    assert fast_process.forkable(args, {"env": env})
    fresh, forked = _both(args, capture_output=True, text=True, env=env)
    assert fresh.returncode == 1
    _same(fresh, forked)
    bad = _both([PY, "-m", "qlin_cli", "check", "--select", "QL999", BROKEN], capture_output=True, env=env)
    assert bad[0].returncode == 2
    _same(*bad)


def test_folder_environment_argv_and_streams_are_the_runs_own(tmp_path):
    code = ("import os, sys; print(os.getcwd(), os.environ.get('QLIN_X'), sys.argv, sys.path[0] == '', "
            "sys.stdout.encoding, sys.stderr.errors, sys.stdout.line_buffering, sys.stdout.write_through, "
            "type(sys.stdout.buffer).__name__, type(sys.stdin.buffer).__name__, __name__); "
            "print(sys.stdin.read().upper(), file=sys.stderr); sys.exit(3)")
    env = dict(os.environ, QLIN_X="é", PYTHONPATH=ROOT)
    fresh, forked = _both([PY, "-c", code, "a b", "c"], input="text\r\n", capture_output=True, text=True,
                          cwd=tmp_path, env=env)
    assert fresh.returncode == 3 and str(tmp_path) in fresh.stdout and "TEXT" in fresh.stderr
    _same(fresh, forked)


def test_an_uncaught_exception_and_an_unflushable_stdout_end_as_in_python():
    fresh, forked = _both([PY, "-c", "raise ValueError('x')"], capture_output=True, text=True)
    assert fresh.returncode == forked.returncode == 1
    assert fresh.stderr.splitlines()[-1] == forked.stderr.splitlines()[-1] == "ValueError: x"
    assert "Traceback" in forked.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            runs = _both([PY, "-c", "print('x' * 10)"], stdout=full, stderr=fast_process.PIPE)
        assert runs[0].returncode == runs[1].returncode != 0
        assert runs[0].stderr.splitlines()[-1] == runs[1].stderr.splitlines()[-1]


def test_a_closed_pipe_a_kill_and_a_timeout():
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = fast_process.Popen([PY, "-m", "qlin_cli", "rules"], stdout=fast_process.PIPE,
                           stderr=fast_process.PIPE, text=True, env=env)
    assert isinstance(p, fast_process.Forked)
    p.stdout.close()
    assert p.stderr.read() == "" and p.wait(timeout=60) == 0
    p.stderr.close()
    sleeper = fast_process.Popen([PY, "-c", "import time; time.sleep(60)"], env=env)
    assert isinstance(sleeper, fast_process.Forked)
    assert sleeper.poll() is None
    sleeper.send_signal(signal.SIGKILL)
    assert sleeper.wait(timeout=30) == -signal.SIGKILL
    with pytest.raises(fast_process.TimeoutExpired):
        fast_process.run([PY, "-c", "import time; time.sleep(60)"], timeout=0.5, env=env)


def test_what_a_fork_cannot_stand_for_gets_a_fresh_interpreter():
    args = [PY, "-m", "qlin_cli", "rules"]
    assert not fast_process.forkable(args, {"env": dict(os.environ, LC_ALL="C")})
    assert not fast_process.forkable(args, {"preexec_fn": os.getpid})
    assert not fast_process.forkable(args, {}, fresh=True)
    assert not fast_process.forkable(["git", "status"], {})
    assert not fast_process.forkable([PY, "-m", "pip"], {})


def test_closed_descriptors_default_signals_and_pythonpath_are_as_asked(tmp_path):
    code = ("import os, signal, sys; print(sys.stdout is None, file=sys.stderr); "
            "print(signal.getsignal(signal.SIGHUP) == signal.SIG_DFL, "
            "signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
            "[p for p in sys.path if p.startswith(sys.argv[1])], file=sys.stderr)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]))
    fresh, forked = _both([PY, "-c", code, str(tmp_path)], stderr=fast_process.PIPE, text=True, env=env,
                          closed=(1,), default_signals=(signal.SIGHUP, signal.SIGINT))
    assert fresh.stderr == f"True\nTrue True ['{tmp_path}']\n", fresh.stderr
    _same(fresh, forked)
