"""File discovery like ruff's (qlin_cli/discover.py, gitignore.py): default excludes,
exclude / extend-exclude from flags and config, .gitignore in a git repository (its
patterns matched as `git check-ignore` matches them), `qlin check` with no path, and one
meaning of [] in both ignore tables."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from paths import MODELS

from qlin_cli import gitignore
from qlin_cli.cli import main

BAD = os.path.join(MODELS, "rules", "QL401-bad.onnx")  # one QL401 error


def _tree(root, *files):
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BAD, path)


def _checked(root, *args):
    """The files a `qlin check` run in ``root`` reports, and its exit status."""
    old = os.getcwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(main, ["check", "-q", "--jobs", "1", *args])
    finally:
        os.chdir(old)
    files = sorted({line.split(":")[0] for line in r.stdout.splitlines() if ": QL" in line})
    return files, r


def test_no_path_checks_the_working_directory_and_skips_virtual_environments(tmp_path):
    _tree(tmp_path, "models/m.onnx", ".venv/lib/site-packages/onnx/t.onnx", "venv/x.onnx",
          "node_modules/p/y.onnx", "build/b.onnx", "dist/d.onnx", ".git/objects/o.onnx")
    files, r = _checked(tmp_path)
    assert files == ["models/m.onnx"], r.output
    assert r.exit_code == 1


def test_fix_never_writes_into_an_excluded_folder(tmp_path):
    fixable = os.path.join(MODELS, "rules", "QL303-bad.onnx")
    inside = tmp_path / ".venv" / "site-packages" / "m.onnx"
    inside.parent.mkdir(parents=True)
    shutil.copy(fixable, inside)
    before = inside.read_bytes()
    _checked(tmp_path, "--fix", ".")
    assert inside.read_bytes() == before


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path):
    _tree(tmp_path, "models/m.onnx", "models/legacy/old.onnx", ".venv/v.onnx")
    assert _checked(tmp_path, "--extend-exclude", "legacy")[0] == ["models/m.onnx"]
    assert _checked(tmp_path, "--exclude", "legacy")[0] == [".venv/v.onnx", "models/m.onnx"]
    assert _checked(tmp_path, "--extend-exclude", "models/legacy/*.onnx")[0] == ["models/m.onnx"]
    assert _checked(tmp_path, "--extend-exclude", "m.onnx,old.onnx")[0] == []


def test_exclude_from_the_config_is_relative_to_its_folder(tmp_path):
    _tree(tmp_path, "proj/models/m.onnx", "proj/models/gen/g.onnx", "proj/build/b.onnx")
    (tmp_path / "proj" / "qlin.toml").write_text('extend-exclude = ["models/gen"]\n')
    assert _checked(tmp_path, "proj")[0] == ["proj/models/m.onnx"]
    (tmp_path / "proj" / "qlin.toml").write_text('exclude = []\n')
    assert _checked(tmp_path, "proj")[0] == ["proj/build/b.onnx", "proj/models/gen/g.onnx",
                                             "proj/models/m.onnx"]


def test_a_file_named_on_the_command_line_is_checked_unless_force_exclude(tmp_path):
    _tree(tmp_path, "build/b.onnx", "m.onnx")
    assert _checked(tmp_path, "build/b.onnx", "m.onnx")[0] == ["build/b.onnx", "m.onnx"]
    assert _checked(tmp_path, "build/b.onnx", "m.onnx", "--force-exclude")[0] == ["m.onnx"]
    files, r = _checked(tmp_path, "build/b.onnx", "--force-exclude")
    assert files == [] and r.exit_code == 0 and "no model to check" in r.stderr


def test_gitignore_is_respected_in_a_repository_only(tmp_path):
    _tree(tmp_path, "repo/models/m.onnx", "repo/gen/g.onnx", "repo/models/tmp/t.onnx",
          "repo/models/keep_tmp.onnx")
    (tmp_path / "repo" / ".gitignore").write_text("gen/\n*tmp*\n")
    (tmp_path / "repo" / "models" / ".gitignore").write_text("!keep_tmp.onnx\n")
    # not a repository yet: .gitignore means nothing (git does not read it either)
    assert len(_checked(tmp_path / "repo")[0]) == 4
    (tmp_path / "repo" / ".git").mkdir()
    assert _checked(tmp_path / "repo")[0] == ["models/keep_tmp.onnx", "models/m.onnx"]
    assert len(_checked(tmp_path / "repo", "--no-respect-gitignore")[0]) == 4
    (tmp_path / "repo" / "qlin.toml").write_text("respect-gitignore = false\n")
    assert len(_checked(tmp_path / "repo")[0]) == 4
    # the patterns of the folders above a walked one apply in it
    (tmp_path / "repo" / "qlin.toml").unlink()
    assert _checked(tmp_path / "repo", "models")[0] == ["models/keep_tmp.onnx", "models/m.onnx"]


def test_bad_discovery_settings_are_one_line_and_exit_2(tmp_path):
    _tree(tmp_path, "m.onnx")
    (tmp_path / "qlin.toml").write_text('exclude = "build"\n')
    _, r = _checked(tmp_path)
    assert r.exit_code == 2 and "exclude must be a list of globs" in r.stderr
    (tmp_path / "qlin.toml").write_text('respect-gitignore = "no"\n')
    _, r = _checked(tmp_path)
    assert r.exit_code == 2 and "respect-gitignore must be true or false" in r.stderr


def test_an_empty_list_ignores_every_code_in_both_ignore_tables(tmp_path):
    _tree(tmp_path, "models/a.onnx", "models/b.onnx")
    (tmp_path / "qlin.toml").write_text('[per-path-ignores]\n"models/a.onnx" = []\n')
    assert _checked(tmp_path)[0] == ["models/b.onnx"]
    (tmp_path / "qlin.toml").write_text('[per-node-ignores]\n"node0" = []\n')
    assert _checked(tmp_path)[0] == []


# ---- gitignore patterns against git itself ------------------------------------------
PATTERNS = """\
# a comment
*.log
!important.log
/rooted.onnx
build/
docs/**/gen
**/cache
out/**
a?c.onnx
[abc]x.onnx
[!d]y.onnx
\\#hash.onnx
trailing.onnx{SPACES}
nested/deep/*.onnx
[[:alpha:]]z.onnx
[[:digit:]][[:upper:]]q.onnx
[z-a]w.onnx
[!a-c]v.onnx
{STARS}
{STARSTAR}deep.onnx
unclosed[ab.onnx
x\\*y.onnx
""".replace("{SPACES}", "   ").replace("{STARS}", "a*" * 6 + "b.onnx").replace(
    "{STARSTAR}", "**/" * 50)  # trailing spaces are dropped (git check-ignore itself goes back
