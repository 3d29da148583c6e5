"""The results cache of `qlin check` (ruff's, for models): a file whose result is in the
cache is not checked again.

A result is kept per checked file under a key that names everything it depends on:

- the file's bytes (a BLAKE2b digest of its content: a file rewritten with the same
  bytes keeps its result; a changed byte, whatever its time stamp, does not);
- the external data files the model names: each one's size and modification time (an
  absent one recorded as absent), compared when the result is read back;
- qlin itself: its version and the size and time of every file of the package (its
  rules and its target data; an edited source in a development install counts), and the
  versions of onnx, numpy and ml_dtypes it computes with and of the runtimes a plain
  target name resolves to;
- the settings the result was made with: the file's configuration (select, ignore,
  per-path-ignores, per-node-ignores, target), the flags that override it, and whether
  each finding carries its node's view.

A result made with other settings or by another qlin is another key: nothing is read
back that the current run would not give. The cache lives in ``.qlin_cache`` in the
working folder (``--cache-dir`` or QLIN_CACHE_DIR elsewhere; ``--no-cache`` or QLIN_NO_CACHE
not at all; ``--fix`` and ``--diff`` always check afresh),
holds a ``.gitignore`` of ``*`` and a CACHEDIR.TAG when qlin made the folder, and keeps one
folder per qlin build (older builds' folders, marked as qlin's, are removed when a new one
is made; nothing else in the folder is touched). Entries are JSON, written
whole or not at all (a temporary file renamed); an entry that cannot be read or parsed
is a miss. A cache folder that cannot be made or written is no error: the run checks as
without a cache.

Nothing here imports onnx, numpy or the rules: a run whose every file hits the cache
reads and reports without loading them (the fixture models: README, bench/bench_cache.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import fields
from functools import cache

from .check.result import FileResult
from .finding import Finding, Fix

FOLDER = ".qlin_cache"
ENV = "QLIN_CACHE_DIR"
FORMAT = 1
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by qlin.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")
# what the results depend on besides qlin's own files
_DEPENDENCIES = ("onnx", "numpy", "ml_dtypes", "onnxruntime", "onnxruntime-gpu", "openvino")


def folder(given: str | None = None) -> str:
    """The cache folder: ``given`` (--cache-dir), else QLIN_CACHE_DIR, else .qlin_cache in
    the working folder."""
    return given or os.environ.get(ENV) or FOLDER


@cache
def build() -> str:
    """A digest of the qlin that makes the results: its version, every file of the package
    (path, size, modification time) and the versions of what it computes with."""
    from importlib import metadata

    h = hashlib.blake2b(digest_size=10)
    h.update(f"format {FORMAT}\n".encode())
    for dist in ("qlin", *_DEPENDENCIES):
        try:
            h.update(f"{dist} {metadata.version(dist)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist} -\n".encode())
    root = os.path.dirname(os.path.abspath(__file__))
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(top, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            h.update(f"{os.path.relpath(full, root)} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def settings(cfg, select, ignore, targets, frames: bool) -> str:
    """The part of the key the configuration and flags make (``check_file_with``'s inputs).
    The per-path and per-node ignores go in as a digest of their entries in the order the
    file gives them (100,000 of them sorted and written out as JSON took about a second; a
    file that lists the same entries in another order only misses the cache)."""
    h = hashlib.blake2b(digest_size=16)
    for table in (cfg.per_path_ignores, cfg.per_node_ignores):  # repr: keys and lists, in order
        h.update(repr(table).encode("utf-8", "surrogatepass"))
    return json.dumps([
        sorted(cfg.select) if cfg.select is not None else None, sorted(cfg.ignore), h.hexdigest(),
        list(cfg.target), list(select) if select else None, list(ignore) if ignore else None,
        list(targets) if targets is not None else None, bool(frames), cfg.path,
    ], sort_keys=True)


def content_digest(path: str) -> str | None:
    """A digest of the file's bytes (None: it cannot be read)."""
    h = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def stamp(path: str) -> tuple | None:
    """(size, modification time, inode) of a file: equal before and after its check, or its
    result is not kept (it may have been checked half old, half new)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _stat(path: str) -> list:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_size, st.st_mtime_ns]


class ResultsCache:
    """The cache of one run: ``get`` a file's result or None, ``put`` one made now."""

    def __init__(self, where: str):
        self.root = os.path.join(where, build())
        self._where = where
        self._ready: bool | None = None  # the folder made (None: not tried yet)
        self.hits = 0

    def _entry(self, path: str, key: str) -> str:
        name = hashlib.blake2b(f"{os.path.abspath(path)}\0{key}".encode("utf-8", "surrogatepass"),
                               digest_size=16).hexdigest()
        return os.path.join(self.root, name[:2], name + ".json")

    def get(self, path: str, key: str, digest: str | None) -> FileResult | None:
        """The result kept for ``path`` under ``key`` whose content digest is ``digest``,
        its data files unchanged; None otherwise."""
        if digest is None:
            return None
        try:
            with open(self._entry(path, key), encoding="utf-8") as f:
                entry = json.load(f)
            if entry["content"] != digest or any(_stat(p) != [p, size, mtime]
                                                 for p, size, mtime in entry["data_files"]):
                return None
            result = _result(path, entry["result"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.hits += 1
        return result

    def put(self, path: str, key: str, digest: str | None, result: FileResult) -> None:
        """Keep ``result`` (quietly nothing when the folder cannot be written)."""
        if digest is None or result.types is not None or not self._made():
            return
        entry = {"content": digest, "data_files": [_stat(p) for p in result.data_files],
                 "result": _plain(result)}
        target = self._entry(path, key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(entry, f)
                os.replace(tmp, target)
            except BaseException:
                os.unlink(tmp)
                raise
        except (OSError, ValueError):
            pass

    def _made(self) -> bool:
        if self._ready is None:
            self._ready = _make(self._where, self.root)
        return self._ready


_BUILD_MARK = "qlin-results"  # in each build's folder: what the clean-up may remove


def _make(where: str, root: str) -> bool:
    """Make the cache folder (tagged, ignored by git) and this build's folder in it; remove
    the folders of other builds: only a folder named as a build (20 hex digits) that holds
    qlin's mark, so a --cache-dir pointed at a folder of the user's own loses nothing (and
    gets no .gitignore: only a folder qlin made, or tagged before, does). False when it
    cannot be written."""
    try:
        ours = not os.path.exists(where) or os.path.isfile(os.path.join(where, "CACHEDIR.TAG"))
        os.makedirs(root, exist_ok=True)
        markers = ((where, ".gitignore", "# made by qlin: the results cache\n*\n"),
                   (where, "CACHEDIR.TAG", _TAG))
        # a folder qlin did not make gets no .gitignore of "*" (it would hide the user's files)
        for folder, name, text in (*(markers if ours else ()), (root, _BUILD_MARK, "")):
            marker = os.path.join(folder, name)
            if not os.path.exists(marker):
                with open(marker, "w", encoding="utf-8") as f:
                    f.write(text)
        mine = os.path.basename(root)
        for name in os.listdir(where):
            full = os.path.join(where, name)
            if (name != mine and len(name) == 20 and all(c in "0123456789abcdef" for c in name)
                    and not os.path.islink(full) and os.path.isfile(os.path.join(full, _BUILD_MARK))):
                shutil.rmtree(full, ignore_errors=True)  # another build's results
    except OSError:
        return False
    return True


def _plain(result: FileResult) -> dict:
    return {"error": result.error, "nodes": result.nodes, "data_files": list(result.data_files),
            "diagnostics": [_finding_plain(d) for d in result.diagnostics]}


def _finding_plain(d: Finding) -> dict:
    out = {f.name: getattr(d, f.name) for f in fields(Finding) if f.name != "fix"}
    if d.fix is not None:
        out["fix"] = {"title": d.fix.title, "safe": d.fix.safe, "edits": [e.describe() for e in d.fix.edits]}
    return out


def _result(path: str, data: dict) -> FileResult:
    return FileResult(path, error=data["error"], nodes=data["nodes"], data_files=tuple(data["data_files"]),
                      diagnostics=[_finding(d) for d in data["diagnostics"]])


def _finding(data: dict) -> Finding:
    data = dict(data)
    fix = data.pop("fix", None)
    data["frame"] = tuple(tuple(row) for row in data.get("frame", ()))
    data["ways_out"] = tuple(data.get("ways_out", ()))
    if fix is not None:
        fix = Fix(fix["title"], tuple(Described(e) for e in fix["edits"]), fix["safe"])
    return Finding(**data, fix=fix)


class Described:
    """An edit of a fix read back from the cache: what it does, in words (what the reports
    show); `--fix` and `--diff` never read the cache, so nothing applies it."""

    def __init__(self, text: str):
        self.text = text

    def describe(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return isinstance(other, Described) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)
