"""Write docs/opsteps.md: every version step of every ai.onnx op from opset 10 to the newest.

For each step the table gives what changed (from qlin_cli.convert.opsteps) and whether
onnx.version_converter.convert_version takes a one-node model of the op across the step,
up (opset new-1 -> new) and down (new -> new-1). The one-node models are built from the
schema: float tensors of shape (1, 4, 8, 8) wherever a float is allowed, required attributes
with plausible values, and a few per-op hints (_hints) where a valid model needs particular
inputs. Every model is checked (onnx.checker, full shape inference) before it is converted;
one that cannot be built valid is marked "not measured". A converted model counts as "ok"
only when it passes the same check.

    python tools/gen_opsteps_doc.py           measure everything and write the file
    python tools/gen_opsteps_doc.py --reuse   keep the measurements already in the file,
                                              rewrite everything else (fast)
    python tools/gen_opsteps_doc.py --check   exit 1 when the file is not what --reuse writes
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import onnx  # noqa: E402
from onnx import TensorProto, checker, helper, shape_inference, version_converter  # noqa: E402

from qlin_cli.convert import opsteps  # noqa: E402

DOC = os.path.join(ROOT, "docs", "opsteps.md")
SHAPE = [1, 4, 8, 8]
VARIADIC = 2  # how many values a variadic input or output gets
TYPE_PREFERENCE = ("tensor(float)", "tensor(int64)", "tensor(bool)", "tensor(int32)",
                   "tensor(uint8)", "tensor(uint32)", "tensor(uint64)")

# Plausible values for required attributes (a hint may set others).
ATTR_VALUES = {
    "axis": 1, "blocksize": 2, "num_groups": 2, "size": 3, "to": TensorProto.FLOAT,
    "kernel_shape": [2, 2], "pooled_shape": [2, 2], "shape": SHAPE, "axes": [0],
    "pads": [0] * 8, "direction": "LEFT", "fmod": 1,
}


def _hints(op: str, since: int) -> dict:
    """Per-op departures from the generic model: input specs by formal name
    (elem_type, shape, values or None for a graph input; an optional input with a spec is
    included), attributes to set, and output shapes where shape inference gives none."""
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    h: dict = {"inputs": {}, "attrs": {}, "outputs": {}}
    ins, attrs, outs = h["inputs"], h["attrs"], h["outputs"]
    if op in ("Squeeze", "Unsqueeze"):
        if since >= 13:
            ins["axes"] = (i64, [1], [0])
        else:
            attrs["axes"] = [0]
    elif op.startswith("Reduce"):
        if op == "ReduceSum" and since >= 13 or since >= 18:
            ins["axes"] = (i64, [1], [1])
        else:
            attrs["axes"] = [1]
    elif op == "Reshape":
        ins["shape"] = (i64, [2], [1, -1])
    elif op == "Expand":
        ins["shape"] = (i64, [4], SHAPE)
    elif op == "Tile":
        ins["repeats"] = (i64, [4], [1, 1, 1, 1])
    elif op == "ConstantOfShape":
        ins["input"] = (i64, [4], SHAPE)
    elif op == "Split":
        attrs["axis"] = 1
        if since >= 13:
            ins["split"] = (i64, [2], [2, 2])
        else:
            attrs["split"] = [2, 2]
    elif op == "Slice":
        ins.update(starts=(i64, [1], [0]), ends=(i64, [1], [2]), axes=(i64, [1], [1]))
    elif op == "Pad":
        if since >= 11:
            ins["pads"] = (i64, [8], [0, 0, 1, 1, 0, 0, 1, 1])
        else:
            attrs["pads"] = [0, 0, 1, 1, 0, 0, 1, 1]
    elif op == "Clip":
        if since >= 11:
            ins.update(min=(f32, [], [0.0]), max=(f32, [], [6.0]))
        else:
            attrs.update(min=0.0, max=6.0)
    elif op == "Dropout":
        if since >= 12:
            ins["ratio"] = (f32, [], [0.5])
        else:
            attrs["ratio"] = 0.5
    elif op == "TopK":
        ins["K"] = (i64, [1], [2])
    elif op == "Resize":
        ins["scales"] = (f32, [4], [1.0, 1.0, 2.0, 2.0])
        if since >= 11:
            ins["roi"] = (f32, [0], [])
    elif op == "Gather":
        ins["indices"] = (i64, [2], None)
    elif op in ("Conv", "ConvInteger"):
        ins["W"] = (f32, [2, 4, 3, 3], None)
    elif op == "ConvTranspose":
        ins["W"] = (f32, [4, 2, 3, 3], None)
    elif op == "Gemm":
        ins.update(A=(f32, [4, 8], None), B=(f32, [8, 4], None), C=(f32, [4], None))
    elif op in ("BatchNormalization", "InstanceNormalization"):
        for n in ("scale", "B", "mean", "var", "input_mean", "input_var"):
            ins[n] = (f32, [4], None)
    elif op == "GroupNormalization":
        width = [4] if since >= 21 else [2]
        ins.update(scale=(f32, width, None), bias=(f32, width, None))
        outs["Y"] = SHAPE
    elif op == "Einsum":
        attrs["equation"] = "abcd,abde->abce"
    elif op == "Constant":
        attrs["value"] = helper.make_tensor("value", f32, [1], [1.0])
    elif op == "OneHot":
        ins.update(indices=(i64, [3], None), depth=(i64, [], [4]), values=(f32, [2], [0.0, 1.0]))
    elif op == "Range":
        ins.update(start=(f32, [], [0.0]), limit=(f32, [], [4.0]), delta=(f32, [], [1.0]))
    elif op == "Compress":
        ins["condition"] = (TensorProto.BOOL, [4], [True, False, True, False])
        attrs["axis"] = 1
        outs["output"] = [1, 2, 8, 8]
    elif op in ("MaxPool", "AveragePool", "LpPool"):
        attrs["kernel_shape"] = [2, 2]
    elif op == "MaxUnpool":
        attrs.update(kernel_shape=[2, 2], strides=[2, 2])
        ins["I"] = (i64, SHAPE, None)
    elif op == "Mod":
        attrs["fmod"] = 1
    elif op == "Concat":
        attrs["axis"] = 1
    elif op in ("GatherND", "ScatterND"):
        ins.update(indices=(i64, [2, 1], None), updates=(f32, [2, 4, 8, 8], None))
    elif op == "ScatterElements" or op == "Scatter":
        ins.update(indices=(i64, [1, 4, 8, 2], None), updates=(f32, [1, 4, 8, 2], None))
    elif op == "GatherElements":
        ins["indices"] = (i64, SHAPE, None)
    elif op == "CumSum":
        ins["axis"] = (i64, [], [1])
    elif op == "RoiAlign":
        ins.update(rois=(f32, [2, 4], None), batch_indices=(i64, [2], None))
    elif op == "NonMaxSuppression":
        ins.update(boxes=(f32, [1, 6, 4], None), scores=(f32, [1, 1, 6], None))
        outs["selected_indices"] = ["n", 3]
    elif op == "ReverseSequence":
        ins["sequence_lens"] = (i64, [4], None)
        attrs.update(batch_axis=1, time_axis=0)
        ins["input"] = (f32, [4, 4, 8, 8], None)
    elif op == "BitShift":
        attrs["direction"] = "LEFT"
    elif op == "DFT":
        ins["input"] = (f32, [1, 8, 1], None)
    elif op in ("LRN",):
        attrs["size"] = 3
    elif op == "GridSample":
        ins["grid"] = (f32, [1, 4, 4, 2], None)
    elif op in ("RNN", "GRU", "LSTM"):
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
        ins.update(X=(f32, [2, 1, 4], None), W=(f32, [1, 3 * gates, 4], None),
                   R=(f32, [1, 3 * gates, 3], None))
        attrs["hidden_size"] = 3
    elif op in ("EyeLike", "Multinomial"):
        ins["input"] = (f32, [4, 4], None)
    elif op == "NegativeLogLikelihoodLoss":
        ins.update(input=(f32, [1, 4, 8], None), target=(i64, [1, 8], None))
    elif op == "MaxRoiPool":
        ins["rois"] = (f32, [2, 5], None)
    return h


class NotBuildable(Exception):
    pass


def _pick_type(allowed: frozenset[str], other: frozenset[str] | None = None) -> int:
    """A type from ``allowed``, one the other side of the step allows too where possible."""
    if other and allowed & other:
        allowed = allowed & other
    for t in TYPE_PREFERENCE:
        if t in allowed:
            return _elem(t)
    tensors = sorted(t for t in allowed if t.startswith("tensor("))
    if not tensors:
        raise NotBuildable(f"no tensor type among {sorted(allowed)[:3]}")
    return _elem(tensors[0])


def _elem(type_str: str) -> int:
    return getattr(TensorProto, type_str[len("tensor("):-1].upper())


def _attr_value(name: str, kind: str):
    if name in ATTR_VALUES:
        return ATTR_VALUES[name]
    return {"INT": 1, "FLOAT": 1.0, "INTS": [1]}.get(kind, None)


def build(op: str, since: int, opset: int, other: int | None = None) -> onnx.ModelProto:
    """A valid one-node model of ``op`` (schema ``since``) at ``opset``, or NotBuildable.
    Types are picked from those the ``other`` schema allows too where possible, so that a
    conversion measures the adapter rather than a type the target lacks."""
    schema = opsteps._table()[op][since]
    there = opsteps._table()[op][other] if other is not None else None
    other_types = {}
    if there is not None:
        cons_there = {t.type_param_str: frozenset(t.allowed_type_strs) for t in there.type_constraints}
        other_types = {k: cons_there.get(p.type_str, frozenset([p.type_str]))
                       for k, p in enumerate(there.inputs)}
    hints = _hints(op, since)
    attrs = {}
    for name, a in schema.attributes.items():
        if name in hints["attrs"]:
            attrs[name] = hints["attrs"][name]
        elif a.required:
            value = _attr_value(name, a.type.name)
            if value is None:
                raise NotBuildable(f"needs a {a.type.name.lower()} attribute '{name}'")
            attrs[name] = value
    cons = {t.type_param_str: frozenset(t.allowed_type_strs) for t in schema.type_constraints}
    chosen: dict[str, int] = {}  # one type per constraint
    graph_inputs, inits, node_inputs = [], [], []
    formal = list(schema.inputs)
    last = max((k for k, p in enumerate(formal)
                if p.option.name != "Optional" or p.name in hints["inputs"]), default=-1)
    for k, p in enumerate(formal[:last + 1]):
        if p.option.name == "Optional" and p.name not in hints["inputs"]:
            node_inputs.append("")
            continue
        allowed = cons.get(p.type_str, frozenset([p.type_str]))
        spec = hints["inputs"].get(p.name)
        if spec is not None and _type_str(spec[0]) not in allowed:
            raise NotBuildable(f"hint type for input '{p.name}' not allowed")
        if spec is None:
            elem = chosen.get(p.type_str) or _pick_type(allowed, other_types.get(k))
            spec = (elem, SHAPE, None)
        if p.type_str in cons:
            chosen.setdefault(p.type_str, spec[0])
        count = VARIADIC if p.option.name == "Variadic" else 1
        for j in range(count):
            name = p.name if count == 1 else f"{p.name}_{j}"
            node_inputs.append(name)
            elem, shape, values = spec
            if values is not None:
                inits.append(helper.make_tensor(name, elem, shape, values))
            else:
                graph_inputs.append(helper.make_tensor_value_info(name, elem, shape))
    outputs, declared = [], []
    for k, p in enumerate(schema.outputs):
        if p.option.name == "Optional" and k > 0:
            break
        count = VARIADIC if p.option.name == "Variadic" else 1
        for j in range(count):
            name = p.name if count == 1 else f"{p.name}_{j}"
            outputs.append(name)
            # the element type where the constraint fixes it; inference adds the rest
            elem = chosen.get(p.type_str) or (_elem(p.type_str) if p.type_str.startswith(
                "tensor(") else None)
            declared.append(helper.make_tensor_value_info(name, elem, hints["outputs"].get(name))
                            if elem else onnx.ValueInfoProto(name=name))
    node = helper.make_node(op, node_inputs, outputs, **attrs)
    graph = helper.make_graph([node], f"{op}_{since}", graph_inputs, declared, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = helper.find_min_ir_version_for([helper.make_opsetid("", opset)])
    try:
        model = shape_inference.infer_shapes(model, strict_mode=True)
        checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001 - onnx raises several C++-backed types
        raise NotBuildable(_short_error(e)) from None
    if any(not o.type.HasField("tensor_type") for o in model.graph.output):
        raise NotBuildable("output type not inferred")
    return model


def _type_str(elem: int) -> str:
    return f"tensor({TensorProto.DataType.Name(elem).lower()})"


def _short_error(e: Exception) -> str:
    """The useful tail of an onnx error, without source paths or line numbers."""
    text = " ".join(str(e).split()) or type(e).__name__
    text = text.split("failed: ")[-1]
    text = re.sub(r"\S*/\S+\.(h|cc|cpp|py):\d+:?", "", text)
    text = re.sub(r"\[ShapeInferenceError\]|\[TypeInferenceError\]|Inference error\(s\):", "", text)
    text = re.sub(r"\s+", " ", text).strip(" :")
    if re.match(r"No Adapter (?:From|To) Version", text):
        return "no adapter"
    if re.match(r"Op registered for \w+ is deprecated", text):
        return "the schema is deprecated; the checker rejects the node"
    return text[:90].rstrip() + ("…" if len(text) > 90 else "")


def convert(model: onnx.ModelProto, target: int) -> str:
    """'ok', or what went wrong converting ``model`` to ``target``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = version_converter.convert_version(model, target)
    except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError/ValueError
        return f"fails: {_short_error(e)}"
    out.ir_version = max(out.ir_version,
                         helper.find_min_ir_version_for([helper.make_opsetid("", target)]))
    try:
        checker.check_model(shape_inference.infer_shapes(out, strict_mode=True), full_check=True)
    except Exception as e:  # noqa: BLE001
        return f"fails: result invalid: {_short_error(e)}"
    return "ok"


