"""What the installed runtimes did with the test models, recorded (measuring apart from
testing: `make remeasure` runs the runtimes and writes or checks these files; `make test`
holds qlin's predictions, computed afresh, against them).

A file holds, per runtime, the release it was recorded with, and per case a digest of the
case's model and feeds and what each runtime did. A case is answered from the file only
when its digest is the recorded one and the installed release is the recorded release;
any other case runs the runtime itself (a changed case, or another release installed).
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

HERE = os.path.join(os.path.dirname(__file__), "data")


def digest(model, feeds: dict | None = None) -> str:
    h = hashlib.blake2b(model.SerializeToString(deterministic=True), digest_size=8)
    for name in sorted(feeds or {}):
        value = np.ascontiguousarray(feeds[name])
        h.update(f"{name}:{value.dtype.str}:{value.shape}".encode())
        h.update(value.tobytes())
    return h.hexdigest()


def installed(runtime: str) -> str | None:
    try:
        return __import__(runtime).__version__
    except ImportError:
        return None


class Recorded:
    def __init__(self, name: str):
        self.path = os.path.join(HERE, name)
        try:
            with open(self.path, encoding="utf-8") as f:
                self.data = json.load(f)
        except FileNotFoundError:
            self.data = {"releases": {}, "cases": {}}

    def get(self, case: str, runtime: str, case_digest: str):
        """What ``runtime`` did with ``case`` as recorded, or None (not recorded, another
        model, another release installed)."""
        if self.data["releases"].get(runtime) != installed(runtime):
            return None
        entry = self.data["cases"].get(case)
        if entry is None or entry.get("digest") != case_digest:
            return None
        return entry.get(runtime)

    def put(self, case: str, runtime: str, case_digest: str, value) -> None:
        self.data["releases"][runtime] = installed(runtime)
        entry = self.data["cases"].setdefault(case, {})
        if entry.get("digest") != case_digest:
            entry.clear()
            entry["digest"] = case_digest
        entry[runtime] = value

    def write(self) -> None:
        os.makedirs(HERE, exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
