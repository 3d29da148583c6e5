"""The `qlin targets` command: what each deployment target accepts, one row per target."""

from __future__ import annotations

import json

import click


@click.command("targets")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--versions", "runtime", type=click.Choice(["onnxruntime", "openvino"]), default=None,
              help="The features of every measured version of RUNTIME, oldest first.")
def targets(fmt, runtime):
    """The capability matrix: per target, the opsets and IR it loads, the domains, types
    and granularities it runs, and where each fact comes from (docs/targets.md). With
    --versions, one row per measured version of a runtime (`--target onnxruntime@1.20`)."""
    from . import output
    from .report.safe import printable
    from .targets import predict

    if runtime is not None:
        _versions(runtime, fmt)
        return
    rows = predict.capability_matrix()
    with output.report():
        if fmt == "json":
            click.echo(json.dumps({"version": 1, "targets": rows}, indent=2))
            return
        from .report.table import show

        show(["target", "opsets", "max IR", "domains", "quantized types", "granularities", "measured here"],
             [[printable(r["name"]), _range(r), _cell(r.get("max_ir")), _cell(r["domains"]),
               _cell(r["quantized_types"]), _cell(r["granularities"]),
               "yes" if r.get("measured") else "documented"] for r in rows])
        click.echo("Sources of every fact: qlin targets --format json, docs/targets.md")


def _range(row: dict) -> str:
    lo, hi = row.get("min_opset"), row.get("max_opset")
    if lo is None and hi is None:
        return "-"
    return f"{lo if lo is not None else ''}..{hi if hi is not None else ''}"


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return "\n".join(map(str, value))
    return str(value)


def _versions(runtime: str, fmt: str) -> None:
    """The feature matrix by version: plain columns (JSON with --format json)."""
    from . import output
    from .targets import versions

    rows = versions.matrix(runtime)
    with output.report():
        if fmt == "json":
            click.echo(json.dumps({"version": 1, "runtime": runtime, "versions": rows}, indent=2))
            return
        types = [t for t in versions.QDQ_TYPES if any(t in r["qdq_types"] for r in rows)]
        families = list(dict.fromkeys(f for r in rows for f in r["families"]))
        divided, computed = list(rows[0]["divides_in"]), list(rows[0]["computes"])
        header = ["version", "opset", "IR", *types, "DequantizeLinear-21 (blocked)", *families,
                  *(f"divides {d} in" for d in divided), *computed]
        table = [header] + [[r["version"], _limit(r["max_opset"]), _limit(r["max_ir"]),
                             *("yes" if t in r["qdq_types"] else "-" for t in types),
                             "yes" if r["blocked"] else "-",
                             *("yes" if f in r["families"] else "-" for f in families),
                             *(r["divides_in"][d] for d in divided),
                             *(r["computes"][c] for c in computed)] for r in rows]
        from .report.table import plain

        # one line per feature, one column per version; a value wider than a version number
        # is a mark ("[1]") explained under the table, so 15 releases fit in 200 columns
        legend: dict[str, str] = {}
        for row in table[1:]:
            for col in range(1, len(row)):
                if len(str(row[col])) > WIDEST:
                    row[col] = legend.setdefault(str(row[col]), f"[{len(legend) + 1}]")
        lines = [[table[0][col]] + [row[col] for row in table[1:]] for col in range(len(header))]
        plain(lines[0], lines[1:])
        for value, mark in legend.items():
            click.echo(f"{mark} {value}")
        click.echo(f"Each column measured from that release (tools/gen_target_data.py); "
                   f"check with --target {runtime}@VERSION")
        if any(r["max_opset"] is None or r["max_ir"] is None for r in rows):
            from .targets.probe_keys import PROBED_IR, PROBED_OPSETS

            click.echo(f"all: every probed version (opsets {PROBED_OPSETS[0]}..{PROBED_OPSETS[-1]}, "
                       f"IR {PROBED_IR[0]}..{PROBED_IR[-1]}) loads")


WIDEST = 8  # the widest value --versions writes in its columns (a release number: 2026.4.1)


def _limit(value: int | None) -> str:
    return "all" if value is None else str(value)
