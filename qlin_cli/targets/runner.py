"""Load, compile and run one model in the onnxruntime or openvino installed in this Python:
the one way qlin runs a runtime, for the probes (tools/probe_runner.py, in a throwaway venv
of one release) and for `qlin check --confirm` (targets/confirm.py, in a subprocess that a
crash or a hang of the runtime cannot take qlin down with). Needs only numpy and the runtime
and imports nothing of qlin: both load this file by its path.

onnxruntime: InferenceSession with default options on the CPU provider (its stages: "load",
"run"); openvino: read_model ("load"), compile_model on CPU ("compile"), one inference
("run"). A failure is ``Failed(stage, error)``, the error the runtime's own message in one
line: onnxruntime's first line, openvino's last (its messages open with where they were
thrown).

``confirm(RUNTIME, VERSION, MODEL, FEEDS.npz, TYPES.json)`` (what targets/confirm.py runs in
its subprocess, never as a script: this folder holds modules named like the runtimes) runs
MODEL once when the RUNTIME installed is release VERSION, writing JSON lines to stdout:
{"version": the release installed} (or {"missing": why it cannot be imported}), then
{"stage": ...} as each stage begins (the last one names where a crash happened), then
{"ok": true} or {"failed": stage, "error": ...}.
"""

from __future__ import annotations

import json
import re

import numpy as np

NUMPY_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}  # ONNX element types numpy holds as they are


class Failed(Exception):
    """The runtime refused the model at ``stage`` with ``error``, its own message in one line
    as the probe data keeps it (``whole``: all of it)."""

    def __init__(self, stage: str, error: str, whole: str = ""):
        super().__init__(f"{stage}: {error}")
        self.stage, self.error, self.whole = stage, error, whole or error


def _quiet(stage: str) -> None:
    """Where a stage begins, for a caller that does not ask (the probes)."""


def first_line(exc: Exception) -> str:
    lines = [s for s in str(exc).splitlines() if s.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


def last_line(exc: Exception) -> str:
    """openvino's errors open with where they were thrown; the cause is the last line, or
    the line before the closing "Summary:" of a failed conversion."""
    lines = [s.strip().lstrip("- ") for s in str(exc).splitlines() if s.strip()]
    if "Summary:" in lines[1:] and not lines[-1].startswith("No conversion rule"):
        return lines[lines.index("Summary:") - 1][:300]
    return (lines[-1] if lines else type(exc).__name__)[:300]


def without_path(text: str, path) -> str:
    """onnxruntime's load errors name the model file: the probe data keeps no path of a machine."""
    import os

    return text.replace(str(path), "PROBE.onnx").replace(os.path.dirname(str(path)), "PROBES")


def in_onnxruntime(path, feeds, types, *, hide_path: bool = False, stage=_quiet) -> list:
    """The outputs (OrtValues) of one run of the model at ``path`` on ``feeds`` ({name:
    array}; ``types``: {name: ONNX element type}, a type numpy lacks given as its bits);
    ``hide_path``: a load error names the file as PROBE.onnx."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    stage("load")
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        text = without_path(str(exc), path) if hide_path else str(exc)
        raise Failed("load", first_line(Exception(text)), text) from None
    stage("run")
    try:
        values = {}
        for name, array in feeds.items():
            if types[name] in NUMPY_TYPES:
                values[name] = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array))
            else:
                values[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array, types[name])
        return session.run_with_ort_values(None, values)
    except Exception as exc:
        raise Failed("run", first_line(exc), str(exc)) from None


_CORE: list = []


def in_openvino(path, feeds, types, *, stage=_quiet):
    """The infer request of one inference of the model at ``path`` on ``feeds`` (as
    ``in_onnxruntime``'s), on CPU; an input of symbolic dimensions takes the feed's shape."""
    import openvino as ov

    if not _CORE:
        _CORE.append(ov.Core())
    core = _CORE[0]
    stage("load")
    try:
        model = core.read_model(path)
    except Exception as exc:
        raise Failed("load", last_line(exc)) from None
    stage("compile")
    try:
        compiled = core.compile_model(model, "CPU")
    except Exception as exc:
        raise Failed("compile", last_line(exc)) from None
    stage("run")
    try:
        request = compiled.create_infer_request()
        for name, array in feeds.items():
            t = request.get_tensor(name)
            if t.data.size == 0 and array.size:  # a dynamic input: empty until given a shape
                t.shape = list(array.shape)
            same_size = t.data.dtype.itemsize == array.dtype.itemsize
            t.data[...] = array.view(t.data.dtype) if same_size and types[name] not in NUMPY_TYPES else array
        request.infer()
    except Exception as exc:
        raise Failed("run", last_line(exc)) from None
    return request


# where onnxruntime threw, in its messages: "/onnxruntime_src/.../reshape_helper.h:84
# onnxruntime::ReshapeHelper::ReshapeHelper(const onnxruntime::TensorShape&, ...) "
THROWN_AT = re.compile(r"/\S+\.(?:h|hpp|cc|cpp|cxx|c):\d+ (?:[\w:~<>,*& ]+\((?:[^()]|\([^()]*\))*\)\s*)?")


def one_line(runtime: str, failed: Failed) -> str:
    """What `qlin check --confirm` quotes of an error: onnxruntime's message whole, on one
    line, without where in its source it was thrown; openvino's cause (``error``)."""
    if runtime != "onnxruntime":
        return failed.error
    text = " ".join(THROWN_AT.sub("", failed.whole).split())
    return text if len(text) <= 400 else text[:399] + "…"


def installed(runtime: str) -> str:
    """The release of ``runtime`` imported here ("2026.4.1", without openvino's build suffix)."""
    module = __import__(runtime)
    return str(getattr(module, "__version__", "")).split("-")[0]


def confirm(runtime: str, version: str, path: str, feeds_path: str, types_path: str) -> None:
    """One run of the model in ``runtime`` when it is release ``version``, said in JSON lines."""
    def say(**what) -> None:
        print(json.dumps(what), flush=True)

    try:
        here = installed(runtime)
    except Exception as exc:  # not installed, or it fails to import
        say(missing=first_line(exc))
        return
    say(version=here)
    if here != version:
        return
    with open(types_path, encoding="utf-8") as f:
        types = json.load(f)
    with np.load(feeds_path) as data:
        feeds = {k: data[k] for k in data.files}
    run = {"onnxruntime": in_onnxruntime, "openvino": in_openvino}[runtime]
    try:
        run(path, feeds, types, stage=lambda s: say(stage=s))
    except Failed as e:
        say(failed=e.stage, error=one_line(runtime, e))
        return
    say(ok=True)
