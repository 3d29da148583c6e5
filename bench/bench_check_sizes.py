"""`qlin check` against `onnx.checker.check_model(path, full_check=True)` as whole processes,
on inline-weight QDQ chains of 3,000, 15,000 and 50,000 nodes and on 10,000 Q/DQ pairs with
3 GiB of (sparse) external weights (bench/big_model.py builds all four).

Each command is a fresh process (start-up, imports and teardown included), run ROUNDS times,
the two interleaved (their order alternating round by round) so that load from elsewhere on
the machine falls on both. Prints, per model, the CPU time (user + system, from wait4) of
each, best and median, their ratios, and the ratio of peak memory (ru_maxrss of each child:
this parent stays small, so what Linux carries across fork and exec is below either peak).

    python bench/bench_check_sizes.py [ROUNDS] [MODEL ...]   (MODEL: 3k 15k 50k pairs10k)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
MODELS = {"3k": "chain3k.onnx", "15k": "chain15k.onnx", "50k": "chain50k.onnx",
          "pairs10k": os.path.join("pairs10k", "big.onnx")}
LABELS = {"3k": "3,000-node QDQ chain", "15k": "15,000-node QDQ chain",
          "50k": "50,000-node QDQ chain", "pairs10k": "10,000 pairs, 3 GiB external"}
CHECKER = [sys.executable, "-c",
           "import sys, onnx; onnx.checker.check_model(sys.argv[1], full_check=True)"]
QLIN = [sys.executable, "-m", "qlin_cli", "check", "--no-cache"]
# Python writes and reads its bytecode caches, as an installed qlin does
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str], cwd: str) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MiB) of one process."""
    p = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):  # 1: findings (none expected on these models)
        raise SystemExit(f"{argv} failed ({p.returncode}): {err.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    names = [a for a in sys.argv[2:]] or list(MODELS)
    with tempfile.TemporaryDirectory() as tmp:
        # built in a child: this process never imports onnx, so it stays small
        subprocess.run([sys.executable, os.path.join(HERE, "big_model.py"), tmp], check=True, env=ENV)
        print(f"{'model':32}{'checker cpu':>14}{'qlin cpu':>14}{'ratio':>14}{'peak MiB':>14}{'ratio':>7}")
        print(f"{'':32}{'best / median':>14}{'best / median':>14}{'best / median':>14}"
              f"{'chk / qlin':>14}")
        for name in names:
            path = os.path.join(tmp, MODELS[name])
            env_cwd = os.path.dirname(path)
            cmds = {"checker": CHECKER + [path], "qlin": QLIN + [path]}
            for argv in cmds.values():  # warm: bytecode written, the file in the page cache
                run(argv, env_cwd)
            cpu = {k: [] for k in cmds}
            peak = {k: [] for k in cmds}
            for r in range(ROUNDS):
                order = list(cmds) if r % 2 == 0 else list(cmds)[::-1]
                for k in order:
                    t, m = run(cmds[k], env_cwd)
                    cpu[k].append(t)
                    peak[k].append(m)
            c, q = cpu["checker"], cpu["qlin"]
            pc, pq = statistics.median(peak["checker"]), statistics.median(peak["qlin"])
            print(f"{LABELS[name]:32}{min(c):>7.2f}/{statistics.median(c):<6.2f}"
                  f"{min(q):>7.2f}/{statistics.median(q):<6.2f}"
                  f"{min(q) / min(c):>7.2f}x/{statistics.median(q) / statistics.median(c):.2f}x"
                  f"{pc:>8.0f}/{pq:<5.0f}{pq / pc:>6.2f}x", flush=True)


if __name__ == "__main__":
    main()
