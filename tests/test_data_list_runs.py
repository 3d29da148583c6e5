"""A kernel file's two lists stored in runs (targets/data_files.py ``LIST_RUN_BLOCKS``): any
gzip reader still reads the file whole, the head holds the releases, the text between and
after the lists is the rest, and the rows of a key, in the runs its key may fall in (a key's
rows may run on across runs), are those of the whole text, in order."""

from __future__ import annotations

import gzip
import json

import pytest

from qlin_cli.targets import data_files, kernel_store


def _text() -> str:
    """A kernel-file-shaped text: head fields, releases, a kernels list, a schemas list."""
    rows = []
    for op in ("Abs", "Add", "Conv", "DequantizeLinear", "MatMul", "QuantizeLinear", "Relu"):
        for domain in ("", "com.microsoft"):
            for n in range(12 if op in ("Conv", "QuantizeLinear") else 3):
                rows.append([[["1.0", None if n % 2 else "1.1"]],
                             {"constraints": {"T": ["float", f"t{n}"]}, "domain": domain, "op": op,
                              "since": n, "until": None}])
    rows.sort(key=lambda r: (r[1]["domain"], r[1]["op"]))
    schemas = [[[["1.0", None]], {"domain": r[1]["domain"], "op": r[1]["op"], "versions": [r[1]["since"]]}]
               for r in rows]
    lines = ['{', '"format": 1,', '"runtime": "r",', '"releases": {', '"1.0": {"source": "s"},',
             '"1.1": {"source": "s"}', '},', '"kernels": [']
    lines += [json.dumps(r, separators=(",", ":")) + ("," if i < len(rows) - 1 else "")
              for i, r in enumerate(rows)]
    lines += ['],', '"schemas": [']
    lines += [json.dumps(r, separators=(",", ":")) + ("," if i < len(schemas) - 1 else "")
              for i, r in enumerate(schemas)]
    lines += [']', '}']
    return "\n".join(lines) + "\n"


@pytest.fixture
def stored(monkeypatch):
    monkeypatch.setattr(data_files, "RUN_BYTES", 700)  # many runs of a small text
    text = _text()
    packed = data_files._members(text.encode())
    assert gzip.decompress(packed).decode() == text  # the file is its text to any reader
    return text, data_files._Parts(packed)


def test_both_lists_are_in_runs_and_the_rest_is_the_rest(stored):
    text, p = stored
    assert sorted(p.blocks) == ["kernels", "schemas"] and p.run_block is None
    assert all(len(p.blocks[b].firsts) > 5 for b in p.blocks)
    assert b'"releases"' in p.head and b'"kernels": [' in p.head and b'"schemas"' not in p.head
    assert b'"schemas": [' in p.tail()
    runs = sum(len(p.blocks[b].run(i)) for b in p.blocks for i in range(len(p.blocks[b].firsts)))
    assert len(p.head) + runs + len(p.tail()) == len(text.encode())


def test_the_rows_of_each_key_are_the_whole_texts(stored):
    text, p = stored
    whole = json.loads(text)
    for field in ("kernels", "schemas"):
        rows = data_files.RunRows(p.blocks[field], kernel_store._op_of)
        keys = {(r[1]["domain"], r[1]["op"]) for r in whole[field]}
        for key in sorted(keys) + [("", "Zzz"), ("", ""), ("com.microsoft", "Aaa"), ("zz", "Relu")]:
            got = data_files.parsed(rows.lines(key))
            assert got == [r for r in whole[field] if (r[1]["domain"], r[1]["op"]) == key], key
