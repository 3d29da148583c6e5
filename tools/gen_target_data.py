"""Measure a released runtime version and write its target data, from the real runtime.

Usage (from the repository root)::

    python tools/gen_target_data.py onnxruntime 1.20.1
    make target-data RUNTIME=onnxruntime VERSION=1.20.1         # the same
    python tools/gen_target_data.py onnxruntime 1.20.1 --check
    python tools/gen_target_data.py openvino 2026.4.1 --merge  # add this CPU's outcomes
    python tools/gen_target_data.py onnxruntime 1.20.1 --only division  # those probes alone
    python tools/gen_target_data.py openvino 2026.4.1 --only rounding --only "negative scale"

The version is installed from PyPI into a throwaway virtual environment (deleted after),
beside the onnx this project pins, and ``tools/gen_ort_kernels.py`` runs inside it: the
kernel registry of that version, the schema versions it knows, and the newest ai.onnx opset
and IR version it loads and runs (measured with probe models, not read from documents).
The kernel table goes to ``qlin_cli/targets/data/onnxruntime_kernels.json.gz``, where every
release's registrations are stored once each with the releases that have them
(qlin_cli/targets/kernel_store.py), one per line so that a diff reads as what changed; the
probe outcomes of every release of a runtime go to one file,
``<runtime>_probes.json.gz``, each fact stored once with the range of releases it holds for
(qlin_cli/targets/probe_store.py); ``qlin_cli/targets/versions.py`` reads them and names each version a target
(``onnxruntime@1.20``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT)]

from qlin_cli.targets import data_files, probe_store  # noqa: E402

PINNED = ROOT / "constraints.txt"


def _pinned(name: str) -> str:
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        if line.split("==")[0].strip() == name:
            return line.strip()
    return name


def measure(runtime: str, version: str, check: bool, merge_here: bool = False,
            only: tuple[str, ...] | None = None, missing: bool = False) -> int:
    if runtime not in ("onnxruntime", "openvino"):
        print(f"no generator for {runtime!r} (known: onnxruntime, openvino)", file=sys.stderr)
        return 2
    if (only or missing) and version not in read_tables(_probe_file(runtime)):
        print(f"--only and --missing add to the keys of a measured release, and {runtime} {version} was "
              f"not measured: measure it whole first", file=sys.stderr)
        return 2
    if missing:  # the keys of today's probes the release has no outcome for, or one on other probes
        have = read_tables(_probe_file(runtime))[version]["keys"]
        import probe_models

        made = probe_models.digests()
        only = tuple(sorted(k for k, d in made.items() if k not in have or have[k].get("digest") != d))
        if not only:
            print(f"{runtime} {version}: every probe key is measured")
            return 0
    with tempfile.TemporaryDirectory(prefix=f"qlin-{runtime}-{version}-") as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = env_dir / "bin" / "python"
        # the probes need the runtime alone (and the numpy it picks); the kernel reader needs onnx
        extra = [_pinned("onnx")] if runtime == "onnxruntime" and not only else []
        from qlin_cli.targets import releases

        if runtime == "onnxruntime" and releases.key(version) < releases.key("1.19"):
            extra.append("numpy<2")  # built against numpy 1: pip's newest numpy fails its import
        install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                   f"{runtime}=={version}", *extra]
        done = subprocess.run(install, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{runtime} {version} does not install here:\n{done.stderr[-2000:]}", file=sys.stderr)
            return 2
        if runtime == "openvino" or only:
            return _probe_data(runtime, version, python, Path(tmp), check, merge_here, only)
        out = Path(tmp) / f"onnxruntime_cpu_{version}.json"
        args = [str(python), str(ROOT / "tools" / "gen_ort_kernels.py"), "--output", str(out)]
        done = subprocess.run(args, cwd=ROOT).returncode or _kernels(version, out, check)
        # beside the kernel registry, what the release does with the probe models: kernels
        # that exist but refuse a case at load or run time (blocked Q/DQ in 1.18, say)
        probes = _probe_data(runtime, version, python, Path(tmp), check, merge_here)
        return done or probes


def _kernels(version: str, table_file: Path, check: bool) -> int:
    """Fold the release's kernel table (written by tools/gen_ort_kernels.py) into the store of
    every release (qlin_cli/targets/kernel_store.py), or with ``check`` compare it with the
    release's table there."""
    import gen_ort_kernels

    from qlin_cli.targets import kernel_store, releases

    table = json.loads(table_file.read_text(encoding="utf-8"))
    path = ROOT / "qlin_cli" / "targets" / "data" / kernel_store.file_name("onnxruntime")
    data = data_files.load(path)
    have = {} if data is None else {v: kernel_store.table("onnxruntime", v, data) for v in data["releases"]}
    if check:
        same = have.get(version) == table
        print(f"{path.name} {version}: {'matches' if same else 'differs from'} onnxruntime {version}")
        return 0 if same else 1
    have[version] = table
    keys = {"kernels": gen_ort_kernels.kernel_sort_key, "schemas": kernel_store.row_text}
    data_files.write(path, kernel_store.dumps(kernel_store.fold("onnxruntime", have, releases.key, keys)))
    print(f"{path.name} {version}: {len(table['kernels'])} kernels, {len(table['schemas'])} schemas")
    return 0


