"""`qlin check -j N` on 40 models of 3,000 nodes (1,000 Q/DQ pairs each, bench/big_model.py):
one process, `-j 2`, and a hand split (two plain one-process runs on the two halves of the
folder, side by side), each the best of ROUNDS interleaved runs. Also checks that the `-j 2` output is
byte-identical to one process's."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from big_model import build  # noqa: E402

MODELS, PAIRS, ROUNDS = 40, 1000, 5
QLIN = [sys.executable, "-m", "qlin_cli", "check", "--no-config", "--format", "json"]


def timed(cmds: list[list[str]]) -> tuple[float, list[bytes]]:
    t = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for c in cmds]
    outs = [p.communicate()[0] for p in procs]
    return time.perf_counter() - t, outs


def best_of(configs: list[list[list[str]]]) -> list[tuple[float, list[bytes]]]:
    """Each configuration's best time over ROUNDS rounds, the configurations interleaved
    within a round so that load from elsewhere on the machine falls on all of them."""
    times = [float("inf")] * len(configs)
    outs: list = [None] * len(configs)
    for _ in range(ROUNDS):
        for i, cmds in enumerate(configs):
            t, out = timed(cmds)
            times[i] = min(times[i], t)
            outs[i] = outs[i] or out
    return list(zip(times, outs, strict=True))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [build(os.path.join(tmp, f"m{i:02d}"), pairs=PAIRS, weight_bytes=PAIRS * 16)
                 for i in range(MODELS)]
        half = len(paths) // 2
        (one, out1), (two, out2), (split, _) = best_of([
            [QLIN + ["-j", "1", *paths]],
            [QLIN + ["-j", "2", *paths]],
            [QLIN + ["-j", "1", *paths[:half]], QLIN + ["-j", "1", *paths[half:]]],
        ])
        same = out1 == out2
        print(f"{MODELS} models x {3 * PAIRS} nodes, {os.cpu_count()} cores, best of {ROUNDS}")
        print(f"  one process     {one:6.2f} s")
        print(f"  -j 2            {two:6.2f} s  speed-up {one / two:.2f}x  (output identical: {same})")
        print(f"  hand split (2)  {split:6.2f} s  speed-up {one / split:.2f}x")
        print(f"  -j 2 reaches {100 * (one / two - 1) / max(one / split - 1, 1e-9):.0f}% of the "
              f"hand split's speed-up")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
