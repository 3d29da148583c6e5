"""What each runtime release's QuantizeLinear and DequantizeLinear compute, as its arithmetic
probes measured it (tools/probe_quantize.py, run in every release by
tools/gen_target_data.py): the type it divides in, where it adds the zero point, how it
saturates with a negative scale, how it converts to float8, how it rounds a dequantized
product to float16 / bfloat16 and a Q -> DQ pair, how it reads a com.microsoft node without
axis, whether it rounds a float16 value between two com.microsoft nodes; and the QT401-QT409
each versioned target reports from them.

The probes' results are checked here against qlin's evaluator and plain arithmetic; the
installed releases are measured again by tests/test_targets_probes.py and
tests/test_targets_ort_probes.py (every probe, these among them)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto
from test_targets_divergence import F16_S, F16_X, predicted, quantize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import probe_models  # noqa: E402
import probe_quantize  # noqa: E402

from qlin_cli.schema import dtypes  # noqa: E402
from qlin_cli.targets import base, predict, registry  # noqa: E402


@functools.cache
def _all_probes() -> tuple:
    return tuple(probe_quantize.probes(probe_models._quantize_key))  # made once: 595 evaluations


def _probes(what: str):
    return [p for p in _all_probes() if p[0].startswith(what + " ")]


def test_each_probe_model_is_valid_by_onnx_checker_and_by_qlin():
    """A probe of an invalid node would measure nothing the page defines: with its output
    typed (the probes leave it untyped, as every probe model does, and the runtimes infer
    it), each passes onnx.checker's full check and qlin check has no error."""
    import onnx
    from onnx import helper

    from qlin_cli.check.engine import check_analysis
    from qlin_cli.model.analysis import analyze

    quantizing = ("division ", "rounding ", "negative scale ", "float8 ", "near ties ")
    for key, model, _ in (p for p in _all_probes() if p[0].startswith(quantizing)):
        typed = onnx.ModelProto()
        typed.CopyFrom(model)
        zp = typed.graph.initializer[1]  # the zero point: the output's type
        shape = list(probe_quantize.SHAPE)
        typed.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", zp.data_type, shape))
        onnx.checker.check_model(typed, full_check=True)
        assert [d.code for d in check_analysis(analyze(typed, "")) if d.severity == "error"] == [], key


def test_each_division_probe_tells_the_two_divisions_apart():
    """Each probe's float32 result differs from the narrower type's, and the page's result
    (qlin's evaluator) is one of them: the one of precision, else of the scale's type."""
    seen = _probes("division")
    # 216, then 96 of a narrow scale beside x of another type (float16 / bfloat16, int32 /
    # float16, int32 / bfloat16, bfloat16 / float16) and 106 of an int32 scale (to float8)
    assert len(seen) == 418
    for key, model, feeds in seen:
        narrow = [k for k in feeds if k.startswith("expect:divides in ") and k != "expect:divides in float"]
        assert len(narrow) == 1, key
        assert not np.array_equal(feeds["expect:divides in float"], feeds[narrow[0]]), key
        asked = {a.name: a.i for a in model.graph.node[0].attribute}.get("precision")
        page = dtypes.name_of(asked or model.graph.initializer[0].data_type)  # precision, else the scale's
        assert np.array_equal(feeds["expect:spec"], feeds[f"expect:divides in {page}"]), key


def test_the_rounding_and_negative_scale_probes_tell_the_page_apart():
    """Rounding: the zero point (3) added before rounding the ties moves every one of them;
    negative scale: the page saturates at both ends (the wrong ends are what a runtime that
    reverses the range gives)."""
    rounding, negative = _probes("rounding"), _probes("negative scale")
    assert len(negative) == 44 and len([k for k, _, _ in rounding if "(float,float)" in k]) == 44
    # float16 and bfloat16 x with a scale of the same type, where the version takes them
    assert {k.split("(")[1].split(")")[0] for k, _, _ in rounding} == {
        "float,float", "float16,float16", "bfloat16,bfloat16"}
    for key, model, feeds in rounding:
        other = feeds["expect:adds the zero point before rounding"]
        assert (feeds["expect:spec"] != other).all(), key
        lo, hi = (-128, 127) if model.graph.initializer[1].data_type == TensorProto.INT8 else (0, 255)
        ties = np.resize(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, -2.5, 4.5]), probe_quantize.SHAPE)
        toward_zero = feeds["expect:rounds toward zero"]  # 1.5 -> 1 + 3, where the page gives 2 + 3
        assert np.array_equal(toward_zero, np.clip(np.trunc(ties) + 3, lo, hi)), key
        assert not np.array_equal(feeds["expect:spec"], toward_zero), key
    for key, model, feeds in negative:
        lo, hi = (-128, 127) if model.graph.initializer[1].data_type == TensorProto.INT8 else (0, 255)
        assert {lo, hi} <= set(feeds["expect:spec"].reshape(-1).tolist()), key


def _q(opset, precision=None, x_type=TensorProto.FLOAT16):
    attrs = {"precision": precision} if precision is not None else {}
    x = F16_X if x_type == TensorProto.FLOAT16 else F16_X.astype(np.float32)
    return quantize(x, F16_S, np.int8(0), opset=opset, x_type=x_type, attrs=attrs)


