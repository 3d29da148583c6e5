"""Whole models against each openvino release: does `qlin check --target openvino@V` find an
error exactly where release V fails to read or compile the model?

    python tools/blocks_openvino.py VERSION=VENV/bin/python [...]
    python tools/blocks_openvino.py --write VERSION=VENV/bin/python [...]   # and record the blocks

The models are every configuration of fixtures/corpus.py (onnxruntime's quantizers: QDQ,
QOperator, dynamic, n-bits, over a conv net, an MLP-like mixed model, an attention block and
an LSTM), built in this venv; each release compiles them for CPU as
tools/probe_fusion_openvino.py compiles its cases (a child that imports only openvino). Prints
per release the count of each (compiles or fails, qlin error or none) and every model where
the two differ. docs/targets.md has the results.

With ``--write``, each model a release fails is cut down to its smallest failing run of nodes
(``cut``: the first window of 1, 2, 3 or 4 consecutive nodes that fails with the model's own
error, else the whole model), every block so found is compiled in every release named, and
the outcomes go to qlin_cli/targets/data/openvino_blocks.json.gz (block_store.py) under this
machine's CPU (gen_target_data.host_cpu): another CPU's outcomes stay as they are. The
agreement is counted before the data is written; run it again to count it with the data.
"""

import collections
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "fixtures")]

import block_cut  # noqa: E402
import corpus  # noqa: E402
import onnx  # noqa: E402
from fusion_agreement_openvino import releases  # noqa: E402

from qlin_cli.model.analysis import analyze  # noqa: E402
from qlin_cli.targets import predict  # noqa: E402


def _cases(folder: str) -> tuple[list[str], dict]:
    names = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES]
    return names, corpus.build(os.path.join(folder, "corpus"), names)


def _release(runtime: str, version: str, python: str, folder: str, names: list[str], paths: dict) -> dict:
    """Compile every model in the release and print the agreement; {model: (error, explained)}
    of the models it fails, ``explained`` where qlin finds an error other than the blocks' own."""
    release, said = block_cut.run_cases(runtime, python, os.path.join(folder, "models"),
                                        {n: onnx.load(paths[n]) for n in names})
    if release != version:
        raise SystemExit(f"{python} runs {runtime} {release}, not {version}")
    counts: collections.Counter = collections.Counter()
    differ = []
    failed = {}
    target = f"{runtime}@" + ".".join(version.split(".")[:2])
    for n in names:
        fails = said.get(n) != block_cut.OK
        a = analyze(onnx.load(paths[n]), os.path.dirname(paths[n]))
        errors = [f.code for f in predict.findings_in(a, [target]) if f.severity == "error"]
        counts[("fails" if fails else "compiles", "qlin error" if errors else "no qlin error")] += 1
        if fails != bool(errors):
            differ.append((n, str(said.get(n))[:100] if fails else errors[:3]))
        if fails:
            explained = any(c != block_cut.EXPLAINED_BY_BLOCKS for c in errors)
            failed[n] = (said.get(n, "crash: no result"), explained)
    print(version, len(names), dict(counts), flush=True)
    for d in differ:
        print("   ", *d, flush=True)
    return failed


def main(runtime: str = "openvino", doc: str = __doc__) -> int:
    args = sys.argv[1:]
    record = "--write" in args
    pairs = releases([a for a in args if a != "--write"])
    if pairs is None:
        print(doc.strip().splitlines()[2], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        names, paths = _cases(folder)
        failed = {}
        for version, python in pairs:
            failed[version] = _release(runtime, version, python, folder, names, paths)
        if record:
            block_cut.record(runtime, pairs, failed, paths, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
