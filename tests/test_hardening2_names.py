"""Hardening 2: names that attack terminals and CI logs.

A node, tensor, graph or file name can hold a newline followed by a forged GitHub
annotation, ANSI escape sequences, bidi overrides, line separators, rich markup, or (file
names) bytes that are not UTF-8. Every output shows them safely: text and one-line errors
escape them (report/safe.py ``printable``), GitHub annotations stay one line each, JSON
keeps names exactly and SARIF stays valid; nothing crashes under a UTF-8 locale.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys

import fast_process
import pytest
from hardening_helpers import (  # noqa: F401
    EVIL,
    EVIL_SEQUENCES,
    assert_bad_input,
    assert_reported,
    cli,
    evil_model,
    guard,
    unsafe_characters,
)
from paths import MODELS, ROOT

from qlin_cli.report import safe

SARIF_SCHEMA = os.path.join(ROOT, "..", "shared", "data", "sarif-schema-2.1.0.json")


@pytest.fixture
def evil(tmp_path, guard):  # noqa: F811
    path = evil_model(tmp_path / "m.onnx")
    guard.watch(path)
    return path


def _no_forgery(text: str) -> None:
    """No control character but newlines, none of the hostile name's sequences, and no line
    that GitHub would read as the forged annotation."""
    assert unsafe_characters(text) == [], unsafe_characters(text)
    for seq in EVIL_SEQUENCES:
        if seq != "\n::error":
            assert seq not in text, seq
    assert not [line for line in text.splitlines() if line.startswith("::error file=forged.py")]


# ---- the escaping itself ------------------------------------------------------------------

def test_printable_escapes_every_control_and_keeps_printable_text():
    assert safe.printable("plain name/é/中") == "plain name/é/中"
    assert safe.printable("a\nb\rc\td\x1b[2J\x07\x7f\x85\u202e\u2028\u2066\ufeff") == (
        "a\\nb\\rc\\td\\x1b[2J\\x07\\x7f\\x85\\u202e\\u2028\\u2066\\ufeff")
    assert safe.printable("caf\udce9.onnx") == "caf\\xe9.onnx"  # a non-UTF-8 byte of a file name
    assert safe.printable("\U000e0001") == "\\U000e0001"
    assert safe.printable(EVIL).isprintable()


def test_unicode_text_escapes_only_what_cannot_be_unicode():
    assert safe.unicode_text(EVIL) == EVIL
    assert safe.unicode_text("caf\udce9\ud800") == "caf\\xe9\\ud800"
    assert safe.unicode_tree({"a": ["x\udcff", {"k\udcfe": 1}]}) == {"a": ["x\\xff", {"k\\xfe": 1}]}


def test_file_uri_maps_back_to_the_same_bytes(tmp_path):
    from urllib.parse import unquote_to_bytes

    name = os.fsdecode(b"a b#%?\xff\n.onnx")
    uri = safe.file_uri(os.path.join("sub", name), base=os.getcwd())
    assert uri.isascii() and " " not in uri and "#" not in uri and "\n" not in uri
    assert unquote_to_bytes(uri) == b"sub/" + b"a b#%?\xff\n.onnx"
    outside = safe.file_uri(str(tmp_path / name), base=os.path.join(str(tmp_path), "x"))
    assert outside.startswith("file:///") and unquote_to_bytes(outside[7:]) == os.fsencode(
        str(tmp_path / name))


# ---- check, every format --------------------------------------------------------------------

def test_text_report_escapes_names(evil):
    r = cli("check", evil)
    assert r.exit_code == 1, r.output
    _no_forgery(r.stdout)
    assert safe.printable(EVIL) in r.stdout  # shown, escaped, not dropped
    assert "[bold red]markup[/bold red]" in r.stdout  # rich markup printed literally


def test_text_report_on_a_colour_terminal_carries_no_injected_sequence(evil):
    """rich writes its own colour codes on a terminal; none of the name's may pass."""
    env = dict(os.environ, PYTHONPATH=ROOT, FORCE_COLOR="1", TERM="xterm-256color")
    p = fast_process.run([sys.executable, "-m", "qlin_cli", "check", evil], capture_output=True, env=env,
                       timeout=120)
    out = p.stdout.decode("utf-8")
    assert p.returncode == 1 and "\x1b[" in out  # colours are on
    for seq in ("\x1b[2J", "\x1b]0;", "\x07", "\u202e", "\u2028", "\x85", "\r", "\n::error"):
        assert seq not in out, seq


