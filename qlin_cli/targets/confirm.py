"""`qlin check --target T --confirm`: the model run in the release a target judges, where that
release is the one installed here, and the runtime's verdict held against qlin's prediction.

For each target of a measured release (onnxruntime, openvino: ``Target.table``) the model is
loaded, compiled and run once on generated inputs (``feeds``: each input's shape from the
model, a symbolic dimension as 1) in a subprocess (``attempt``) that runs
``targets/runner.py``, the code the probes are measured with; a crash or a hang of the
runtime ends that process only (``TIMEOUT``). Where the runtime fails and qlin predicted no
error for the target: QT208; where qlin predicted an error and the runtime ran the model:
QT209; where they agree, nothing. A target that cannot be confirmed here (its release not
installed, a range of releases, a runtime qlin does not run, inputs that cannot be made, a
run that did not end in time) gets QT210, an info saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence

from ..finding import Finding
from .base import Target, TargetFinding
from .records import Record

TIMEOUT = 120.0  # seconds one load, compile and run may take before it is given up (QT210)
RUNTIMES = ("onnxruntime", "openvino")  # what runner.py runs
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
# runner.py loaded by its path in a fresh Python whose working folder is a temporary one:
# run as a script, its own folder (which holds onnxruntime.py, openvino.py) would shadow the
# runtimes
_LOADER = ("import sys, importlib.util as u; s = u.spec_from_file_location('qlin_runner', sys.argv[1]); "
           "m = u.module_from_spec(s); s.loader.exec_module(m); m.confirm(*sys.argv[2:])")


class Outcome(Record):
    """What one attempt gave: ``ran`` the runtime loaded, compiled and ran the model; else
    ``stage`` ("load", "compile", "run") and the runtime's ``error`` where it failed, or
    ``skipped``: why it was not run (not installed, another release, no end in time)."""
    __slots__ = ("ran", "stage", "error", "skipped")
    _defaults = (False, "", "", "")

    ran: bool
    stage: str
    error: str
    skipped: str


Feeds = dict[str, tuple[list[int], int]]  # input name -> (shape, ONNX element type)
Attempt = Callable[[str, str, str, Feeds], Outcome]


def confirm_findings(path: str, targets: Sequence[str], reported: Sequence[Finding],
                     attempt: Attempt | None = None) -> list[Finding]:
    """The findings of confirming each of ``targets`` on the model file ``path``, whose check
    reported ``reported`` (the prediction: each target's error findings among them)."""
    from .registry import get

    attempt = attempt or run_attempt
    inputs: Feeds | str | None = None
    found = []
    for name in targets:
        t = get(name)
        runtime = getattr(t, "runtime", None) or t.name.split("@")[0]
        table = getattr(t, "table", None)
        if runtime not in RUNTIMES:
            found.append(_not_confirmed(t, f"qlin runs {' and '.join(RUNTIMES)} only"))
            continue
        if table is None:
            found.append(_not_confirmed(t, f"it judges {len(t.versions)} releases: name the one installed "
                                           f"(--target {runtime}@VERSION)"))
            continue
        if inputs is None:
            inputs = feeds(path)
        if isinstance(inputs, str):
            found.append(_not_confirmed(t, inputs))
            continue
        outcome = attempt(runtime, table.version, path, inputs)
        predicted = [f for f in reported if f.target == t.name and f.severity == "error"]
        found += _compared(t, outcome, predicted)
    return found


def _compared(t: Target, outcome: Outcome, predicted: list[Finding]) -> list[Finding]:
    if outcome.skipped:
        return [_not_confirmed(t, outcome.skipped)]
    if not outcome.ran and not predicted:
        at = "crashed" if outcome.stage == "crash" else f"fails at {outcome.stage}"
        return [_placed(t, t.finding(
            "QT208", f"installed here, {at} where qlin predicted no error: {outcome.error}",
            fix="qlin's probes of single nodes and chains miss what fails here: run the model in "
                "the release to be sure, or report it (the runtime's error names its cause)"))]
    if outcome.ran and predicted:
        codes = sorted({f.code for f in predicted})
        return [_placed(t, t.finding(
            "QT209", f"installed here, it loaded, compiled and ran the model on generated inputs where "
                     f"qlin predicted {len(predicted)} error{'s' if len(predicted) != 1 else ''} "
                     f"({', '.join(codes)}): the prediction is wrong for this model",
            fix="check the outputs against another runtime; report the model to qlin"))]
    return []


def _not_confirmed(t: Target, why: str) -> Finding:
    return _placed(t, t.finding("QT210", f"not confirmed: {why}"))


def _placed(t: Target, found: TargetFinding) -> Finding:
    """A finding on the model as a whole, placed as the targets place theirs (node "model")."""
    return Finding(found.code, found.severity, found.message, "model", "", "", 0, "main", where="model",
                   title="model", target=t.name)


def feeds(path: str) -> Feeds | str:
    """Each graph input the model has to be given (not an initializer): (shape, element type),
    a symbolic or unknown dimension as 1; or why they cannot be made (a type or rank the
    model does not declare, or one the runner cannot write)."""
    import onnx

    from .runner import NUMPY_TYPES

    model = onnx.load(path, load_external_data=False)
    given = {t.name for t in model.graph.initializer}
    out: Feeds = {}
    for vi in model.graph.input:
        if vi.name in given:
            continue
        kind = vi.type.WhichOneof("value")
        tensor = vi.type.tensor_type
        if kind != "tensor_type" or not tensor.HasField("shape"):
            what = "a tensor of no declared shape" if kind == "tensor_type" else f"a {kind or 'value'}"
            return f"the inputs cannot be made: {vi.name!r} is {what}"
        if tensor.elem_type not in NUMPY_TYPES | set(_BITS):
            name = onnx.TensorProto.DataType.Name(tensor.elem_type) if tensor.elem_type else "no type"
            return f"the inputs cannot be made: {vi.name!r} holds {name.lower()}"
        out[vi.name] = ([d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim],
                        tensor.elem_type)
    return out


# types numpy lacks, written as their bits (runner.py hands them over so): bfloat16, float8
_BITS = {16: "uint16", 17: "uint8", 18: "uint8", 19: "uint8", 20: "uint8"}


def arrays(inputs: Feeds) -> dict:
    """The values fed: floats in [-1, 1) (the same each time), zeros of every other type (an
    index or a shape read from an input stays in range)."""
    import numpy as np
    import onnx

    rng = np.random.default_rng(0)
    out = {}
    for name, (shape, elem) in inputs.items():
        if elem in _BITS:
            out[name] = np.zeros(shape, _BITS[elem])
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
        kind = np.dtype(dtype).kind
        out[name] = rng.uniform(-1, 1, shape).astype(dtype) if kind == "f" else np.zeros(shape, dtype)
    return out


def run_attempt(runtime: str, version: str, path: str, inputs: Feeds) -> Outcome:
    """One load, compile and run of the model in ``runtime`` when release ``version`` is the
    one installed, in a subprocess of this Python given ``TIMEOUT`` seconds. The release
    installed is asked once per process."""
    import numpy as np

    here = _INSTALLED.get(runtime)
    if here is not None and here != version:
        return Outcome(skipped=_other_release(runtime, version, here))
    with tempfile.TemporaryDirectory(prefix="qlin-confirm-") as folder:
        np.savez(os.path.join(folder, "feeds.npz"), **arrays(inputs))
        with open(os.path.join(folder, "types.json"), "w", encoding="utf-8") as f:
            json.dump({name: elem for name, (_, elem) in inputs.items()}, f)
        command = [sys.executable, "-c", _LOADER, RUNNER, runtime, version, os.path.abspath(path),
                   os.path.join(folder, "feeds.npz"), os.path.join(folder, "types.json")]
        try:
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT,
                                  check=False)
        except subprocess.TimeoutExpired:
            return Outcome(skipped=f"{runtime} {version} did not end in {TIMEOUT:g} s")
    return _read(runtime, version, done.stdout, done.returncode)