def _division(target, model) -> str | None:
    """What the target's release data says of the division of the model's one QuantizeLinear."""
    from qlin_cli.model.analysis import analyze

    a = analyze(model, "")
    (body, index, _), = a.nodes()
    return registry.get(target).division(base.NodeSite(facts=a.any_facts(body, index)))


# Measured by hand in throwaway venvs before the probes existed (x 78.0625, scale
# 0.669921875, float16 -> int8: 116 in float16, 117 in float32), and now by the probes of
# every release: the versioned targets report what each release does.
@pytest.mark.parametrize(("target", "opset", "warned"), [
    ("onnxruntime@1.23", 21, False),  # divides float16 in float16, as the page
    ("onnxruntime@1.20", 21, False),
    ("onnxruntime@1.31", 21, True),  # in float32
    ("onnxruntime@1.32", 21, True),
    ("onnxruntime@1.32", 23, False),  # follows the page at QuantizeLinear-23
    ("openvino@2024.6", 21, True),
    ("openvino@2026.4", 23, True),
])
def test_qt401_follows_the_release(target, opset, warned):
    assert ("QT401" in predicted(_q(opset), target)) is warned


def test_precision_float_ignored_where_the_release_divides_in_float16():
    """onnxruntime 1.24 and 1.28 divide float16 in float16 though precision asks for float
    (QT402); 1.31 does as asked."""
    m = _q(23, TensorProto.FLOAT)
    assert _division("onnxruntime@1.28", m) == "float16"
    assert "QT402" in predicted(m, "onnxruntime@1.28") and "QT402" in predicted(m, "onnxruntime@1.24")
    assert "QT402" not in predicted(m, "onnxruntime@1.31")


def test_a_range_of_releases_names_the_oldest_that_divides_otherwise():
    found = [f for f in predict.findings(_q(21), "", ["onnxruntime>=1.18"]) if f.code == "QT401"]
    assert len(found) == 1 and "onnxruntime 1.30.0" in found[0].message, found


def test_a_node_of_no_probed_kind_gets_no_division_claim():
    """float x with a float16 scale is not allowed before QuantizeLinear-23: no probe has
    it, and no coarser key answers for it."""
    m = _q(21, x_type=TensorProto.FLOAT)
    assert _division("onnxruntime@1.31", m) is None


TIES = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)


@pytest.mark.parametrize("target", ["openvino@2024.0", "openvino@2026.4", "onnxruntime@1.18",
                                    "onnxruntime@1.31"])
def test_qt405_and_qt407_follow_the_release(target):
    """openvino adds the zero point before rounding and reverses a negative scale's range in
    every measured release; onnxruntime in none (each release's probes)."""
    odd = quantize(TIES, np.float32(1), np.int8(3))
    even = quantize(TIES, np.float32(1), np.int8(2))
    negative = quantize(TIES, np.float32(-0.1), np.int8(0))
    openvino = target.startswith("openvino")
    assert ("QT405" in predicted(odd, target)) is openvino
    assert "QT405" not in predicted(even, target)
    assert ("QT407" in predicted(negative, target)) is openvino
    assert "QT407" not in predicted(odd, target)


def test_qt411_follows_each_release():
    """QT411 is reported on a float16 QuantizeLinear exactly in the releases whose rounding
    probe of that kind rounded x / scale toward zero, never on its float32 twin where the
    float32 probe rounds as the page."""
    from qlin_cli.targets import probe_keys, probe_table

    half = quantize(TIES.astype(np.float16), np.float16(1), np.int8(3), x_type=TensorProto.FLOAT16)
    full = quantize(TIES, np.float32(1), np.int8(3))
    seen = set()
    for rt, v in _releases():
        target = f"{rt}@{v.rsplit('.', 1)[0]}"
        table = probe_table.load(rt, v)
        for model in (half, full):
            (site,) = predict.sites(model, "")
            found = table.outcome(site.arithmetic_key("rounding"))
            toward = found is not None and found.differs == probe_keys.TOWARD_ZERO
            assert ("QT411" in predicted(model, target)) is toward, (target, model is half)
            seen.add((rt, model is half, toward))
    # measured (docs/targets.md): onnxruntime 1.18 to 1.29 truncate float16, none float32
    assert ("onnxruntime", True, True) in seen and ("onnxruntime", False, True) not in seen


def test_the_float8_probes_carry_the_pages_codes():
    """Each float8 probe's expected result is the page's float8 codes (qlin's evaluator),
    which the runner compares with the codes the runtime hands over."""
    seen = _probes("float8")
    assert len(seen) == 136 + 72  # then those of a float8e8m0 scale (MX, from QuantizeLinear-24)
    for key, _, feeds in seen:
        q, saturate = key.split(" ")[1], int(key.split(" ")[2].partition("=")[2])
        codes = feeds["expect:spec"]
        assert codes.min() >= 0 and codes.max() <= 255, key
        values = codes.astype(np.uint8).view(dtypes.BY_NAME[q].numpy)
        big = np.isinf(values.astype(np.float32)) | np.isnan(values.astype(np.float32))
        nan = np.isnan(feeds["x"])
        assert big[~nan].any() == (saturate == 0), key  # beyond the range: NaN / Inf only with saturate=0
        assert big[nan].all(), key  # NaN stays NaN


