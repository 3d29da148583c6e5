"""onnx's own QuantizeLinear / DequantizeLinear backend node cases, bit for bit."""

from __future__ import annotations

import backend_cases
import numpy as np
import pytest
from evaluator_helpers import bits
from onnx import numpy_helper

import qlin_cli


def _cases():
    return [c for c in backend_cases.cases()
            if any(n.op_type in ("QuantizeLinear", "DequantizeLinear")
                   for n in c.model.graph.node)
            and all(n.op_type in ("QuantizeLinear", "DequantizeLinear", "Constant", "Identity")
                    for n in c.model.graph.node)]


CASES = _cases()


def _array(v) -> np.ndarray:
    return numpy_helper.to_array(v) if hasattr(v, "HasField") else np.asarray(v)


def test_cases_found():
    names = {c.name for c in CASES}
    assert len(CASES) >= 27
    assert {"test_quantizelinear_float4e2m1", "test_dequantizelinear_blocked",
            "test_quantizelinear_e5m2", "test_quantizelinear_int2"} <= names


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_case(case):
    for inputs, expected in case.data_sets:
        feeds = {vi.name: _array(v) for vi, v in zip(case.model.graph.input, inputs,
                                                       strict=True)}
        got = qlin_cli.evaluate(case.model, feeds)
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            e = _array(e)
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(bits(g), bits(e))
