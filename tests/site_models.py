"""The models the tests of the runtimes' view read (predict's sites, their classes, the facts
read at once): every bundled fixture, the quantizer corpus and a QDQ chain of the benchmarks."""

from __future__ import annotations

import glob
import os
import sys

import corpus
import onnx
from paths import MODELS, ROOT

from qlin_cli.model.analysis import analyze


def chain(folder: str, layers: int) -> str:
    """bench/big_model.py's QDQ chain of ``layers`` layers at opset 13, written in ``folder``."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        from big_model import build_chain
    finally:
        sys.path.pop(0)
    return build_chain(os.path.join(str(folder), "chain.onnx"), layers, opset=13)


def every_model(folder, layers: int) -> list[str]:
    """The fixtures, the corpus (built in ``folder``) and a chain of ``layers`` layers."""
    paths = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
    return paths + list(corpus.build(folder).values()) + [chain(folder, layers)]


def analysed(path: str):
    """The analysis of the model at ``path`` (its external data left where it is)."""
    return analyze(onnx.load(path, load_external_data=False), os.path.dirname(path))
