"""Whole models against each openvino release: does `qlin check --target openvino@V` find an
error exactly where release V fails to read or compile the model?

    python tools/blocks_openvino.py VERSION=VENV/bin/python [...]

The models are every configuration of fixtures/corpus.py (onnxruntime's quantizers: QDQ,
QOperator, dynamic, n-bits, over a conv net, an MLP-like mixed model, an attention block and
an LSTM), built in this venv; each release compiles them for CPU as
tools/probe_fusion_openvino.py compiles its cases (a child that imports only openvino). Prints
per release the count of each (compiles or fails, qlin error or none) and every model where
the two differ. docs/targets.md has the results.
"""

import collections
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "fixtures")]

import corpus  # noqa: E402
import onnx  # noqa: E402
from fusion_agreement_openvino import compiled, releases, write  # noqa: E402

from qlin_cli.model.analysis import analyze  # noqa: E402
from qlin_cli.targets import predict  # noqa: E402


def _cases(folder: str) -> tuple[list[str], dict]:
    names = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES]
    paths = corpus.build(os.path.join(folder, "corpus"), names)
    return write(folder, {n: onnx.load(paths[n]) for n in names}), paths


def _release(version: str, python: str, folder: str, names: list[str], paths: dict) -> None:
    _, said = compiled(python, folder)
    counts: collections.Counter = collections.Counter()
    differ = []
    target = "openvino@" + ".".join(version.split(".")[:2])
    for n in names:
        fails = not isinstance(said.get(n), dict)
        a = analyze(onnx.load(paths[n]), os.path.dirname(paths[n]))
        errors = [f.code for f in predict.findings_in(a, [target]) if f.severity == "error"]
        counts[("fails" if fails else "compiles", "qlin error" if errors else "no qlin error")] += 1
        if fails != bool(errors):
            differ.append((n, str(said.get(n))[:100] if fails else errors[:3]))
    print(version, len(names), dict(counts), flush=True)
    for d in differ:
        print("   ", *d, flush=True)


def main() -> int:
    pairs = releases(sys.argv[1:])
    if pairs is None:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        names, paths = _cases(folder)
        for version, python in pairs:
            _release(version, python, folder, names, paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
