"""The `qlin convert` command. Heavy modules are imported inside the function."""

from __future__ import annotations

import sys

import click

from .convert.formats import FORMATS, WEIGHTS
from .errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK
from .schema.ops import DOMAIN_NAMES

DOMAINS = tuple(DOMAIN_NAMES.values())


@click.command("convert")
@click.argument("model", type=click.Path(readable=False))  # qlin says why, in one line
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
@click.option("--to-format", "to_format", type=click.Choice(FORMATS), default=None,
              help="qdq: rewrite QOperator nodes (QLinearConv, QLinearMatMul, QGemm, com.microsoft "
                   "QLinear*), MatMulNBits and GatherBlockQuantized into DequantizeLinear -> float op "
                   "(-> QuantizeLinear); "
                   "qoperator: fuse QDQ groups into those ops. Measured, not proven (see --tolerance).")
@click.option("--tolerance", type=click.IntRange(0, None), default=0, show_default=True, metavar="STEPS",
              help="How many quantization steps of its output a --to-format rewrite may differ by, "
                   "as measured on random and edge inputs.")
@click.option("--weights", type=click.Choice(WEIGHTS), default=None,
              help="fold: a QuantizeLinear of constant float weights becomes the quantized initializer "
                   "it computes (QL604's fix); unfold: a DequantizeLinear of constant weights becomes "
                   "the float initializer it computes (both exact; unfold-bias: only int32 ones, the "
                   "biases); strip: unfold, and every Q -> DQ "
                   "pair removed (the float model, to compare against; not equivalent).")
@click.option("--to-int8", "to_int8", is_flag=True,
              help="uint8 Q/DQ tensors become int8 with every zero point moved down by 128 (exact: "
                   "zero point 128 becomes 0, as TensorRT wants).")
@click.option("--to-symmetric", "to_symmetric", is_flag=True,
              help="8-bit Q/DQ tensors with a non-zero zero point become int8 with zero point 0, "
                   "their scale widened to keep the whole range (measured, not exact: written only "
                   "within --tolerance, about 2 steps).")
@click.option("-v", "--verbose", is_flag=True, help="One line per node, not only the summary.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def convert(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, no_verify,
            vendor_axis, target, to_format, tolerance, weights, to_int8, to_symmetric, verbose, fmt):
    """Convert MODEL to another ai.onnx opset, move its Q/DQ nodes to another domain, and/or
    rewrite its QOperator nodes into QDQ form (--to-format qdq).

    MODEL is first checked with the rules of `qlin check`: a model with errors is
    refused. Exit status: 0 converted (or would be, with --dry-run), 1 the model has
    errors or some node cannot be expressed in the target (nothing written), 2 bad
    input, 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (the old output, or none,
    is left as it was).
    """
    from .convert_pipeline import Request, Stop
    from .errors import QlinError

    report = _Report(model, fmt, dry_run, verbose)
    output = _check_options(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run,
                            target, report, to_format or weights or ("int8" if to_int8 else None)
                            or ("symmetric" if to_symmetric else None))
    req = Request(model, to_opset, to_domain, target, ir_version, lower, not no_verify, vendor_axis,
                  None if dry_run else output, in_place, to_format, tolerance, weights, to_int8,
                  to_symmetric, whole=False)  # the report reads no model: nothing copied for it
    try:
        result = _run(req, fmt)
    except Stop as e:
        report.stop(e, EXIT_FINDINGS)
    except QlinError as e:
        report.stop(e, EXIT_BAD_INPUT)
    except Exception as e:  # never a traceback; nothing was written (write_model cleans up)
        from .errors import unexpected

        report.stop(QlinError(model, unexpected(e)), EXIT_BAD_INPUT)
    report.done(result)
    sys.exit(EXIT_FINDINGS if result.refused else EXIT_OK)


def _run(req, fmt):
    from .convert_pipeline import run
    from .progress import Meter

    with Meter("verifying", enabled=fmt == "text") as progress:
        return run(req, progress)


