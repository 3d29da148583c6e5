"""Hardening: files that are not models get exit 2 and one line naming the file and the problem."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest
from hardening_helpers import assert_bad_input, assert_both_refuse, cli, guard, listing, procs  # noqa: F401
from paths import MODELS

VALID = os.path.join(MODELS, "clean", "per_channel_chain.onnx")


def _valid_bytes() -> bytes:
    with open(VALID, "rb") as f:
        return f.read()


def _bad(kind, tmp_path):
    """(path to give qlin, words the error must name)."""
    p = tmp_path / "in" / "model.onnx"
    p.parent.mkdir()
    if kind == "empty":
        p.write_bytes(b"")
        return p, ["empty"]
    if kind == "truncated":
        data = _valid_bytes()
        p.write_bytes(data[: len(data) // 2])
        return p, ["protobuf"]
    if kind == "truncated-tail":
        p.write_bytes(_valid_bytes()[:-3])
        return p, ["protobuf"]
    if kind == "random":
        p.write_bytes(random.Random(5).randbytes(4096))
        return p, []
    if kind == "text":
        p.write_text("ir_version: 8\ngraph { name: 'this is text, not protobuf' }\n")
        return p, []
    if kind == "json":
        p.write_text(json.dumps({"graph": {"node": []}}))
        return p, []
    if kind == "no-graph":
        p.write_bytes(b"\x08\x08")  # ir_version 8 and nothing else: valid protobuf, no graph
        return p, ["no graph"]
    if kind == "directory":
        d = tmp_path / "in" / "folder.onnx"
        d.mkdir()
        return d, ["directory"]
    if kind == "missing":
        return tmp_path / "in" / "absent.onnx", ["no such file"]
    if kind == "fifo":
        os.mkfifo(p)  # opening it would block forever
        return p, ["not a regular file"]
    if kind == "dev-zero":
        return "/dev/zero", ["not a regular file"]
    if kind == "dangling-link":
        p.symlink_to(tmp_path / "in" / "gone.onnx")
        return p, ["no such file"]
    raise AssertionError(kind)


KINDS = ["empty", "truncated", "truncated-tail", "random", "text", "json", "no-graph", "directory",
         "missing", "fifo", "dev-zero", "dangling-link"]


@pytest.mark.parametrize("kind", KINDS)
def test_check_bad_input(kind, tmp_path, guard):  # noqa: F811
    path, words = _bad(kind, tmp_path)
    if os.path.isfile(path) and not str(path).startswith("/dev"):
        guard.watch(path)
    if kind == "directory":  # a directory named *.onnx holding no models
        words = ["no .onnx files"]
    assert_bad_input(cli("check", path), path, *words)


@pytest.mark.parametrize("kind", KINDS)
def test_convert_bad_input(kind, tmp_path, guard):  # noqa: F811
    path, words = _bad(kind, tmp_path)
    if os.path.isfile(path) and not str(path).startswith("/dev"):
        guard.watch(path)
    out = tmp_path / "out" / "o.onnx"
    out.parent.mkdir()
    assert_bad_input(cli("convert", path, "--to-opset", 21, "-o", out), path, *words)
    assert listing(out.parent) == []


@pytest.mark.parametrize("kind", ["truncated", "random", "directory", "missing"])
def test_real_process_stderr_is_one_line(kind, tmp_path, guard):  # noqa: F811
    path, words = _bad(kind, tmp_path)
    if kind == "directory":
        words = []
    # check and convert --dry-run (what assert_both_refuse runs), as two processes side by side
    check, convert = procs((("check", path), None), (("convert", path, "--to-opset", 21, "--dry-run"), None))
    assert_bad_input(check, path, *words)
    assert_bad_input(convert, path, *words)


def test_model_over_protobuf_limit_is_refused_before_reading(tmp_path, guard):  # noqa: F811
    p = tmp_path / "huge.onnx"
    p.write_bytes(_valid_bytes())
    os.truncate(p, 2**31 + 10)  # sparse: no blocks written
    guard.watch(p)
    assert_both_refuse(p, "2 GiB", opset=21)


def test_check_reports_the_other_files_of_the_run(tmp_path, guard):  # noqa: F811
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(os.path.join(MODELS, "rules", "QL405-bad.onnx"), folder / "a_bad_rule.onnx")
    (folder / "b_broken.onnx").write_bytes(b"\x00garbage")
    shutil.copy(os.path.join(MODELS, "clean", "blocked_int4.onnx"), folder / "c_clean.onnx")
    (folder / "d_empty.onnx").write_bytes(b"")
    guard.watch(folder)
    missing = tmp_path / "missing.onnx"
    r = cli("check", "--format", "json", folder, missing)
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    by_name = {os.path.basename(f["path"]): f for f in doc["files"]}
    assert set(by_name) == {"a_bad_rule.onnx", "b_broken.onnx", "c_clean.onnx", "d_empty.onnx",
                            "missing.onnx"}
    assert [d["code"] for d in by_name["a_bad_rule.onnx"]["diagnostics"]] == ["QL405"]
    assert by_name["c_clean.onnx"]["error"] is None and by_name["c_clean.onnx"]["diagnostics"] == []
    for bad in ("b_broken.onnx", "d_empty.onnx", "missing.onnx"):
        assert by_name[bad]["error"]
    lines = r.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith("qlin: error: ") for line in lines)
    # the text report names the good files too
    r = cli("check", folder)
    assert r.exit_code == 2 and "QL405" in r.stdout and "a_bad_rule" in r.stdout


def test_invalid_utf8_in_a_name_is_one_line(tmp_path, guard):  # noqa: F811
    """protobuf decodes strings lazily: a bad one surfaces wherever qlin first reads it."""
    import onnx

    m = onnx.load(os.path.join(MODELS, "rules", "QL405-bad.onnx"))
    m.graph.node[0].input[0] = "Q_in"
    m.graph.input[0].name = "Q_in"
    data = m.SerializeToString().replace(b"Q_in", b"\xf3_in")
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    guard.watch(p)
    assert_both_refuse(p, "UTF-8", out=tmp_path / "o.onnx")


def test_an_unforeseen_crash_is_one_line_and_the_run_goes_on(tmp_path, guard, monkeypatch):  # noqa: F811
    """The last line of defence: a bug in a rule becomes `internal error` for that file only."""
    from qlin_cli import rules

    rule = rules.get("QL405")
    real = type(rule).check

    calls = []

    def check(self, facts):  # the first file checked (the copy in crash/) meets a bug
        calls.append(facts)
        if len(calls) == 1:
            raise ZeroDivisionError("a bug")
        return real(self, facts)

    monkeypatch.setattr(type(rule), "check", check)
    (tmp_path / "crash").mkdir()
    bad = tmp_path / "crash" / "m.onnx"
    shutil.copy(os.path.join(MODELS, "rules", "QL405-bad.onnx"), bad)
    other = os.path.join(MODELS, "rules", "QL405-bad.onnx")
    guard.watch(bad)
    r = cli("check", "--format", "json", bad, other)
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"qlin: error: {bad}: internal error (ZeroDivisionError")
    files = json.loads(r.stdout)["files"]
    assert [d["code"] for d in files[1]["diagnostics"]] == ["QL405"]


@pytest.mark.parametrize("field", ["initializer-name", "external-location"])
def test_invalid_utf8_in_a_tensor_is_one_line(field, tmp_path, guard):  # noqa: F811
    """Tensors' strings are scanned on their own path (their payload is never copied)."""
    import onnx

    m = onnx.load(os.path.join(MODELS, "rules", "QL405-bad.onnx"))
    init = m.graph.initializer[0]
    if field == "external-location":
        init.data_location = onnx.TensorProto.EXTERNAL
        init.external_data.add(key="location", value="Q_in.bin")
    else:
        old = init.name
        init.name = "Q_in"
        for n in m.graph.node:
            n.input[:] = ["Q_in" if i == old else i for i in n.input]
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString().replace(b"Q_in", b"\xf3_in"))
    guard.watch(p)
    assert_both_refuse(p, "UTF-8", out=tmp_path / "o.onnx")
