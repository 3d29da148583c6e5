"""Reading the data files of targets/data/ (kernel_store.py, probe_store.py): the whole
file, or the releases it holds from its head alone.

Both stores write the ``releases`` block first, one line per release, closed by a line
``},``. Listing the measured releases (which every target name is checked against) then
reads those lines and not the rest of the file: the release data a check judges by is
parsed only when it is asked for.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

_DATA_PACKAGE = "qlin_cli.targets.data"
_OPEN = '"releases": {'


@cache
def read(file_name: str) -> dict | None:
    """The whole file parsed, once (None without the file)."""
    entry = resources.files(_DATA_PACKAGE) / file_name
    if not entry.is_file():
        return None
    return json.loads(entry.read_text(encoding="utf-8"))


@cache
def releases(file_name: str) -> tuple[str, ...] | None:
    """The releases of a data file in its order (None without the file)."""
    entry = resources.files(_DATA_PACKAGE) / file_name
    if not entry.is_file():
        return None
    lines = []
    with entry.open("r", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not lines:
                if line == _OPEN:
                    lines.append("{")
                continue
            if line in ("},", "}"):
                break
            lines.append(line)
    return tuple(json.loads("\n".join(lines) + "}")) if lines else ()
