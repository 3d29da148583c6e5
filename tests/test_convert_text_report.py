"""The text report of `qlin convert`: what it cleans and how it writes the warnings."""

from __future__ import annotations

from qlin_cli.convert_command import _cleaned
from qlin_cli.finding import Finding
from qlin_cli.report.safe import printable


def _finding(node: str, detail: str = "a warning", ways_out: tuple = ()) -> Finding:
    return Finding("QT406", "warning", detail, node, "DequantizeLinear", "ai.onnx", 13, "main",
                   where=f"node '{node}' (DequantizeLinear-13 (ai.onnx))",
                   title="DequantizeLinear-13 ai.onnx", target="openvino", ways_out=ways_out)


def test_cleaned_keeps_printable_findings_and_cleans_the_others():
    plain = _finding("dq0", ways_out=("--tolerance 1",))
    odd = _finding("dq\x1b1", detail="bell \x07 here")
    listed = Finding("QC202", "error", "refused", "n", "Op", "ai.onnx", 13, "main", ways_out=["--x"])
    got = _cleaned([plain, odd, listed], printable)
    assert got[0] is plain  # nothing to clean: the finding itself
    assert got[1] is not odd
    assert got[1].node == printable("dq\x1b1") == "dq\\x1b1"
    assert got[1].detail == "bell \\x07 here"
    assert got[1].message == odd.message.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert got[2].ways_out == ("--x",) and got[2] is not listed  # a list of ways out becomes a tuple


def _rendered(warnings: list, verbose: bool) -> list[str]:
    from click.testing import CliRunner

    from qlin_cli.convert.report import render_text
    from qlin_cli.convert.state import Result

    result = Result(None, [], [], {"": 13}, {"": 13}, 8, 8, warnings=warnings)

    import click

    @click.command()
    def show():
        render_text("m.onnx", None, result, True, verbose=verbose)

    return CliRunner().invoke(show).output.splitlines()


def test_warnings_written_one_line_each_with_v():
    """-v: the warnings are written at once, the same lines, in order, as one echo each wrote."""
    warnings = [_finding(f"dq{i}") for i in range(3)]
    out = _rendered(warnings, True)
    assert out[0] == "qlin convert: m.onnx (dry run, nothing written)"
    assert out[1:4] == [f"  warning: QT406 {w.message}" for w in warnings]
    assert out[4].startswith("  nothing to change")


def test_a_runtimes_warning_on_many_nodes_is_one_line():
    """Without -v, a target's warning of one message on several nodes is said once, at its
    first node, with how many more (as check's report folds it); another message, a rule's
    finding or an error stands alone."""
    rule = Finding("QL602", "warning", "a warning", "q5", "QuantizeLinear", "ai.onnx", 13, "main",
                   where="node 'q5' (QuantizeLinear-13 (ai.onnx))")
    warnings = ([_finding(f"dq{i}") for i in range(5)] + [_finding("dq9", detail="another")]
                + [rule, rule])
    out = _rendered(warnings, False)
    assert out[1] == (f"  warning: QT406 {warnings[0].message} (and 4 more nodes alike: dq1, dq2, dq3, ...; "
                      "-v lists each)")
    assert out[2] == f"  warning: QT406 {warnings[5].message}"
    assert out[3:5] == [f"  warning: QL602 {rule.message}"] * 2
    assert out[5].startswith("  nothing to change")
