"""Release numbers of the measured runtimes: how they order, their minor version, which
releases have data (qlin_cli/targets/data: <runtime>_kernels.json.gz, <runtime>_probes.json.gz), and which
measured release judges the one installed beside qlin."""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata

_DATA_PACKAGE = "qlin_cli.targets.data"


def key(version: str) -> tuple:
    """A sort key: numeric parts as numbers ("1.9" before "1.10")."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.+-]", version))


def minor(version: str) -> str:
    """'1.20' of '1.20.1'."""
    return ".".join(version.split(".")[:2])


@cache
def measured(runtime: str) -> tuple[str, ...]:
    """The releases of ``runtime`` with data (a kernel registry, or probe outcomes),
    oldest first."""
    from . import kernel_store, probe_store

    return tuple(sorted(set(kernel_store.releases(runtime)) | set(probe_store.releases(runtime)), key=key))


@cache
def installed(distributions: tuple[str, ...]) -> str | None:
    """The version of the first of ``distributions`` installed beside qlin, read from its
    package metadata (the runtime is not imported), or None; read once per process (a
    check naming a target asked twice, about 0.7 ms each)."""
    for dist in distributions:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def pick(have: list[str] | tuple[str, ...], mine: str | None) -> str:
    """Of the measured releases ``have`` (oldest first), the one that judges the installed
    release ``mine``: itself, else the newest patch of its minor version, else the newest."""
    if mine is not None:
        same = [v for v in have if minor(v) == minor(mine)]
        if same:
            return mine if mine in same else same[-1]
    return have[-1]
