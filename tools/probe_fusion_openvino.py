"""Measure which QDQ groups openvino's CPU plugin runs in an integer precision.

    python tools/probe_fusion_openvino.py                          # the openvino installed here
    python tools/probe_fusion_openvino.py --python VENV/bin/python  # the one of another venv
    python tools/probe_fusion_openvino.py --check                  # compare with the data

The groups are tools/probe_fusion.py's (``matrix``, ``build``, ``group_ops``: the same models
and keys as onnxruntime's). Each model is read and compiled for "CPU" with default
properties (``Core.compile_model``) in a child process that imports only openvino (it runs
in a throwaway venv of another release as it is; a crash is that group's outcome), and the
compiled model's runtime graph (``get_runtime_model``) says how each layer runs: per layer
its rt_info "layerType", "runtimePrecision", "outputPrecisions" and "originalLayersNames"
(the ops of the read model it holds). The group's op is the layer whose original names hold
the op's node name (openvino's ONNX frontend names a Conv's convolution "<name>/WithoutBiases"
and its bias Add after its output): its runtime precision is the outcome, "runs in u8
(Convolution)" for an integer one (i8, u8, i16, u16, i4, u4), "float" for f32 / bf16 / f16,
"load: <error>" where the model fails to read or compile. Two groups of one key with
different outcomes are reported and nothing is written. The result goes to
qlin_cli/targets/data/openvino_fusion.json.gz (``fusion.dumps``), per key the outcome of each
measured release, with the command and the CPU that made it: openvino picks its kernels by
the CPU's instruction set, so a release is measured on one machine.
"""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGER_PRECISIONS = frozenset({"i8", "u8", "i16", "u16", "i4", "u4"})
SKIP = frozenset({"Const", "Input", "Output", "Parameter", "Result"})  # no op of a group


# ---- inside the runtime's venv: openvino alone --------------------------------------------------
def inside(folder: str) -> None:
    """Compile each case of ``folder`` for CPU (probe_fusion.each_case): {"layers": [[name,
    layerType, runtimePrecision, outputPrecisions, originalLayersNames, input precisions], ...]}
    or "load: error"."""
    import platform
    from importlib.metadata import version

    import openvino as ov

    sys.path.insert(0, HERE)
    import probe_fusion  # the standard library alone at import

    core = ov.Core()
    cpu = core.get_property("CPU", "FULL_DEVICE_NAME")

    def run(case: str):
        try:
            compiled = core.compile_model(core.read_model(os.path.join(folder, f"{case}.onnx")), "CPU")
            return {"layers": runtime_layers(compiled)}
        except Exception as exc:  # the runtime refused the model; its message after the source line
            lines = [s.strip() for s in str(exc).splitlines()
                     if s.strip() and not s.startswith("Exception from")]
            said = "; ".join(lines[:2]) if lines else type(exc).__name__
            return "load: " + re.sub(r"_\d{3,}", "_N", said)[:160]  # no node numbers: one text a key

    probe_fusion.each_case(folder, f"{version('openvino')} {platform.machine()} {cpu}", run)


def runtime_layers(compiled) -> list[list[str]]:
    """[name, layerType, runtimePrecision, outputPrecisions, originalLayersNames, the input
    precisions joined by ","] of each layer of an openvino CompiledModel's runtime graph, but
    constants, inputs and outputs."""
    fields = ("layerType", "runtimePrecision", "outputPrecisions", "originalLayersNames")
    out = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        rt = op.get_rt_info()
        row = [rt[k].astype(str) if k in rt else "" for k in fields]
        if row[0] not in SKIP:
            ins = ",".join(i.get_element_type().get_type_name() for i in op.inputs())
            out.append([op.get_friendly_name(), *row, ins])
    return out


