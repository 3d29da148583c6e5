"""The conversion passes' contracts (requires / ensures) and what ``modified`` tells."""

from __future__ import annotations

import os

import pytest
from paths import MODELS

from qlin_cli.convert import run
from qlin_cli.convert.passes import FINISH, PLAN
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.model.load import load_model


def test_every_pass_requires_only_what_an_earlier_pass_ensures():
    ensured: set[str] = set()
    for p in (*PLAN, *FINISH):
        assert set(p.requires) <= ensured, (p.name, p.requires)
        assert p.ensures and not set(p.ensures) & ensured, p.name
        ensured.update(p.ensures)


def test_a_pass_out_of_order_is_refused(monkeypatch):
    """Prove before the planning passes: the run stops instead of proving nothing."""
    prove = next(p for p in PLAN if p.name == "prove")
    monkeypatch.setattr(run, "PLAN", (PLAN[0], prove, *(p for p in PLAN[1:] if p is not prove)))
    model = load_model(os.path.join(MODELS, "clean", "per_channel_chain.onnx"))
    with pytest.raises(RuntimeError, match="'prove' runs before readings agree"):
        convert_model(model, os.path.join(MODELS, "clean"), Options(21))


def test_changed_says_whether_the_model_changed():
    path = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
    model = load_model(path)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    same = convert_model(model, os.path.dirname(path), Options(opset, ir_version=model.ir_version))
    assert same.model is not None and not same.changed
    lower_ir = convert_model(model, os.path.dirname(path), Options(opset))  # IR 10 -> the 7 it needs
    assert lower_ir.ir_to < lower_ir.ir_from and lower_ir.changed
    other = convert_model(model, os.path.dirname(path), Options(21))
    assert other.model is not None and other.changed
