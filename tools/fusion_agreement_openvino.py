"""How often QT501's prediction for openvino agrees with each release on the quantizer outputs.

    python tools/fusion_agreement_openvino.py VERSION=VENV/bin/python [...]

Builds every QDQ configuration of fixtures/corpus.py (onnxruntime's quantizer, in this venv),
compiles each model for CPU in each named release's venv as tools/probe_fusion_openvino.py
compiles its cases (a child that imports only openvino), reads each QDQ group's layer from the
runtime model, and compares its precision with the outcome the data gives that release for
the group's key (``fusion.table("openvino", VERSION)``). Prints one line per release: groups,
agree, differ, not measured (the key is not in the matrix, or the data has a load error for
it), groups whose layer is not found, and the models that fail to compile. docs/targets.md has the table.
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "fixtures")]


def write(folder: str, models: dict) -> list[str]:
    """Save each model as a case of ``folder`` (<id>.onnx and cases.json, as
    probe_fusion.each_case reads them); the ids in order."""
    import json

    import onnx

    for cid, model in models.items():
        onnx.save(model, os.path.join(folder, f"{cid}.onnx"))
    with open(os.path.join(folder, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(list(models), f)
    return list(models)


def compiled(python: str, folder: str) -> tuple[str, dict]:
    """probe_fusion.run_all of ``folder``'s cases afresh (an earlier release's results
    removed): the release, and per case its runtime layers or its error."""
    import probe_fusion

    for stale in ("results.jsonl", "version.txt"):
        if os.path.exists(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    return probe_fusion.run_all(python, folder, os.path.join(HERE, "probe_fusion_openvino.py"))


def build(folder: str) -> tuple[list[str], dict]:
    """(ids, {id: model}) of the corpus's QDQ configurations, saved as cases of ``folder``."""
    import corpus
    import onnx

    names = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES and c.fmt == "QDQ"]
    paths = corpus.build(os.path.join(folder, "corpus"), names)
    models = {name: onnx.load(paths[name]) for name in names}
    return write(folder, models), models


def agreement(version: str, python: str, ids: list[str], models: dict, folder: str) -> collections.Counter:
    """The counts of one release."""
    import probe_fusion
    import probe_fusion_openvino as pfo

    from qlin_cli.targets import fusion

    release, said = compiled(python, folder)
    if release.split()[0] != version:
        raise SystemExit(f"{python} runs openvino {release}, not {version}")
    table = fusion.table("openvino", version)
    counts: collections.Counter = collections.Counter()
    for cid in ids:
        result = said.get(cid, "crash: no result")
        if not isinstance(result, dict):
            counts["models failing to compile"] += 1
            counts[f"{cid}: {result[:90]}"] += 1
            continue
        for node, g in probe_fusion.group_ops(models[cid]):
            got = pfo.outcome_of(models[cid], result["layers"], node)
            data = table.outcome(g.text) if table is not None else None
            counts["groups"] += 1
            if data is None or not (data == fusion.FLOAT or data.startswith(fusion.INTEGER)):
                counts["not measured"] += 1
            elif not (got == fusion.FLOAT or got.startswith(fusion.INTEGER)):
                counts["layer not found"] += 1
            elif (data == fusion.FLOAT) == (got == fusion.FLOAT):
                counts["agree"] += 1
            else:
                counts["differ"] += 1
                counts[f"{cid}: differs on {g.text}: the data says {data}, the release {got}"] += 1
    return counts


def releases(argv: list[str]) -> list[tuple[str, str]] | None:
    """The (VERSION, VENV/bin/python) pairs of a command line of VERSION=PYTHON words (this
    tool's and tools/blocks_openvino.py's); None when there are none or a word is not one."""
    pairs = [tuple(a.split("=", 1)) for a in argv]
    return pairs if pairs and all(len(p) == 2 for p in pairs) else None


def main(argv: list[str] | None = None) -> int:
    pairs = releases(sys.argv[1:] if argv is None else argv)
    if pairs is None:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        ids, models = build(folder)
        for version, python in pairs:
            c = agreement(version, python, ids, models, folder)
            print(f"{version}: {c['groups']} groups, {c['agree']} agree, {c['differ']} differ, "
                  f"{c['not measured']} not measured, {c['layer not found']} not found in the runtime "
                  f"model; {c['models failing to compile']} of {len(ids)} "
                  f"models fail to compile", flush=True)
            for k in sorted(k for k in c if ": " in k):
                print(f"    {k}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