def test_the_float8_probes_carry_openvinos_conversion_and_nan():
    """Each float8 probe feeds NaN of both signs and carries, besides the page's codes, those
    of a conversion through float16 that saturates and writes NaN as the negative largest
    value (probe_keys.THROUGH_FLOAT16), which differ from the page's for every type and
    saturate (so a release that converts so is named, not only found different)."""
    from qlin_cli.targets import probe_keys

    for key, _, feeds in _probes("float8"):
        q = key.split(" ")[1]
        x = feeds["x"]
        assert np.isnan(x).any() and np.signbit(x[np.isnan(x)]).any() and (~np.signbit(x[np.isnan(x)])).any()
        theirs, page = feeds[f"expect:{probe_keys.THROUGH_FLOAT16}"], feeds["expect:spec"]
        assert theirs.shape == page.shape and not np.array_equal(theirs, page), key
        largest = np.array([-float(ml_dtypes.finfo(dtypes.BY_NAME[q].numpy).max)], np.float32)
        assert set(theirs[np.isnan(x)]) == {largest.astype(dtypes.BY_NAME[q].numpy).view(np.uint8)[0]}, key


@pytest.mark.remeasure
def test_the_installed_openvino_converts_to_float8_as_the_probes_name_it(tmp_path):
    """Load and run each float8 probe of a type openvino reads in the installed openvino:
    its codes are exactly those probe_keys.THROUGH_FLOAT16 names, with either saturate
    (`make remeasure`: a measurement of the installed release, which the probe data
    records for every release and `make test` reads)."""
    pytest.importorskip("openvino")
    import onnx
    import probe_runner

    from qlin_cli.targets import probe_keys

    ran = 0
    for key, model, feeds in _probes("float8"):
        if key.split(" ")[1] not in ("float8e4m3fn", "float8e5m2"):
            continue  # openvino reads no fnuz type (QT302)
        path = tmp_path / "probe.onnx"
        onnx.save(model, path)
        got = probe_runner.run_openvino(str(path), feeds, {"x": TensorProto.FLOAT})
        assert got == f"differs: {probe_keys.THROUGH_FLOAT16}", (key, got)
        ran += 1
    assert ran >= 68  # float scales (68) and, since 2026-11-28, float8e8m0 scales


def _float8(q: str, saturate: int):
    zp = np.zeros((), dtypes.BY_NAME[q].numpy)
    return quantize(np.array([480.0, 15.499925, 14.999], np.float32), np.float32(1), zp,
                    attrs={"saturate": saturate})


@pytest.mark.parametrize(("target", "q", "saturate", "warned"), [
    ("onnxruntime@1.31", "float8e4m3fn", 0, True),  # 480 becomes 448, not NaN
    ("onnxruntime@1.31", "float8e4m3fn", 1, False),
    ("onnxruntime@1.31", "float8e5m2", 0, False),  # its output cannot be read: no claim
    ("openvino@2026.4", "float8e4m3fn", 1, True),  # rounds twice, through float16
    ("openvino@2026.4", "float8e5m2", 1, True),
    ("openvino@2026.1", "float8e5m2", 0, True),
    ("openvino@2024.0", "float8e5m2", 0, False),  # refused there (QT205): no float8 claim
    ("onnxruntime@1.23", "float8e4m3fn", 0, False),  # its Python API cannot hand the output over
])
def test_qt403_follows_the_release(target, q, saturate, warned):
    assert ("QT403" in predicted(_float8(q, saturate), target)) is warned


def test_qt403_says_what_the_releases_probe_measured():
    """The message is the description the target's release measured where this release's
    float8 probe gives the same outcome (openvino: its conversion named; onnxruntime: 480
    becomes 448), and the probe's own words where it gives another."""
    from qlin_cli.targets import probe_keys, probe_table

    def said(model, target):
        return [f.detail for f in predict.findings(model, "", [target]) if f.code == "QT403"]

    def message(target, text):
        return target.finding("QT403", text, fix=target.float8_quantize.fix).message

    ov, ort = registry.get("openvino@2026.1"), registry.get("onnxruntime@1.31")
    assert said(_float8("float8e4m3fn", 1), ov) == [
        message(ov, f"conversion to float8e4m3fn {probe_keys.THROUGH_FLOAT16}")]
    assert said(_float8("float8e4m3fn", 0), ort) == [message(ort, ort.float8_quantize.what)]
    other = probe_table.Outcome(0, 1, "differs: got 1 where the page gives 2")
    ort.arithmetic = lambda what, site: other  # a release whose probe differs otherwise
    try:
        found = said(_float8("float8e4m3fn", 0), ort)
    finally:
        del ort.arithmetic
    assert found == [message(ort, "conversion to float8e4m3fn differs from the spec (got 1 where the page "
                                  "gives 2; measured by the release's float8 probe)")]


