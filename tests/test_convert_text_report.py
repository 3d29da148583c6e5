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


def test_warnings_written_one_line_each(tmp_path):
    """The warnings are written at once: the same lines, in order, as one echo each wrote."""
    from click.testing import CliRunner

    from qlin_cli.convert.report import render_text
    from qlin_cli.convert.state import Result

    warnings = [_finding(f"dq{i}") for i in range(3)]
    result = Result(None, [], [], {"": 13}, {"": 13}, 8, 8, warnings=warnings)

    import click

    @click.command()
    def show():
        render_text("m.onnx", None, result, True)

    out = CliRunner().invoke(show).output.splitlines()
    assert out[0] == "qlin convert: m.onnx (dry run, nothing written)"
    assert out[1:4] == [f"  warning: QT406 {w.message}" for w in warnings]
    assert out[4].startswith("  nothing to change")
