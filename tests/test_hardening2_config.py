"""Hardening 2: configuration files and folder trees from anywhere.

* a pyproject.toml on the way up from the working folder that qlin cannot use (`tool = 5`,
  a string, arrays nested deeper than the TOML parser can go, bad TOML, not UTF-8, a huge
  file) ends the run with one line naming it, exit 2, no traceback;
* a folder tree 1,100 levels deep is walked (no recursion), symbolic links to folders are
  not followed (a loop ends), and a sub-folder that cannot be read is reported, exit 2,
  while the other models are still checked.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import fast_process
import pytest
from hardening_helpers import assert_bad_input, cli, guard  # noqa: F401
from paths import MODELS, ROOT

BROKEN = os.path.join(MODELS, "rules", "QL405-bad.onnx")


def _proc(*args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.run([sys.executable, "-m", "qlin_cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


# ---- pyproject.toml ---------------------------------------------------------------------------

NESTED = "x = " + "[" * 50_000 + "]" * 50_000 + "\n"
BAD_CONFIGS = {
    "tool-int": ("tool = 5\n", "`tool` must be a table"),
    "tool-string": ('tool = "qlin"\n', "`tool` must be a table"),
    "tool-array": ("tool = [1, 2]\n", "`tool` must be a table"),
    "nested-arrays": (NESTED, "nested too deeply"),
    "nested-in-qlin": ("[tool.qlin]\nselect = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested too deeply"),
    "bad-toml": ("[tool.qlin\nselect = 1\n", "not valid TOML"),
    "not-utf8": (b"[tool.qlin]\nselect = ['\xff']\n", "not valid UTF-8"),
    "qlin-int": ("[tool]\nqlin = 5\n", "[tool.qlin] must be a table"),
    "deep-fail-on": ("[tool.qlin]\nfail-on = " + "[" * 60 + "]" * 60 + "\n", "fail-on must be one of"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_pyproject_above_the_working_folder_is_one_line(case, tmp_path, guard, monkeypatch):  # noqa: F811
    text, words = BAD_CONFIGS[case]
    cfg = tmp_path / "pyproject.toml"
    (cfg.write_bytes if isinstance(text, bytes) else cfg.write_text)(text)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    guard.watch(cfg)
    p = _proc("check", BROKEN, cwd=work)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"qlin: error: {cfg}: "), p.stderr
    assert words in lines[0] and len(lines[0]) < 400
    assert "Traceback" not in p.stderr and p.stdout == ""
    monkeypatch.chdir(work)
    assert cli("check", "--no-config", BROKEN).exit_code == 1  # the way out (asked in-process)


def test_huge_pyproject_is_refused_unread(tmp_path, guard):  # noqa: F811
    cfg = tmp_path / "pyproject.toml"
    with open(cfg, "wb") as f:  # sparse: 3 GiB of nothing
        f.truncate(3 * 2**30)
    guard.watch(cfg)
    from qlin_cli.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config(str(tmp_path))
    assert str(e.value).startswith(f"{cfg}: over 16 MiB")


def test_unreadable_pyproject_is_one_line(tmp_path, guard, monkeypatch):  # noqa: F811
    import builtins

    import qlin_cli.config as config

    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.qlin]\n")

    def fake_open(file, *a, **k):
        if str(file) == str(cfg):
            raise PermissionError(13, "Permission denied", str(file))
        return builtins.open(file, *a, **k)

    monkeypatch.setattr(config, "open", fake_open, raising=False)
    monkeypatch.chdir(tmp_path)
    assert_bad_input(cli("check", BROKEN), cfg, "cannot read", "Permission denied")


def test_a_good_config_above_is_still_used(tmp_path, guard):  # noqa: F811
    (tmp_path / "pyproject.toml").write_text('[tool]\nother = 1\n[tool.qlin]\nignore = ["QL405"]\n')
    work = tmp_path / "x"
    work.mkdir()
    p = _proc("check", "--format", "json", BROKEN, cwd=work)
    assert p.returncode == 0, p.stderr
    assert "QL405" not in [d["code"] for d in json.loads(p.stdout)["files"][0]["diagnostics"]]


# ---- folder trees -----------------------------------------------------------------------------

def _chain(top: str, name: str, levels: int) -> str:
    """top/name/name/... ``levels`` deep, made one level at a time (os.makedirs recurses)."""
    path = top
    for _ in range(levels):
        path = os.path.join(path, name)
        os.mkdir(path)
    return path


def _remove_chain(top: str, name: str) -> None:
    """Remove what ``_chain`` made, deepest first, without recursion."""
    paths = []
    path = os.path.join(top, name)
    while os.path.isdir(path):
        paths.append(path)
        path = os.path.join(path, name)
    for p in reversed(paths):
        for f in os.listdir(p):
            if not os.path.isdir(os.path.join(p, f)):
                os.unlink(os.path.join(p, f))
        os.rmdir(p)


def test_a_1100_level_folder_tree_is_walked(tmp_path, guard):  # noqa: F811
    top = str(tmp_path / "t")
    os.mkdir(top)
    deep = _chain(top, "d", 1100)
    model = os.path.join(deep, "m.onnx")
    shutil.copyfile(BROKEN, model)
    empty = str(tmp_path / "empty")
    os.mkdir(empty)
    _chain(empty, "e", 1100)
    guard.watch(model)
    try:
        r = cli("check", "--format", "json", top)
        assert r.exit_code == 1, (r.stdout[-500:], r.stderr[-500:])
        files = json.loads(r.stdout)["files"]
        assert [f["path"] for f in files] == [model]
        assert files[0]["diagnostics"][0]["code"] == "QL405"
        r = cli("check", empty)  # an empty folder is a warning (issue 13), exit 0
        assert r.exit_code == 0 and r.stderr == f"qlin: warning: {empty}: directory holds no .onnx files\n"
        guard.verify()
    finally:
        guard.before.clear()
        _remove_chain(top, "d")
        _remove_chain(empty, "e")


def test_folder_symlink_loops_are_not_followed(tmp_path, guard):  # noqa: F811
    root = tmp_path / "r"
    (root / "a").mkdir(parents=True)
    shutil.copyfile(BROKEN, root / "a" / "m.onnx")
    (root / "a" / "loop").symlink_to(root, target_is_directory=True)
    (root / "dir.onnx").symlink_to(root / "a", target_is_directory=True)  # a folder named *.onnx
    guard.watch(root / "a" / "m.onnx")
    r = cli("check", "--format", "json", root)
    assert r.exit_code == 1, r.output
    assert [f["path"] for f in json.loads(r.stdout)["files"]] == [str(root / "a" / "m.onnx")]


def _unreadable(monkeypatch, folder) -> None:
    """os.scandir fails with EACCES on ``folder`` (root can list any folder, so its mode
    alone cannot deny it)."""
    import qlin_cli.cli as cli_module

    real = os.scandir

    def scandir(path="."):
        if os.path.abspath(path) == os.path.abspath(str(folder)):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(cli_module.os, "scandir", scandir)


def test_unreadable_sub_folder_is_reported_and_the_rest_checked(tmp_path, guard, monkeypatch):  # noqa: F811
    root = tmp_path / "models"
    (root / "ok").mkdir(parents=True)
    (root / "secret").mkdir()
    shutil.copyfile(BROKEN, root / "ok" / "m.onnx")
    shutil.copyfile(BROKEN, root / "secret" / "hidden.onnx")
    guard.watch(root)
    _unreadable(monkeypatch, root / "secret")
    r = cli("check", "--format", "json", root)
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines == [f"qlin: error: {root / 'secret'}: cannot read the folder: Permission denied"]
    files = {f["path"]: f for f in json.loads(r.stdout)["files"]}
    assert files[str(root / "ok" / "m.onnx")]["diagnostics"]  # still checked
    assert files[str(root / "secret")]["error"].startswith("cannot read the folder")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root lists any folder")
def test_unreadable_sub_folder_by_its_mode(tmp_path, guard):  # noqa: F811
    root = tmp_path / "models"
    (root / "secret").mkdir(parents=True)
    shutil.copyfile(BROKEN, root / "m.onnx")
    os.chmod(root / "secret", 0)
    try:
        r = cli("check", root)
        assert r.exit_code == 2 and "cannot read the folder" in r.stderr
    finally:
        os.chmod(root / "secret", 0o755)
