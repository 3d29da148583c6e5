"""`python -m qlin`: the qlin command line, as `python -m qlin_cli` and `qlin`."""

from qlin_cli.cli import main

main(prog_name="qlin")
