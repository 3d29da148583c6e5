"""`python -m qlin`: the qlin command line, as `python -m qlin_cli` and `qlin`."""

from qlin_cli.entry import run

run(prog_name="qlin")