def test_the_dequantize_and_pair_probes_are_valid_and_carry_the_pages_codes():
    """Each dequantize probe (a DequantizeLinear to float16 / bfloat16, x a graph input or a
    constant) passes onnx.checker's full check and qlin check with its output typed, and
    carries the page's result as the codes of the output type (qlin's evaluator); the pair
    probes' result is the pair's alone, by the evaluator, around Abs and Neg."""
    import onnx
    from onnx import helper

    from qlin_cli.check.engine import check_analysis
    from qlin_cli.evaluator.model import evaluate
    from qlin_cli.model.analysis import analyze

    seen = _probes("dequantize")
    assert len(seen) == 70 and {k.endswith(" constant x") for k, _, _ in seen} == {True, False}
    for key, model, feeds in seen:
        out = key.split(" -> ")[1].split(" ")[0]
        typed = onnx.ModelProto()
        typed.CopyFrom(model)
        typed.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", dtypes.BY_NAME[out].proto, [255]))
        onnx.checker.check_model(typed, full_check=True)
        assert [d.code for d in check_analysis(analyze(typed, "")) if d.severity == "error"] == [], key
        inputs = {k: v for k, v in feeds.items() if not k.startswith("expect:")}
        y = np.asarray(evaluate(model, inputs)[0])
        assert y.dtype == dtypes.BY_NAME[out].numpy
        assert np.array_equal(y.view(np.uint16), feeds["expect:spec"]), key
        # what a runtime may do instead, where it gives other codes than the page: only a
        # float32 scale rounds to another value first (0.3105 in bfloat16 is exact in float16)
        assert (f"expect:rounds the scale to {out} first" in feeds) is ("(float) -> " in key), key
    pairs = _probes("pair arithmetic")
    types = ("int8", "uint8", "int16", "uint16")
    assert [k for k, _, _ in pairs] == [f"pair arithmetic {q}{b}" for q in types for b in ("", " blocked")]
    for key, model, feeds in pairs:
        onnx.checker.check_model(model, full_check=True)
        assert [n.op_type for n in model.graph.node] == ["Abs", "QuantizeLinear", "DequantizeLinear", "Neg"]
        blocked = [a.i for n in model.graph.node[1:3] for a in n.attribute if a.name == "block_size"]
        assert blocked == ([16, 16] if key.endswith(" blocked") else []), key
        assert np.all(feeds["expect:spec"] <= 0) and np.unique(feeds["expect:spec"]).size > 100, key
        removed = feeds["expect:removes the pair"]  # the reader computed on x: no pair
        assert np.array_equal(removed, -np.abs(feeds["x"]))
        assert not np.array_equal(removed, feeds["expect:spec"])


def test_the_missing_axis_probes_are_what_qlin_reports_as_undefined():
    """The missing-axis probes are the nodes QL404 reports (a com.microsoft 1-D scale without
    axis, which its page forbids): they have no page's result, only what reading along axis
    1 gives."""
    from qlin_cli.check.engine import check_analysis
    from qlin_cli.model.analysis import analyze

    seen = _probes("missing axis")
    assert [k for k, _, _ in seen] == ["missing axis com.microsoft:QuantizeLinear-1",
                                       "missing axis com.microsoft:DequantizeLinear-1"]
    for key, model, feeds in seen:
        assert "QL404" in {d.code for d in check_analysis(analyze(model, ""))}, key
        assert set(feeds) == {"x", "expect:reads along axis 1"}


def test_the_float16_casts_probes_are_valid_and_tell_the_rounding_apart():
    """A float16-casts probe (DQ of float16 output -> Q) per version that takes float16
    (ai.onnx from 19, com.microsoft) passes onnx.checker's full check and qlin check with its
    output typed; its page's result is qlin's evaluator's, and keeping x * scale unrounded
    between the nodes changes 4 codes."""
    import onnx
    from onnx import helper

    from qlin_cli.check.engine import check_analysis
    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import probe_keys

    seen = _probes("float16 between nodes")
    versions = [("ai.onnx", v) for v in (19, 21, 23, 24, 25, 28)] + [("com.microsoft", 1)]
    assert [k for k, _, _ in seen] == [probe_keys.float16_casts_probe(d, v) for d, v in versions]
    for key, model, feeds in seen:
        typed = onnx.ModelProto()
        typed.CopyFrom(model)
        typed.graph.output[0].CopyFrom(helper.make_tensor_value_info("q", TensorProto.INT8, [256]))
        onnx.checker.check_model(typed, full_check=True)
        assert check_analysis(analyze(typed, "")) == [], key
        y = feeds["x"].astype(np.float32) * np.float32(np.float16(0.0517))  # exact in float32
        page = np.clip(np.rint(y.astype(np.float16).astype(np.float32) / 0.125), -128, 127)
        assert np.array_equal(feeds["expect:spec"], page.astype(np.int8)), key
        assert int((feeds["expect:spec"] != feeds["expect:keeps float32 between the nodes"]).sum()) == 4


def _releases():
    from qlin_cli.targets import releases

    return [(rt, v) for rt in ("onnxruntime", "openvino") for v in releases.measured(rt)]


