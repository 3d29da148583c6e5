"""`qlin check -j N`: worker processes give the output of one process, in the same order;
few or small files stay in one process."""

from __future__ import annotations

import glob
import os

import pytest
from click.testing import CliRunner
from paths import MODELS

from qlin_cli import parallel
from qlin_cli.cli import main

ALL = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def run(*args):
    r = CliRunner().invoke(main, ["check", "--no-config", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_workers_give_the_output_of_one_process(fmt, tmp_path, monkeypatch):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08not a model")
    files = [*ALL[:20], str(bad), *ALL[20:]]
    one = run("--format", fmt, "-j", "1", *files)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    assert parallel.worth_it(files, 2)
    used = []
    real = parallel.ordered_map

    def spy(fn, items, jobs, paths, **kw):
        used.append(parallel.worth_it(paths, jobs))
        return real(fn, items, jobs, paths, **kw)

    monkeypatch.setattr(parallel, "ordered_map", spy)
    two = run("--format", fmt, "-j", "2", *files)
    assert used == [True]
    assert one == two and one[0] == 2 and "bad.onnx" in one[2]


def test_workers_see_each_files_config(tmp_path, monkeypatch):
    import shutil

    for name in ("a", "b", "c", "d"):
        (tmp_path / name).mkdir()
        shutil.copy(os.path.join(MODELS, "rules", "QL405-bad.onnx"), tmp_path / name / "m.onnx")
    (tmp_path / "b" / "qlin.toml").write_text('ignore = ["QL405"]\n')
    files = [str(tmp_path / n / "m.onnx") for n in "abcd"]
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    r = CliRunner().invoke(main, ["check", "-j", "2", "--statistics", *files])
    assert r.stdout.splitlines()[0] == "3 QL405     error   per-axis-shape"


def test_few_or_small_files_stay_in_one_process(tmp_path):
    assert not parallel.worth_it(ALL, 1)
    assert not parallel.worth_it(ALL[:parallel.MIN_FILES - 1], 8)
    assert sum(os.path.getsize(p) for p in ALL) < parallel.MIN_BYTES
    assert not parallel.worth_it(ALL, 8)  # the fixtures are small: forking would cost more
    big = []
    for i in range(parallel.MIN_FILES):
        p = tmp_path / f"{i}.onnx"
        p.write_bytes(b"\0" * (parallel.MIN_BYTES // parallel.MIN_FILES + 1))
        big.append(str(p))
    assert parallel.worth_it(big, 2)


def test_default_jobs_is_every_core():
    assert parallel.default_jobs() == len(os.sched_getaffinity(0))


def test_jobs_must_be_positive():
    assert run("-j", "0", ALL[0])[0] == 2
