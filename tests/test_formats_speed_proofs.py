"""The shortcuts of the weights' stacked proofs (convert/formats/nbits_proof.py): each is held to the
slow way it stands for, reading each tensor with numpy_helper.to_array and each case's
structure on its own."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from format_models import nbits_case
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import nbits, nbits_proof


def _odd_cases() -> list:
    """Cases of the first one's structure but for one thing each, and some that are like it."""
    like = [nbits_case(i, name=f"l{i}") for i in range(3)]
    other_block = nbits_case(10, name="b")
    other_block.dq.attribute[1].i = 16
    extra = nbits_case(11, name="x")
    extra.dq.attribute.append(helper.make_attribute("output_dtype", 1))
    shuffled = nbits_case(12, name="o")
    shuffled.inits.reverse()
    short = nbits_case(13, name="s")
    short.inits[1].raw_data = short.inits[1].raw_data[:-4]
    dims = nbits_case(14, name="d")
    dims.inits[1].dims[:] = [dims.inits[1].dims[1], dims.inits[1].dims[0]]
    segment = nbits_case(15, name="g")
    segment.inits[0].segment.begin = 0
    external = nbits_case(16, name="e")
    external.inits[2].data_location = TensorProto.EXTERNAL
    twice = nbits_case(17, name="t")
    twice.dq.input[2] = twice.dq.input[0]
    twice.inits[2].name = twice.inits[0].name
    typed = nbits_case(18, name="y")
    typed.inits[0] = helper.make_tensor("qy", TensorProto.UINT4, list(typed.inits[0].dims),
                                        numpy_helper.to_array(typed.inits[0]).astype(np.int32).flatten())
    read = nbits_case(19, name="r", read=True)
    halves = nbits_case(20, name="h", scale_type=np.float16)
    no_zero = nbits_case(23, name="n")
    del no_zero.dq.input[2]
    del no_zero.inits[2]
    return like + [other_block, extra, shuffled, short, dims, segment, external, twice, typed, read, halves,
                   nbits_case(21, bits=8, name="8"), nbits_case(22, k=48, block=16, name="k"), no_zero]


def _same(a, b) -> bool:
    """Two sources the same: equal bytes, or arrays of one type, shape and bytes."""
    if type(a) is bytes or type(b) is bytes:
        return a == b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _slow_tables(case) -> list[np.ndarray]:
    """Each input of the case's DequantizeLinear read as onnx reads an initializer (or given)."""
    tensors = {t.name: t for t in case.inits}
    return [case.read[x] if x in case.read else numpy_helper.to_array(tensors[x]) for x in case.dq.input]


def test_a_case_held_to_a_structure_is_what_its_own_reading_gives():
    """``_like`` (a case held to a structure found before) gives a case what ``_sources`` gives
    it where ``_sources`` finds that structure, and nothing for a case of any other (another
    attribute, an attribute more, a table a few bytes short or of other dims, a segment,
    external data, two inputs of one name, float16 scales, other bits or blocks, no zero point) nor for one
    of that structure read another way (inputs out of order, codes in int32_data or given as
    an array), which ``_sources`` then reads."""
    cases = _odd_cases()
    key = nbits_proof._sources(cases[0])[0]
    like = nbits_proof._like_of(cases[0], nbits_proof._sources(cases[0]))
    matched = []
    for i, case in enumerate(cases):
        own = nbits_proof._sources(case)
        got = nbits_proof._like(case, like)
        if got is not None:
            matched.append(i)
            assert own is not None and own[0] == key and len(got) == len(own[1])
            assert all(_same(a, b) for a, b in zip(got, own[1], strict=True))
    # the cases like the first; those of its structure read otherwise (inputs out of order,
    # codes in int32_data or given) are left to ``_sources``
    assert matched == [0, 1, 2]


