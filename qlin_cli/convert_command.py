"""The `qlin convert` command. Heavy modules are imported inside the function."""

from __future__ import annotations

import sys

import click

from .errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK
from .schema.ops import DOMAIN_NAMES

DOMAINS = tuple(DOMAIN_NAMES.values())


@click.command("convert")
@click.argument("model", type=click.Path())
@click.option("--to-opset", "to_opset", type=int, required=True, metavar="N",
              help="Target ai.onnx opset (10 to the newest onnx.defs knows).")
@click.option("--to-domain", type=click.Choice(DOMAINS), default=None,
              help="Move every Q/DQ node to this domain (default: each keeps its own).")
@click.option("-o", "--output", type=click.Path(), default=None, help="Where to write the result.")
@click.option("--in-place", is_flag=True, help="Overwrite MODEL itself.")
@click.option("--ir-version", type=int, default=None,
              help="IR version to write (default: the lowest that carries the result).")
@click.option("--lower", is_flag=True,
              help="Rewrite nodes the target cannot express into primitive ops, where proven exact.")
@click.option("--dry-run", is_flag=True, help="Report what would change or be refused; write nothing.")
@click.option("--no-verify", is_flag=True, help="Skip the bit-for-bit proof of each rewrite.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def convert(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, no_verify, fmt):
    """Convert MODEL's Q/DQ nodes to another ai.onnx opset and/or domain.

    Exit status: 0 converted (or would be, with --dry-run), 1 some node cannot be
    expressed in the target (nothing written), 2 bad input.
    """
    import os

    from .errors import QlinError

    if in_place and output:
        _fail("--in-place and -o", "give one of them, not both")
    if in_place:
        output = model
    if not output and not dry_run:
        _fail("-o", "give an output path (-o OUT), --in-place or --dry-run")
    try:
        from .convert import write
        from .convert.report import render_json, render_text
        from .convert.run import Options, convert_model
        from .model.load import load_model
        from .model.safety import validate_model_files

        if output and not dry_run:
            write.check_target(output, model, in_place)
        proto = load_model(model)
        base_dir = os.path.dirname(os.path.abspath(model))
        validate_model_files(proto, base_dir, model)
        if ir_version is not None and ir_version < 3:
            raise QlinError("--ir-version", f"{ir_version} is below 3, the first IR with opsets")
        opts = Options(to_opset, to_domain, ir_version, lower, not no_verify)
        from .progress import Meter

        with Meter("verifying", enabled=fmt == "text") as progress:
            result = convert_model(proto, base_dir, opts, progress, source=model)
        written = None
        if result.model is not None and not dry_run:
            write.write_model(result.model, base_dir, output, source=model, in_place=in_place)
            written = output
    except QlinError as e:
        click.echo(f"qlin: error: {e}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as e:  # never a traceback; nothing was written (write_model cleans up)
        from .errors import unexpected

        click.echo(f"qlin: error: {model}: {unexpected(e)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if fmt == "json":
        click.echo(render_json(model, written, result, dry_run))
    else:
        render_text(model, written, result, dry_run)
    sys.exit(EXIT_FINDINGS if result.refused else EXIT_OK)


def _fail(what, why):
    click.echo(f"qlin: error: {what}: {why}", err=True)
    sys.exit(EXIT_BAD_INPUT)
