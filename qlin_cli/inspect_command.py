"""`qlin inspect MODEL`: the model's quantization scheme at a glance.

Opset imports and IR version; the quantization nodes counted by op (with domain and
schema version), by quantized type, granularity and block size; statistics of the
constant scales (each scale tensor once, however many nodes read it); and, per
deployment target, what it reports on the model (targets/predict.py ``findings``) and
whether `qlin convert --target` removes it. Text (rich tables) or ``--format json``.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

import click


@click.command("inspect")
@click.argument("model_path", metavar="MODEL", type=click.Path(readable=False))  # one line
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--target", "targets", multiple=True, metavar="NAMES",
              help="Only these targets (comma-separated) [default: every target, see `qlin targets`].")
def inspect_model(model_path, fmt, targets):
    """The quantization scheme of MODEL: opsets, IR, counts by op, domain, version, type,
    granularity and block size, scale statistics, and what each target needs."""
    from . import output
    from .errors import EXIT_BAD_INPUT, QlinError, unexpected

    try:
        doc = describe(model_path, _names(targets))
    except QlinError as e:
        output.error_at(model_path, e.reason)
        sys.exit(EXIT_BAD_INPUT)
    except LookupError as e:
        output.error(f"--target: {e}")
        sys.exit(EXIT_BAD_INPUT)
    except Exception as e:  # never a traceback
        output.error_at(model_path, unexpected(e))
        sys.exit(EXIT_BAD_INPUT)
    with output.report():
        if fmt == "json":
            from .report.safe import unicode_tree

            click.echo(json.dumps(unicode_tree(doc), indent=2))
        else:
            _render(doc)


def _names(values) -> list[str] | None:
    from .targets import registry

    return registry.split_names(values) or None


def describe(path: str, target_names: list[str] | None = None) -> dict:
    """The scheme of the model at ``path`` as a JSON-ready dict (version 1)."""
    from . import schema
    from .model.analysis import analyze
    from .model.load import load_model
    from .model.safety import validate_model_files
    from .targets import registry

    names = target_names or registry.names()
    for n in names:
        registry.get(n)  # an unknown name raises LookupError before anything is read
    model = load_model(path, weights=False)
    base_dir = os.path.dirname(os.path.abspath(path))
    validate_model_files(model, base_dir, path)
    a = analyze(model, base_dir)  # one analysis: the counts and every target's findings
    return {
        "version": 1,
        "path": path,
        "ir_version": model.ir_version,
        "opset_imports": [{"domain": schema.domain_name(o.domain), "version": o.version}
                          for o in model.opset_import],
        **_scheme(a),
        "targets": [_target_needs(a, name) for name in names],
    }


def _scheme(a) -> dict:
    """The counts of the model's quantization nodes: ops, types, granularity, block sizes,
    and the statistics of the scales they read (each scale tensor once)."""
    from . import schema

    ops: Counter = Counter()
    types: Counter = Counter()
    granularity: Counter = Counter()
    blocks: Counter = Counter()
    scales: dict = {}  # (body path, scale name) -> its values
    nodes = 0
    for body, index, node in a.nodes():
        facts = a.facts(body, index)
        if facts is None:  # an op qlin has no schema for
            continue
        nodes += 1
        spec = facts.spec
        ops[(node.op_type, facts.domain_name, spec.since if spec else None)] += 1
        if not schema.is_linear(spec):
            continue
        types[facts.quant_type or "unknown"] += 1
        granularity[facts.granularity or "unknown"] += 1
        if facts.block_size:
            blocks[facts.block_size] += 1
        _read_scale(a, body, facts, scales)
    return {
        "nodes": nodes,
        "ops": [{"op_type": op, "domain": dom, "version": ver, "count": n}
                for (op, dom, ver), n in sorted(ops.items(), key=lambda kv: (-kv[1], str(kv[0])))],
        "quantized_types": dict(sorted(types.items())),
        "granularity": dict(sorted(granularity.items())),
        "block_sizes": {str(k): v for k, v in sorted(blocks.items())},
        "scales": _scale_stats(list(scales.values())),
    }


def _read_scale(a, body, facts, scales: dict) -> None:
    """Keep the values of the node's scale in ``scales``, once per (body, name)."""
    import numpy as np

    from .model.tensors import read_value

    i = facts.scale_index
    if i is None or not facts.present_at(i):
        return
    key = (body.path, facts.inputs[i])
    if key not in scales:
        t = body.scope.find_value(key[1])
        v = read_value(t, a.base_dir) if t is not None else None
        if v is not None:
            scales[key] = np.asarray(v, np.float64).reshape(-1)


