"""model/infer.py reads inference's result as bytes (the main graph's types only, each
TypeProto by its bytes) instead of parsing the whole model back: it must read what
the whole parse reads, on every fixture."""

from __future__ import annotations

import glob
import os

import onnx
import pytest
from paths import MODELS

from qlin_cli.model import infer
from qlin_cli.model.load import load_model
from qlin_cli.model.walk import scope_types

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_reading_the_bytes_gives_what_the_whole_parse_gives(path):
    model = load_model(path)
    try:
        out = infer._infer(model.SerializeToString())
    except Exception:
        pytest.skip("onnx inference refuses this fixture (the check then goes without it)")
    whole = onnx.load_from_string(out)
    assert infer._main_types() is not None
    assert infer.read_inferred(out, True) == scope_types(whole, True)
    assert infer.read_inferred(out, False) == scope_types(whole, False)


def test_the_public_entry_point_gives_the_same_result():
    """_infer calls onnx's C++ entry point; onnx.shape_inference.infer_shapes (its
    fallback) must infer the same."""
    path = os.path.join(MODELS, "rules", "QL601-bad.onnx")
    data = load_model(path).SerializeToString()
    public = onnx.shape_inference.infer_shapes(data, check_type=False, strict_mode=False,
                                               data_prop=False)
    direct = onnx.load_from_string(infer._infer(data))
    assert direct == public
    assert len(direct.graph.value_info) > 0


def test_without_the_cpp_entry_point_the_public_function_infers_the_same(monkeypatch):
    path = os.path.join(MODELS, "rules", "QL601-bad.onnx")
    data = load_model(path).SerializeToString()
    direct = onnx.load_from_string(infer._infer(data))
    monkeypatch.setattr(infer, "_c_entry", lambda: None)
    assert onnx.load_from_string(infer._infer(data)) == direct


def test_without_the_reading_class_the_whole_parse_is_used(monkeypatch):
    path = os.path.join(MODELS, "rules", "QL601-bad.onnx")
    out = infer._infer(load_model(path).SerializeToString())
    want = infer.read_inferred(out, True)
    monkeypatch.setattr(infer, "_main_types", lambda: None)
    assert infer.read_inferred(out, True) == want
    assert want["main"]
