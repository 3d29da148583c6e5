"""The convert report, for a person (text) and for machines (json)."""

from __future__ import annotations

import click

from .. import schema
from ..finding import alike, more
from .run import Result


def summary(result: Result) -> dict:
    return {
        "converted": result.count("converted"),
        "lowered": result.count("lowered"),
        "verified": result.verified,
        "other_ops_converted": result.count("other-op"),
        "reformatted": result.count("reformatted"),
        "kept": result.count("kept"),
        "refused": len(result.refused),
    }


def status(result: Result, dry_run: bool) -> str:
    """One word for how the conversion ended: refused, unchanged or converted."""
    if result.refused:
        return "refused"
    return "unchanged" if result.note and not result.entries else "converted"


# The JSON document: one shape on every path (docs/convert.md, "JSON report"). 3 (from 2):
# "refused" is always a list of findings (was objects with pre-formatted "node" / "op", or,
# when the conversion stopped, "findings" beside "reason"); each of "nodes" names its node
# by fields ("node", "graph", "op_type", "domain", "opset"), not by a phrase; "reason" is
# on every document (null when the conversion ran). 2: "version" itself, and domains named
# as check's JSON names them ("ai.onnx", not "").
JSON_VERSION = 3


def _named(opsets: dict) -> dict:
    return {schema.domain_name(d): v for d, v in opsets.items()}


def _refusal(f) -> dict:
    """A finding that stops or refuses the conversion: check's finding, and the ways out
    (the options that get past it, each tried on the node)."""
    return {**f.to_json(), "ways_out": list(f.ways_out)}


def _document(path: str, written: str | None, dry_run: bool, status: str, summary: dict, **parts) -> dict:
    """Every key on every path; what a stopped conversion does not have is empty or null.
    Names are as the model has them: the command makes them valid Unicode (report/safe.py)."""
    doc = {
        "version": JSON_VERSION, "input": path, "output": written, "dry_run": dry_run, "status": status,
        "reason": None, "note": "", "resolved": [], "warnings": [],
        "opsets": {"from": {}, "to": {}}, "ir_version": {"from": None, "to": None},
        "summary": summary, "nodes": [], "refused": [],
    }
    doc.update(parts)
    return doc


def json_document(path: str, written: str | None, result: Result, dry_run: bool) -> dict:
    return _document(
        path, written, dry_run, status(result, dry_run), summary(result),
        note=result.note,
        resolved=[f.to_json() for f in result.resolved],
        warnings=[f.to_json() for f in result.warnings],
        opsets={"from": _named(result.opsets_from), "to": _named(result.opsets_to)},
        ir_version={"from": result.ir_from, "to": result.ir_to},
        nodes=[{"node": e.node, "graph": e.graph, "op_type": e.op_type, "domain": e.domain, "opset": e.opset,
                "action": e.action, "changes": list(e.changes), "verified": e.verified,
                "measured": None if e.measured is None else e.measured.to_json()}
               for e in result.entries],
        refused=[_refusal(r) for r in result.refused],
    )


ACTIONS = (("converted", "Q/DQ converted"), ("lowered", "Q/DQ lowered"),
           ("kept", "Q/DQ valid as they are"), ("other-op", "other ops rewritten"),
           ("reformatted", "nodes in the other format (measured, not proven)"),
           ("folded", "nodes folded into a rewritten node (Q/DQ into QOperator; a dynamic op's Cast, Muls)"),
           ("unfused", "QDQ groups left as they are (-v says why)"),
           ("weights", "constant weights computed once (--weights)"))


def stop_document(path: str, reason: str, findings, dry_run: bool, exit_status: int) -> dict:
    """A conversion that stopped before it had a model: why (``reason``), and the findings
    behind it under ``refused``, in the one shape of ``json_document``."""
    counts = summary(Result(None, [], list(findings), {}, {}, 0, 0))  # no node; the findings refused
    return _document(path, None, dry_run, "error" if exit_status == 2 else "refused", counts,
                     reason=reason, refused=[_refusal(f) for f in findings])


def render_text(path: str, written: str | None, result: Result, dry_run: bool,
                verbose: bool = False) -> None:
    s = summary(result)
    head = f"qlin convert: {path}"
    if written:
        head += f" -> {written}"
    elif dry_run:
        head += " (dry run, nothing written)"
    elif result.refused:
        head += " (refused, nothing written)"
    click.echo(head)
    if result.note:
        unchanged = " (a copy of the source, unchanged)" if written and not result.entries else ""
        click.echo(f"  {result.note}{unchanged}")
    if result.warnings:  # one write of them all (click.echo flushes after each)
        # a runtime's behaviour on many nodes is one line, as in check's report (-v: each)
        shown = [(f, []) for f in result.warnings] if verbose else alike(result.warnings)
        click.echo("\n".join([f"  {f.severity}: {f.code} {f.message}{more(others, '-v')}"
                               for f, others in shown]))
    if result.resolved:
        codes = ", ".join(sorted({f.code for f in result.resolved}))
        n = len(result.resolved)
        click.echo(f"  resolved: {n} error{'s' if n > 1 else ''} of the source ({codes}), valid in the "
                   f"converted model")
        if verbose:
            for f in result.resolved:
                click.echo(f"    {f.code} {f.message}")
    if result.model is not None:
        frm = ", ".join(f"{schema.domain_name(d)} {v}" for d, v in sorted(result.opsets_from.items()))
        to = ", ".join(f"{schema.domain_name(d)} {v}" for d, v in sorted(result.opsets_to.items()))
        click.echo(f"  opsets: {frm} -> {to}; IR {result.ir_from} -> {result.ir_to}")
    counts = [f"{result.count(a)} {label}" for a, label in ACTIONS if result.count(a)]
    unproven = sum(1 for e in result.entries
                   if e.action not in ("kept", "folded", "unfused") and not e.verified)
    changed = result.ir_from != result.ir_to or result.opsets_from != result.opsets_to
    line = ", ".join(counts) if counts else ("no node changed" if changed else "nothing to change")
    line += f"; {s['verified']} proven bit for bit"
    if unproven:
        line += f", {unproven} not proven"
    if counts or not result.refused:  # a refusal with nothing converted opens with the refusal
        click.echo(f"  {line}")
    measured = [e.measured for e in result.entries if e.measured is not None]
    if measured:
        exact = sum(1 for m in measured if m.steps == 0)
        worst = max(m.steps for m in measured)
        text = f"  QDQ forms measured on random and edge inputs: {exact} of {len(measured)} exact"
        if worst:
            text += f", the others within {worst} step{'s' if worst > 1 else ''} of their output"
        click.echo(text)
    if verbose:
        for e in result.entries:
            mark = " (proven)" if e.verified else ""
            click.echo(f"  {e.action:9} {e.where}  {e.op}: {'; '.join(e.changes)}{mark}")
    if result.refused:
        click.echo(f"refused ({len(result.refused)}): the target cannot express these nodes")
        for r in result.refused:
            click.echo(f"  {r.code} {r.where}  {r.title}: {r.detail}")
            if r.ways_out:
                click.echo(f"      way out: {', '.join(r.ways_out)}")
