"""Repeating the generator's measurement in the test process (tools/gen_target_data.py):
the first probe of each key whose outcome was the same for all its probes, run again in the
runtime installed here."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))


def remeasure(runtime: str, table, folder: Path) -> None:
    """Fail when a key's outcome here differs from the table's, on a CPU the table was
    measured on; skip, naming the first key, on another CPU (kernels follow the ISA)."""
    import gen_target_data
    import onnx
    import probe_models
    import probe_runner

    run = {"onnxruntime": probe_runner.run_onnxruntime, "openvino": probe_runner.run_openvino}[runtime]
    seen, checked, differ = set(), 0, []
    for key, model, feeds in probe_models.probes():
        outcome = table.outcome(key)
        if key in seen or outcome is None or (outcome.runs and outcome.fails):
            continue
        seen.add(key)
        path = folder / "probe.onnx"
        onnx.save(model, path)
        types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
        got = run(str(path), feeds, types)
        if (got == "ok") != (outcome.fails == 0):
            differ.append((key, got, outcome))
        checked += 1
    assert checked > 400
    here = gen_target_data.host_cpu()
    if here not in table.hosts and differ:
        pytest.skip(f"{len(differ)} keys differ on this CPU ({here}), not among the measured ones; "
                    f"`python tools/gen_target_data.py {runtime} {table.version} --merge` adds it: "
                    f"{differ[0][0]}")
    assert differ == []


@functools.cache
def all_probes() -> tuple:
    """Every probe of tools/probe_models.py, (key, model, feeds), made once per test run."""
    import probe_models

    return tuple(probe_models.probes())
