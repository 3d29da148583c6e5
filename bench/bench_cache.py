"""`qlin check` of an unchanged folder (the bundled fixture models) read back from the
results cache, side by side with the same check without the cache and with
`python -c "import onnx"`, as whole processes, interleaved round by round.

Prints the best wall time of each over ROUNDS rounds and the ratios.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 7


def main() -> None:
    work = tempfile.mkdtemp(prefix="qlin-bench-cache-")
    try:
        shutil.copytree(os.path.join(ROOT, "fixtures", "models"), os.path.join(work, "models"))
        walk = os.walk(os.path.join(work, "models"))
        n = sum(1 for _, _, files in walk for f in files if f.endswith(".onnx"))
        env = {k: v for k, v in os.environ.items() if k != "QLIN_NO_CACHE"}
        qlin = [sys.executable, "-m", "qlin_cli", "check", "--quiet", "models"]
        runs = {"import onnx": [sys.executable, "-c", "import onnx"],
                "check, cache read back": qlin,
                "check --no-cache": [*qlin, "--no-cache"]}
        subprocess.run(qlin, cwd=work, env=env, capture_output=True)  # fills the cache
        best = {k: float("inf") for k in runs}
        for _ in range(ROUNDS):
            for name, cmd in runs.items():
                t = time.perf_counter()
                subprocess.run(cmd, cwd=work, env=env, capture_output=True)
                best[name] = min(best[name], time.perf_counter() - t)
        print(f"{n} unchanged models, best of {ROUNDS} rounds (wall):")
        for name, t in best.items():
            print(f"  {name:24s} {t * 1000:6.0f} ms  {t / best['import onnx']:.2f}x import onnx")
        ratio = best["check, cache read back"] / best["check --no-cache"]
        print(f"  cache read back / --no-cache: {ratio:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
