"""Start-up cost of the light commands against `python -c "import onnxruntime"`, side by side,
and what naming a target adds to `qlin check --no-cache` of a small model (loading its facts;
issue 35: at most 10 ms). Whole processes, CPU time (user + system, os.wait4), medians of
interleaved rounds, run from the temporary directory so `-m qlin_cli` finds this tree through
PYTHONPATH, not the current directory."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

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


def _cpu(argv: list[str], env: dict[str, str]) -> float:
    """The CPU seconds (user + system) of one whole process."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=tempfile.gettempdir(), env=env)
    _, _, usage = os.wait4(p.pid, 0)
    p.returncode = 0
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(ROUNDS):  # interleaved rounds: every command sees the same load
        for name, argv in COMMANDS.items():
            times[name].append(_cpu(argv, env))
    median = {name: statistics.median(t) for name, t in times.items()}
    base = median['python -c "import onnxruntime"']
    check = median["qlin check (small model)"]
    print(f"{'command (CPU time)':34}{'median of ' + str(ROUNDS):>14}{'vs import onnxruntime':>24}"
          f"{'vs qlin check':>15}{'added':>10}")
    for name, t in median.items():
        added = f"{(t - check) * 1000:+.0f}ms" if "--target" in name else ""
        print(f"{name:34}{t * 1000:>12.0f}ms{t / base:>23.2f}x{t / check:>14.2f}x{added:>10}")

if __name__ == "__main__":
    main()
