"""Hardening 3: hostile .gitignore files do not stop or break a folder walk.

``a*a*...a*b`` and ``**/`` repeated 50 times hung the walk (the regular expressions went
back exponentially), a .gitignore or .git/info/exclude that is a FIFO blocked it for ever,
``[z-a]`` raised a traceback and ``[[:alpha:]]`` printed a FutureWarning. The patterns'
meaning is held to git's in tests/test_discover.py."""

from __future__ import annotations

import json
import os
import shutil
import sys

import fast_process
import pytest
from paths import MODELS, ROOT

BROKEN = os.path.join(MODELS, "broken", "chain.onnx")


def _repo(tmp_path, ignore: str):
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".gitignore").write_text(ignore)
    for name in ("keep.onnx", "a" * 60 + "b.onnx", "zed.onnx", "sub/deep/x.onnx"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BROKEN, repo / name)
    return repo


def _walk(repo) -> tuple[int, list[str], str]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    argv = [sys.executable, "-m", "qlin_cli", "check", "--format", "json", "--no-config", str(repo)]
    p = fast_process.run(argv, capture_output=True, text=True, env=env, timeout=60)
    files = [os.path.relpath(f["path"], repo) for f in json.loads(p.stdout)["files"]] if p.stdout else []
    return p.returncode, sorted(files), p.stderr


def test_pathological_patterns_are_matched_in_linear_time(tmp_path):
    stars = "a*" * 40 + "b.onnx\n" + "**/" * 50 + "x.onnx\n"
    repo = _repo(tmp_path, stars + "[z-a]ed.onnx\n[[:alpha:]]\n!keep.onnx\n")
    code, files, err = _walk(repo)
    assert code == 1 and err == "", err  # no traceback, no warning
    assert files == ["keep.onnx"]  # [[:alpha:]] ignores each one-letter name: none here but the re-included


@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude"])
def test_an_ignore_file_that_is_a_fifo_is_not_read(tmp_path, where):
    repo = _repo(tmp_path, "zed.onnx\n")
    target = repo / where
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    code, files, err = _walk(repo)
    assert code == 1 and err == "", err
    expected = ["a" * 60 + "b.onnx", "keep.onnx", "sub/deep/x.onnx"]
    assert files == sorted(expected + (["zed.onnx"] if where == ".gitignore" else []))
