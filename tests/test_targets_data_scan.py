"""The data files' hand-written scanners against the patterns they stand for: a key's JSON
string (data_files._string_at) and a kernel row's (domain, op) (kernel_store._op_of) are
found where the regular expressions they replaced find them, on every line of the stored
files and on made-up lines with escapes, repeated markers and no match at all."""

from __future__ import annotations

import re

import pytest

from qlin_cli.targets import data_files, kernel_store

_KEY = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_OP = re.compile(rb'"domain":"([^"]*)","op":"([^"]*)"')

STRINGS = [b'"plain": 1', b'"a\\"b": 2', b'"a\\\\": 3', b'"a\\\\\\"b\\\\": 4', b'"": 5', b'"\\\\\\\\"x',
           b'"end\\\\"', b'"tab\\tnew\\nline"', b'"u\\u00e9"']
BAD = [b'"open', b'"line\nbreak"', b'x"', b'"back\\\nslash"']


@pytest.mark.parametrize("text", STRINGS)
def test_a_json_string_ends_where_the_pattern_ends_it(text):
    assert data_files._string_at(text, 0) == _KEY.match(text, 0).group()
    padded = b"\n" + text + b"\n"
    assert data_files._string_at(padded, 1) == _KEY.match(padded, 1).group()


@pytest.mark.parametrize("text", BAD)
def test_no_json_string_on_one_line_is_refused(text):
    assert _KEY.match(text, 0) is None
    with pytest.raises(ValueError):
        data_files._string_at(text, 0)


def test_every_key_of_the_stored_files_is_read_as_the_pattern_reads_it():
    seen = 0
    for name in ("onnxruntime_probes.json", "openvino_probes.json", "onnxruntime_fusion.json"):
        text = data_files.raw(name)
        for at in (m.start() + 1 for m in re.finditer(rb'\n"', text)):
            assert data_files._string_at(text, at) == _KEY.match(text, at).group()
            seen += 1
    assert seen > 10_000


ROWS = [b'[[], {"domain":"","op":"Abs","since":1}]', b'{"domain":"com.microsoft","op":"QGemm"}',
        b'{"constraints":{"domain":"x"},"domain":"a","op":"B"}',
        b'{"domain":"a","x":1,"domain":"b","op":"C"}']


@pytest.mark.parametrize("line", ROWS)
def test_a_rows_op_is_the_first_domain_and_op_the_pattern_finds(line):
    m = _OP.search(line)
    assert kernel_store._op_of(line) == (m[1].decode(), m[2].decode())


def test_a_row_without_domain_and_op_is_refused():
    for line in (b'{"op":"Abs"}', b'{"domain":"","since":1}', b'{"domain":"","op":"Abs'):
        assert _OP.search(line) is None
        with pytest.raises(ValueError):
            kernel_store._op_of(line)


def test_every_row_of_the_kernel_file_has_the_op_the_pattern_finds():
    text = data_files.raw(kernel_store.file_name("onnxruntime"))
    rows = [line for line in text.split(b"\n") if line.startswith(b"[[")]
    assert len(rows) > 1000
    for line in rows:
        m = _OP.search(line)
        assert kernel_store._op_of(line) == (m[1].decode(), m[2].decode())


def _all_ops(text: bytes) -> set[tuple[str, str]]:
    return {kernel_store._op_of(line) for line in text.split(b"\n") if line.startswith(b"[[")}


def test_a_kernel_rows_lines_found_by_their_text_are_those_bisected_for():
    name = kernel_store.file_name("onnxruntime")
    ops = _all_ops(data_files.raw(name))
    absent = [("", "NoSuchOp"), ("", "MatMu"), ("com.microsoft", "QuantizeLinea"), ("zz", "Abs"), ("", "")]
    for field in kernel_store.LISTS:
        stored = data_files.rows(name, field, kernel_store._op_of)
        plain = data_files.Rows(data_files.raw(name), *data_files._span(data_files.raw(name), field),
                                kernel_store._op_of)
        for key in sorted(ops) + absent:
            bisected = stored.lines(key)
            assert stored.lines(key, kernel_store.needle(*key)) == bisected, (field, key)
            assert plain.lines(key, kernel_store.needle(*key)) == plain.lines(key) == bisected, (field, key)
    assert len(ops) > 300


def test_names_the_file_would_escape_are_bisected_for():
    assert kernel_store.needle("", 'a"b') is None and kernel_store.needle("x\\y", "Abs") is None
    assert kernel_store.needle("", "caf\u00e9") is None and kernel_store.needle("", "tab\t") is None
    assert kernel_store.needle("com.microsoft", "QGemm") == b'"domain":"com.microsoft","op":"QGemm"'


@pytest.mark.parametrize("name", ["onnxruntime_probes.json", "openvino_probes.json", "openvino_fusion.json"])
def test_an_entry_found_by_its_text_is_the_one_bisected_for(name):
    runs = data_files.block(name, "keys" if "probes" in name else "groups")
    seen = 0
    for i in range(len(runs._runs.firsts)):
        block = runs._block(i)
        keys = list(block)
        for key in keys + [k + "x" for k in keys[:5]] + [keys[0][:-1], "~", " "]:
            assert block._found(key) == block._seek(key), (name, i, key)
            seen += 1
    assert seen > 1000


def test_the_measured_releases_read_the_kernel_file_by_its_own_name(monkeypatch):
    from qlin_cli.targets import probe_store, releases

    for runtime in ("onnxruntime", "openvino"):
        have = set(kernel_store.releases(runtime)) | set(probe_store.releases(runtime))
        assert releases.measured(runtime) == tuple(sorted(have, key=releases.key))
    monkeypatch.setattr(probe_store, "releases", lambda runtime: ())  # the kernel file's alone
    monkeypatch.setattr(releases, "measured", releases.measured.__wrapped__)
    assert releases.measured("onnxruntime") == kernel_store.releases("onnxruntime") != ()
    assert releases.measured("openvino") == ()


def test_a_row_holding_another_ops_text_does_not_join_that_ops_rows():
    """``Rows.lines`` by text: a row whose own op is A but which holds C's domain and op
    further in (nested) is not one of C's rows; the lines are those bisected for."""
    lines = [b'[[["1", null]], {"domain":"","op":"A","body":{"domain":"","op":"C"}}],',
             b'[[["1", null]], {"domain":"","op":"B"}],',
             b'[[["1", null]], {"domain":"","op":"C"}]']
    body = b"[\n" + b"\n".join(lines) + b"\n]"
    rows = data_files.Rows(body, 2, len(body) - 2, kernel_store._op_of)
    for op in ("A", "B", "C"):
        want = rows.lines(("", op))
        assert want == [lines[ord(op) - ord("A")].removesuffix(b",")]
        assert rows.lines(("", op), kernel_store.needle("", op)) == want, op
