"""Generate the onnxruntime CPU kernel table used by ``qlin_cli.targets.ort_table``.

Usage (from the repository root)::

    python tools/gen_ort_kernels.py --output T.json   # write the table of the installed onnxruntime
    python tools/gen_ort_kernels.py --stdout          # print it

tools/gen_target_data.py runs it in a throwaway venv and folds the table into
qlin_cli/targets/data/onnxruntime_kernels.json.gz (qlin_cli/targets/kernel_store.py), which
holds every measured release.

Everything in the table comes from the onnxruntime installed in the running
interpreter:

* ``kernels``: one entry per CPUExecutionProvider kernel registration, read from
  ``onnxruntime_pybind11_state.get_all_opkernel_def()``.  ``until`` is inclusive and
  ``null`` when onnxruntime registered the kernel as open-ended (INT_MAX).  Type
  names drop the ``tensor(...)`` wrapper ("tensor(float)" -> "float"); sequence,
  optional, map and sparse types are kept as onnxruntime spells them.
* ``schemas``: the operator schema versions onnxruntime itself knows (its bundled
  ONNX plus contrib schemas, from ``get_all_operator_schema()``), restricted to the
  domains that have CPU kernels.  They are needed to map a model's opset to the
  schema version in force, which is what onnxruntime matches kernels against.
  Each version's ``signatures`` entry lists its formal inputs and outputs as
  ``[name, type string, option]`` (the type string is the type-constraint name a
  kernel registration constrains, e.g. "T1", or a fixed type such as
  "tensor(int64)"; option is "single", "optional" or "variadic"), so that a node's
  input and output types can be bound to the names the kernels use.  ``function``
  says whether onnx's own schema of that version has a function body (onnxruntime
  inlines such ops when no kernel exists; read from the installed ``onnx.defs``,
  ai.onnx only).
* ``max_opset`` / ``max_ir``: measured, not copied: a one-node Identity model is
  loaded and run at increasing ai.onnx opset / IR versions and the last version
  that works is recorded.

The output is deterministic: keys and lists are sorted and every kernel or schema
entry sits on its own line so that a diff between two onnxruntime versions reads
as a list of added and removed kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

FORMAT = 2
PROVIDER = "CPUExecutionProvider"
SOURCE = "python tools/gen_ort_kernels.py"
OPEN_ENDED = 2147483647  # INT_MAX: onnxruntime's marker for "no upper bound"

# onnxruntime rejects ai.onnx opsets newer than the last released one unless this
# environment variable is "0"; the probe must not be influenced by the caller's shell.
_RELEASED_ONLY_ENV = "ALLOW_RELEASED_ONNX_OPSET_ONLY"



def normalise_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def normalise_type(type_str: str) -> str:
    """"tensor(float)" -> "float"; anything that is not a plain tensor is kept as is."""
    if type_str.startswith("tensor(") and type_str.endswith(")"):
        return type_str[len("tensor(") : -1]
    return type_str


def collect_kernels(provider: str = PROVIDER) -> list[dict]:
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    seen: set[str] = set()
    entries: list[dict] = []
    for kdef in C.get_all_opkernel_def():
        if kdef.provider != provider:
            continue
        since, until = (int(v) for v in kdef.version_range)
        entry = {
            "domain": normalise_domain(kdef.domain),
            "op": kdef.op_name,
            "since": since,
            "until": None if until == OPEN_ENDED else until,
            "constraints": {
                name: sorted({normalise_type(t) for t in types})
                for name, types in kdef.type_constraints.items()
            },
        }
        key = json.dumps(entry, sort_keys=True)
        if key not in seen:  # identical registrations carry no extra information
            seen.add(key)
            entries.append(entry)
    entries.sort(key=kernel_sort_key)
    return entries


def kernel_sort_key(entry: dict) -> tuple:
    until = OPEN_ENDED if entry["until"] is None else entry["until"]
    return (
        entry["domain"],
        entry["op"],
        entry["since"],
        until,
        json.dumps(entry["constraints"], sort_keys=True),
    )


_OPTIONS = {"Single": "single", "Optional": "optional", "Variadic": "variadic"}


def _params(formals) -> list[list[str]]:
    return [[p.name, p.typeStr, _OPTIONS.get(str(p.option).rsplit(".", 1)[-1], "single")] for p in formals]


def _has_function(domain: str, op: str, version: int) -> bool:
    """onnx's own schema of exactly this version has a function body (ai.onnx only)."""
    if domain:
        return False
    from onnx import defs

    try:
        s = defs.get_schema(op, version, "")
    except Exception:  # onnx does not know the op at that version
        return False
    return s.since_version == version and bool(s.has_function or s.has_context_dependent_function)