def test_qt404_qt406_and_qt408_follow_each_release():
    """In every measured release, QT404 is reported exactly where the release's missing-axis
    probe read the node along axis 1, QT406 exactly where its dequantize or pair probe
    differs from the page, QT408 (not QT406) where its 16-bit pair probe shows the pair
    removed; TensorRT, with no such probes, reports none of them."""
    import ml_dtypes
    from onnx import TensorProto as TP
    from test_targets_divergence import _pair, dequantize

    from qlin_cli.targets import probe_keys, probe_table

    bare = quantize(np.array([[0, 1, 2], [3, 4, 5]], np.float32), np.array([1, 2, 4], np.float32),
                    np.zeros(3, np.int8), domain="com.microsoft")
    q = np.arange(-128, 127, dtype=np.int8)
    f16 = {"output_dtype": TensorProto.FLOAT16}
    weights = {  # DequantizeLinear of constants (weights)
        "float -> float16": dequantize(q, np.float32(0.3105), opset=23, attrs=f16),
        "bfloat16 -> bfloat16": dequantize(q, np.asarray(0.3105, ml_dtypes.bfloat16), opset=21),
    }
    keys = {"float -> float16": "dequantize ai.onnx:DequantizeLinear-23(float) -> float16 constant x",
            "bfloat16 -> bfloat16": "dequantize ai.onnx:DequantizeLinear-21(bfloat16) -> bfloat16 constant x"}
    seen = {"QT404": set(), "QT406": set(), "QT408": set()}
    inner = {"int8": _pair(TP.INT8, inner=True), "int16": _pair(TP.INT16, inner=True),  # Relu, Q, DQ, Relu
             "int16 blocked": _blocked_pair()}
    for rt, v in _releases():
        table = probe_table.load(rt, v)
        target = f"{rt}@{v.rsplit('.', 1)[0]}"
        axis = table.outcome("missing axis com.microsoft:QuantizeLinear-1")
        assert axis is not None, (rt, v)
        along = axis.differs == probe_keys.ALONG_AXIS_1
        assert ("QT404" in predicted(bare, target)) is along, target
        seen["QT404"].add(along)
        for name, model in weights.items():
            found = table.outcome(keys[name])
            assert found is not None, (rt, v, name)
            differs = found.differs is not None
            assert ("QT406" in predicted(model, target)) is differs, (target, name)
            seen["QT406"].add(differs)
        for q, model in inner.items():
            found = table.outcome(f"pair arithmetic {q}").differs
            codes = {p.code for p in predict.findings(model, "", [target]) if p.node == "dq"}
            assert ("QT408" in codes) is (found == probe_keys.REMOVED), (target, q)
            assert ("QT406" in codes) is (found not in (None, probe_keys.REMOVED)), (target, q)
            seen["QT408"].add(found == probe_keys.REMOVED)
    # measured (docs/targets.md): every release reads the axis; openvino rounds some products
    # otherwise, onnxruntime none; openvino removes 16-bit pairs from 2026.1 only (not blocked ones)
    assert seen == {"QT404": {True}, "QT406": {True, False}, "QT408": {True, False}}
    assert not {"QT404", "QT406"} & (predicted(bare, "tensorrt-10") | predicted(weights["float -> float16"],
                                                                                  "tensorrt-10"))


def test_the_pair_after_op_probes_are_valid_by_onnx_checker_and_by_qlin():
    """Each probe of a 16-bit pair ending at a graph output after an op passes onnx.checker's
    full check, qlin check finds no error in it, and it is filed under its key."""
    import onnx
    import probe_models

    from qlin_cli.check.engine import check_analysis
    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import probe_keys

    found = {key: model for key, model, _ in probe_models.pair_after_probes()}
    assert sorted(found) == sorted(probe_keys.pair_after_key(q, op) for q in ("int16", "uint16")
                                   for op in probe_keys.PAIR_AFTER_OPS)
    for key, model in found.items():
        onnx.checker.check_model(model, full_check=True)
        assert [d.code for d in check_analysis(analyze(model, "")) if d.severity == "error"] == [], key
        assert [n.op_type for n in model.graph.node][0] in probe_keys.PAIR_AFTER_OPS, key


def test_qt308_follows_each_releases_pair_probes():
    """QT308 is reported on a 16-bit Q -> DQ pair ending at a graph output, from a graph
    input or after one of the probed ops, exactly in the openvino releases whose probe of
    that pattern failed, in the release's own words."""
    import probe_models
    from onnx import TensorProto as TP
    from test_targets_divergence import _pair

    from qlin_cli.targets import probe_keys, probe_table

    models = {None: _pair(TP.INT16, inner=False)}
    models.update({op: probe_models._pair_after(op, "int16") for op in probe_keys.PAIR_AFTER_OPS})
    seen = set()
    for rt, v in _releases():
        if rt != "openvino":
            continue  # onnxruntime removes no pair (no pair_stripping)
        table, target = probe_table.load(rt, v), f"{rt}@{v.rsplit('.', 1)[0]}"
        for op, model in models.items():
            found = table.outcome(probe_keys.pair_key("int16") if op is None
                                  else probe_keys.pair_after_key("int16", op))
            failed = found is not None and found.fails > 0
            said = [p.detail for p in predict.findings(model, "", [target]) if p.code == "QT308"]
            assert bool(said) is failed, (target, op)
            assert not failed or f"('{found.stage_and_error[1]}')" in said[0], (target, op, said)
            seen.add((op, failed))
    # measured (docs/targets.md): openvino fails the pair from input to output and after
    # MaxPool from 2026.1, and runs it after the other ops
    assert {("MaxPool", True), ("MaxPool", False), (None, True), ("Sigmoid", False)} <= seen
    assert ("Sigmoid", True) not in seen


