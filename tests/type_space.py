"""The spec's whole type space of QuantizeLinear / DequantizeLinear, as matrix cases.

``test_targets_matrix.matrix()`` samples the space along a few lines (every quantized type at
float, every float type at int8, ...). This crosses it: for every ai.onnx version of each op,
every x type with every scale type the version allows beside it, each with every quantized
type; every quantized type at every granularity the version has (a scalar scale, a shape-[1]
scale, per-axis, blocked, and MX-style blocks of 32 with a float8e8m0 scale), with the zero
point present and absent; and every output_dtype a DequantizeLinear may name. Every case is
valid by qlin's spec rules (tests/test_type_space.py holds it; the probe generator checks
each case it makes a probe of).

The probe generator files each case under its key (tools/probe_models.py), so every release
is measured on every key of the space; ``pytest -m targets_full`` holds the installed releases'
verdicts to what they do with every case (tests/test_type_space.py).
"""

from __future__ import annotations

from itertools import product

from test_targets_matrix import MS, OPSETS, QUARK, Case

from qlin_cli.schema import lookup

SCALE_SHAPED = {"tensor": (4, 8), "tensor1": (4, 8), "axis": (4, 8), "block": (4, 8), "mx": (4, 64)}


def _grans(spec) -> list[str]:
    out = ["tensor", "tensor1"]
    if "per-axis" in spec.granularities:
        out.append("axis")
    if "blocked" in spec.granularities:
        out += ["block", "mx"]
    return out


def _case(kind, domain, opset, ft, st, qt, gran, zp="zero", out_dtype=False) -> Case:
    if gran == "mx":
        return Case(kind, domain, opset, ft, st, qt, "block", 1, 32, zp=zp, shape=(4, 64),
                    out_dtype=out_dtype)
    if gran == "axis":
        return Case(kind, domain, opset, ft, st, qt, "axis", 1, zp=zp, out_dtype=out_dtype)
    if gran == "block":
        return Case(kind, domain, opset, ft, st, qt, "block", 1, 4, zp=zp, out_dtype=out_dtype)
    return Case(kind, domain, opset, ft, st, qt, gran, zp=zp, out_dtype=out_dtype)


def _beside(spec, x: str) -> list[str]:
    """The scale types the version allows beside an x of type ``x`` (one type when the two
    share a type parameter, as QuantizeLinear-19 and -21's T1)."""
    if spec.inputs[0].types == spec.inputs[1].types:
        return [x]
    return sorted(spec.allowed(spec.inputs[1]))


def space() -> list[Case]:
    """Every case, in a fixed order, without repeats."""
    cases: list[Case] = []
    add = cases.append
    for opset in OPSETS:
        q = lookup("", "QuantizeLinear", opset)
        dq = lookup("", "DequantizeLinear", opset)
        scales = sorted(q.allowed(q.inputs[1]))
        for ft in sorted(q.allowed(q.inputs[0])):
            for st, qt in product(_beside(q, ft), sorted(q.quantized_types)):
                add(_case("q", "", opset, ft, st, qt, "tensor"))
        dq_scales = sorted(dq.allowed(dq.inputs[1]))
        floats = sorted(dq.allowed(dq.outputs[0]))
        for st, qt in product(dq_scales, sorted(dq.quantized_types)):
            # the output is the scale's type, or output_dtype's where the version has it
            for out in floats if "output_dtype" in dq.attributes else [st]:
                if out == st or st in floats:
                    add(_case("dq", "", opset, out, st, qt, "tensor", out_dtype=out != st))
                else:  # a scale no output can be (float8e8m0): output_dtype names the output
                    add(_case("dq", "", opset, out, st, qt, "tensor", out_dtype=True))
        for gran, zp in product(_grans(q), ("zero", "none")):
            mx = gran == "mx" and "float8e8m0" in scales
            for qt in sorted(q.quantized_types):
                add(_case("q", "", opset, "float", "float8e8m0" if mx else "float", qt, gran, zp))
            for qt in sorted(dq.quantized_types):
                scale = "float8e8m0" if mx else "float"
                add(_case("dq", "", opset, "float", scale, qt, gran, zp, out_dtype=mx))
    ms = lookup(MS, "QuantizeLinear", 1)
    ms_floats, quantized = sorted(ms.allowed(ms.inputs[0])), sorted(ms.quantized_types)
    for kind, ft, qt, gran in product(("q", "dq"), ms_floats, quantized,
                                      ("tensor", "tensor1", "axis")):
        for opset in (13, 21):
            add(_case(kind, MS, opset, ft, ft, qt, gran))
    _more(add)
    seen: set = set()
    return [c for c in cases if not (c in seen or seen.add(c))]


def _more(add) -> None:
    """The lines added after the first measurement (appended, so that every key measured
    before keeps its probe): x and scale types without a zero point, blocks along axis 0,
    of rank 3 and one block over the whole axis for every quantized type, com.microsoft
    DequantizeLinear of int32, and com.amd.quark's types."""
    for opset in OPSETS:
        q = lookup("", "QuantizeLinear", opset)
        dq = lookup("", "DequantizeLinear", opset)
        for ft in sorted(q.allowed(q.inputs[0])):
            for st in _beside(q, ft):
                add(_case("q", "", opset, ft, st, "uint8", "tensor", zp="none"))
        if "blocked" not in q.granularities:
            continue
        for spec, kind in ((q, "q"), (dq, "dq")):
            for qt, zp in product(sorted(spec.quantized_types), ("zero", "none")):
                add(Case(kind, "", opset, "float", "float", qt, "block", 0, 2, zp=zp))
                add(Case(kind, "", opset, "float", "float", qt, "block", 1, 8, zp=zp))
                add(Case(kind, "", opset, "float", "float", qt, "block", 2, 3, zp=zp, shape=(2, 4, 6)))
    for opset, gran in product((13, 21), ("tensor", "tensor1", "axis")):
        add(_case("dq", MS, opset, "float", "float", "int32", gran))
        quark = sorted(lookup(QUARK, "ExtendedQuantizeLinear", 1).quantized_types)
        for kind, qt in product(("q", "dq"), quark):
            add(_case(kind, QUARK, opset, "float", "float", qt, gran))
