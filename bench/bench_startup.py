"""Start-up cost of the light commands against `python -c "import onnxruntime"`, side by side,
and what naming a target adds to `qlin check` of a small model (loading its facts)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "fixtures", "models", "clean", "per_channel_chain.onnx")
QLIN = [sys.executable, "-m", "qlin_cli"]
COMMANDS = {
    'python -c "import onnxruntime"': [sys.executable, "-c", "import onnxruntime"],
    "qlin --help": QLIN + ["--help"],
    "qlin rules": QLIN + ["rules"],
    "qlin check (small model)": QLIN + ["check", SMALL],
    "qlin check --target onnxruntime": QLIN + ["check", "--target", "onnxruntime", SMALL],
    "qlin check --target openvino": QLIN + ["check", "--target", "openvino", SMALL],
}
ROUNDS = 7


def main() -> None:
    best = {name: float("inf") for name in COMMANDS}
    for _ in range(ROUNDS):  # interleaved rounds: every command sees the same load
        for name, argv in COMMANDS.items():
            t = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
            best[name] = min(best[name], time.perf_counter() - t)
    base = best['python -c "import onnxruntime"']
    check = best["qlin check (small model)"]
    print(f"{'command':34}{'best of ' + str(ROUNDS):>12}{'vs import onnxruntime':>24}{'vs qlin check':>15}")
    for name, t in best.items():
        print(f"{name:34}{t * 1000:>10.0f}ms{t / base:>23.2f}x{t / check:>14.2f}x")


if __name__ == "__main__":
    main()
