"""Bit-pattern rounding (qlin_cli/evaluator/rounding.py) against ml_dtypes' casts.

Every float32 exponent and top-16-bit pattern, with the low bits that decide
ties (0, 1, 0x8000, 0xFFFF), plus random patterns: NaNs with payloads, Inf,
subnormals of float32 and of every target type.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from qlin_cli.evaluator.rounding import encode, round_to, to_narrow_float
from qlin_cli.schema.dtypes import BY_NAME, FLOAT_LAYOUTS


def _patterns() -> np.ndarray:
    top = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    rng = np.random.default_rng(5)
    low = [top | np.uint32(v) for v in (0, 1, 0x8000, 0x7FFF, 0xFFFF)]
    return np.concatenate(low + [rng.integers(0, 2**32, 1 << 18, dtype=np.uint64)
                                 .astype(np.uint32)])


BITS = _patterns()
F32 = BITS.view(np.float32)


def _ml_dtypes(name: str, saturate: bool) -> np.ndarray:
    dt = BY_NAME[name].numpy
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if saturate:
            fi = ml_dtypes.finfo(dt)
            ref = np.clip(F32, fi.min, fi.max).astype(dt)  # onnx's saturate_cast
        else:
            ref = F32.astype(dt)
    return ref


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("name", sorted(FLOAT_LAYOUTS))
def test_rounding_matches_ml_dtypes(name, saturate):
    layout = FLOAT_LAYOUTS[name]
    got = encode(F32, layout, saturate)
    ref = _ml_dtypes(name, saturate)
    ref_bits = ref.view(got.dtype)
    same = got == ref_bits
    if layout.nan_code is not None:
        nan_got = np.isnan(got.view(ref.dtype).astype(np.float32))
        same |= nan_got & np.isnan(ref.astype(np.float32))
    assert same.all(), (name, F32[~same][:5], got[~same][:5], ref_bits[~same][:5])
    fast = np.empty(F32.size, got.dtype)
    to_narrow_float(F32, name, saturate, fast)
    np.testing.assert_array_equal(fast, got)


def test_round_to_float16_and_bfloat16():
    finite = F32[np.isfinite(F32)]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(round_to(finite, "float16"),
                                      finite.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(round_to(finite, "bfloat16"),
                                      finite.astype(ml_dtypes.bfloat16).astype(np.float32))