@pytest.mark.parametrize("colour", [False, True])
def test_emoji_codes_in_names_are_shown_as_written(tmp_path, guard, colour):  # noqa: F811
    """rich turns ':smile:' into an emoji unless told not to: a name is shown as the model has it."""
    path = evil_model(tmp_path / "m.onnx", name=":smile::warning:")
    guard.watch(path)
    env = dict(os.environ, PYTHONPATH=ROOT)
    if colour:
        env.update(FORCE_COLOR="1", TERM="xterm-256color")
    p = fast_process.run([sys.executable, "-m", "qlin_cli", "check", path], capture_output=True, env=env,
                       timeout=120)
    out = p.stdout.decode("utf-8")
    assert p.returncode == 1 and ("\x1b[" in out) == colour
    assert ":smile::warning:main:" in out and "\U0001f604" not in out and "\u26a0" not in out


def test_plain_report_is_what_rich_prints_of_the_markup(evil):
    """Without colour the report's lines are written as plain text in one print; they are the
    characters rich prints of each line's markup, hostile names included."""
    from rich.console import Console

    from qlin_cli.check.engine import check_file, summarize
    from qlin_cli.report import text

    results = [check_file(evil)]
    assert results[0].diagnostics
    fast = Console(file=io.StringIO(), color_system=None, width=80)
    text.render(results, summarize(results), fast, quiet=True)
    slow = Console(file=io.StringIO(), color_system=None, width=80, emoji=False)
    for d in results[0].diagnostics:
        slow.print(text.line(evil, d), highlight=False, soft_wrap=True)
    assert fast.file.getvalue() == slow.file.getvalue()
    assert "[bold red]markup[/bold red]" in fast.file.getvalue()


def test_colour_report_is_what_rich_prints_of_each_line(evil):
    """On a colour terminal the findings and node views go to rich as one print of their
    markup: the same bytes as a print per line and per row, hostile names included."""
    from rich.console import Console

    from qlin_cli.check.engine import check_file, summarize
    from qlin_cli.report import text

    results = [check_file(p, targets=["openvino"])
               for p in (evil, os.path.join(MODELS, "broken", "chain.onnx"))]
    assert all(r.error is None and r.diagnostics for r in results)
    fast = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=80)
    text.render(results, summarize(results), fast, quiet=True, frames=True)
    slow = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=80, emoji=False)
    for r in results:
        for d in r.diagnostics:
            for row in (text.line(r.path, d), *text.frame(d)):
                slow.print(row, highlight=False, soft_wrap=True)
    out = fast.file.getvalue()
    assert "\x1b[" in out and "<--" in out and out == slow.file.getvalue()
    _no_forgery(re.sub(r"\x1b\[[0-9;]*m", "", out))  # rich's colours only


def test_github_annotations_stay_one_line_each(evil):
    r = cli("check", "--format", "github", evil)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 3  # one per diagnostic, none forged
    for line in lines:
        assert line.startswith("::error file=") and line.count("::") >= 2
        head, _, message = line[2:].partition("::")
        assert "," not in head.split(",title=")[1].replace("%2C", "")  # title escaped
        assert message and "\r" not in line
    _no_forgery(r.stdout)


def test_json_keeps_names_exactly_and_is_ascii(evil):
    r = cli("check", "--format", "json", evil)
    assert r.exit_code == 1
    assert r.stdout.isascii()
    doc = json.loads(r.stdout)
    nodes = sorted(d["node"] for d in doc["files"][0]["diagnostics"])
    assert nodes == sorted(EVIL + t for t in ("main", "then", "else"))
    assert any(EVIL in d["graph"] for d in doc["files"][0]["diagnostics"])