class _Report:
    """How the command ends, in its format: the conversion's report on stdout (text or
    JSON), or, when it stops, one line on stderr (and with --format json the same
    reason and findings as a JSON document on stdout: every path gives one)."""

    def __init__(self, model: str, fmt: str, dry_run: bool, verbose: bool):
        self.model, self.fmt, self.dry_run, self.verbose = model, fmt, dry_run, verbose

    def done(self, result) -> None:
        from . import output as out
        from .convert.report import json_document, render_text

        with out.report():
            if self.fmt == "json":
                click.echo(_json(json_document(self.model, result.written, result, self.dry_run)))
            else:
                from .report.safe import printable

                render_text(printable(self.model), result.written and printable(result.written),
                            _shown(result, printable, self.verbose), self.dry_run, self.verbose)

    def stop(self, e, status: int) -> None:
        from . import output as out
        from .report.safe import printable

        findings = getattr(e, "findings", [])
        out.error(str(e) + (":" if findings else ""))
        for f in findings:
            click.echo(printable(f"  {f.code} {f.message}"), err=True)
        if self.fmt == "json":
            from .convert.report import stop_document

            with out.report():
                click.echo(_json(stop_document(self.model, e.reason, findings, self.dry_run, status)))
        sys.exit(status)


def _json(doc: dict) -> str:
    """The JSON report: names kept exactly, every text from the model or the file system made
    valid Unicode (report/safe.py), the document ASCII."""
    import json

    from .report.safe import unicode_tree

    return json.dumps(unicode_tree(doc), indent=2)


def _check_options(model, to_opset, to_domain, output, in_place, ir_version, lower, dry_run, target,
                   report, to_format=None):
    """The output path, once the options agree with each other (else exit 2 saying why)."""

    def _fail(what, why):
        from .errors import QlinError

        report.stop(QlinError(what, why), EXIT_BAD_INPUT)

    if in_place and output:
        _fail("--in-place and -o", "give one of them, not both")
    if in_place:
        output = model
    if not output and not dry_run:
        _fail("-o", "give an output path (-o OUT), --in-place or --dry-run")
    if target is not None and (to_opset is not None or to_domain is not None or lower or to_format):
        _fail("--target", "it chooses the opset, domain and --lower itself: give it alone")
    if to_opset is None and to_domain is None and target is None and to_format is None:
        _fail("--to-opset", "give a target opset (--to-opset N), a domain (--to-domain D), a "
                            "format (--to-format qdq), --weights, a runtime (--target NAME), or several "
                            "of the first four")
    if ir_version is not None and ir_version < 3:
        _fail("--ir-version", f"{ir_version} is below 3, the first IR with opsets")
    if ir_version is not None and ir_version > _newest_ir():
        _fail("--ir-version", f"{ir_version} is above {_newest_ir()}, the newest IR version onnx "
                              "knows; no reader could load the result")
    return output


def _shown(result, clean, entries: bool = True):
    """The result with every name and message it reports passed through ``clean``
    (printable text for the text report, valid Unicode for JSON). ``entries`` False: the
    report shows no node's entry (text without -v), which are left as they are (one per
    node: 0.3 s on 100,000 nodes)."""
    from dataclasses import replace

    if entries:
        entries = [replace(e, where=clean(e.where), op=clean(e.op), changes=[clean(c) for c in e.changes])
                   for e in result.entries]
    else:
        entries = result.entries
    return replace(result, entries=entries, refused=_cleaned(result.refused, clean),
                   resolved=_cleaned(result.resolved, clean),
                   warnings=_cleaned(result.warnings, clean))


def _cleaned(findings, clean) -> list:
    """Findings with every text from the model (names, messages) passed through ``clean``; a
    finding ``clean`` leaves as it is is kept itself (a Finding is frozen: a report of thousands
    of warnings made a copy of each)."""
    from dataclasses import replace

    out = []
    for f in findings:
        texts = (clean(f.detail), clean(f.where), clean(f.node), clean(f.graph), clean(f.title))
        ways_out = tuple(clean(w) for w in f.ways_out)
        if texts == (f.detail, f.where, f.node, f.graph, f.title) and ways_out == f.ways_out:
            out.append(f)
            continue
        detail, where, node, graph, title = texts
        out.append(replace(f, detail=detail, where=where, node=node, graph=graph, title=title,
                           ways_out=ways_out))
    return out


def _newest_ir() -> int:
    import onnx

    return onnx.IR_VERSION
