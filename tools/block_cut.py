"""Cutting a model a runtime fails down to the smallest run of its nodes that fails the same
way, and recording such blocks per release and CPU (tools/blocks_openvino.py ``--write``;
qlin_cli/targets/block_store.py).

A block is a window of consecutive nodes of the model (its nodes are in topological order):
the values it reads from outside become graph inputs of their type and shape (known from one
run of the whole model in onnxruntime, else onnx's inference), the constants it reads come
with it, and what leaves it, or else the last node's outputs, become its outputs.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, ROOT]

WINDOWS = (1, 2, 3, 4)  # sizes of the windows tried, smallest first; then the whole model
EXPLAINED_BY_BLOCKS = "QT211"  # the blocks' own code: a failure it names is cut again


def value_types(model: onnx.ModelProto) -> dict[str, tuple[int, list]]:
    """{value: (element type, shape)} of every value of the main graph: onnx's inference,
    then one run in onnxruntime for what it leaves unknown (a com.microsoft op's outputs)."""
    found = {}
    inferred = onnx.shape_inference.infer_shapes(model)
    for vi in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        t = vi.type.tensor_type
        if t.elem_type and t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
            found[vi.name] = (t.elem_type, dims)
    try:
        import onnxruntime as ort

        wide = onnx.ModelProto()
        wide.CopyFrom(model)
        have = {o.name for o in wide.graph.output}
        wide.graph.output.extend(onnx.ValueInfoProto(name=o) for n in wide.graph.node for o in n.output
                                 if o and o not in have)
        session = ort.InferenceSession(wide.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {i.name: _zeros(i) for i in session.get_inputs()}
        names = [o.name for o in session.get_outputs()]
        for name, value in zip(names, session.run(names, feeds), strict=True):
            value = np.asarray(value)
            found.setdefault(name, (helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
    except Exception as exc:  # onnx's inference alone
        print(f"    (onnxruntime could not run the model: {str(exc)[:80]})", flush=True)
    return found


def _zeros(i) -> np.ndarray:
    kinds = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64,
             "tensor(int32)": np.int32, "tensor(uint8)": np.uint8, "tensor(int8)": np.int8}
    shape = [d if isinstance(d, int) else 1 for d in i.shape]
    return np.zeros(shape, kinds.get(i.type, np.float32))


def window(model: onnx.ModelProto, lo: int, hi: int, types: dict) -> onnx.ModelProto | None:
    """The model of nodes ``lo`` to ``hi`` - 1 (None where a value it reads has no known type)."""
    g = model.graph
    nodes = list(g.node[lo:hi])
    inits = {t.name: t for t in g.initializer}
    consts = {o: n for n in g.node[:lo] if n.op_type == "Constant" for o in n.output}
    made = {o for n in nodes for o in n.output}
    read_later = {x for n in g.node[hi:] for x in n.input} | {o.name for o in g.output}
    taken, inputs, used = [], [], []
    for n in nodes:
        for x in n.input:
            if not x or x in made or x in taken:
                continue
            taken.append(x)
            if x in inits:
                used.append(inits[x])
            elif x in consts:
                nodes.insert(0, consts[x])
            elif x in types:
                inputs.append(helper.make_tensor_value_info(x, *types[x]))
            else:
                return None
    outs = ([o for n in g.node[lo:hi] for o in n.output if o in read_later]
            or [o for o in g.node[hi - 1].output if o])
    if any(o not in types for o in outs):
        return None
    graph = helper.make_graph(nodes, f"block_{lo}_{hi}", inputs,
                              [helper.make_tensor_value_info(o, *types[o]) for o in outs], used)
    out = helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)
    out.graph.value_info.extend(helper.make_tensor_value_info(k, *types[k]) for k in made if k in types
                                and k not in outs)
    return out


def candidates(model: onnx.ModelProto, size: int, types: dict) -> list[tuple[tuple[int, int], object]]:
    """Every window of ``size`` nodes holding no Constant alone, with its span."""
    n = len(model.graph.node)
    found = []
    for lo in range(0, n - size + 1):
        if model.graph.node[lo + size - 1].op_type == "Constant":
            continue
        m = window(model, lo, lo + size, types)
        if m is not None:
            found.append(((lo, lo + size), m))
    return found


OK = "ok"  # a case the runtime read and compiled (openvino) or loaded and ran once (onnxruntime)


def run_cases(runtime: str, python: str, folder: str, models: dict) -> tuple[str, dict]:
    """(the release ``python`` holds, {id: OK or its error}) of every model ({id: model}):
    openvino reads and compiles each for CPU (tools/probe_fusion_openvino.py's child), as
    tools/blocks_openvino.py always did; onnxruntime loads each on the CPU provider and runs it
    once on zeros (tools/probe_runner.py's child)."""
    os.makedirs(folder, exist_ok=True)
    if runtime == "openvino":
        from fusion_agreement_openvino import compiled, write

        write(folder, models)
        release, said = compiled(python, folder)
        return release.split()[0], {k: OK if isinstance(v, dict) else _sentences(str(v))
                                    for k, v in said.items()}
    import json
    import subprocess

    import probe_runner

    cases = {}
    for cid, m in models.items():
        onnx.save(m, os.path.join(folder, f"{cid}.onnx"))
        feeds = {i.name: _zeros_of(i) for i in m.graph.input
                 if i.name not in {t.name for t in m.graph.initializer}}
        np.savez(os.path.join(folder, f"{cid}.npz"), **feeds)
        cases[cid] = {i.name: i.type.tensor_type.elem_type for i in m.graph.input if i.name in feeds}
    with open(os.path.join(folder, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f)
    said = probe_runner.run_all(python, runtime, folder)
    release = subprocess.run([python, "-c", f"import {runtime}; print({runtime}.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return release, {k: str(v) for k, v in said.items()}


def _sentences(error: str, cut: int = 160) -> str:
    """openvino's error as the child gives it ("load: " and at most ``cut`` characters of the
    message), a message cut short ending at its last whole sentence."""
    stage, _, said = error.partition(": ")
    if len(said) < cut or ". " not in said:
        return error
    return f"{stage}: {said[:said.rindex('. ') + 1]}"


def _zeros_of(vi) -> np.ndarray:
    t = vi.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
    return np.zeros(shape, helper.tensor_dtype_to_np_dtype(t.elem_type))


def cut_all(runtime: str, python: str, failing: dict, folder: str) -> dict:
    """{model: (block model, (first, end))}: per model of ``failing`` ({name: (model, error)})
    the first window of the smallest size the release ``python`` fails with the model's own
    error, else the whole model."""
    types = {name: value_types(m) for name, (m, _) in failing.items()}
    found: dict = {}
    for size in WINDOWS:
        left = {n: v for n, v in failing.items() if n not in found}
        cases = {}
        for name, (m, _) in left.items():
            for span, block in candidates(m, size, types[name]):
                cases[f"{name}@{span[0]}-{span[1]}"] = (name, span, block)
        if not cases:
            continue
        _, said = run_cases(runtime, python, os.path.join(folder, f"cut{size}"),
                            {cid: c[2] for cid, c in cases.items()})
        for cid, (name, span, block) in cases.items():
            if name not in found and said.get(cid) == failing[name][1]:
                found[name] = (block, span)
    for name, (m, _) in failing.items():
        found.setdefault(name, (m, (0, len(m.graph.node))))
    return found


def key_of_block(model: onnx.ModelProto) -> str:
    """The block's name: ``block_store.block_key`` of each node, in order, joined by " -> "
    (an op qlin knows no schema of by its domain and type)."""
    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import block_store, predict

    _, placed = predict._read(analyze(model, ""))
    keys = {loc.index: block_store.block_key(site.facts, site.node_key) for site, loc in placed
            if loc.graph == "main"}
    parts = []
    for i, n in enumerate(model.graph.node):
        if n.op_type != "Constant":
            parts.append(keys.get(i) or f"{n.domain or 'ai.onnx'}:{n.op_type}")
    return " -> ".join(parts)


def outcomes(runtime: str, pairs: list, blocks: dict, folder: str) -> dict:
    """{key: {release: "runs" | error}} of every block ({key: model}) in every release."""
    from qlin_cli.targets.block_store import RUNS

    ids = {f"b{i}": k for i, k in enumerate(blocks)}
    out: dict = {k: {} for k in blocks}
    for version, python in pairs:
        if not ids:
            break
        release, said = run_cases(runtime, python, os.path.join(folder, "blocks"),
                                  {cid: blocks[k] for cid, k in ids.items()})
        if release != version:
            raise SystemExit(f"{python} runs {runtime} {release}, not {version}")
        for cid, k in ids.items():
            got = said.get(cid, "crash: no result")
            out[k][version] = RUNS if got == OK else got
    return out


def record(runtime: str, pairs: list, failed: dict, paths: dict, folder: str) -> None:
    """Cut each failure no other qlin error explains in each release, compile every block found
    in every release, and write the outcomes under this machine's CPU."""
    import time

    from gen_target_data import host_cpu

    from qlin_cli.targets import block_store, data_files, releases

    blocks, found = {}, {}
    for version, python in pairs:
        todo = {n: (onnx.load(paths[n]), err) for n, (err, explained) in failed[version].items()
                if not explained}
        if not todo:
            continue
        start = time.monotonic()
        for name, (block, span) in cut_all(runtime, python, todo, os.path.join(folder, version)).items():
            key = key_of_block(block)
            blocks.setdefault(key, block)
            found.setdefault(key, set()).add(name)
            print(f"  {version} {name}: nodes {span[0]}..{span[1] - 1}: {key}", flush=True)
        print(f"  {version}: {len(todo)} cut in {time.monotonic() - start:.0f} s", flush=True)
    measured = outcomes(runtime, pairs, blocks, folder)
    path = os.path.join(ROOT, "qlin_cli", "targets", "data", block_store.file_name(runtime))
    have, per, was = block_store.unfold(data_files.load(path) or {})
    cpu = host_cpu()
    source = f"python tools/blocks_{runtime}.py --write " + " ".join(f"{v}=VENV/bin/python" for v, _ in pairs)
    for version, _ in pairs:
        hosts = dict(have.get(version, {}).get("hosts", {}))
        hosts[cpu] = {"models": len(paths), "fail": len(failed[version]), "source": source}
        have[version] = {"hosts": dict(sorted(hosts.items()))}
        for outcome in per.values():  # this CPU's earlier outcomes of these releases go
            outcome.get(version, {}).pop(cpu, None)
    for key, by_release in measured.items():
        for version, said in by_release.items():
            per.setdefault(key, {}).setdefault(version, {})[cpu] = said
    for key, names in found.items():
        was[key] = sorted(set(was.get(key, ())) | names)
    per = {k: v for k, v in per.items() if any(v.values())}
    data = block_store.fold(runtime, have, per, {k: v for k, v in was.items() if k in per}, releases.key)
    data_files.write(path, block_store.dumps(data))
    print(f"wrote {os.path.basename(path)}.gz: {len(per)} blocks, {len(have)} releases", flush=True)