def _target_needs(a, name: str) -> dict:
    """What one target says of the model: counts by severity and code, and whether
    `qlin convert --target` helps."""
    from .targets import predict

    found = predict.findings_in(a, [name])
    by_code = Counter((f.code, f.severity) for f in found)
    return {
        "target": name,
        "errors": sum(1 for f in found if f.severity == "error"),
        "warnings": sum(1 for f in found if f.severity == "warning"),
        "codes": [{"code": c, "severity": s, "count": n} for (c, s), n in sorted(by_code.items())],
        "convert_helps": any(f.convertible for f in found),
        # the QDQ groups the release fuses into integer kernels, and those it runs in float
        # (QT501), where its fusion was measured; null elsewhere
        "groups": predict.groups_in(a, name),
    }


def _scale_stats(arrays) -> dict:
    import numpy as np

    if not arrays:
        return {"tensors": 0, "values": 0}
    allv = np.concatenate(arrays)
    finite = allv[np.isfinite(allv)]
    positive = finite[finite > 0]
    out = {"tensors": len(arrays), "values": int(allv.size),
           "non_finite": int(allv.size - finite.size), "not_positive": int(finite.size - positive.size)}
    if positive.size:
        out.update({"min": float(positive.min()), "median": float(np.median(positive)),
                    "max": float(positive.max()),
                    "max_over_min": float(positive.max() / positive.min())})
    return out


def _render(doc: dict) -> None:
    """The scheme as text: a header line, then one table per part (plain columns in a
    pipe or a file, report/table.py)."""
    from .report.safe import printable
    from .report.table import show

    imports = ", ".join(f"{o['domain']} {o['version']}" for o in doc["opset_imports"])
    click.echo(printable(f"{doc['path']}: IR {doc['ir_version']}, opsets {imports}; {doc['nodes']} "
                         f"quantization node{'' if doc['nodes'] == 1 else 's'}"))
    show(["op", "domain", "version", "count"],
         [[printable(o["op_type"]), printable(o["domain"]), str(o["version"] or "?"), str(o["count"])]
          for o in doc["ops"]], title="ops", right=("version", "count"))
    # one row per value: a type, a granularity and a block size side by side would read as
    # one kind of node
    scheme = [[label, str(k), str(v)] for label, d in
              (("quantized type", doc["quantized_types"]), ("granularity", doc["granularity"]),
               ("block size", doc["block_sizes"])) for k, v in d.items()]
    if scheme:
        show(["property", "value", "nodes"], scheme, title="Q/DQ scheme", right=("nodes",))
    s = doc["scales"]
    if s["tensors"]:
        line = f"scales: {s['tensors']} constant tensors, {s['values']} values"
        if "min" in s:
            line += (f"; min {s['min']:.6g}, median {s['median']:.6g}, max {s['max']:.6g} "
                     f"(max/min {s['max_over_min']:.3g})")
        if s["non_finite"] or s["not_positive"]:
            line += f"; {s['non_finite']} not finite, {s['not_positive']} zero or negative"
        click.echo(line)
    rows = [[n["target"], str(n["errors"]), str(n["warnings"]),
             ", ".join(f"{c['code']} x{c['count']}" for c in n["codes"]) or "runs as is",
             _groups(n.get("groups")), _helps(n)] for n in doc["targets"]]
    show(["target", "errors", "warnings", "codes", "QDQ groups in integer", "qlin convert --target helps"],
         rows, title="targets")


def _groups(g: dict | None) -> str:
    """The "QDQ groups in integer" cell: "2 of 7 (float: Conv x3, MatMul x2)", or - where
    the release's fusion was not measured or the model has no group."""
    from .report.safe import printable  # (op types come from the model)

    if not g:
        return "-"
    total = g["integer"] + g["float"] + g["not_measured"]
    if not total:
        return "-"
    cell = f"{g['integer']} of {total}"
    if g["float_ops"]:
        cell += " (float: " + ", ".join(f"{printable(op)} x{n}" for op, n in g["float_ops"].items()) + ")"
    if g["not_measured"]:
        cell += f", {g['not_measured']} not measured"
    return cell


def _helps(row: dict) -> str:
    """The "qlin convert --target helps" cell: yes, no, or - where there is nothing to help."""
    if row["convert_helps"]:
        return "yes"
    return "no" if row["errors"] or row["warnings"] else "-"