def run_probes(runtime: str, python: Path, folder: Path, only: str | tuple[str, ...] | None = None
               ) -> tuple[dict, dict]:
    """Write every probe model to ``folder`` (``only``: those whose key starts with one of them), run
    them all with ``python`` (where the runtime is installed): ({probe id: outcome}, {probe
    id: key})."""
    import numpy as np
    import onnx
    import probe_models
    import probe_runner

    cases, keys = {}, {}
    for i, (key, model, feeds) in enumerate(probe_models.probes()):
        if only and not key.startswith(only):
            continue
        pid = f"p{i}"
        onnx.save(model, folder / f"{pid}.onnx")
        np.savez(folder / f"{pid}.npz", **feeds)
        cases[pid] = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
        keys[pid] = key
    (folder / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    return probe_runner.run_all(str(python), runtime, folder), keys


# CPU features the CPU plugin picks its kernels by (oneDNN's ISA levels): a probe may
# compile on one CPU and not on another, so the measuring CPU is part of the fact
ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8", "amx_bf16")
UNRECORDED = "the first measuring CPU (not recorded)"
HOW = {"openvino": "read_model, compile_model on CPU, one inference",
       "onnxruntime": "InferenceSession on the CPU provider with default options, one run"}


def host_cpu() -> str:
    """This machine's CPU as the data names it: model name and the ISA flags above."""
    name, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name == "unknown CPU":
                name = " ".join(value.split())
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        import platform

        name = platform.processor() or name
    have = [f for f in ISA_FLAGS if f in flags]
    return f"{name} ({', '.join(have) or 'no AVX2'})"


def _counts(entry: dict) -> dict:
    out = {"runs": entry["runs"], "fails": entry["fails"]}
    if entry.get("error"):
        out["error"] = entry["error"]
    return out


def _how(entry: dict) -> tuple[bool, bool]:
    """What a CPU saw of a key, as compared between CPUs: some probe ran, some failed."""
    return bool(entry["runs"]), bool(entry["fails"])


def merge(old: dict, new: dict, host: str) -> dict:
    """The data of ``old`` (measured on other CPUs, or on ``host`` before) and ``new`` (on
    ``host``): a key every CPU saw alike keeps one CPU's counts; a key that runs on one
    CPU and fails on another keeps each CPU's counts under ``hosts`` and their sum.
    Measuring a CPU again replaces its outcomes; keys are today's probes' (``new``)."""
    hosts = old.get("hosts") or [UNRECORDED]
    keys = {}
    split = _split(old["keys"], new["keys"])
    for key in sorted(new["keys"]):  # the probes of today: a key no probe has any more is dropped
        a, b = old["keys"].get(key), new["keys"][key]
        if a is None or key in split:
            keys[key] = b
            continue
        seen = {cpu: dict(c) for cpu, c in a.get("hosts", {}).items()} or {cpu: _counts(a) for cpu in hosts}
        seen[host] = _counts(b)
        if len({_how(c) for c in seen.values()}) == 1:
            keys[key] = _counts(b if "hosts" in a else a)  # alike on every CPU
            continue
        entry = {"runs": sum(c["runs"] for c in seen.values()),
                 "fails": sum(c["fails"] for c in seen.values())}
        error = next((c["error"] for c in seen.values() if c.get("error")), None)
        if error:
            entry["error"] = error
        entry["hosts"] = seen
        keys[key] = entry
    merged = dict(old)
    merged["hosts"] = [*(h for h in hosts if h != host), host]
    merged["probes"] = new["probes"]
    merged["keys"] = keys
    return merged


def _split(old: dict, new: dict) -> set[str]:
    """Keys whose probes today are fewer than when ``old`` was measured: the key gained
    more specific siblings ("K output_dtype=int4") that ``old`` did not have, so its old
    counts also hold probes it no longer names and cannot be compared."""
    return {k for k in new if any(o.startswith(k + " ") and not o.startswith(k + " -> ") and o not in old
                                  for o in new)}  # a chain through the node is not a sibling


def _probe_data(runtime: str, version: str, python: Path, folder: Path, check: bool,
                merge_here: bool = False, only: tuple[str, ...] | None = None) -> int:
    outcomes, keys = run_probes(runtime, python, folder, only)
    if not outcomes:
        print(f"no probe key starts with {' or '.join(map(repr, only or ()))}", file=sys.stderr)
        return 2
    by_key: dict[str, dict] = {}
    for pid, outcome in outcomes.items():
        entry = by_key.setdefault(keys[pid], {"runs": 0, "fails": 0})
        if outcome == "ok":
            entry["runs"] += 1
        else:
            entry["fails"] += 1
            entry.setdefault("error", outcome)
    host = host_cpu()
    data = {
        "format": 1,
        "runtime": runtime,
        "version": version,
        "device": "CPU",
        "source": f"python tools/gen_target_data.py {runtime} {version} (tools/probe_models.py, "
                  f"tools/probe_runner.py: {HOW[runtime]})",
        "hosts": [host],
        "probes": len(outcomes),
        "keys": dict(sorted(by_key.items())),
    }
    import probe_models

    made = probe_models.digests()  # what was measured now, named as the data records it
    digests = {key: made[key] for key in by_key}
    out = _probe_file(runtime)
    with _writing(out):  # two measurements of the runtime at once each add their release
        return _write_probe_data(runtime, version, out, data, digests, check, merge_here, only)


@contextmanager
def _writing(path: Path):
    """Held while the runtime's data file is read, changed and written back."""
    import fcntl

    lock = Path(tempfile.gettempdir()) / f"qlin-{path.name}.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _write_probe_data(runtime, version, out, data, digests, check, merge_here, only) -> int:
    host, measured = data["hosts"][0], data["probes"]
    tables = read_tables(out)
    if only:
        data = _replaced(tables[version], data, only)
    if merge_here and version in tables:
        data = merge(tables[version], data, host)
    for key, digest in digests.items():
        data["keys"][key]["digest"] = digest
    if check:
        same = tables.get(version) == data
        print(f"{out.name} {version}: {'matches' if same else 'differs from'} {runtime} {version}")
        return 0 if same else 1
    tables[version] = data
    write_tables(out, runtime, tables)
    failed = sum(1 for e in data["keys"].values() if not e["runs"])
    varies = sum(1 for e in data["keys"].values() if "hosts" in e)
    print(f"{out.name} {version}: {measured} probes, {len(data['keys'])} keys, {failed} refused, "
          f"{varies} that differ between CPUs ({len(data['hosts'])} measured)")
    return 0


def _replaced(old: dict, new: dict, only: str | tuple[str, ...]) -> dict:
    """The release's measured data with the keys starting with ``only`` (one prefix or
    several) measured again (the others kept as they were, and the count of probes made up
    again)."""
    dropped = [e for k, e in old["keys"].items() if k.startswith(only)]
    keys = {k: e for k, e in old["keys"].items() if not k.startswith(only)} | new["keys"]
    replaced = dict(old, keys=dict(sorted(keys.items())))
    replaced["probes"] = old["probes"] - sum(e["runs"] + e["fails"] for e in dropped) + new["probes"]
    return replaced


def _probe_file(runtime: str) -> Path:
    return ROOT / "qlin_cli" / "targets" / "data" / probe_store.file_name(runtime)


def read_tables(path: Path) -> dict[str, dict]:
    """{release: its outcomes} of a runtime's range file (none when there is no file)."""
    data = data_files.load(path)
    if data is None:
        return {}
    return {v: probe_store.version_data(data["runtime"], v, data) for v in data["releases"]}


def write_tables(path: Path, runtime: str, tables: dict[str, dict]) -> None:
    """Write the folded data whole, then put it in place (a reader never sees half a file)."""
    from qlin_cli.targets import releases

    data_files.write(path, probe_store.dumps(probe_store.fold(runtime, tables, releases.key)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime")
    parser.add_argument("version")
    parser.add_argument("--check", action="store_true", help="compare with the committed data")
    parser.add_argument("--merge", action="store_true",
                        help="add this CPU's measurement to the committed data (keys that run on one "
                             "CPU and fail on another are recorded per CPU) instead of replacing it")
    parser.add_argument("--only", metavar="PREFIX", action="append",
                        help="run only the probes whose key starts with PREFIX (\"division\"; may "
                             "be given again) and replace those keys in the committed data of the release")
    parser.add_argument("--missing", action="store_true",
                        help="run only the probes of keys the release has no outcome for (a key added "
                             "since it was measured) or one measured on other probes than today's "
                             "(their digests differ), and add them to its data")
    args = parser.parse_args(argv)
    only = tuple(args.only) if args.only else None
    return measure(args.runtime, args.version, args.check, args.merge, only, args.missing)


if __name__ == "__main__":
    raise SystemExit(main())
