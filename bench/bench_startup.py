"""Start-up cost of the light commands against `python -c "import onnxruntime"`, side by side,
and what naming a target adds to `qlin check --no-cache` of a small model (loading its facts;
issue 35: at most 10 ms). Whole processes, CPU time (user + system, os.wait4) and wall time,
medians of interleaved rounds, run from the temporary directory so `-m qlin_cli` finds this
tree through PYTHONPATH, not the current directory. numpy's OpenBLAS threads spin after it
starts and their CPU time varies from run to run: OPENBLAS_NUM_THREADS=1 in the environment
leaves the process's own work (callgrind of the main thread is the steadier measure)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "fixtures", "models", "clean", "per_channel_chain.onnx")
QLIN = [sys.executable, "-m", "qlin_cli"]
COMMANDS = {
    'python -c "import onnxruntime"': [sys.executable, "-c", "import onnxruntime"],
    "qlin --help": QLIN + ["--help"],
    "qlin rules": QLIN + ["rules"],
    "qlin check (small model)": QLIN + ["check", "--no-cache", SMALL],
    "qlin check --target onnxruntime": QLIN + ["check", "--no-cache", "--target", "onnxruntime", SMALL],
    "qlin check --target openvino": QLIN + ["check", "--no-cache", "--target", "openvino", SMALL],
}
ROUNDS = 15


def _cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The CPU seconds (user + system) and the wall seconds of one whole process."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=tempfile.gettempdir(), env=env)
    _, _, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = 0
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(ROUNDS):  # interleaved rounds: every command sees the same load
        for name, argv in COMMANDS.items():
            times[name].append(_cpu(argv, env))
    for column, what in ((0, "CPU time"), (1, "wall time")):
        median = {name: statistics.median(t[column] for t in ts) for name, ts in times.items()}
        base = median['python -c "import onnxruntime"']
        check = median["qlin check (small model)"]
        print(f"{'command (' + what + ')':34}{'median of ' + str(ROUNDS):>14}{'vs import onnxruntime':>24}"
              f"{'vs qlin check':>15}{'added':>10}")
        for name, t in median.items():
            added = f"{(t - check) * 1000:+.0f}ms" if "--target" in name else ""
            print(f"{name:34}{t * 1000:>12.0f}ms{t / base:>23.2f}x{t / check:>14.2f}x{added:>10}")

if __name__ == "__main__":
    main()