# exponentially on "a*" * 40 + "b": tests/test_hardening3_gitignore.py holds qlin to that one)
PATHS = ["x.log", "important.log", "sub/x.log", "rooted.onnx", "sub/rooted.onnx", "build",
         "sub/build", "docs/gen", "docs/a/b/gen", "docs/genx", "cache", "a/b/cache", "out/a/b.onnx",
         "out", "abc.onnx", "a/c.onnx", "ax.onnx", "dx.onnx", "ey.onnx", "dy.onnx", "#hash.onnx",
         "trailing.onnx", "nested/deep/m.onnx", "nested/deep/more/m.onnx", "other/nested/deep/m.onnx",
         "plain.onnx", "kz.onnx", "1z.onnx", "7Qq.onnx", "7qq.onnx", "zw.onnx", "bw.onnx", "bv.onnx",
         "dv.onnx", "a" * 30 + "c.onnx", "a" * 9 + "b.onnx", "aab.onnx", "p/q/deep.onnx", "deep.onnx",
         "unclosed[ab.onnx", "unclosed[a",
         "x*y.onnx", "xzy.onnx"]
FOLDERS = {"build", "sub/build", "docs/gen", "docs/a/b/gen", "cache", "a/b/cache", "out"}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_patterns_match_as_git_check_ignore_says(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(PATTERNS)
    for rel in PATHS:
        p = tmp_path / rel
        if rel in FOLDERS:
            p.mkdir(parents=True, exist_ok=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("")
    git = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "--no-index", *PATHS],
                         capture_output=True, text=True)
    by_git = set(git.stdout.split())
    patterns = gitignore.parse(PATTERNS, str(tmp_path))
    ours = set()
    for rel in PATHS:
        # git reports a path whose parent folder is ignored as ignored; so does the walk
        # (it never enters that folder), so parents are asked first here too
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            is_dir = i < len(parts) or rel in FOLDERS
            if gitignore.ignored(patterns, str(tmp_path / sub), is_dir):
                ours.add(rel)
                break
    assert ours == by_git, (sorted(ours - by_git), sorted(by_git - ours))
    assert len(by_git) >= 15, by_git
    assert "plain.onnx" not in ours and "x.log" in ours  # the test can fail both ways
