"""The `qlin convert` command. Heavy modules are imported inside the function."""

from __future__ import annotations

import sys

import click

from .errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK
from .schema.ops import DOMAIN_NAMES

DOMAINS = tuple(DOMAIN_NAMES.values())


@click.command("convert")
@click.argument("model", type=click.Path())
@click.option("--to-opset", "to_opset", type=int, default=None, metavar="N",
              help="Target ai.onnx opset (10 to the newest onnx.defs knows) [default: the model's, "
                   "with --to-domain].")
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
@click.option("--quark-axis", "vendor_axis", type=click.IntRange(-8, 8), default=None, metavar="N",
              help="The axis of per-axis com.amd.quark nodes that omit it (the page says 1, Quark's "
                   "kernel uses 0); without it such nodes are refused.")
@click.option("--target", default=None, metavar="NAME",
              help="Choose the opset, IR, domain and --lower so that this runtime runs the model "
                   "(see `qlin targets`); the result is checked against the target.")
@click.option("-v", "--verbose", is_flag=True, help="One line per node, not only the summary.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def convert(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, no_verify,
            vendor_axis, target, verbose, fmt):
    """Convert MODEL to another ai.onnx opset and/or move its Q/DQ nodes to another domain.

    MODEL is first checked with the rules of `qlin check`: a model with errors is
    refused. Exit status: 0 converted (or would be, with --dry-run), 1 the model has
    errors or some node cannot be expressed in the target (nothing written), 2 bad
    input, 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (the old output, or none,
    is left as it was).
    """
    from . import output as out
    from .errors import QlinError

    output = _check_options(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run,
                            target)
    try:
        result, written = _convert(model, to_opset, to_domain, output, in_place, ir_version, lower,
                                   dry_run, no_verify, vendor_axis, target, fmt)
    except QlinError as e:
        out.error(str(e))
        sys.exit(EXIT_BAD_INPUT)
    except Exception as e:  # never a traceback; nothing was written (write_model cleans up)
        from .errors import unexpected

        out.error_at(model, unexpected(e))
        sys.exit(EXIT_BAD_INPUT)
    from .convert.report import render_json, render_text

    with out.report():
        if fmt == "json":
            from .report.safe import unicode_text

            click.echo(render_json(unicode_text(model), written and unicode_text(written),
                                   _shown(result, unicode_text), dry_run))
        else:
            from .report.safe import printable

            render_text(printable(model), written and printable(written), _shown(result, printable),
                        dry_run, verbose)
    sys.exit(EXIT_FINDINGS if result.refused else EXIT_OK)


def _check_options(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, target):
    """The output path, once the options agree with each other (else exit 2 saying why)."""
    if in_place and output:
        _fail("--in-place and -o", "give one of them, not both")
    if in_place:
        output = model
    if not output and not dry_run:
        _fail("-o", "give an output path (-o OUT), --in-place or --dry-run")
    if target is not None and (to_opset is not None or to_domain is not None or lower):
        _fail("--target", "it chooses the opset, domain and --lower itself: give it alone")
    if to_opset is None and to_domain is None and target is None:
        _fail("--to-opset", "give a target opset (--to-opset N), a domain (--to-domain D), a "
                            "runtime (--target NAME), or both of the first two")
    if ir_version is not None and ir_version < 3:
        _fail("--ir-version", f"{ir_version} is below 3, the first IR with opsets")
    if ir_version is not None and ir_version > _newest_ir():
        _fail("--ir-version", f"{ir_version} is above {_newest_ir()}, the newest IR version onnx "
                              "knows; no reader could load the result")
    return output


