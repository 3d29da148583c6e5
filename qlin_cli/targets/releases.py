"""Release numbers of the measured runtimes: how they order, their minor version, which
releases have data (qlin_cli/targets/data: <runtime>_kernels.json.gz, <runtime>_probes.json.gz), and which
measured release judges the one installed beside qlin."""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import metadata
from importlib.machinery import PathFinder


def key(version: str) -> tuple:
    """A sort key: numeric parts as numbers ("1.9" before "1.10")."""
    parts = version.replace("+", ".").replace("-", ".").split(".")  # (split at each of . + -)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def minor(version: str) -> str:
    """'1.20' of '1.20.1'."""
    return ".".join(version.split(".")[:2])


@cache
def measured(runtime: str) -> tuple[str, ...]:
    """The releases of ``runtime`` with data (a kernel registry, or probe outcomes),
    oldest first."""
    from . import data_files, probe_store

    # the kernel file's head read by its name, not importing kernel_store for a runtime that has
    # none (openvino: 0.5 M instructions of a check naming it)
    kernels = data_files.releases(data_files.file_name(runtime, "kernels")) or ()
    return tuple(sorted(set(kernels) | set(probe_store.releases(runtime)), key=key))


@cache
def installed(distributions: tuple[str, ...]) -> str | None:
    """The version of the first of ``distributions`` installed beside qlin, read from its
    package metadata (the runtime is not imported), or None; read once per process (a
    check naming a target asked twice, about 0.7 ms each)."""
    plain = _plain_path()
    for dist in distributions:
        found = _listed_version(dist) if plain else _ASK
        if found is _ASK:
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
        if found is not None:
            return found
    return None


_ASK = object()  # what ``_listed_version`` gives where importlib.metadata must answer


def _plain_path() -> bool:
    """Whether distributions are found as importlib.metadata's path finder alone finds them:
    no other finder on sys.meta_path finds distributions, and no sys.path entry is an egg."""
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    return (finders == [PathFinder] and not any(str(p).lower().endswith(".egg") for p in sys.path))


def _listed_version(dist: str):
    """``metadata.version(dist)`` read as importlib.metadata reads it, without its email parser
    and path objects (1.5 M of the 2.2 M instructions it cost a check naming a target): the
    first ``NAME-*.dist-info`` or ``.egg-info`` folder on sys.path whose name normalises to
    ``dist``'s, its METADATA's ``Version`` header; None where no path has one (not installed);
    ``_ASK`` for anything else (a zip on the path, no METADATA, a folded or missing header),
    which importlib.metadata then answers."""
    want = _normalized(dist)
    for entry in sys.path:
        folder = os.fspath(entry) or "."
        try:
            children = os.listdir(folder)
        except OSError:
            if os.path.exists(folder):
                return _ASK  # a zip: importlib.metadata lists its names
            continue
        found = _first_info(children, want)
        if found is not None:
            dist_info = found.lower().endswith(".dist-info")
            return _header_version(os.path.join(folder, found)) if dist_info else _ASK
    return None


def _first_info(children: list[str], want: str) -> str | None:
    """The first of a folder's ``children`` (in its order) that is a ``.dist-info`` or
    ``.egg-info`` folder of the distribution normalised ``want``: the names joined by NUL (no
    file name holds one) and lower-cased at once, only those holding "-info" asked (each name
    asked in turn cost about 0.8 M instructions of a check naming a target run from a folder
    of 800 names)."""
    text = "\0".join(children).lower()
    at = text.find("-info")
    while at >= 0:
        start = text.rfind("\0", 0, at) + 1
        end = text.find("\0", at)
        end = len(text) if end < 0 else end
        if _is_info(text[start:end], want):
            return children[text.count("\0", 0, start)]
        at = text.find("-info", end)
    return None


def _is_info(low: str, want: str) -> bool:
    """importlib.metadata's ``Lookup``: a lower-case folder name of a distribution's metadata."""
    return (low.endswith((".dist-info", ".egg-info"))
            and _normalized(low.rpartition(".")[0].partition("-")[0]) == want)


def _normalized(name: str) -> str:
    """importlib.metadata's ``Prepared.normalize`` (each run of - _ . made one _, lower case)."""
    name = name.lower().replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _header_version(folder: str):
    """The ``Version`` header of ``folder``'s METADATA (``_ASK``: not plainly there)."""
    try:
        with open(os.path.join(folder, "METADATA"), encoding="utf-8") as f:
            head = f.read().split("\n\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        return _ASK
    found = _ASK
    lines = head.split("\n")
    if lines[-1] == "":  # the text's last line end, with no body after the headers
        lines.pop()
    for line in lines:
        name, colon, value = line.partition(":")
        # a header's name: printable ASCII but space and colon (email.feedparser's headerRE)
        if not (colon and name.isascii() and name.isprintable()) or " " in name or "\r" in line:
            return _ASK  # a folded header, no header, other line ends: the email parser's to read
        if name.lower() == "version" and found is _ASK:
            found = value.lstrip(" \t")  # (as the email parser's compat32 policy gives a value)
    return found if found else _ASK


def pick(have: list[str] | tuple[str, ...], mine: str | None) -> str:
    """Of the measured releases ``have`` (oldest first), the one that judges the installed
    release ``mine``: itself, else the newest patch of its minor version, else the newest."""
    if mine is not None:
        same = [v for v in have if minor(v) == minor(mine)]
        if same:
            return mine if mine in same else same[-1]
    return have[-1]
