"""An onnxruntime release's kernels read one range at a time (ort_table.OrtTable.kernel parses
the registrations of the range that matches, kernel_store.range_of reading each row's range
from its text): the same kernels, registrations and all, as the release's whole table."""

from __future__ import annotations

import json

import pytest

from qlin_cli.targets import data_files, kernel_store, ort_table


def _lines() -> list[bytes]:
    body = data_files.raw(kernel_store.file_name("onnxruntime"))
    start, end = data_files._span(body, "kernels")
    return [line.removesuffix(b",") for line in body[start:end].rstrip().split(b"\n")]


def test_every_rows_range_read_from_its_text_is_its_parsed_range():
    lines = _lines()
    assert len(lines) > 1000
    for line in lines:
        row = json.loads(line)[1]
        assert kernel_store.range_of(line) == (row["since"], row["until"]), line


@pytest.mark.parametrize("line, want", [
    (b'[[["1.0",null]],{"constraints":{"T":["int8"]},"domain":"","op":"A","since":3,"until":null}]',
     (3, None)),
    (b'[[["1.0",null]],{"constraints":{},"domain":"x","op":"since","since":13,"until":18}]', (13, 18)),
])
def test_a_range_is_read_from_the_rows_own_fields(line, want):
    assert kernel_store.range_of(line) == want


def _full(kernels) -> list:
    """(since, until) and registrations of each kernel (a Kernel's equality leaves them out)."""
    return [((k.since, k.until), [dict(r) for r in k.registrations]) for k in kernels]


def _grouped(table: dict, domain: str, op: str) -> list:
    """``_full`` of the op's kernels, grouped here from the release's whole table."""
    found: dict = {}
    for k in table["kernels"]:
        if (ort_table.normalise_domain(k["domain"]), k["op"]) == (domain, op):
            reg = {name: frozenset(ts) for name, ts in k["constraints"].items()}
            found.setdefault((int(k["since"]), k["until"]), []).append(reg)
    return sorted(found.items(), key=lambda g: g[0][0])


@pytest.mark.parametrize("version", sorted({kernel_store.releases("onnxruntime")[i] for i in (0, 6, -1)}))
def test_each_kernel_read_alone_is_the_whole_tables(version):
    data = kernel_store.table("onnxruntime", version)
    whole = ort_table.OrtTable(data)
    first = ort_table.OrtTable(*kernel_store.release_rows("onnxruntime", version))  # kernel() first
    then = ort_table.OrtTable(*kernel_store.release_rows("onnxruntime", version))  # kernels() first
    ops = sorted({(ort_table.normalise_domain(r["domain"]), r["op"]) for r in data["kernels"]})
    assert len(ops) > 100
    for domain, op in ops:
        want = _grouped(data, domain, op)
        assert _full(then.kernels(domain, op)) == _full(whole.kernels(domain, op)) == want, op
        for opset in sorted({*whole.schema_versions(domain, op), 1, 28}):
            one = whole.kernel(domain, op, opset)
            assert _full([first.kernel(domain, op, opset)] if one else []) == _full([one] if one else []), op
        assert _full(first.kernels(domain, op)) == want, op