def _convert(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, no_verify,
             vendor_axis, target, fmt):
    """(the conversion's result, the path written or None): read once, checked, planned for
    the target, converted and proven, written."""
    import os

    from .convert import write
    from .convert.run import Options, convert_model
    from .model.analysis import analyze
    from .model.load import load_model
    from .model.safety import validate_model_files
    from .progress import Meter

    if output and not dry_run:
        write.check_target(output, model, in_place)
    proto = load_model(model)
    base_dir = os.path.dirname(os.path.abspath(model))
    validate_model_files(proto, base_dir, model)
    analysis = analyze(proto, base_dir)  # read once: the check, the plan and the conversion
    errors = _errors(analysis)
    if errors:
        _refuse_invalid(model, errors)
    if target is not None:
        to_opset, to_domain, lower = _plan_for(analysis, model, target)
    if to_opset is None:
        to_opset = _model_opset(proto, model)
    opts = Options(to_opset, to_domain, ir_version, lower, not no_verify, vendor_axis)
    with Meter("verifying", enabled=fmt == "text") as progress:
        result = convert_model(proto, base_dir, opts, progress, source=model, types=analysis.inferred)
    if target is not None and result.model is not None:
        _still_refused(result.model, base_dir, model, target)
    if result.model is None or dry_run:
        return result, None
    write.write_model(result.model, base_dir, output, source=model, in_place=in_place)
    return result, output


def _errors(analysis) -> list:
    """The model's findings of severity error under `qlin check`'s rules."""
    from . import rules
    from .check.engine import check_analysis

    mended = {r.code for r in rules.all_rules() if r.mended_by_convert}
    return [d for d in check_analysis(analysis) if d.severity == "error" and d.code not in mended]


def _refuse_invalid(model: str, errors: list) -> None:
    """A model that breaks its own spec is not converted: the proof would only say
    that nothing fits it. Exit 1, nothing written."""
    from . import output as out
    from .report.safe import printable

    codes = ", ".join(sorted({d.code for d in errors}))
    n = len(errors)
    out.error(f"{printable(model)} has {n} error{'s' if n > 1 else ''} ({codes}): run "
              f"`qlin check {printable(model)}`; nothing converted")
    sys.exit(EXIT_FINDINGS)


def _plan_for(analysis, model: str, target: str):
    """(opset, domain, lower) that make ``target`` run the model, from the target's
    profile (qlin_cli/targets); exit 0 when it runs as it is, 1 when nothing helps."""
    from . import output
    from .report.safe import printable
    from .targets import base, predict

    try:
        base.get(target)
    except LookupError:
        _fail("--target", f"unknown target '{printable(target)}' (known: {', '.join(base.names())})")
    plan = predict.plan_in(analysis, target)
    if not plan.needed:
        click.echo(f"qlin convert: {printable(model)} already runs on {target} as it is; nothing written")
        sys.exit(EXIT_OK)
    if plan.choice is None:
        output.error(f"{printable(model)}: no conversion makes {target} run it:")
        for p in plan.blocking:
            click.echo(f"  {p.code} {printable(p.message)}", err=True)
        sys.exit(EXIT_FINDINGS)
    c = plan.choice
    return c.to_opset, c.to_domain, c.lower


def _still_refused(result_model, base_dir: str, model: str, target: str) -> None:
    """The converted model, held against the target once more: nothing is written if the
    target would still refuse it."""
    from . import output
    from .report.safe import printable
    from .targets import predict

    errors = [p for p in predict.findings(result_model, base_dir, [target]) if p.severity == "error"]
    if errors:
        output.error(f"{printable(model)}: converted, but {target} would still refuse it; nothing written:")
        for p in errors:
            click.echo(f"  {p.code} {printable(p.message)}", err=True)
        sys.exit(EXIT_FINDINGS)


def _model_opset(proto, path: str) -> int:
    from . import schema
    from .errors import QlinError

    found = schema.opset_of({o.domain: o.version for o in proto.opset_import}, schema.AI_ONNX)
    if found is None:
        raise QlinError(path, "the model imports no ai.onnx opset: give --to-opset")
    return found


def _shown(result, clean):
    """The result with every name and message it reports passed through ``clean``
    (printable text for the text report, valid Unicode for JSON)."""
    from dataclasses import replace

    entries = [replace(e, where=clean(e.where), op=clean(e.op), changes=[clean(c) for c in e.changes])
               for e in result.entries]
    refused = [replace(r, where=clean(r.where), op=clean(r.op), reason=clean(r.reason),
                       ways_out=[clean(w) for w in r.ways_out]) for r in result.refused]
    return replace(result, entries=entries, refused=refused)


def _newest_ir() -> int:
    import onnx

    return onnx.IR_VERSION


def _fail(what, why):
    from . import output

    output.error(f"{what}: {why}")
    sys.exit(EXIT_BAD_INPUT)
