"""Run probe models in the runtime installed in this environment (a throwaway venv made by
tools/gen_target_data.py or bench/bench_target_versions.py); needs only the runtime and numpy.

    python probe_runner.py onnxruntime|openvino FOLDER

FOLDER holds cases.json ({id: {input name: ONNX element type}}), <id>.onnx and <id>.npz
(the feeds; types numpy lacks stored as their bits). Prints one JSON object: {id: "ok",
"load: <first line of the error>" or "run: <...>"}. onnxruntime: InferenceSession with
default options on the CPU provider, one run; openvino: read_model, compile_model on CPU,
one inference.
"""

import json
import sys

import numpy as np

NUMPY_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}  # ONNX element types numpy holds as they are


def _first_line(exc: Exception) -> str:
    lines = [s for s in str(exc).splitlines() if s.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


def _last_line(exc: Exception) -> str:
    """openvino's errors open with where they were thrown; the cause is the last line, or
    the line before the closing "Summary:" of a failed conversion."""
    lines = [s.strip().lstrip("- ") for s in str(exc).splitlines() if s.strip()]
    if "Summary:" in lines[1:] and not lines[-1].startswith("No conversion rule"):
        return lines[lines.index("Summary:") - 1][:300]
    return (lines[-1] if lines else type(exc).__name__)[:300]


def run_onnxruntime(path, feeds, types):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        return "load: " + _first_line(exc)
    try:
        values = {}
        for name, array in feeds.items():
            if types[name] in NUMPY_TYPES:
                values[name] = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array))
            else:
                values[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array, types[name])
        session.run_with_ort_values(None, values)
    except Exception as exc:
        return "run: " + _first_line(exc)
    return "ok"


_CORE = []


def run_openvino(path, feeds, types):
    import openvino as ov

    if not _CORE:
        _CORE.append(ov.Core())
    core = _CORE[0]
    try:
        compiled = core.compile_model(core.read_model(path), "CPU")
    except Exception as exc:
        return "load: " + _last_line(exc)
    try:
        request = compiled.create_infer_request()
        for name, array in feeds.items():
            t = request.get_tensor(name)
            same_size = t.data.dtype.itemsize == array.dtype.itemsize
            t.data[...] = array.view(t.data.dtype) if same_size and types[name] not in NUMPY_TYPES else array
        request.infer()
    except Exception as exc:
        return "run: " + _last_line(exc)
    return "ok"


def main():
    runtime, folder = sys.argv[1], sys.argv[2]
    run = {"onnxruntime": run_onnxruntime, "openvino": run_openvino}[runtime]
    with open(f"{folder}/cases.json", encoding="utf-8") as f:
        cases = json.load(f)
    out = {}
    for case, types in cases.items():
        with np.load(f"{folder}/{case}.npz") as data:
            feeds = {k: data[k] for k in data.files}
        out[case] = run(f"{folder}/{case}.onnx", feeds, types)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
