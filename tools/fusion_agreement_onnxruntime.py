"""How often QT501's prediction for onnxruntime agrees with each release on the quantizer outputs.

    python tools/fusion_agreement_onnxruntime.py VERSION=VENV/bin/python [...]

Builds every QDQ configuration of fixtures/corpus.py (onnxruntime's quantizers, in this venv),
loads each model on the CPU provider in each named release's venv as tools/probe_fusion.py
loads its cases (a child that imports only onnxruntime: default SessionOptions, so the default
optimization level ORT_ENABLE_ALL, with ``optimized_model_filepath`` set), reads what each QDQ
group became in the saved graph (``probe_fusion.outcome_of``) and compares fused / float with
the outcome the data gives that release for the group's key (``fusion.table("onnxruntime",
VERSION)``). Prints one line per release (tools/fusion_agreement_openvino.py's ``run``):
groups, agree (and how many of them with the very same outcome, the same kernel), differ,
not measured (the key is not in the matrix, or the data has a load error for it), and the
models that fail to load. docs/targets.md has the table.
"""

from __future__ import annotations

import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE]

import fusion_agreement_openvino as shared  # noqa: E402


def agreement(version: str, python: str, ids: list[str], models: dict, folder: str) -> collections.Counter:
    """The counts of one release."""
    import onnx
    import probe_fusion

    table, said = shared.run_release("onnxruntime", version, python, folder, "probe_fusion.py")
    counts: collections.Counter = collections.Counter()
    for cid in ids:
        result = said.get(cid, "crash: no result")
        if result != "ok":
            counts["models failing"] += 1
            counts[f"{cid}: {result[:90]}"] += 1
            continue
        optimized = onnx.load(os.path.join(folder, f"{cid}.opt.onnx"), load_external_data=False)
        for node, g in probe_fusion.group_ops(models[cid]):
            got = probe_fusion.outcome_of(models[cid], optimized, node)
            shared.tally(counts, cid, g.text, table.outcome(g.text) if table is not None else None, got)
    return counts


def main(argv: list[str] | None = None) -> int:
    return shared.run(argv, __doc__, agreement, "fail to load")


if __name__ == "__main__":
    sys.exit(main())
