"""Which files `qlin check PATHS` checks: like ruff's file discovery.

A file given by name is checked (unless ``force-exclude`` and it is excluded); a folder
is walked for ``*.onnx`` files, leaving out

* what ``exclude`` names (default ``DEFAULT_EXCLUDE``: version control, virtual
  environments, caches, build output; ``exclude`` replaces the list, ``extend-exclude``
  adds to it), matched against each file's and folder's name, or, for a pattern with a
  ``/``, its path from the folder of the configuration that gives it (flags: from the
  working directory);
* inside a git repository, what its ``.gitignore`` files and ``.git/info/exclude``
  ignore (gitignore.py), unless ``respect-gitignore = false`` / ``--no-respect-gitignore``.

Settings are read from the configuration nearest each walked folder (config.py), flags
win. Folders are walked with an explicit stack (a tree thousands of levels deep is
fine), symbolic links to folders are not followed, and a folder that cannot be listed
is reported, not skipped.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)
NO_MODELS = "directory holds no .onnx files"  # a warning, not a failure


@dataclass(frozen=True)
class Flags:
    """Discovery settings from the command line (None: not given, the config's stands)."""

    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None


def _matches(path: str, patterns: Iterable[tuple[str, str]]) -> bool:
    """Whether ``path`` (absolute) matches one of ``patterns``: (glob, folder it is
    relative to)."""
    name = os.path.basename(path)
    for glob, root in patterns:
        if "/" not in glob:
            if fnmatch.fnmatchcase(name, glob):
                return True
            continue
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if fnmatch.fnmatchcase(rel, glob.rstrip("/")) or fnmatch.fnmatchcase(path, glob.rstrip("/")):
            return True
    return False


class Discovery:
    """The exclusion settings in force in each folder; ``config_for(folder)`` gives the
    folder's Config (config.Finder.for_folder)."""

    def __init__(self, config_for, flags: Flags = Flags()):
        self.config_for = config_for
        self.flags = flags
        cwd = os.getcwd()
        self._flag_exclude = None if flags.exclude is None else [(g, cwd) for g in flags.exclude]
        self._flag_extend = [(g, cwd) for g in flags.extend_exclude]
        self._patterns: dict[int, list[tuple[str, str]]] = {}

    def patterns(self, folder: str) -> list[tuple[str, str]]:
        cfg = self.config_for(folder)
        key = id(cfg)
        if key not in self._patterns:
            root = cfg.root
            if self._flag_exclude is not None:
                base = self._flag_exclude
            elif cfg.exclude is not None:
                base = [(g, root) for g in cfg.exclude]
            else:
                base = [(g, root) for g in DEFAULT_EXCLUDE]
            self._patterns[key] = base + [(g, root) for g in cfg.extend_exclude] + self._flag_extend
        return self._patterns[key]

    def respect_gitignore(self, folder: str) -> bool:
        if self.flags.respect_gitignore is not None:
            return self.flags.respect_gitignore
        return self.config_for(folder).respect_gitignore

    def force_exclude(self, folder: str) -> bool:
        if self.flags.force_exclude is not None:
            return self.flags.force_exclude
        return self.config_for(folder).force_exclude

    def excluded(self, path: str, is_dir: bool, ignores) -> bool:
        folder = os.path.dirname(path)
        if _matches(path, self.patterns(folder)):
            return True
        return bool(ignores) and _gitignore().ignored(ignores, path, is_dir)

    def given_excluded(self, path: str) -> bool:
        """A path named on the command line is left out only with force-exclude: when it,
        or a folder on its way from the working directory, is excluded."""
        path = os.path.abspath(path)
        folder = os.path.dirname(path)
        if not self.force_exclude(folder):
            return False
        gitignore = _gitignore()
        ignores = gitignore.above(path) if self.respect_gitignore(folder) else []
        if self.excluded(path, os.path.isdir(path), ignores):
            return True
        cwd = os.getcwd()
        d = folder
        while d.startswith(cwd + os.sep):
            if self.excluded(d, True, gitignore.above(d) if ignores else []):
                return True
            d = os.path.dirname(d)
        return False


def walk(paths: Iterable[str], discovery: Discovery | None = None) -> list[tuple[str, str | None]]:
    """(path, None) for each file to check; (folder, reason) for a folder that cannot be
    read, or that holds no .onnx file at all. Without ``discovery`` nothing is excluded."""
    found: list[tuple[str, str | None]] = []
    for p in paths:
        if discovery is not None and discovery.given_excluded(p):
            continue
        if not os.path.isdir(p):
            found.append((p, None))
            continue
        inside = _walk_folder(p, discovery)
        if not inside:
            found.append((p, NO_MODELS))
        found.extend(inside)
    return found


def _gitignore():
    """gitignore.py, imported where a folder is walked or a pattern asked (a check of files
    named one by one does without it)."""
    from . import gitignore

    return gitignore


def _walk_folder(top: str, discovery: Discovery | None) -> list[tuple[str, str | None]]:
    inside: list[tuple[str, str | None]] = []
    gitignore = _gitignore()
    git = (discovery is not None and discovery.respect_gitignore(os.path.abspath(top))
           and gitignore.repository(top) is not None)
    stack = [(top, tuple(gitignore.above(top)) if git else ())]
    while stack:
        folder, ignores = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            inside.append((folder, f"cannot read the folder: {e.strerror or e}"))
            continue
        if git:
            ignores = ignores + tuple(gitignore.read(folder))
        subfolders = []
        for entry in entries:
            path = entry.name if folder == os.curdir else entry.path  # "models/m.onnx", not "./models/m.onnx"
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir and entry.is_symlink():
                continue
            if not is_dir and not entry.name.endswith(".onnx"):
                continue
            if discovery is not None and discovery.excluded(os.path.abspath(path), is_dir, ignores):
                continue
            if is_dir:
                subfolders.append((path, ignores))
            else:
                inside.append((path, None))
        stack.extend(reversed(subfolders))
    return inside


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (``--shard``): shard K, counted from 1, of N; ValueError saying what is wrong."""
    import re

    got = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if got is None:
        raise ValueError(f"{text!r} is not K/N: give two whole numbers, shard K of N, e.g. 1/4")
    k_, n_ = int(got.group(1)), int(got.group(2))
    if n_ < 1:
        raise ValueError(f"{text!r}: N, the number of shards, is at least 1")
    if not 1 <= k_ <= n_:
        raise ValueError(f"{text!r}: K counts from 1 to N ({n_}), e.g. 1/{n_}")
    return k_, n_


def shard(found: list[tuple[str, str | None]], k: int, n: int) -> list[tuple[str, str | None]]:
    """The part of ``found`` (``walk``'s answer) that shard ``k`` of ``n`` checks: the items
    at ranks k-1, k-1+n, k-1+2n, ... of the list sorted by path, kept in walk order. Every
    item is in exactly one of the n shards, and the shards differ in size by at most one;
    given the same files, the same command gives the same shard on any machine."""
    ranked = sorted(range(len(found)), key=lambda i: (found[i][0], i))
    mine = {i for rank, i in enumerate(ranked) if rank % n == k - 1}
    return [item for i, item in enumerate(found) if i in mine]
