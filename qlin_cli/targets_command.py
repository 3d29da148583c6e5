"""The `qlin targets` command: what each deployment target accepts, one row per target."""

from __future__ import annotations

import json

import click


@click.command("targets")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def targets(fmt):
    """The capability matrix: per target, the opsets and IR it loads, the domains, types
    and granularities it runs, and where each fact comes from (docs/targets.md)."""
    from . import output
    from .report.safe import printable
    from .targets import predict

    rows = predict.capability_matrix()
    with output.report():
        if fmt == "json":
            click.echo(json.dumps({"version": 1, "targets": rows}, indent=2))
            return
        from rich.console import Console
        from rich.table import Table

        table = Table(title="qlin targets", show_lines=True)
        table.add_column("target", no_wrap=True)
        for col in ("opsets", "max IR", "domains", "quantized types", "granularities", "measured here"):
            table.add_column(col)
        for r in rows:
            table.add_row(printable(r["name"]), _range(r), _cell(r.get("max_ir")), _cell(r["domains"]),
                          _cell(r["quantized_types"]), _cell(r["granularities"]),
                          "yes" if r.get("measured") else "documented")
        Console(highlight=False).print(table)
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
