"""A data file's ``releases`` as ``data_files.head`` gives them: in the file's order, each
parsed when asked (``InOrder``), equal to the whole file parsed."""

from __future__ import annotations

import os

import pytest

from qlin_cli.targets import data_files

DATA = os.path.join(os.path.dirname(data_files.__file__), "data")
FILES = sorted(name.removesuffix(".gz") for name in os.listdir(DATA) if name.endswith(".json.gz"))


@pytest.mark.parametrize("name", FILES)
def test_releases_are_the_whole_files(name):
    whole = data_files.read(name)["releases"]
    fresh = data_files.InOrder(data_files.block(name, "releases"))
    assert list(fresh) == list(whole) and len(fresh) == len(whole) > 1
    newest = list(whole)[-1]
    assert fresh[newest] == whole[newest] and list(fresh._parsed) == [newest]  # the one asked, alone
    assert fresh == whole and dict(fresh.items()) == whole
    assert "no such release" not in fresh and fresh.get("no such release") is None
    assert data_files.head(name)["releases"] == whole
    assert data_files.releases(name) == tuple(whole)


def test_a_key_written_twice_is_its_first_value():
    body = b'\n"b": 1,\n"a": 2,\n"b": 3\n'
    found = data_files.InOrder(data_files.Block(body, 1, len(body)))
    assert list(found) == ["b", "a"] and dict(found) == {"b": 1, "a": 2}
    assert dict(found) == dict(data_files.Block(body, 1, len(body)).items())
