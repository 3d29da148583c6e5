"""`qlin check` on 10,000 Q/DQ pairs with 3 GiB of (sparse) external weights,
side by side with onnx.checker.check_model(path) and check_model(path, full_check=True)
in one process.

Prints best-of-N times (ROUNDS rounds of ROUNDS runs each, the two interleaved round
by round), their ratio and each round's, and the peak memory of each run in its own
child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import big_model  # noqa: E402

ROUNDS = 5


def best(fn) -> float:
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


PEAK = (
    "\nfor line in open('/proc/self/status'):\n"
    "    if line.startswith('VmHWM:'):\n"
    "        print(int(line.split()[1]))\n"
)


def child_peak_mb(code: str) -> float:
    """Peak RSS (MB) of a fresh Python running ``code``.

    Read from the child's own VmHWM: ru_maxrss would also count the parent's
    peak, which Linux carries across fork and exec.
    """
    out = subprocess.run([sys.executable, "-c", code + PEAK], check=True, capture_output=True,
                         text=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    import onnx

    from qlin_cli.check.engine import check_file

    with tempfile.TemporaryDirectory() as tmp:
        path = big_model.build(tmp, pairs=10_000, weight_bytes=3 * 2**30)
        data = os.path.getsize(os.path.join(tmp, "weights.bin"))
        result = check_file(path)
        assert result.error is None, result.error
        t_checker, t_full, t_qlin = [], [], []
        for _ in range(ROUNDS):  # interleave, so all see the same machine load
            t_checker.append(best(lambda: onnx.checker.check_model(path)))
            t_full.append(best(lambda: onnx.checker.check_model(path, full_check=True)))
            t_qlin.append(best(lambda: check_file(path)))
        checker, full, qlin = min(t_checker), min(t_full), min(t_qlin)
        mem_qlin = child_peak_mb(
            f"from qlin_cli.check.engine import check_file; check_file({path!r})")
        mem_checker = child_peak_mb(f"import onnx; onnx.checker.check_model({path!r})")
        mem_full = child_peak_mb(f"import onnx; onnx.checker.check_model({path!r}, full_check=True)")
        print(f"model: 10,000 Q/DQ pairs, {len(result.diagnostics)} diagnostics, "
              f"external data {data / 2**30:.1f} GiB (sparse)")
        print(f"{'':28}{'time (best)':>12}{'peak RSS':>12}")
        print(f"{'onnx.checker.check_model':28}{checker:>11.3f}s{mem_checker:>10.0f}MB")
        print(f"{'  full_check=True':28}{full:>11.3f}s{mem_full:>10.0f}MB")
        print(f"{'qlin check':28}{qlin:>11.3f}s{mem_qlin:>10.0f}MB")
        print(f"ratio qlin / checker: {qlin / checker:.1f}x time "
              f"(each round: {', '.join(f'{q / c:.1f}x' for c, q in zip(t_checker, t_qlin, strict=True))})")
        print(f"ratio qlin / full_check: {qlin / full:.2f}x time, {mem_qlin / mem_full:.2f}x peak memory "
              f"(each round: {', '.join(f'{q / c:.2f}x' for c, q in zip(t_full, t_qlin, strict=True))})")


if __name__ == "__main__":
    main()
