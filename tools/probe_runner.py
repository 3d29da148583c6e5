"""Run probe models in the runtime installed in this environment (a throwaway venv made by
tools/gen_target_data.py or bench/bench_target_versions.py); needs only the runtime and numpy.

    python probe_runner.py onnxruntime|openvino FOLDER

FOLDER holds cases.json ({id: {input name: ONNX element type}}), <id>.onnx and <id>.npz
(the feeds; types numpy lacks stored as their bits). Appends one line per case to
FOLDER/results.jsonl: [id, "ok"], [id, "load: <the error>"] or [id, "run: <...>"] (``run_all``
gives them with the runtime's source line numbers left out: ``without_source_lines``), skipping
cases already there (``run_all`` restarts it after a case that crashes the runtime). A case
whose feeds hold ``expect:spec`` (a probe of what a QuantizeLinear computes,
tools/probe_quantize.py) runs only when its first output equals that; otherwise it is
[id, "differs: <name>"], naming the ``expect:<name>`` it equals ("divides in float"), or
"differs: got <value> where the page gives <value>" at the first element that differs; a
run whose output the Python API cannot hand over is [id, "unread: <the error>"].
onnxruntime: InferenceSession with default options on the CPU provider, one run; openvino:
read_model, compile_model on CPU, one inference: qlin_cli/targets/runner.py runs them (as it
does for `qlin check --confirm`), loaded by its path, so that a venv without qlin runs it.
"""

import json
import os
import re
import sys

import numpy as np


def _runner():
    """qlin_cli/targets/runner.py, loaded by its path (this file's folder is tools/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "qlin_cli", "targets", "runner.py")
    import importlib.util

    spec = importlib.util.spec_from_file_location("qlin_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = _runner()
NUMPY_TYPES = runner.NUMPY_TYPES  # ONNX element types numpy holds as they are
_first_line, _last_line = runner.first_line, runner.last_line


SOURCE_LINE = re.compile(r"(\.(?:cc|cpp|cxx|c|h|hpp)):\d+")


def without_source_lines(outcome: str) -> str:
    """An outcome as the data keeps it: the runtime's message with the line numbers of its
    own source files left out ("model.cc:180" -> "model.cc"). Each onnxruntime release
    moves them, and 8,257 of 26,577 ranges recorded nothing else."""
    return SOURCE_LINE.sub(r"\1", outcome)


def _split(feeds):
    """(the graph's feeds, the results an arithmetic probe tells apart: ``expect:<name>``)."""
    expect = {k.partition(":")[2]: v for k, v in feeds.items() if k.startswith("expect:")}
    return {k: v for k, v in feeds.items() if not k.startswith("expect:")}, expect


def _compared(output, expect) -> str:
    """"ok" when the output is the page's result (``expect:spec``), "differs: <name>" when it
    is another ``expect:<name>``, else the first value that differs. Integer results are
    compared as int64, float ones as they are (the probes make them exact) or by their codes
    where the page's result is given as codes (unsigned)."""
    if not expect:
        return "ok"  # a probe of any other kind: it ran
    got = np.asarray(output)
    want = expect.get("spec")  # None: the page gives no result (a probe of what it leaves undefined)
    codes = want is not None and want.dtype.kind == "u" and got.dtype.kind == "f"
    if codes and got.itemsize != want.itemsize:  # the page's type is not the one written
        return f"differs: writes {got.dtype.name}"
    if codes:
        got = got.view(want.dtype)  # float16 / bfloat16 results as their codes (openvino hands
        # bfloat16 over in a 2-byte float array)
    elif got.dtype.kind != "f":
        got = got.astype(np.int64)
    if want is not None and np.array_equal(got, want):
        return "ok"
    for name, value in expect.items():
        if name != "spec" and got.shape == value.shape and np.array_equal(got, value):
            return f"differs: {name}"
    if want is None:
        return f"differs: got {got.reshape(-1)[:4].tolist()}"
    at = int(np.flatnonzero(got.reshape(-1) != want.reshape(-1))[0]) if got.size == want.size else 0
    return f"differs: got {got.reshape(-1)[at]} where the page gives {want.reshape(-1)[at]}"


def run_onnxruntime(path, feeds, types):
    feeds, expect = _split(feeds)
    try:
        outputs = runner.in_onnxruntime(path, feeds, types, hide_path=True)
    except runner.Failed as e:
        return f"{e.stage}: {e.error}"
    try:
        got = outputs[0].numpy() if expect else None
    except Exception as exc:  # a type the Python API cannot hand over (float8e5m2 in 1.31)
        return "unread: " + _first_line(exc)
    return _compared(got, expect)


def run_openvino(path, feeds, types):
    feeds, expect = _split(feeds)
    try:
        request = runner.in_openvino(path, feeds, types)
        got = request.get_output_tensor(0).data.copy() if expect else None
    except runner.Failed as e:  # the data says "load" for a model read or compiled in vain
        return f"{'load' if e.stage == 'compile' else e.stage}: {e.error}"
    except Exception as exc:
        return "run: " + _last_line(exc)
    return _compared(got, expect)


def _done(folder) -> dict:
    """The outcomes written so far (results.jsonl: one JSON [id, outcome] per line)."""
    try:
        with open(f"{folder}/results.jsonl", encoding="utf-8") as f:
            return dict(json.loads(line) for line in f if line.strip())
    except FileNotFoundError:
        return {}


def run_all(python: str, runtime: str, folder) -> dict:
    """Run every case of ``folder`` with ``python`` (where the runtime is installed) and return
    {id: outcome}. A case that kills the runtime's process (openvino 2025.3 dies of SIGSEGV
    on some models) is recorded as "crash: <how it ended>" and the run goes on after it."""
    import os
    import subprocess

    with open(f"{folder}/cases.json", encoding="utf-8") as f:
        order = list(json.load(f))
    if os.path.exists(f"{folder}/results.jsonl"):
        os.remove(f"{folder}/results.jsonl")  # a fresh run: the folder may serve several releases
    while True:
        ended = subprocess.run([python, __file__, runtime, str(folder)], capture_output=True, text=True)
        done = _done(folder)
        left = [case for case in order if case not in done]
        if ended.returncode == 0 or not left:
            return {case: without_source_lines(outcome) for case, outcome in done.items()}
        with open(f"{folder}/results.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps([left[0], f"crash: exit status {ended.returncode}"]) + "\n")


def main():
    runtime, folder = sys.argv[1], sys.argv[2]
    run = {"onnxruntime": run_onnxruntime, "openvino": run_openvino}[runtime]
    with open(f"{folder}/cases.json", encoding="utf-8") as f:
        cases = json.load(f)
    done = _done(folder)
    with open(f"{folder}/results.jsonl", "a", encoding="utf-8") as out:
        for case, types in cases.items():
            if case in done:
                continue
            with np.load(f"{folder}/{case}.npz") as data:
                feeds = {k: data[k] for k in data.files}
            out.write(json.dumps([case, run(f"{folder}/{case}.onnx", feeds, types)]) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
