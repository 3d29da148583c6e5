"""Hardening 3: configuration bombs load and match in time linear in their size.

100,000 per-path-ignores or per-node-ignores entries, or a 10 MB node glob, gave no answer
in 30 s: every list of codes rebuilt the table of every code, fnmatch compiled each pattern
(and turned ``a*a*...`` into a regular expression it never finished), and the file was
parsed twice. What is counted here is the work: the code table is built once, no pattern is
compiled by fnmatch, and the file is parsed once."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil

from click.testing import CliRunner
from paths import MODELS

from qlin_cli import codes, config
from qlin_cli.cli import main

BROKEN = os.path.join(MODELS, "broken", "chain.onnx")  # QL501, QL405, QL604 on named nodes


def _check(tmp_path, text, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(text)
    shutil.copy(BROKEN, tmp_path / "m.onnx")
    calls = {"known": 0, "translate": 0, "parse": 0}
    real_known, real_translate, real_loads = codes.known, fnmatch.translate, config.tomllib.loads

    def count(name, real):
        def counted(*a, **k):
            calls[name] += 1
            return real(*a, **k)
        return counted

    monkeypatch.setattr(codes, "known", count("known", real_known))
    monkeypatch.setattr(fnmatch, "translate", count("translate", real_translate))
    monkeypatch.setattr(config.tomllib, "loads", count("parse", real_loads))
    config.known_codes.cache_clear()
    config.known_prefix.cache_clear()
    config._PARSED.clear()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", "--format", "json", "m.onnx"])
    found = [(d["node"], d["code"]) for d in json.loads(r.stdout)["files"][0]["diagnostics"]]
    return found, calls


def test_twenty_thousand_entries_each_are_read_once(tmp_path, monkeypatch):
    n = 20_000
    lines = ["[tool.qlin.per-path-ignores]", '"m.onnx" = ["QL604"]']
    lines += [f'"dir{i}/*.onnx" = ["QL405"]' for i in range(n)]
    lines += ["[tool.qlin.per-node-ignores]", '"weight_*" = ["QL405"]']
    lines += [f'"node{i}_*" = ["QL501"]' for i in range(n)]
    found, calls = _check(tmp_path, "\n".join(lines) + "\n", monkeypatch)
    assert ("weight_q", "QL405") not in found and not any(c == "QL604" for _, c in found)
    assert ("input_q", "QL501") in found
    assert calls == {"known": 1, "translate": 0, "parse": 1}, calls


def test_a_megabyte_glob_is_matched(tmp_path, monkeypatch):
    glob = "a*" * 500_000 + "q"  # 1 MB (10 MB takes 2 s, most of it TOML parsing)
    found, calls = _check(tmp_path, f'[tool.qlin.per-node-ignores]\n"{glob}" = ["QL"]\n"input_q" = []\n',
                          monkeypatch)
    assert found and not any(node == "input_q" for node, _ in found)
    assert calls["translate"] == 0 and calls["parse"] == 1