def measure(op: str, old: int, new: int) -> str:
    """The onnx.version_converter cell for one step: up (new-1 -> new), down (new -> new-1)."""
    res = []
    for direction, since, there, source, target in (("up", old, new, new - 1, new),
                                                    ("down", new, old, new, new - 1)):
        try:
            model = build(op, since, source, there)
        except NotBuildable as e:
            res.append(f"{direction}: not measured ({e})")
            continue
        res.append(f"{direction}: {convert(model, target)}")
    return "; ".join(res)


def measure_all() -> dict[tuple[str, int, int], str]:
    return {(op, a, b): measure(op, a, b) for op, a, b, _ in opsteps.all_steps()}


# ------------------------------------------------------------------------------- the doc ---

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _types_brief(d: opsteps.StepDiff, most: int = 6) -> str:
    bits = []
    for t in d.types:
        listed = [f"+{opsteps._short(x)}" for x in t.added] + [f"-{opsteps._short(x)}" for x in t.removed]
        if len(listed) > most:
            listed = listed[:most] + [f"… ({len(listed) - most} more)"]
        bits.append(f"{t.constraint}: {' '.join(listed)}" if listed else f"{t.constraint} renamed")
    bits.extend(d.regrouped)
    return "; ".join(bits)


def what_changed(d: opsteps.StepDiff) -> str:
    if d.kind == "type-only":
        parts = []
        if d.types or d.regrouped:
            parts.append(_types_brief(d))
        parts.extend(d.same_meaning)
        return "; ".join(parts)
    return d.summary()