_INSTALLED: dict[str, str] = {}  # runtime -> the release installed, once a run has said


def _other_release(runtime: str, version: str, here: str) -> str:
    return f"the release judged is {runtime} {version}, the one installed here {here}"


def _read(runtime: str, version: str, stdout: str, returncode: int) -> Outcome:
    """The outcome runner.confirm wrote (JSON lines; anything else the runtime printed is
    passed over); a process that ended before its verdict crashed in its last stage."""
    said: dict = {}
    stage = ""
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            said.update(item)
            stage = item.get("stage", stage)
    if "missing" in said:
        return Outcome(skipped=f"{runtime} is not installed here ({said['missing']})")
    here = said.get("version")
    if here is not None:
        _INSTALLED[runtime] = here
        if here != version:
            return Outcome(skipped=_other_release(runtime, version, here))
    if said.get("ok"):
        return Outcome(ran=True)
    if "failed" in said:
        return Outcome(stage=said["failed"], error=said.get("error", ""))
    how = f"killed by {_signal(-returncode)}" if returncode < 0 else f"exit status {returncode}"
    where = f" at {stage}" if stage else ""
    return Outcome(stage="crash", error=f"the process ended{where} ({how}) without a verdict")


def _signal(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


__all__ = ["RUNTIMES", "TIMEOUT", "Outcome", "confirm_findings", "feeds", "run_attempt"]
