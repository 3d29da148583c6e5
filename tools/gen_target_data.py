"""Measure a released runtime version and write its target data, from the real runtime.

Usage (from the repository root)::

    python tools/gen_target_data.py onnxruntime 1.20.1
    make target-data RUNTIME=onnxruntime VERSION=1.20.1         # the same
    python tools/gen_target_data.py onnxruntime 1.20.1 --check

The version is installed from PyPI into a throwaway virtual environment (deleted after),
beside the onnx this project pins, and ``tools/gen_ort_kernels.py`` runs inside it: the
kernel registry of that version, the schema versions it knows, and the newest ai.onnx opset
and IR version it loads and runs (measured with probe models, not read from documents).
The result is ``qlin_cli/targets/data/onnxruntime_cpu_<version>.json``, one file per
version, each entry on its own line so that a diff between two versions reads as what
changed; ``qlin_cli/targets/versions.py`` reads them and names each version a target
(``onnxruntime@1.20``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "constraints.txt"


def _pinned(name: str) -> str:
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        if line.split("==")[0].strip() == name:
            return line.strip()
    return name


def measure(runtime: str, version: str, check: bool) -> int:
    if runtime != "onnxruntime":
        print(f"no generator for {runtime!r} yet (known: onnxruntime)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix=f"qlin-{runtime}-{version}-") as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = env_dir / "bin" / "python"
        install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                   f"{runtime}=={version}", _pinned("onnx")]
        done = subprocess.run(install, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{runtime} {version} does not install here:\n{done.stderr[-2000:]}", file=sys.stderr)
            return 2
        out = ROOT / "qlin_cli" / "targets" / "data" / f"onnxruntime_cpu_{version}.json"
        args = [str(python), str(ROOT / "tools" / "gen_ort_kernels.py"), "--output", str(out)]
        if check:
            args.append("--check")
        return subprocess.run(args, cwd=ROOT).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime")
    parser.add_argument("version")
    parser.add_argument("--check", action="store_true", help="compare with the committed data")
    args = parser.parse_args(argv)
    return measure(args.runtime, args.version, args.check)


if __name__ == "__main__":
    raise SystemExit(main())