# ---- reading the runtime graph (qlin's venv) --------------------------------------------------
# the CPU plugin's layer types an op of a group becomes (src/plugins/intel_cpu/src/cpu_types.cpp)
LAYER_TYPES = {
    "Conv": ("Convolution",), "MatMul": ("FullyConnected", "MatMul"), "Gemm": ("FullyConnected", "MatMul"),
    "Add": ("Eltwise",), "Mul": ("Eltwise",), "AveragePool": ("Pooling",), "MaxPool": ("Pooling",),
    "GlobalAveragePool": ("Reduce", "Pooling"), "Sigmoid": ("Eltwise",), "LeakyRelu": ("Eltwise",),
    "Softmax": ("Softmax", "SoftMax"), "Concat": ("Concatenation",), "Transpose": ("Transpose",),
    "Reshape": ("Reshape",),
}
NOT_FOUND = "not in the runtime graph"


def layer_of(original, layers: list, name: str) -> list | None:
    """The runtime layer holding the node ``name`` of ``original``: the one whose name or
    original names hold the node's name, else its output's name, else a name "<name>/..." (a
    Conv's "<name>/WithoutBiases"); else, as openvino renames a layer after the Q/DQ it absorbs
    and merges equal ops (the two groups of a shared DequantizeLinear), the one layer of the
    op's type (``LAYER_TYPES``) that reads no constant alone; else a snippets Subgraph that
    absorbed an elementwise op; else the layer of what openvino folded it with (``_folded_into``:
    an Add / Mul of a constant and the op before it); None where no layer holds it."""
    node = next(n for n in original.graph.node if n.name == name)
    outs = set(node.output)
    best = None
    for layer in layers:
        if layer[0].endswith("/transpose_b"):  # a MatMul's or Gemm's weight transposed, not the op
            continue
        held = {layer[0], *(layer[4].split(",") if layer[4] else ())}
        rank = (0 if name in held else 1 if outs & held
                else 2 if any(h.startswith(name + "/") for h in held) else None)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, layer)
    if best is not None:
        return best[1]
    kinds = LAYER_TYPES.get(node.op_type, ())
    typed = [la for la in layers if la[1] in kinds and not la[0].endswith("/transpose_b")]
    if len({(la[1], la[2], la[5]) for la in typed}) == 1:
        return typed[0]
    if kinds == ("Eltwise",):
        sub = next((la for la in layers if la[1] == "Subgraph"), None)
        if sub is not None:
            return sub
    return _folded_into(original, layers, node)


def _folded_into(original, layers: list, node) -> list | None:
    """Where no layer names the node: the layer of what openvino folded it with, named after
    that alone. For an Add / Mul of a constant, the layer holding a DequantizeLinear around it,
    of its non-constant input or after its output's QuantizeLinear (from 2026.1 a 16-bit Add /
    Mul is folded into the Convolution / FullyConnected before it, named after the output's
    DequantizeLinear); for a Conv / MatMul / Gemm, the layer holding the Add / Mul that reads its
    output, directly or through Q -> DQ (its bias: the FullyConnected named after the Add);
    else None."""
    readers: dict = {}
    for n in original.graph.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)

    def through_q(y: str) -> list:  # the nodes reading y, or reading the DQ after y's Q
        out = []
        for r in readers.get(y, []):
            if r.op_type != "QuantizeLinear":
                out.append(r)
                continue
            for d in readers.get(r.output[0], []):
                out += readers.get(d.output[0], []) if d.op_type == "DequantizeLinear" else []
        return out

    if node.op_type in ("Add", "Mul"):
        made = {o: n for n in original.graph.node for o in n.output}
        names = [x for x in node.input if x in made and made[x].op_type == "DequantizeLinear"
                 and made[x].input[0] in made]
        names += [d.output[0] for q in readers.get(node.output[0], []) if q.op_type == "QuantizeLinear"
                  for d in readers.get(q.output[0], []) if d.op_type == "DequantizeLinear"]
    elif node.op_type in ("Conv", "MatMul", "Gemm"):
        names = [r.name for r in through_q(node.output[0]) if r.op_type in ("Add", "Mul")]
    else:
        return None
    for x in names:
        found = next((la for la in layers if x in {la[0], *(la[4].split(",") if la[4] else ())}), None)
        if found is not None:
            return found
    return None