def collect_schemas(domains: Iterable[str]) -> list[dict]:
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    wanted = set(domains)
    found: dict[tuple[str, str], dict[int, dict]] = {}
    for schema in C.get_all_operator_schema():
        domain = normalise_domain(schema.domain)
        if domain in wanted:
            version = int(schema.since_version)
            found.setdefault((domain, schema.name), {})[version] = {
                "inputs": _params(schema.inputs),
                "outputs": _params(schema.outputs),
                "function": _has_function(domain, schema.name, version),
            }
    return [
        {"domain": domain, "op": op, "versions": sorted(by_version),
         "signatures": {str(v): by_version[v] for v in sorted(by_version)}}
        for (domain, op), by_version in sorted(found.items())
    ]


def _identity_model(opset: int, ir_version: int) -> bytes:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model.SerializeToString()


def _loads_and_runs(model: bytes) -> bool:
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # failures are expected here; keep stderr quiet
    try:
        session = ort.InferenceSession(model, options, providers=[PROVIDER])
        x = np.array([1.5, -2.0], dtype=np.float32)
        (y,) = session.run(None, {"x": x})
    except Exception:
        return False
    return bool(np.array_equal(x, y))


def _last_working(start: int, works, limit: int = 1000) -> int:
    """Walk upwards from ``start`` (which must work) and return the last version that works."""
    if not works(start):
        raise RuntimeError(f"probe baseline {start} does not load; cannot measure")
    version = start
    while version < limit and works(version + 1):
        version += 1
    return version


def measure_limits() -> tuple[int, int]:
    """Return (max ai.onnx opset, max IR version) that the installed onnxruntime loads."""
    saved = os.environ.pop(_RELEASED_ONLY_ENV, None)
    try:
        # IR 3 / opset 7 are old enough for any onnxruntime still in use.
        max_ir = _last_working(3, lambda ir: _loads_and_runs(_identity_model(7, ir)))
        max_opset = _last_working(7, lambda op: _loads_and_runs(_identity_model(op, max_ir)))
    finally:
        if saved is not None:
            os.environ[_RELEASED_ONLY_ENV] = saved
    return max_opset, max_ir


def build_table() -> dict:
    import onnxruntime as ort

    kernels = collect_kernels()
    domains = sorted({k["domain"] for k in kernels})
    max_opset, max_ir = measure_limits()
    return {
        "format": FORMAT,
        "onnxruntime_version": ort.__version__,
        "provider": PROVIDER,
        "source": SOURCE,
        "max_opset": max_opset,
        "max_ir": max_ir,
        "probes": {
            "max_ir": "last IR version at which a one-node Identity model (ai.onnx opset 7) loads and "
            "runs with default SessionOptions",
            "max_opset": "last ai.onnx opset at which a one-node Identity model (IR version max_ir) loads "
            f"and runs with default SessionOptions and {_RELEASED_ONLY_ENV} unset",
        },
        "domains": domains,
        "schemas": collect_schemas(domains),
        "kernels": kernels,
    }


def render(table: dict) -> str:
    """Serialise with sorted keys; lists of objects get one object per line."""
    parts = []
    for key in sorted(table):
        value = table[key]
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            rows = ",\n".join(json.dumps(v, sort_keys=True, separators=(",", ":")) for v in value)
            text = "[\n" + rows + "\n]"
        else:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        parts.append(json.dumps(key) + ":" + text)
    out = "{\n" + ",\n".join(parts) + "\n}\n"
    if json.loads(out) != table:  # the hand-made layout must stay plain JSON
        raise AssertionError("render() produced JSON that does not round-trip")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, help="file to write")
    parser.add_argument("--stdout", action="store_true", help="print the table instead of writing it")
    args = parser.parse_args(argv)

    table = build_table()
    text = render(table)
    if args.stdout or args.output is None:
        sys.stdout.write(text)
        return 0
    path = args.output
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.name}: {len(table['kernels'])} kernels, {len(text.encode())} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
