"""The `qlin` command line. Heavy modules are imported inside the commands."""

from __future__ import annotations

import os
import sys

import click

from .errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK


def _codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


def expand_paths(paths: tuple[str, ...]) -> list[str]:
    """Files as given; directories become their *.onnx files, recursively, sorted."""
    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            inside = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                inside.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".onnx"))
            if not inside:
                found.append(p)  # reported as "a directory with no .onnx files"
            found.extend(inside)
        else:
            found.append(p)
    return found


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="qlin", prog_name="qlin")
def main() -> None:
    """qlin: check and convert QuantizeLinear / DequantizeLinear in ONNX models."""


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]),
              default="text", show_default=True, help="Report format.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only these rule codes or prefixes (comma-separated, e.g. QL4,QL501).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Skip these rule codes or prefixes (comma-separated).")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default=None,
              help="Lowest severity that makes the exit status 1 [default: error, or fail-on "
                   "in [tool.qlin]].")
@click.option("--no-config", is_flag=True, help="Ignore [tool.qlin] in pyproject.toml.")
def check(paths, fmt, select, ignore, fail_on, no_config):
    """Check every Q/DQ node of the models at PATHS (files or folders of *.onnx).

    Settings come from [tool.qlin] in the nearest pyproject.toml above the working
    directory; flags given here win. Exit status: 0 nothing at or above --fail-on,
    1 findings at or above it, 2 a file could not be checked.
    """
    from .check.engine import FileResult, check_file, selected, summarize
    from .config import Config, ConfigError, load_config
    from .progress import track

    try:
        cfg = Config() if no_config else load_config()
    except (ConfigError, OSError) as e:
        click.echo(f"qlin: error: {e}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    select_codes = _codes(select) or cfg.select
    ignore_codes = _codes(ignore) if ignore else cfg.ignore
    _validate_codes((select_codes or []) + ignore_codes)
    fail_on = fail_on or cfg.fail_on
    files = expand_paths(paths)
    results = []
    for path in track(files, len(files), "Checking models"):
        if os.path.isdir(path):
            r = FileResult(path, error="directory holds no .onnx files")
        else:
            r = check_file(path, select_codes, ignore_codes)
            extra = cfg.ignored_for(path)
            if extra:
                r.diagnostics = [d for d in r.diagnostics if selected(d.code, None, extra)]
        if r.error is not None:
            click.echo(f"qlin: error: {r.path}: {r.error}", err=True)
        results.append(r)
    summary = summarize(results)
    _report(results, summary, fmt)
    if any(r.error is not None for r in results):
        sys.exit(EXIT_BAD_INPUT)
    failing = summary["errors"] + (summary["warnings"] if fail_on == "warning" else 0)
    sys.exit(EXIT_FINDINGS if failing else EXIT_OK)


def _report(results, summary, fmt) -> None:
    if fmt == "json":
        from .report.json_report import render

        click.echo(render(results, summary))
    elif fmt == "sarif":
        from . import rules
        from .report.sarif import render

        click.echo(render(results, rules.all_rules()))
    elif fmt == "github":
        from .report.github import render

        text = render(results)
        if text:
            click.echo(text)
    else:
        from rich.console import Console

        from .report.text import render

        render(results, summary, Console(highlight=False))


def _validate_codes(codes: list[str]) -> None:
    from . import rules

    known = [r.code for r in rules.all_rules()]
    for c in codes:
        if not any(k.startswith(c) for k in known):
            raise click.BadParameter(f"{c!r} matches no rule code (see `qlin rules`)")


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def list_rules(fmt):
    """List every rule with its code, name, severity and summary."""
    from . import rules

    items = [
        {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary}
        for r in rules.all_rules()
    ]
    if fmt == "json":
        import json

        click.echo(json.dumps(items, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(show_edge=False, header_style="bold")
    for col in ("code", "name", "severity", "summary"):
        table.add_column(col)
    for it in items:
        table.add_row(it["code"], it["name"], it["severity"], it["summary"])
    Console().print(table)


@main.command("rule")
@click.argument("code")
def show_rule(code):
    """Show the documentation of rule CODE (what it checks, why, example, fix)."""
    from . import rules

    rule = rules.get(code)
    if rule is None:
        click.echo(f"qlin: error: no rule {code!r} (see `qlin rules`)", err=True)
        sys.exit(EXIT_BAD_INPUT)
    from rich.console import Console
    from rich.markdown import Markdown

    text = f"# {rule.code} {rule.name} ({rule.severity})\n\n{rule.summary}\n\n{rule.doc()}"
    console = Console()
    if console.is_terminal:
        console.print(Markdown(text))
    else:
        click.echo(text)


from .convert_command import convert  # noqa: E402

main.add_command(convert)
