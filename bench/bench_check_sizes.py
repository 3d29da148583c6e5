"""`qlin check` against `onnx.checker.check_model(path, full_check=True)` as whole processes,
on inline-weight QDQ chains of 3,000, 15,000 and 50,000 nodes and on 10,000 Q/DQ pairs with
3 GiB of (sparse) external weights (bench/big_model.py builds all four).

Each command is a fresh process (start-up, imports and teardown included), run ROUNDS times,
all interleaved (their order turning round by round) so that load from elsewhere on the
machine falls on each. Prints, per model, the CPU time (user + system, from wait4) of each,
best and median, qlin's ratio to the checker (best to best, median to median, and the median
of each round's ratio, whose two runs are closest in time), and the ratio
of peak memory (ru_maxrss of each child: this parent stays small, so what Linux carries
across fork and exec is below either peak). Results cache off (--no-cache).

    python bench/bench_check_sizes.py [ROUNDS] [MODEL ...]   (MODEL: 3k 15k 50k pairs10k)

QLIN_BENCH_BEFORE=DIR also runs the qlin whose package is in DIR (an older tree, say
`git archive REV qlin_cli | tar -x -C DIR`) in the same rounds, and prints its ratios.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
MODELS = {"3k": "chain3k.onnx", "15k": "chain15k.onnx", "50k": "chain50k.onnx",
          "pairs10k": os.path.join("pairs10k", "big.onnx")}
LABELS = {"3k": "3,000-node QDQ chain", "15k": "15,000-node QDQ chain",
          "50k": "50,000-node QDQ chain", "pairs10k": "10,000 pairs, 3 GiB external"}
CHECKER = [sys.executable, "-c",
           "import sys, onnx; onnx.checker.check_model(sys.argv[1], full_check=True)"]
QLIN = [sys.executable, "-m", "qlin_cli", "check", "--no-cache"]
# Python writes and reads its bytecode caches, as an installed qlin does
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
BEFORE = os.environ.get("QLIN_BENCH_BEFORE")


def run(argv: list[str], cwd: str, env: dict) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MiB) of one process."""
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):  # 1: findings (none expected on these models)
        raise SystemExit(f"{argv} failed ({p.returncode}): {err.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def line(label: str, c: list[float], q: list[float], pc: list[float], pq: list[float]) -> str:
    mc, mq = statistics.median(c), statistics.median(q)
    rounds = statistics.median(b / a for a, b in zip(c, q, strict=True))  # runs close in time
    return (f"{label:34}{min(c):>7.2f}/{mc:<6.2f}{min(q):>7.2f}/{mq:<6.2f}"
            f"{min(q) / min(c):>7.2f}x/{mq / mc:.2f}x{rounds:>8.2f}x"
            f"{statistics.median(pc):>8.0f}/{statistics.median(pq):<5.0f}"
            f"{statistics.median(pq) / statistics.median(pc):>6.2f}x")


def main() -> None:
    names = sys.argv[2:] or list(MODELS)
    with tempfile.TemporaryDirectory() as tmp:
        # built in a child: this process never imports onnx, so it stays small
        subprocess.run([sys.executable, os.path.join(HERE, "big_model.py"), tmp], check=True, env=ENV)
        print(f"{'model':34}{'checker cpu s':>14}{'qlin cpu s':>14}{'qlin/checker':>14}{'rounds':>9}"
              f"{'peak MiB':>14}{'ratio':>7}")
        print(f"{'':34}{'best / median':>14}{'best / median':>14}{'best / median':>14}{'median':>9}"
              f"{'chk / qlin':>14}")
        for name in names:
            path = os.path.join(tmp, MODELS[name])
            cwd = os.path.dirname(path)
            runs = {"checker": (CHECKER + [path], ENV), "qlin": (QLIN + [path], ENV)}
            if BEFORE:
                runs["before"] = (QLIN + [path], {**ENV, "PYTHONPATH": BEFORE})
            for argv, env in runs.values():  # warm: bytecode written, the file in the page cache
                run(argv, cwd, env)
            cpu: dict = {k: [] for k in runs}
            peak: dict = {k: [] for k in runs}
            for r in range(ROUNDS):
                order = list(runs)[r % len(runs):] + list(runs)[:r % len(runs)]
                for k in order:
                    argv, env = runs[k]
                    t, m = run(argv, cwd, env)
                    cpu[k].append(t)
                    peak[k].append(m)
            print(line(LABELS[name], cpu["checker"], cpu["qlin"], peak["checker"], peak["qlin"]), flush=True)
            if BEFORE:
                print(line("  (before: " + os.path.basename(BEFORE.rstrip("/")) + ")", cpu["checker"],
                           cpu["before"], peak["checker"], peak["before"]), flush=True)


if __name__ == "__main__":
    main()
