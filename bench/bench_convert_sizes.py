"""`qlin convert --to-opset 21` against `qlin check` as whole processes, on QDQ chains of
100,000 and (with --million) 1,000,000 nodes (bench/big_model.py build_chain): at ai.onnx 13,
so that the conversion moves every node's opset (75% of the nodes are Q/DQ, all valid at 21
as they are), and at 21 (nothing to change). Issue 35 asks convert at most 2x check's time and
1.5x its peak memory.

Each command is a fresh process (start-up included), the two interleaved, their order
alternating round by round, so that load from elsewhere on the machine falls on both. Prints
per model the CPU time (user + system, from wait4) of each, best and median, their ratio, and
the ratio of the median peak RSS (ru_maxrss of each child; this parent stays small).

    python bench/bench_convert_sizes.py [ROUNDS] [--million]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
ROUNDS = int(ARGS[0]) if ARGS else 3
SIZES = [100_000] + ([1_000_000] if "--million" in sys.argv else [])
QLIN = [sys.executable, "-m", "qlin_cli"]
# Python writes and reads its bytecode caches, as an installed qlin does
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
BUILD = ("import sys; sys.path.insert(0, sys.argv[1]); from big_model import build_chain; "
         "build_chain(sys.argv[2], int(sys.argv[3]), opset=int(sys.argv[4]))")


def run(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MiB) of one process."""
    p = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{argv} failed ({code}): {err.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'model':34}{'check cpu':>14}{'convert cpu':>14}{'ratio':>14}{'peak MiB':>14}{'ratio':>7}")
        print(f"{'':34}{'best / median':>14}{'best / median':>14}{'best / median':>14}{'chk / conv':>14}")
        for n in SIZES:
            for opset in (13, 21):
                path = os.path.join(tmp, f"chain{n}_{opset}.onnx")
                # built in a child: this process never imports onnx, so it stays small
                subprocess.run([sys.executable, "-c", BUILD, HERE, path, str(n), str(opset)], check=True,
                               env=ENV)
                cmds = {"check": QLIN + ["check", "--no-cache", path],
                        "convert": QLIN + ["convert", path, "--to-opset", "21", "--dry-run"]}
                cpu: dict[str, list[float]] = {k: [] for k in cmds}
                peak: dict[str, list[float]] = {k: [] for k in cmds}
                for r in range(ROUNDS):
                    for k in (list(cmds) if r % 2 == 0 else list(cmds)[::-1]):
                        t, m = run(cmds[k])
                        cpu[k].append(t)
                        peak[k].append(m)
                c, v = cpu["check"], cpu["convert"]
                pc, pv = statistics.median(peak["check"]), statistics.median(peak["convert"])
                label = f"{n:,} nodes, {opset} -> 21"
                print(f"{label:34}{min(c):>7.2f}/{statistics.median(c):<6.2f}"
                      f"{min(v):>7.2f}/{statistics.median(v):<6.2f}"
                      f"{min(v) / min(c):>7.2f}x/{statistics.median(v) / statistics.median(c):.2f}x"
                      f"{pc:>8.0f}/{pv:<5.0f}{pv / pc:>6.2f}x", flush=True)
                os.remove(path)


if __name__ == "__main__":
    main()