def outcome_of(original, layers: list, name: str) -> str:
    """What the node ``name`` ran as: "runs in u8 (Convolution)" where its layer's runtime
    precision and its first input are of an integer type and the layer is not a snippets
    Subgraph (whose kernel converts its inputs to f32 and computes in float), else "float";
    NOT_FOUND where no layer holds it."""
    from qlin_cli.targets import fusion

    layer = layer_of(original, layers, name)
    if layer is None:
        return NOT_FOUND
    kind, precision, first = layer[1], layer[2], layer[5].split(",")[0]
    if precision in INTEGER_PRECISIONS and first in INTEGER_PRECISIONS and kind != "Subgraph":
        return f"{fusion.RUNS_IN}{precision} ({kind})"
    return fusion.FLOAT


def measure(python: str, folder: str, specs: list[dict] | None = None) -> tuple[str, dict, list]:
    """("RELEASE MACHINE CPU", {key: (outcome, Group)}, conflicts) of every group of ``specs``
    (probe_fusion.matrix() by default)."""
    import probe_fusion

    ids, models = probe_fusion.write_cases(folder, specs)
    release, said = probe_fusion.run_all(python, folder, os.path.join(HERE, "probe_fusion_openvino.py"))
    found: dict = {}
    conflicts = []
    for cid in ids:
        result = said.get(cid, "crash: no result")
        for name, g in probe_fusion.measured_groups(models[cid]):
            done = outcome_of(models[cid], result["layers"], name) if isinstance(result, dict) else result
            have = found.get(g.text)
            if have is not None and have[0] != done:
                conflicts.append((g.text, have[0], done, cid))
            found.setdefault(g.text, (done, g))
    return release, found, conflicts


def _write(path, data: dict, version: str, machine: str, cpu: str, found: dict, other: str) -> None:
    import probe_fusion

    from qlin_cli.targets import data_files, fusion

    releases = dict(data["releases"])
    releases[version] = {"command": "python tools/probe_fusion_openvino.py" + other, "cpu": cpu,
                         "groups": len(probe_fusion.matrix()), "keys": len(found),
                         "machine": machine,
                         "how": "read_model + compile_model(CPU), default properties; the runtime model's "
                                "rt_info runtimePrecision of the layer holding the op"}
    data_files.write(path, fusion.dumps(releases, probe_fusion.merged(data, version, found), "openvino"))


def main(argv=None) -> int:
    import collections
    import tempfile
    from pathlib import Path

    sys.path.insert(0, HERE)
    import probe_fusion

    args = probe_fusion.arguments(argv, "openvino", __doc__)
    if args.inside:
        inside(args.inside)
        return 0
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root), HERE]
    from qlin_cli.targets import data_files, fusion

    with tempfile.TemporaryDirectory(prefix="qlin-fusion-ov-") as tmp:
        release, found, conflicts = measure(args.python, tmp)
    version, machine, cpu = release.split(" ", 2)
    counts = collections.Counter(done for done, _ in found.values())
    print(f"openvino {version} ({machine}, {cpu}): {len(found)} keys: "
          + ", ".join(f"{n} {k}" for k, n in counts.most_common()))
    path = root / "qlin_cli" / "targets" / "data" / fusion.FILES["openvino"]
    data = data_files.load(path) or {"releases": {}, "groups": {}}
    status = probe_fusion.checked("openvino", version, found, conflicts, data, path.name, args.check)
    if status is not None:
        return status
    other = " --python VENV/bin/python" if args.python != sys.executable else ""
    _write(path, data, version, machine, cpu, found, other)
    print(f"wrote {path.name}.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