def test_sarif_is_valid_and_its_messages_printable(evil):
    r = cli("check", "--format", "sarif", evil)
    assert r.exit_code == 1
    assert r.stdout.isascii()
    doc = json.loads(r.stdout)
    results = doc["runs"][0]["results"]
    assert len(results) == 3
    for res in results:
        assert res["message"]["text"].isprintable()
        assert res["locations"][0]["logicalLocations"][0]["name"].startswith(EVIL)  # kept exactly
    if os.path.exists(SARIF_SCHEMA):
        import jsonschema

        with open(SARIF_SCHEMA) as f:
            jsonschema.validate(doc, json.load(f))


def test_one_line_error_escapes_the_file_name(tmp_path, guard):  # noqa: F811
    bad = tmp_path / ("x" + EVIL.replace("/", "_") + ".onnx")
    bad.write_bytes(b"not a model")
    guard.watch(bad)
    r = cli("check", bad)
    line = assert_bad_input(r, safe.printable(str(bad)), "not a valid")
    _no_forgery(r.stderr)
    assert line.isprintable()
    r = cli("convert", bad, "--to-opset", 21, "--dry-run")
    assert_bad_input(r, safe.printable(str(bad)))
    _no_forgery(r.stderr)


def test_reason_that_quotes_a_name_is_one_line(tmp_path, guard):  # noqa: F811
    """External data whose location holds the hostile name: refused, one printable line."""
    from hardening_helpers import external_dq_model

    path = external_dq_model(tmp_path, location="../" + EVIL)
    guard.watch(tmp_path)
    _no_forgery(assert_bad_input(cli("convert", path, "--to-opset", 23, "--dry-run"), path, "escapes"))
    _no_forgery(assert_reported(cli("check", path), path, "QL008", "escapes"))


def test_folder_with_hostile_names_is_walked_and_reported(tmp_path, guard):  # noqa: F811
    sub = tmp_path / ("d" + EVIL.replace("/", "_"))
    sub.mkdir()
    evil_model(sub / ("m" + EVIL.replace("/", "_") + ".onnx"))
    (sub / "empty").mkdir()
    guard.watch(sub)
    for fmt in ("text", "github"):
        r = cli("check", "--format", fmt, tmp_path)
        assert r.exit_code == 1, r.output
        _no_forgery(r.stdout + r.stderr)
    r = cli("check", sub / "empty")  # an empty folder is a warning (issue 13), exit 0
    assert r.exit_code == 0
    assert r.stderr.splitlines() == [f"qlin: warning: {safe.printable(str(sub / 'empty'))}: "
                                     f"directory holds no .onnx files"]


# ---- convert's report -------------------------------------------------------------------

def _convertible_evil(tmp_path):
    """A clean per-axis model whose names are hostile: converts to com.microsoft."""
    import onnx

    m = onnx.load(os.path.join(MODELS, "clean", "per_channel_chain.onnx"))
    for n in m.graph.node:
        n.name = EVIL + n.name
    path = tmp_path / "c.onnx"
    path.write_bytes(m.SerializeToString())
    return str(path)


@pytest.mark.parametrize("extra", [[], ["-v"]])
def test_convert_text_report_escapes_names(tmp_path, guard, extra):  # noqa: F811
    from qlin_cli.convert_command import convert

    if extra and "verbose" not in [p.name for p in convert.params]:
        pytest.skip("convert has no --verbose")
    path = _convertible_evil(tmp_path)
    guard.watch(path)
    out = tmp_path / ("o" + EVIL.replace("/", "_") + ".onnx")
    r = cli("convert", path, "--to-opset", 21, "--to-domain", "com.microsoft", "-o", out, *extra)
    assert r.exit_code == 0, r.output
    _no_forgery(r.stdout + r.stderr)
    assert safe.printable(str(out)) in r.stdout
    if extra:
        assert safe.printable(EVIL) in r.stdout


