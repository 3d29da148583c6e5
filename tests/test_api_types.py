"""The public API's types (`import qlin`): every function fully annotated, and `mypy --strict`
clean on qlin/, qlin_cli/api.py and a user's code calling each public name
(tests/api_user_typed.py). mypy takes seconds: `make lint` runs that test (QLIN_MYPY=1)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import typing

import pytest
from paths import ROOT

import qlin


def _functions():
    return [(name, getattr(qlin, name)) for name in qlin.__all__ if inspect.isfunction(getattr(qlin, name))]


def test_every_public_function_is_fully_annotated():
    from qlin_cli.convert.state import Result
    from qlin_cli.convert_pipeline import Stop

    names = {"Converted": Result, "ConversionStopped": Stop}
    assert len(_functions()) == 8
    for name, fn in _functions():
        sig = inspect.signature(fn)
        missing = [p for p, v in sig.parameters.items() if v.annotation is inspect.Parameter.empty]
        assert not missing and sig.return_annotation is not inspect.Signature.empty, (name, missing)
        hints = typing.get_type_hints(fn, localns=names)  # each annotation names a real type
        assert set(hints) == set(sig.parameters) | {"return"}, name
    assert typing.get_type_hints(qlin.convert, localns=names)["return"] is Result


def test_conversion_stopped_is_the_pipelines_stop():
    from qlin_cli.convert_pipeline import Stop

    assert qlin.ConversionStopped is Stop and issubclass(Stop, qlin.QlinError)
    with pytest.raises(AttributeError):
        qlin.NoSuchName  # noqa: B018


@pytest.mark.skipif(not os.environ.get("QLIN_MYPY"), reason="make lint runs mypy (QLIN_MYPY=1)")
def test_mypy_strict_on_the_public_api_and_its_callers():
    pytest.importorskip("mypy")
    files = ["qlin", os.path.join("qlin_cli", "api.py"), os.path.join("tests", "api_user_typed.py")]
    # follow-imports=silent: qlin's other modules are read for their types, not judged, as
    # mypy treats an installed package (an editable install is read as the caller's own code)
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", *files],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