def render(measured: dict[tuple[str, int, int], str]) -> str:
    rows = list(opsteps.all_steps())
    newest = opsteps.newest_opset()
    kinds = {k: sum(1 for *_, d in rows if d.kind == k)
             for k in ("type-only", "structural", "semantic", "unclassified")}
    key_ops = {op for op, *_ in rows}
    later = [(op, opsteps.history(op)[0]) for op in opsteps.ops()
             if opsteps.history(op)[0] > opsteps.FIRST_OPSET]
    deprecated = sorted(op for op in opsteps.ops()
                        if opsteps.schema_at(op, newest) is not None
                        and opsteps.schema_at(op, newest).deprecated)
    out = [
        "# ai.onnx version steps, opset 10 to " + str(newest),
        "",
        "<!-- generated by tools/gen_opsteps_doc.py; do not edit by hand -->",
        "",
        f"Generated from onnx {onnx.__version__} (`onnx.defs` knows opsets up to {newest}). "
        "A *step* is the move between two neighbouring versions of one op's schema whose newer "
        "version is above 10. `qlin_cli/convert/opsteps/` classifies each one:",
        "",
        "* **type-only**: only allowed type lists (or which inputs/outputs share a constraint) "
        "differ; a node stays as it is when its types are allowed at the target. Steps where "
        "nothing a node can see differs are listed by hand with the reason the version exists.",
        "* **structural**: inputs, outputs, attributes, defaults or the deprecation flag differ; "
        "the node needs an adapter or a refusal.",
        "* **semantic**: the signature is the same but the meaning changed (hand-written list, "
        "`SEMANTIC_CHANGES`, with the evidence for each). Semantic notes on structural steps are "
        "shown after the structural change.",
        "",
        f"{len(key_ops)} of {len(opsteps.ops())} ops have steps in this range; {len(rows)} steps: "
        f"{kinds['type-only']} type-only, {kinds['structural']} structural, "
        f"{kinds['semantic']} semantic"
        + (f", **{kinds['unclassified']} unclassified**" if kinds["unclassified"] else "") + ".",
        "",
        "The last column says whether `onnx.version_converter.convert_version` takes a one-node "
        "model of the op across the step, up (opset new-1 to new) and down (new to new-1); "
        "\"ok\" means it returned a model that passes `onnx.checker` with full shape inference. "
        "The models are float tensors of shape (1, 4, 8, 8) with required attributes set to "
        "plausible values and per-op hints (`_hints` in the generator); \"not measured\" means "
        "no valid model could be built that way. \"ok\" says nothing about whether the result "
        "computes the same values.",
        "",
        "| op | step | kind | what changed | onnx.version_converter |",
        "|---|---|---|---|---|",
    ]
    for op, a, b, d in rows:
        vc = measured.get((op, a, b), "not measured (no measurement recorded)")
        out.append(f"| {op} | {a} → {b} | {d.kind} | {_cell(what_changed(d))} | {_cell(vc)} |")
    out += [
        "",
        "## Ops with no schema at opset 10",
        "",
        "A node of one of these cannot go below the opset that introduced it.",
        "",
        ", ".join(f"{op} ({since})" for op, since in later) + ".",
        "",
        f"## Ops deprecated at opset {newest}",
        "",
        (", ".join(deprecated) if deprecated else "none") + ".",
        "",
    ]
    return "\n".join(out)


_ROW = re.compile(r"^\| (\w+) \| (\d+) → (\d+) \| [^|]* \| (?:[^|]|\\\|)* \| (.*) \|$")


def parse_measurements(text: str) -> dict[tuple[str, int, int], str]:
    """The onnx.version_converter cells of an existing doc, keyed like measure_all()."""
    found = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            found[(m.group(1), int(m.group(2)), int(m.group(3)))] = m.group(4).replace("\\|", "|")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reuse", action="store_true", help="keep the measurements in the doc")
    ap.add_argument("--check", action="store_true", help="exit 1 if the doc is out of date")
    args = ap.parse_args(argv)
    current = open(DOC, encoding="utf-8").read() if os.path.exists(DOC) else ""
    if args.check or args.reuse:
        text = render(parse_measurements(current))
    else:
        text = render(measure_all())
    if args.check:
        if text != current:
            print("docs/opsteps.md is out of date: run python tools/gen_opsteps_doc.py",
                  file=sys.stderr)
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
