"""docs/hub.md: the recipe that checks many files through the Python API on a distributed
engine. Its worker function gives what `qlin check --format json` gives; Dask is the `hub`
extra, which `make bench` installs and `make test` / `make demo` never need."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _blocks() -> list[str]:
    with open(os.path.join(ROOT, "docs", "hub.md"), encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_the_recipes_worker_checks_as_the_command_does():
    worker, client = _blocks()
    assert "def check_batch" in worker and "client.map(check_batch" in client
    space: dict = {}
    exec(compile(worker, "docs/hub.md", "exec"), space)  # the worker needs no Dask
    folder = os.path.join(MODELS, "broken")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".onnx"))
    files.append(os.path.join(folder, "missing.onnx"))
    got = space["check_batch"](files)
    r = CliRunner().invoke(main, ["check", "--format", "json", *files])
    assert r.exit_code == 2
    assert got == json.loads(r.stdout)["files"]
    assert got[-1]["error"] and any(f["diagnostics"] for f in got)


def test_the_bench_worker_is_the_recipes():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import bench_hub
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    space: dict = {}
    exec(compile(_blocks()[0], "docs/hub.md", "exec"), space)
    files = [os.path.join(MODELS, "clean", "per_channel_chain.onnx")]
    assert bench_hub.check_batch(files) == space["check_batch"](files)


def test_dask_is_the_hub_extra_and_only_make_bench_installs_it():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert any(d.startswith("dask[distributed]") for d in extras["hub"])
    assert not any("dask" in d for d in extras["dev"])
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        make = f.read()
    targets = dict(re.findall(r"^([\w$()-]+):(.*)$", make, re.M))
    assert "HUB_STAMP" in targets["bench"]
    assert "HUB_STAMP" not in targets["test"] and "HUB_STAMP" not in targets["demo"]


def test_the_recipe_runs_on_dask_when_it_is_installed():
    """The client block itself, on an in-process cluster (threads: no worker processes to
    start), over the clean fixtures."""
    pytest.importorskip("distributed")
    worker, client = _blocks()
    client = client.replace("LocalCluster(n_workers=2, threads_per_worker=1)",
                            "LocalCluster(n_workers=1, processes=False, dashboard_address=':0')")
    client = client.replace('["models/"]', repr([os.path.join(MODELS, "clean")]))
    assert "processes=False" in client
    space: dict = {}
    exec(compile(worker + client, "docs/hub.md", "exec"), space)
    assert len(space["files"]) == 5
