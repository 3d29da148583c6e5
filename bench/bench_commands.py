"""What each command's reading of a model costs, side by side in one process: `qlin check`,
`qlin check --target onnxruntime`, `qlin inspect` (every target), against
onnx.checker.check_model(path) and check_model(path, full_check=True), on PAIRS Q/DQ pairs.

Every command reads one analysis (model/analysis.py), so `check --target` should cost
about what `check` costs. Prints best-of times, interleaved round by round, and ratios.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import big_model  # noqa: E402

ROUNDS = 3
PAIRS = int(os.environ.get("QLIN_BENCH_PAIRS", "3000"))


def best(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    import onnx

    from qlin_cli.check.engine import check_file
    from qlin_cli.inspect_command import describe

    with tempfile.TemporaryDirectory() as tmp:
        path = big_model.build(tmp, pairs=PAIRS, weight_bytes=2**20)
        runs = {
            "onnx.checker.check_model": lambda: onnx.checker.check_model(path),
            "onnx.checker (full_check)": lambda: onnx.checker.check_model(path, full_check=True),
            "qlin check": lambda: check_file(path),
            "qlin check --target onnxruntime": lambda: check_file(path, targets=["onnxruntime"]),
            "qlin inspect (4 targets)": lambda: describe(path),
        }
        found = {name: [] for name in runs}
        for _ in range(ROUNDS):  # interleave, so every run sees the same machine load
            for name, fn in runs.items():
                found[name].append(best(fn))
        times = {name: min(ts) for name, ts in found.items()}
        base = times["qlin check"]
        print(f"model: {PAIRS:,} Q/DQ pairs")
        print(f"{'':34}{'time (best)':>12}{'/ qlin check':>14}{'/ full_check':>14}")
        for name, t in times.items():
            print(f"{name:34}{t:>11.3f}s{t / base:>13.2f}x{t / times['onnx.checker (full_check)']:>13.2f}x")


if __name__ == "__main__":
    main()
