"""The full rendered output of `qlin check` on every fixture, text and JSON, pinned.

A change in wording, location or order shows up here as a diff in review. After an
intended change, write the snapshots again with ``QLIN_UPDATE_SNAPSHOTS=1 make test``
and read the diff.
"""

from __future__ import annotations

import glob
import os

import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli.cli import main
from qlin_cli.codes import off_by_default

SNAPSHOTS = os.path.join(ROOT, "tests", "snapshots")
FIXTURES = sorted(os.path.relpath(p, MODELS)
                  for p in glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
UPDATE = os.environ.get("QLIN_UPDATE_SNAPSHOTS") == "1"


def selects(rel: str) -> list[str]:
    """``--select CODE`` for the fixtures of a rule that is off by default (``Rule.default``):
    its snapshot shows the rule at work, as a user who selects it sees it."""
    code = os.path.basename(rel).split("-")[0]
    return ["--select", code] if code in off_by_default() else []


def render(rel: str) -> str:
    runner = CliRunner()
    parts = []
    for fmt in ("text", "json"):
        flags = [*selects(rel), "--format", fmt]
        r = runner.invoke(main, ["check", "--no-config", *flags, rel])
        parts.append(f"== qlin check {' '.join(flags)} {rel} (exit {r.exit_code})\n{r.output.rstrip()}\n")
    return "\n".join(parts)


@pytest.mark.parametrize("rel", FIXTURES)
def test_rendered_output_matches_the_snapshot(rel, monkeypatch):
    monkeypatch.chdir(MODELS)
    got = render(rel)
    path = os.path.join(SNAPSHOTS, rel.replace(os.sep, "__") + ".txt")
    if UPDATE or not os.path.exists(path):
        if not UPDATE:
            pytest.fail(f"no snapshot for {rel}: run with QLIN_UPDATE_SNAPSHOTS=1")
        os.makedirs(SNAPSHOTS, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(got)
    with open(path, encoding="utf-8") as f:
        assert got == f.read(), f"output of {rel} changed: QLIN_UPDATE_SNAPSHOTS=1 writes it anew"


def test_every_snapshot_has_a_fixture():
    names = {rel.replace(os.sep, "__") + ".txt" for rel in FIXTURES}
    assert set(os.listdir(SNAPSHOTS)) == names
