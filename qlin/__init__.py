"""qlin's Python API (``import qlin``): the functions and types of ``qlin_cli.api``.

The distribution installs the command-line tool as the package ``qlin_cli``; this package
only re-exports its documented API (``qlin_cli.api.__all__``) under the distribution's name.
"""

from importlib import metadata as _metadata

from qlin_cli import api as _api
from qlin_cli.api import *  # noqa: F403

try:
    __version__ = _metadata.version("qlin")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = list(_api.__all__)
