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


def compiled(python: str, folder: str, script: str = "probe_fusion_openvino.py") -> tuple[str, dict]:
    """probe_fusion.run_all of ``folder``'s cases afresh (an earlier release's results
    removed) with the reader ``script`` of tools/ (openvino's, or probe_fusion.py, which saves
    onnxruntime's optimized graph): the release, and per case its result or its error."""
    import probe_fusion

    for stale in ("results.jsonl", "version.txt"):
        if os.path.exists(os.path.join(folder, stale)):
            os.remove(os.path.join(folder, stale))
    return probe_fusion.run_all(python, folder, os.path.join(HERE, script))


def build(folder: str) -> tuple[list[str], dict]:
    """(ids, {id: model}) of the corpus's QDQ configurations, saved as cases of ``folder``."""
    import corpus
    import onnx

    names = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES and c.fmt == "QDQ"]
    paths = corpus.build(os.path.join(folder, "corpus"), names)
    models = {name: onnx.load(paths[name]) for name in names}
    return write(folder, models), models


def answers(outcome: str | None) -> bool:
    """Whether an outcome says fused or float (not a load error, a crash or a layer not found)."""
    from qlin_cli.targets import fusion

    return outcome is not None and (outcome == fusion.FLOAT or outcome.startswith(fusion.INTEGER))


def tally(counts: collections.Counter, cid: str, key: str, data: str | None, got: str) -> None:
    """Count one group of case ``cid``: "not measured" (no outcome of the key in the data, or
    a load error), "layer not found" (the release's outcome is none of fused / float), "agree"
    (both integer or both float; "same outcome" too where the words are the same) or "differ"
    (with a line naming the group)."""
    from qlin_cli.targets import fusion

    counts["groups"] += 1
    if not answers(data):
        counts["not measured"] += 1
    elif not answers(got):
        counts["layer not found"] += 1
    elif (data == fusion.FLOAT) == (got == fusion.FLOAT):
        counts["agree"] += 1
        counts["same outcome"] += data == got
    else:
        counts["differ"] += 1
        counts[f"{cid}: differs on {key}: the data says {data}, the release {got}"] += 1


def run_release(runtime: str, version: str, python: str, folder: str, script: str):
    """(the data's table of ``version``, {case: result}) after running ``script``'s reader in
    ``python``, which must hold that release."""
    from qlin_cli.targets import fusion

    release, said = compiled(python, folder, script)
    if release.split()[0] != version:
        raise SystemExit(f"{python} runs {runtime} {release}, not {version}")
    return fusion.table(runtime, version), said


def agreement(version: str, python: str, ids: list[str], models: dict, folder: str) -> collections.Counter:
    """The counts of one release."""
    import probe_fusion
    import probe_fusion_openvino as pfo

    table, said = run_release("openvino", version, python, folder, "probe_fusion_openvino.py")
    counts: collections.Counter = collections.Counter()
    for cid in ids:
        result = said.get(cid, "crash: no result")
        if not isinstance(result, dict):
            counts["models failing"] += 1
            counts[f"{cid}: {result[:90]}"] += 1
            continue
        for node, g in probe_fusion.group_ops(models[cid]):
            got = pfo.outcome_of(models[cid], result["layers"], node)
            tally(counts, cid, g.text, table.outcome(g.text) if table is not None else None, got)
    return counts


def releases(argv: list[str]) -> list[tuple[str, str]] | None:
    """The (VERSION, VENV/bin/python) pairs of a command line of VERSION=PYTHON words (this
    tool's and tools/blocks_openvino.py's); None when there are none or a word is not one."""
    pairs = [tuple(a.split("=", 1)) for a in argv]
    return pairs if pairs and all(len(p) == 2 for p in pairs) else None


def run(argv: list[str] | None, doc: str, count, failing: str) -> int:
    """Both agreement tools' main: the corpus's QDQ models built once, then ``count(version,
    python, ids, models, folder)`` of each release named, printed one line a release, then its
    differences and failing models (``failing``: "fail to compile", "fail to load")."""
    pairs = releases(sys.argv[1:] if argv is None else argv)
    if pairs is None:
        print(doc.strip().splitlines()[2], file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        ids, models = build(folder)
        for version, python in pairs:
            c = count(version, python, ids, models, folder)
            print(f"{version}: {c['groups']} groups, {c['agree']} agree ({c['same outcome']} with the same "
                  f"outcome), {c['differ']} differ, {c['not measured']} not measured, "
                  f"{c['layer not found']} not found in the runtime model; {c['models failing']} of "
                  f"{len(ids)} models {failing}", flush=True)
            for k in sorted(k for k in c if ": " in k):
                print(f"    {k}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(argv, __doc__, agreement, "fail to compile")


if __name__ == "__main__":
    sys.exit(main())