def _blocked_pair():
    """x -> Relu -> Q(int16, blocks of 16 along axis 1) -> DQ -> Relu -> y."""
    from onnx import helper, numpy_helper

    inits = [numpy_helper.from_array(np.full((4, 2), 0.01, np.float32), "s"),
             numpy_helper.from_array(np.zeros((4, 2), np.int16), "zp")]
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="pre"),
             helper.make_node("QuantizeLinear", ["a", "s", "zp"], ["q"], name="q", axis=1, block_size=16),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], name="dq", axis=1, block_size=16),
             helper.make_node("Relu", ["d"], ["y"], name="post")]
    x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 32]) for n in ("x", "y"))
    graph = helper.make_graph(nodes, "blocked pair", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def test_qt409_follows_each_release():
    """QT409 is reported on a float16 Q -> DQ -> MatMul -> Q -> DQ exactly in the releases
    whose float16-casts probe of the block's Q/DQ kept float32 between the nodes, and that
    compute its nodes in float32: onnxruntime where its registry has no float16 kernel for
    them (com.microsoft Q/DQ, not ai.onnx Q/DQ-19), openvino everywhere (its CPU plugin)."""
    from test_targets_divergence import f16_matmul_block

    from qlin_cli.model.analysis import analyze
    from qlin_cli.targets import probe_keys, probe_table

    # each block read once: every release's findings are predict.findings_in of its analysis
    # (what predict.findings does with a new one), as `qlin check --target a,b,...` reads it
    blocks = {("com.microsoft", 1): analyze(f16_matmul_block("com.microsoft"), ""),
              ("ai.onnx", 19): analyze(f16_matmul_block(""), "")}
    seen = set()
    for rt, v in _releases():
        target = f"{rt}@{v.rsplit('.', 1)[0]}"
        table = probe_table.load(rt, v)
        for (domain, since), a in blocks.items():
            found = table.outcome(probe_keys.float16_casts_probe(domain, since))
            kept = found is not None and found.differs == probe_keys.KEEPS_FLOAT32
            in_float32 = rt == "openvino" or (
                domain == "com.microsoft" and registry.get(target).float16_in_float32("MatMul", "", 19))
            codes = {p.code for p in predict.findings_in(a, [target])}
            assert ("QT409" in codes) is (kept and in_float32), (target, domain)
            seen.add((rt, domain, kept and in_float32))
    assert {("onnxruntime", "com.microsoft", True), ("onnxruntime", "ai.onnx", False),
            ("openvino", "ai.onnx", True)} <= seen


def test_qt409_is_not_claimed_where_the_probe_rounds_as_the_page(monkeypatch):
    """A release whose float16-casts probe gave the page's codes gets no QT409, though its
    kernel registry runs the nodes in float32."""
    from test_targets_divergence import f16_matmul_block

    from qlin_cli.targets import probe_keys
    from qlin_cli.targets.probe_table import Outcome

    key = f"{probe_keys.FLOAT16_CASTS} com.microsoft:DequantizeLinear-1 -> com.microsoft:QuantizeLinear-1"
    target = registry.get("onnxruntime@1.31")
    assert "QT409" in predicted(f16_matmul_block("com.microsoft"), "onnxruntime@1.31")
    monkeypatch.setitem(target.probes._keys, key, Outcome(1, 0))
    assert "QT409" not in predicted(f16_matmul_block("com.microsoft"), "onnxruntime@1.31")


def test_qt406_says_what_the_release_does_instead():
    """QT406's message follows the release's dequantize probe: openvino 2024.0 to 2026.3 write
    float32 where output_dtype asks for float16, 2026.4 rounds the float32 scale to float16
    first."""
    from test_targets_divergence import dequantize

    q = np.arange(-128, 127, dtype=np.int8)
    model = dequantize(q, np.float32(0.3105), opset=23, attrs={"output_dtype": TensorProto.FLOAT16})

    def said(target):
        return [p.message for p in predict.findings(model, "", [target]) if p.code == "QT406"]

    assert ["written as float32, not float16" in m for m in said("openvino@2025.3")] == [True]
    assert ["rounded to float16 before it multiplies" in m for m in said("openvino@2026.4")] == [True]
    assert said("onnxruntime@1.31") == []


def test_the_division_probes_of_an_int32_scale_tell_its_integer_quotient_apart():
    """An int32 scale's division probes quantize ties of x / 2 to float8: the page's int32
    quotient rounds them to even integers (3.5 -> 4, -0.5 -> +0), a division in float keeps
    them; both as codes, each exact in the float8 type."""
    seen = [(k, m, f) for k, m, f in _probes("division") if ",int32)" in k]
    assert {k.split("(")[1].split(")")[0] for k, _, _ in seen} == {
        "int32,int32", "float,int32", "float16,int32", "bfloat16,int32"}
    assert {k.split("QuantizeLinear-")[1].split("(")[0] for k, _, _ in seen if "(int32,int32)" in k} == {
        "19", "21", "23", "24", "25", "28"}
    for key, model, feeds in seen:
        out = dtypes.name_of(model.graph.initializer[1].data_type)
        assert out in probe_quantize.INTEGER_OUTPUTS, key
        x = np.resize(np.array(probe_quantize.HALVES, np.float64), probe_quantize.SHAPE)  # bfloat16's as bits
        as_values = {n: np.asarray(feeds[f"expect:{n}"], np.uint8).view(dtypes.BY_NAME[out].numpy)
                     .astype(float) for n in ("spec", "divides in int32", "divides in float")}
        assert np.array_equal(as_values["spec"], np.rint(x / 2) + 0.0), key
        assert np.array_equal(feeds["expect:spec"], feeds["expect:divides in int32"]), key
        assert np.array_equal(as_values["divides in float"], x / 2), key


def _mixed(opset, x_type, scale_type, q_type, x=(1.0, 2.0)):
    """A QuantizeLinear of ``x_type`` x by a scalar 2 of ``scale_type`` to ``q_type``."""
    scale = np.asarray(2.0).astype(dtypes.BY_NAME[scale_type].numpy)
    zp = np.zeros((), dtypes.BY_NAME[q_type].numpy)
    return quantize(np.asarray(x, np.float32), scale, zp, opset=opset, x_type=dtypes.BY_NAME[x_type].proto)


# what openvino 2026.4.1 measured on the probes these keys name (not yet in its data file):
# float16 x by a bfloat16 scale, int32 x by a float16 or bfloat16 one and an int32 scale with
# any x are divided in float32
@pytest.mark.parametrize(("opset", "x_type", "scale_type", "q_type", "said"), [
    (23, "float16", "bfloat16", "int8", "(float16 / bfloat16) is done in float32, not in bfloat16"),
    (25, "int32", "float16", "int16", "(int32 / float16) is done in float32, not in float16"),
    (24, "int32", "bfloat16", "float8e5m2", "(int32 / bfloat16) is done in float32, not in bfloat16"),
    (19, "int32", "int32", "float8e4m3fn", "(int32 / int32) is done in float32, not in int32: the quotient "
                                           "keeps its fraction into float8e4m3fn"),
    (23, "float", "int32", "float8e5m2", "(float / int32) is done in float32, not in int32"),
    (23, "float", "int32", "int8", None),  # an integer output rounds either quotient to an integer
])
def test_qt401_follows_the_division_probe_of_mixed_and_int32_scales(monkeypatch, opset, x_type, scale_type,
                                                                   q_type, said):
    from qlin_cli.targets import probe_keys
    from qlin_cli.targets.probe_table import Outcome

    model = _mixed(opset, x_type, scale_type, q_type)
    key = probe_keys.quantize_probe("division", "ai.onnx", "QuantizeLinear", opset, x_type, scale_type,
                                    "per-tensor")
    target = registry.get("openvino@2026.4")
    monkeypatch.setitem(target.table._keys, key, Outcome(0, 2, "differs: divides in float"))
    found = [f.message for f in predict.findings(model, "", ["openvino@2026.4"]) if f.code == "QT401"]
    if said is None:
        assert found == []
    else:
        assert len(found) == 1 and said in found[0], found
    monkeypatch.setitem(target.table._keys, key, Outcome(2, 0))  # a release dividing as the page
    assert "QT401" not in predicted(model, "openvino@2026.4")


def test_the_float8_probes_of_an_mx_scale_and_qt403():
    """QuantizeLinear-24 and later take a float8e8m0 scale (MX blocks): float8 probes of each
    float8 type with that scale too, and QT403 from them (openvino 2026.4.1 converts through
    float16 with it as with a float scale: its probes' outcome, not yet in its data file)."""
    from qlin_cli.targets import probe_keys
    from qlin_cli.targets.probe_table import Outcome

    mx = [k for k in _all_probes() if k[0].startswith("float8 ") and ",float8e8m0)" in k[0]]
    assert len(mx) == 72  # 4 float8 types x saturate 0 and 1 x 3 granularities x versions 24, 25, 28
    for key, _, feeds in mx:
        assert np.array_equal(feeds["expect:spec"], _all_float_scale_twin(key)), key
    model = _mixed(24, "float", "float8e8m0", "float8e4m3fn")
    key = probe_keys.quantize_probe("float8 float8e4m3fn saturate=1", "ai.onnx", "QuantizeLinear", 24,
                                    "float", "float8e8m0", "per-tensor")
    target = registry.get("openvino@2026.4")
    target.table._keys[key] = Outcome(0, 1, f"differs: {probe_keys.THROUGH_FLOAT16}")
    try:
        assert "QT403" in predicted(model, "openvino@2026.4")
    finally:
        del target.table._keys[key]


def _all_float_scale_twin(key: str) -> np.ndarray:
    """The page's codes of the float8 probe with a float scale of 1 that ``key`` (a float8e8m0
    scale of 1) mirrors: dividing by 1 in either is the conversion alone."""
    twin = key.replace(",float8e8m0)", ",float)")
    return next(f["expect:spec"] for k, _, f in _all_probes() if k == twin)


def _near_ties():
    return [p for p in _all_probes() if p[0].startswith("near ties ")]


def test_the_near_ties_probes_tell_an_offset_in_float32_apart():
    """Each 16-bit output (int16 with zero point 0, uint16 with 32768) of float32 and int32 x
    by a float32 scale, at each version and granularity that takes them: the page's result
    is the float32 quotient rounded half to even plus the zero point (17 / 0.33663276 =
    50.500137 gives 51), and what adding 32768 in float32 first gives differs in every
    value (50)."""
    from qlin_cli.targets import probe_keys

    seen = _near_ties()
    # int16 and uint16 x tensor / axis / blocked: float x at 21, float and int32 x at 23, 24,
    # 25 and 28; com.microsoft float x per tensor and per axis
    assert len(seen) == 6 + 4 * 12 + 4 and len({k for k, _, _ in seen}) == len(seen)
    assert {k.split(" ")[2] for k, _, _ in seen} == {"int16", "uint16"}
    assert {k.split("(")[1].split(")")[0] for k, _, _ in seen} == {"float,float", "int32,float"}
    x = np.resize(np.array(probe_quantize.NEAR_TIES_X, np.float32), probe_quantize.SHAPE)
    quotient = x / np.float32(probe_quantize.NEAR_TIES_SCALE)  # float32: the scale's type
    assert quotient[0, 0] == np.float32(50.500137)
    for key, model, feeds in seen:
        out = dtypes.name_of(model.graph.initializer[1].data_type)
        zp = probe_quantize.NEAR_TIES_ZERO_POINTS[out]
        assert np.array_equal(feeds["expect:spec"], np.rint(quotient) + zp), key
        other = feeds[f"expect:{probe_keys.OFFSET_FIRST}"]
        assert (other != feeds["expect:spec"]).all(), key
        # the sum 32768 + quotient held in float32 (8 fraction bits), rounded to even
        summed = np.rint((quotient + np.float32(32768)).astype(np.float32)) - 32768
        assert np.array_equal(other, summed + zp), key


def test_the_near_ties_probes_expect_what_onnx_reference_computes():
    """Where onnx.reference has the op (ai.onnx), its results are the probes' expect:spec."""
    from onnx.reference import ReferenceEvaluator

    seen = [p for p in _near_ties() if " ai.onnx:" in p[0]]
    assert len(seen) == 54
    for key, model, feeds in seen:
        ref = np.asarray(ReferenceEvaluator(model).run(None, {"x": feeds["x"]})[0]).astype(np.int64)
        assert np.array_equal(ref, feeds["expect:spec"]), key


@pytest.mark.parametrize(("target", "opset", "x_type", "q_type", "zp"), [
    ("openvino@2026.4", 21, "float", "int16", 0),
    ("openvino@2026.4", 23, "int32", "int16", 0),
    ("openvino@2026.4", 25, "float", "uint16", 32768),
    ("onnxruntime@1.31", 21, "float", "uint16", 0),
])
def test_qt412_follows_the_near_ties_probe(monkeypatch, target, opset, x_type, q_type, zp):
    """QT412 where the release's near-ties probe of the node's kind and output type measured
    an offset added in float32 before rounding, with the arithmetic in its message; not
    where it rounds as the page, nor for the other 16-bit type or an 8-bit output."""
    from qlin_cli.targets import probe_keys
    from qlin_cli.targets.probe_table import Outcome

    x = np.asarray([17.0, 85.0], np.float32)
    model = quantize(x, np.float32(0.33663276), np.asarray(zp, dtypes.BY_NAME[q_type].numpy), opset=opset,
                     x_type=dtypes.BY_NAME[x_type].proto)
    key = probe_keys.quantize_probe(f"{probe_keys.NEAR_TIES} {q_type}", "ai.onnx", "QuantizeLinear", opset,
                                    x_type, "float", "per-tensor")
    entries = registry.get(target).probe_data._keys  # the release's probe table, loaded once
    monkeypatch.setitem(entries, key, Outcome(0, 2, f"differs: {probe_keys.OFFSET_FIRST}"))
    found = [f.message for f in predict.findings(model, "", [target]) if f.code == "QT412"]
    assert len(found) == 1 and q_type in found[0], found
    assert "17 / 0.33663276 = 50.500137 gives 50 where the page gives 51" in found[0], found
    other = "uint16" if q_type == "int16" else "int16"
    twin = quantize(x, np.float32(0.33663276), np.asarray(0, dtypes.BY_NAME[other].numpy), opset=opset,
                    x_type=dtypes.BY_NAME[x_type].proto)
    twin_key = probe_keys.quantize_probe(f"{probe_keys.NEAR_TIES} {other}", "ai.onnx", "QuantizeLinear",
                                         opset, x_type, "float", "per-tensor")
    own = registry.get(target).probe_data.exact(twin_key)  # the other type answers from its own probe
    assert ("QT412" in predicted(twin, target)) == bool(own is not None and own.differs), own
    eight = quantize(x, np.float32(0.33663276), np.int8(0), opset=opset, x_type=dtypes.BY_NAME[x_type].proto)
    assert "QT412" not in predicted(eight, target)
    monkeypatch.setitem(entries, key, Outcome(0, 2, "differs: got 52 where the page gives 51"))
    found = [f.message for f in predict.findings(model, "", [target]) if f.code == "QT412"]
    assert len(found) == 1 and "got 52 where the page gives 51" in found[0], found
    monkeypatch.setitem(entries, key, Outcome(2, 0))  # a release rounding as the page
    assert "QT412" not in predicted(model, target)
