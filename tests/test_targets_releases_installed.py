"""targets/releases.installed: a runtime's installed version read from its dist-info folder as
importlib.metadata reads it (``_listed_version``), and importlib.metadata asked for anything
that is not plainly there."""

from __future__ import annotations

import os
import sys
from importlib import metadata

import pytest

from qlin_cli.targets import releases


def _asked(name: str):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_every_installed_distribution_reads_as_importlib_metadata_reads_it():
    names = set()
    for entry in sys.path:
        if os.path.isdir(entry or "."):
            names |= {e.partition("-")[0] for e in os.listdir(entry or ".") if e.endswith(".dist-info")}
    read = [n for n in names if releases._listed_version(n) is not releases._ASK]
    assert len(read) > 5
    for name in read:
        assert releases._listed_version(name) == _asked(name), name
    assert releases._listed_version("no-such-distribution-here") is None


def _dist(folder, name: str, metadata_text: str | None) -> None:
    os.makedirs(folder / name)
    if metadata_text is not None:
        (folder / name / "METADATA").write_text(metadata_text, encoding="utf-8")


@pytest.fixture
def path(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    releases.installed.cache_clear()
    yield first, second
    releases.installed.cache_clear()


def test_made_up_distributions(path):
    first, second = path
    _dist(first, "plain_rt-1.2.3.dist-info",
          "Metadata-Version: 2.1\nName: plain-rt\nVersion: 1.2.3\n\nbody\n")
    _dist(second, "plain_rt-9.9.dist-info", "Metadata-Version: 2.1\nName: plain-rt\nVersion: 9.9\n")
    _dist(first, "Spaced.Rt-2.0.dist-info", "Name: spaced\nVersion:   2.0  \nVersion: 3.0\n")
    _dist(first, "folded-1.0.dist-info", "Name: folded\nSummary: a\n  b\nVersion: 1.0\n")
    _dist(first, "bare-1.0.dist-info", None)
    _dist(first, "old-1.0.egg-info", None)
    (first / "old-1.0.egg-info" / "PKG-INFO").write_text("Name: old\nVersion: 1.0\n")
    _dist(second, "later-4.1.dist-info", "Name: later\nVersion: 4.1\n")
    expected = {"plain-rt": "1.2.3", "plain_rt": "1.2.3", "spaced-rt": "2.0  ", "later": "4.1",
                "nothing": None}
    for name, version in expected.items():
        assert releases._listed_version(name) == version == _asked(name), name
    for name in ("folded", "bare", "old"):
        assert releases._listed_version(name) is releases._ASK
    assert releases.installed(("nothing", "folded", "later")) == _asked("folded") == "1.0"
    releases.installed.cache_clear()
    assert releases.installed(("nothing", "later")) == "4.1"
    releases.installed.cache_clear()
    assert releases.installed(("nothing",)) is None


def test_another_finder_of_distributions_is_asked(path, monkeypatch):
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [Finder, *sys.meta_path])
    assert not releases._plain_path()


@pytest.mark.parametrize("name", ["a", "A-b", "a..b", "_a", "a_", "--a__b.-c", "x.Y_z", ""])
def test_names_normalise_as_importlib_metadata_normalises_them(name):
    from importlib.metadata import Prepared

    assert releases._normalized(name) == Prepared.normalize(name)


def test_the_first_info_folder_of_the_distribution_is_found_even_beside_a_name_with_a_line_end():
    children = ["x\ny", "b-1.0.dist-info", "a-2.0.dist-info", "a-1.0.egg-info"]
    assert releases._first_info(children, "a") == "a-2.0.dist-info"
    assert releases._first_info(children[1:], "a") == "a-2.0.dist-info"
    assert releases._first_info(["c", "A.Egg-Info", "a-1.dist-info"], "a") == "A.Egg-Info"
    assert releases._first_info(["c", "d"], "a") is None