def test_cases_grouped_are_each_case_read_on_its_own():
    """``_grouped`` gives each case the structure and sources ``_sources`` gives it alone, and
    leaves out the cases ``_sources`` leaves out; the tables ``_joined`` reads of a group are
    each case's tables, as to_array reads them, side by side."""
    cases = _odd_cases() + [nbits_case(30 + i, name=f"m{i}") for i in range(3)]
    groups, rest = nbits_proof._grouped(cases, list(range(len(cases))))
    own = [nbits_proof._sources(c) for c in cases]
    assert rest == [i for i, got in enumerate(own) if got is None] and rest
    seen = []
    for key, members in groups.items():
        for i, sources in members:
            seen.append(i)
            assert own[i][0] == key and all(_same(a, b) for a, b in zip(sources, own[i][1], strict=True))
        joined = nbits_proof._joined(key, [s for _, s in members])
        along = nbits_proof._along(key)
        for j, table in enumerate(joined):
            want = np.concatenate([_slow_tables(cases[i])[j] for i, _ in members], axis=along)
            assert table.dtype == want.dtype and table.shape == want.shape
            assert table.tobytes() == want.tobytes(), (key, j)
    assert sorted(seen + rest) == list(range(len(cases)))


@pytest.mark.parametrize("dims", [[3, 5], [4, 4], [1, 7], [2, 3, 5], [0, 3]])
@pytest.mark.parametrize("elem", [TensorProto.UINT4, TensorProto.INT4, TensorProto.FLOAT, TensorProto.FLOAT16,
                                  TensorProto.UINT8, TensorProto.INT8])
def test_tables_read_from_their_bytes_together_are_what_to_array_reads(elem, dims):
    """``_from_bytes`` of several tensors' raw bytes (odd counts of 4-bit codes padded in their
    last byte) is numpy_helper.to_array of each: the same type, shape and bytes."""
    import ml_dtypes

    rng = np.random.default_rng(elem)
    as_type = {TensorProto.UINT4: ml_dtypes.uint4, TensorProto.INT4: ml_dtypes.int4}.get(
        elem, helper.tensor_dtype_to_np_dtype(elem))
    low = -8 if elem in (TensorProto.INT4, TensorProto.INT8) else 0
    tensors = [numpy_helper.from_array(rng.integers(low, 8, dims).astype(as_type), f"t{i}") for i in range(4)]
    raws = [nbits.raw_source(t) for t in tensors]
    assert all(r is not None for r in raws)
    got = nbits.from_bytes([r[0] for r in raws], raws[0][1], raws[0][2])
    for t, table in zip(tensors, got, strict=True):
        want = numpy_helper.to_array(t)
        assert table.dtype == want.dtype and table.shape == want.shape and table.tobytes() == want.tobytes()


def test_tensors_not_read_from_their_bytes():
    """``_raw_source`` leaves to read_raw what it does not read so: typed fields, a length
    that is not the dims', a segment, external data, 2-bit codes, doubles."""
    import ml_dtypes

    good = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "f")
    assert nbits.raw_source(good) is not None
    short, segment, external = onnx.TensorProto(), onnx.TensorProto(), onnx.TensorProto()
    for t in (short, segment, external):
        t.CopyFrom(good)
    short.raw_data = short.raw_data[:-1]
    segment.segment.begin = 0
    external.data_location = TensorProto.EXTERNAL
    others = [helper.make_tensor("i", TensorProto.FLOAT, [2], [1.0, 2.0]), short, segment, external,
              numpy_helper.from_array(np.arange(3).astype(ml_dtypes.uint2), "u2"),
              numpy_helper.from_array(np.arange(3, dtype=np.float64), "d")]
    assert [nbits.raw_source(t) for t in others] == [None] * len(others)


@pytest.mark.parametrize("scale_type", [np.float32, np.float16, np.float64])
def test_the_pages_weights_computed_in_place_are_the_formula(scale_type):
    """``dequantized`` of whole blocks (computed in the codes' float32 copy for float32 and
    float16 scales) is the page's formula written out: (code - zero point) * scale, in float32,
    then the scales' type; NaN and infinite scales included."""
    rng = np.random.default_rng(4)
    n, blocks, bs = 7, 3, 16
    codes = rng.integers(0, 16, (n, blocks * bs)).astype(np.uint8)
    zero = rng.integers(0, 16, (n, blocks)).astype(np.uint8)
    scales = rng.uniform(-2, 2, (n, blocks)).astype(scale_type)
    scales[0, 0], scales[1, 1] = np.nan, np.inf
    w = {"K": blocks * bs, "N": n, "bits": 4, "block_size": bs, "codes": codes, "scales": scales,
         "zero": zero}
    per_k = np.repeat(np.arange(blocks), bs)
    with np.errstate(invalid="ignore"):  # (0 * inf)
        want = ((codes.astype(np.float32) - zero[:, per_k].astype(np.float32)) * scales[:, per_k])
        want = want.astype(scale_type)
        got = nbits.dequantized(w)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