def test_convert_json_report_keeps_names(tmp_path, guard):  # noqa: F811
    path = _convertible_evil(tmp_path)
    guard.watch(path)
    r = cli("convert", path, "--to-opset", 21, "--to-domain", "com.microsoft", "--dry-run",
            "--format", "json")
    assert r.exit_code == 0, r.output
    assert r.stdout.isascii()
    doc = json.loads(r.stdout)
    assert any(EVIL in n["node"] for n in doc["nodes"]), doc["nodes"]


def test_convert_refusal_escapes_names(evil, tmp_path):
    """The QL405 errors stop convert: the line naming them is printable, nothing written."""
    r = cli("convert", evil, "--to-opset", 23, "-o", tmp_path / "o.onnx")
    assert r.exit_code in (1, 2), r.output
    _no_forgery(r.stdout + r.stderr)
    assert not (tmp_path / "o.onnx").exists()


# ---- progress ----------------------------------------------------------------------------

def test_progress_description_is_escaped():
    from rich.console import Console

    from qlin_cli.progress import Meter

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200)
    with Meter(EVIL, delay=0, console=console) as update:
        update(1, 2)
    text = buf.getvalue()
    for seq in ("\x1b[2J", "\x1b]0;", "\x07", "\u202e", "\n::error"):
        assert seq not in text, seq
    assert "forged annotation" in text


# ---- file names that are not UTF-8, in a UTF-8 locale ---------------------------------------

@pytest.fixture
def latin1_names(tmp_path, guard):  # noqa: F811
    folder = tmp_path / "names"
    folder.mkdir()
    raw = os.fsencode(str(folder))
    model = os.fsdecode(raw + b"/caf\xe9-\xff.onnx")
    shutil.copyfile(os.path.join(MODELS, "rules", "QL405-bad.onnx"), model)
    junk = os.fsdecode(raw + b"/junk-\xfe.onnx")
    with open(junk, "wb") as f:
        f.write(b"junk")
    guard.watch(folder)
    return folder, model, junk


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_non_utf8_file_names_in_every_format(latin1_names, fmt):
    folder, model, junk = latin1_names
    env = dict(os.environ, PYTHONPATH=ROOT, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    env.pop("PYTHONIOENCODING", None)
    p = fast_process.run([sys.executable, "-m", "qlin_cli", "check", "--format", fmt, str(folder)],
                       capture_output=True, env=env, timeout=120)
    out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")  # strict: valid UTF-8
    assert p.returncode == 2, err  # the junk file could not be checked; the model was
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("qlin: error: ") and "junk-\\xfe.onnx" in lines[0]
    if fmt in ("json", "sarif"):
        doc = json.loads(out)
        if fmt == "json":
            paths = sorted(f["path"] for f in doc["files"])
            assert paths[0].endswith("caf\\xe9-\\xff.onnx") and paths[1].endswith("junk-\\xfe.onnx")
        else:
            uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    for r in doc["runs"][0]["results"]]
            assert uris and all(u.endswith("caf%E9-%FF.onnx") for u in uris)
    else:
        assert "caf\\xe9-\\xff.onnx" in out
        assert unsafe_characters(out) == []


def test_names_a_narrow_locale_cannot_encode_do_not_crash(tmp_path, guard):  # noqa: F811
    path = evil_model(tmp_path / "m.onnx", name="café-中-")
    guard.watch(path)
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONIOENCODING="ascii")
    for fmt in ("text", "github", "json"):
        p = fast_process.run([sys.executable, "-m", "qlin_cli", "check", "--format", fmt, path],
                           capture_output=True, env=env, timeout=120)
        assert p.returncode == 1, p.stderr
        assert b"Traceback" not in p.stderr and p.stderr == b""
        if fmt == "text":  # rich writes through stdout's encoding: escaped, not a crash
            assert b"caf\\xe9-\\u4e2d-" in p.stdout
