"""qlin's Python API (``import qlin``): the functions and types of ``qlin_cli.api``.

The distribution installs the command-line tool as the package ``qlin_cli``; this package
only re-exports its documented API under the distribution's name.
"""

from qlin_cli.api import (
    Config,
    FileResult,
    Finding,
    QlinError,
    check,
    check_file_with,
    check_model,
    convert,
    inspect,
    targets,
)

__all__ = ["Config", "FileResult", "Finding", "QlinError", "check", "check_file_with", "check_model",
           "convert", "inspect", "targets"]
