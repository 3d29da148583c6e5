"""The onnxruntime CPU kernel table: it is current, and its predictions match onnxruntime.

The differential cases build one-node models whose inputs are all initializers,
load them with graph optimisations disabled (so the node reaches kernel lookup
unchanged) and run them.  Each case is first checked to be valid for the ONNX
schema, so a failure can only come from kernel availability.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from qlin_cli.targets import data_files, kernel_store, ort_table, releases

ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
NO_KERNEL = "Could not find an implementation"
CPU = "CPUExecutionProvider"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_ort_kernels", ROOT / "tools" / "gen_ort_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table():
    if ort.__version__ not in ort_table.available_versions():
        pytest.skip(f"no bundled table for installed onnxruntime {ort.__version__}")
    return ort_table.load(ort.__version__)


# ---------------------------------------------------------------------------
# The bundled file is what the generator writes today
# ---------------------------------------------------------------------------


def test_bundled_json_matches_regenerated_table():
    bundled = ort_table.available_versions()
    if ort.__version__ not in bundled:
        pytest.skip(f"installed onnxruntime {ort.__version__} differs from bundled tables {bundled}")
    gen = _generator()
    expected = gen.render(gen.build_table())
    actual = gen.render(kernel_store.table("onnxruntime", ort.__version__))
    if actual != expected:
        old = set(actual.splitlines())
        new = set(expected.splitlines())
        diff = sorted(f"- {line}" for line in old - new)[:10] + sorted(f"+ {line}" for line in new - old)[:10]
        pytest.fail("bundled table is stale; rerun python tools/gen_ort_kernels.py\n" + "\n".join(diff))


def test_bundled_json_is_small_and_plain(table):
    raw = data_files.raw(kernel_store.file_name("onnxruntime"))
    assert len(raw) < 1_000_000  # every release: each registration once, with the releases that have it
    data = kernel_store.table("onnxruntime", table.version, json.loads(raw))
    assert data["source"] == "python tools/gen_ort_kernels.py"
    assert all(k["until"] is None or k["since"] <= k["until"] < 2147483647 for k in data["kernels"])
    type_names = {t for k in data["kernels"] for ts in k["constraints"].values() for t in ts}
    assert not any(t.startswith("tensor(") for t in type_names)
    assert {"float", "int8", "int4", "float8e4m3fn", "seq(tensor(float))"} <= type_names


def test_the_store_gives_every_release_back_in_the_generators_order():
    """Folding the releases' tables and reading each back gives each table as measured: the
    rows it had, in the order tools/gen_ort_kernels.py sorts them, and its own fields."""
    gen = _generator()
    keys = {"kernels": gen.kernel_sort_key, "schemas": kernel_store.row_text}
    have = {v: kernel_store.table("onnxruntime", v) for v in kernel_store.releases("onnxruntime")}
    assert len(have) >= 15
    for v, t in have.items():
        assert t["onnxruntime_version"] == v
        assert t["kernels"] == sorted(t["kernels"], key=keys["kernels"]) and len(t["kernels"]) > 900
    again = json.loads(kernel_store.dumps(kernel_store.fold("onnxruntime", have, releases.key, keys)))
    assert {v: kernel_store.table("onnxruntime", v, again) for v in have} == have
    # a release that drops a row and a later one that has it again: two spans
    a, b, c = (dict(have["1.31.1"], onnxruntime_version=v) for v in ("9.0.0", "9.1.0", "9.2.0"))
    b = dict(b, kernels=b["kernels"][1:])
    three = kernel_store.fold("onnxruntime", {"9.0.0": a, "9.1.0": b, "9.2.0": c}, releases.key, keys)
    assert three["kernels"][0][0] == [["9.0.0", "9.0.0"], ["9.2.0", None]]
    assert [kernel_store.table("onnxruntime", v, three) for v in ("9.0.0", "9.1.0", "9.2.0")] == [a, b, c]


def test_a_release_read_op_by_op_is_the_release_read_whole():
    """ort_table.load reads an op's rows when the op is asked for (the file's bytes bisected
    by domain and op: kernel_store.release_rows); every release answers the same that way as
    its whole table does, for every op of the file."""
    ops = {(r["domain"], r["op"]) for field in kernel_store.LISTS
           for _, r in kernel_store._read("onnxruntime")[field]}
    for v in kernel_store.releases("onnxruntime"):
        whole = ort_table.OrtTable(kernel_store.table("onnxruntime", v))
        lazy = ort_table.OrtTable(*kernel_store.release_rows("onnxruntime", v))
        assert (lazy.version, lazy.max_opset, lazy.max_ir, lazy.domains) == (
            whole.version, whole.max_opset, whole.max_ir, whole.domains)
        for domain, op in ops:
            assert lazy.schema_versions(domain, op) == whole.schema_versions(domain, op), (v, op)
            assert lazy.kernels(domain, op) == whole.kernels(domain, op), (v, op)
            for since in whole.schema_versions(domain, op):
                assert lazy.signature(domain, op, since) == whole.signature(domain, op, since)
        assert lazy.kernels("", "NoSuchOp") == () and lazy.schema_versions("x.y", "Abs") == ()
    with pytest.raises(LookupError):
        kernel_store.release_rows("onnxruntime", "0.1.0")


def test_limits_were_measured(table):
    def loads(opset, ir):
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = ir
        try:
            ort.InferenceSession(model.SerializeToString(), _quiet_options(), providers=[CPU])
        except Exception:
            return False
        return True

    assert loads(table.max_opset, table.max_ir)
    assert not loads(table.max_opset + 1, table.max_ir)
    assert not loads(table.max_opset, table.max_ir + 1)


# ---------------------------------------------------------------------------
# Loader rules on a hand-written table (no onnxruntime involved)
# ---------------------------------------------------------------------------

_SYNTHETIC = {
    "format": 1,
    "onnxruntime_version": "0.0.1",
    "provider": "CPUExecutionProvider",
    "source": "hand-written",
    "max_opset": 30,
    "max_ir": 13,
    "schemas": [
        {"domain": "", "op": "Op", "versions": [1, 5, 9, 12]},
        {"domain": "com.example", "op": "Pair", "versions": [1]},
    ],
    "kernels": [
        {"domain": "", "op": "Op", "since": 1, "until": 8, "constraints": {"T": ["float"]}},
        {"domain": "", "op": "Op", "since": 9, "until": None, "constraints": {"T": ["float", "int8"]}},
        {"domain": "com.example", "op": "Pair", "since": 1, "until": None,
         "constraints": {"A": ["uint8"], "B": ["uint8", "int8"]}},
        {"domain": "com.example", "op": "Pair", "since": 1, "until": None,
         "constraints": {"A": ["int8"], "B": ["int8"]}},
    ],
}


def test_opset_maps_through_schema_version():
    t = ort_table.from_json(json.dumps(_SYNTHETIC))
    assert t.schema_version("", "Op", 7) == 5
    assert t.kernel("", "Op", 0) is None  # before the first schema
    assert t.kernel("", "Op", 1).since == 1
    assert t.kernel("ai.onnx", "Op", 5).since == 1  # schema 5 lies inside the closed range 1..8
    assert t.kernel("", "Op", 9).since == 9
    assert t.kernel("", "Op", 11).since == 9  # schema 9 still in force
    # schema 12 exists and the open-ended kernel starts at 9: onnxruntime does not stretch it
    assert t.kernel("", "Op", 12) is None
    assert t.kernel("", "Missing", 12) is None


def test_types_are_matched_per_registration():
    t = ort_table.from_json(json.dumps(_SYNTHETIC))
    k = t.kernel("com.example", "Pair", 1)
    assert k.constraints == {"A": ("int8", "uint8"), "B": ("int8", "uint8")}
    assert t.allows(k, "A", "int8") and t.allows(k, "B", "tensor(uint8)")
    assert not t.allows(k, "A", "float")
    assert k.accepts({"A": "uint8", "B": "int8"})
    assert not k.accepts({"A": "int8", "B": "uint8"})  # each name allowed alone, not together
    assert t.allows(k, "C", "float") and not k.constrains("C")  # unconstrained: onnxruntime does not check


def test_load_picks_versions():
    assert ort_table.load() is ort_table.load(ort_table.available_versions()[-1])
    with pytest.raises(LookupError):
        ort_table.load("0.0.0")


# ---------------------------------------------------------------------------
# Differential: the table's prediction against loading and running onnxruntime
# ---------------------------------------------------------------------------

_TYPES = {
    name: getattr(TensorProto, name.upper())
    for name in (
        "float", "float16", "bfloat16", "double", "int32", "int16", "uint16", "int8", "uint8",
        "int4", "uint4", "int2", "uint2", "float8e4m3fn", "float8e5m2", "float8e8m0", "float4e2m1",
    )
}

# Per operator family: (input name, constraint name or fixed type, shape).  The
# element type of each input is the type the case assigns to that constraint.
_X = [2, 4]
SIG = {
    "QL10": [("x", "T1", _X), ("s", "float", []), ("zp", "T2", [])],
    "QL19": [("x", "T1", _X), ("s", "T1", []), ("zp", "T2", [])],
    "QL23": [("x", "T1", _X), ("s", "T2", []), ("zp", "T3", [])],
    "DQ10": [("x", "T", _X), ("s", "float", []), ("zp", "T", [])],
    "DQ19": [("x", "T1", _X), ("s", "T2", []), ("zp", "T1", [])],
    "MSQL": [("x", "T1", _X), ("s", "T1", []), ("zp", "T2", [])],
    "MSDQ": [("x", "T1", _X), ("s", "T2", []), ("zp", "T1", [])],
    "QCONV": [
        ("x", "T1", [1, 1, 3, 3]), ("xs", "float", []), ("xzp", "T1", []),
        ("w", "T2", [1, 1, 2, 2]), ("ws", "float", []), ("wzp", "T2", []),
        ("ys", "float", []), ("yzp", "T3", []),
    ],
    "MMI": [("a", "T1", [2, 3]), ("b", "T2", [3, 2])],
    "DYNQ": [("x", "T1", [4])],
    "NBITS": [("a", "T1", [1, 16]), ("b", "T2", [2, 1, 8]), ("s", "T1", [2])],
    "NBITS_ZP": [("a", "T1", [1, 16]), ("b", "T2", [2, 1, 8]), ("s", "T1", [2]), ("zp", "T3", [2])],
    "POOL": [("x", "T", [1, 1, 2, 2])],
}
NBITS_ATTRS = {"K": 16, "N": 2, "bits": 4, "block_size": 16}
MS = "com.microsoft"

# (domain, op, opset imported for that domain, signature, {constraint: type})
CASES = [
    ("", "QuantizeLinear", 10, "QL10", {"T1": "float", "T2": "uint8"}),
    ("", "QuantizeLinear", 13, "QL10", {"T1": "float", "T2": "int8"}),
    ("", "QuantizeLinear", 13, "QL10", {"T1": "int32", "T2": "int8"}),
    ("", "QuantizeLinear", 18, "QL10", {"T1": "float", "T2": "uint8"}),
    ("", "QuantizeLinear", 19, "QL19", {"T1": "float16", "T2": "int8"}),
    ("", "QuantizeLinear", 19, "QL19", {"T1": "float", "T2": "float8e4m3fn"}),
    ("", "QuantizeLinear", 19, "QL19", {"T1": "bfloat16", "T2": "int8"}),
    ("", "QuantizeLinear", 19, "QL19", {"T1": "int32", "T2": "uint8"}),
    ("", "QuantizeLinear", 21, "QL19", {"T1": "float", "T2": "int4"}),
    ("", "QuantizeLinear", 21, "QL19", {"T1": "float16", "T2": "uint16"}),
    ("", "QuantizeLinear", 21, "QL19", {"T1": "bfloat16", "T2": "int8"}),
    ("", "QuantizeLinear", 22, "QL19", {"T1": "float", "T2": "int16"}),
    ("", "QuantizeLinear", 23, "QL23", {"T1": "float", "T2": "float", "T3": "int8"}),
    ("", "QuantizeLinear", 23, "QL23", {"T1": "float16", "T2": "float16", "T3": "uint4"}),
    ("", "QuantizeLinear", 23, "QL23", {"T1": "float", "T2": "float", "T3": "float4e2m1"}),
    ("", "QuantizeLinear", 23, "QL23", {"T1": "bfloat16", "T2": "bfloat16", "T3": "int8"}),
    ("", "QuantizeLinear", 23, "QL23", {"T1": "int32", "T2": "int32", "T3": "int8"}),
    ("", "QuantizeLinear", 24, "QL23", {"T1": "float", "T2": "float8e8m0", "T3": "int8"}),
    ("", "QuantizeLinear", 25, "QL23", {"T1": "float", "T2": "float", "T3": "int2"}),
    ("", "QuantizeLinear", 25, "QL23", {"T1": "float16", "T2": "float16", "T3": "uint2"}),
    ("", "QuantizeLinear", 26, "QL23", {"T1": "float", "T2": "float", "T3": "int8"}),
    ("", "DequantizeLinear", 10, "DQ10", {"T": "uint8"}),
    ("", "DequantizeLinear", 10, "DQ10", {"T": "int32"}),
    ("", "DequantizeLinear", 13, "DQ10", {"T": "int8"}),
    ("", "DequantizeLinear", 19, "DQ19", {"T1": "float8e4m3fn", "T2": "float"}),
    ("", "DequantizeLinear", 19, "DQ19", {"T1": "int8", "T2": "float16"}),
    ("", "DequantizeLinear", 19, "DQ19", {"T1": "int8", "T2": "bfloat16"}),
    ("", "DequantizeLinear", 21, "DQ19", {"T1": "int4", "T2": "float"}),
    ("", "DequantizeLinear", 21, "DQ19", {"T1": "uint16", "T2": "float16"}),
    ("", "DequantizeLinear", 21, "DQ19", {"T1": "int8", "T2": "bfloat16"}),
    ("", "DequantizeLinear", 23, "DQ19", {"T1": "int32", "T2": "float16", "T3": "float16"}),
    ("", "DequantizeLinear", 23, "DQ19", {"T1": "uint8", "T2": "float16", "T3": "float"}),
    ("", "DequantizeLinear", 23, "DQ19", {"T1": "float4e2m1", "T2": "float", "T3": "float"}),
    ("", "DequantizeLinear", 24, "DQ19", {"T1": "int8", "T2": "float8e8m0", "T3": "float"}),
    ("", "DequantizeLinear", 25, "DQ19", {"T1": "int2", "T2": "float", "T3": "float"}),
    ("", "DequantizeLinear", 25, "DQ19", {"T1": "uint2", "T2": "float16", "T3": "float16"}),
    ("", "QLinearConv", 10, "QCONV", {"T1": "uint8", "T2": "uint8", "T3": "uint8"}),
    ("", "QLinearConv", 10, "QCONV", {"T1": "uint8", "T2": "int8", "T3": "uint8"}),
    ("", "QLinearConv", 21, "QCONV", {"T1": "int8", "T2": "int8", "T3": "int8"}),
    ("", "QLinearConv", 21, "QCONV", {"T1": "int8", "T2": "uint8", "T3": "int8"}),
    ("", "QLinearConv", 21, "QCONV", {"T1": "uint8", "T2": "int8", "T3": "int8"}),
    ("", "MatMulInteger", 10, "MMI", {"T1": "uint8", "T2": "uint8", "T3": "int32"}),
    ("", "MatMulInteger", 13, "MMI", {"T1": "uint8", "T2": "int8", "T3": "int32"}),
    ("", "MatMulInteger", 21, "MMI", {"T1": "int8", "T2": "int8", "T3": "int32"}),
    ("", "MatMulInteger", 21, "MMI", {"T1": "int8", "T2": "uint8", "T3": "int32"}),
    ("", "DynamicQuantizeLinear", 11, "DYNQ", {"T1": "float", "T2": "uint8"}),
    ("", "DynamicQuantizeLinear", 21, "DYNQ", {"T1": "float", "T2": "uint8"}),
    (MS, "QuantizeLinear", 1, "MSQL", {"T1": "float", "T2": "uint8"}),
    (MS, "QuantizeLinear", 1, "MSQL", {"T1": "float", "T2": "int16"}),
    (MS, "QuantizeLinear", 1, "MSQL", {"T1": "float", "T2": "uint4"}),
    (MS, "QuantizeLinear", 1, "MSQL", {"T1": "float16", "T2": "uint8"}),
    (MS, "DequantizeLinear", 1, "MSDQ", {"T1": "int8", "T2": "float"}),
    (MS, "DequantizeLinear", 1, "MSDQ", {"T1": "int4", "T2": "float"}),
    (MS, "DequantizeLinear", 1, "MSDQ", {"T1": "int8", "T2": "float16"}),
    (MS, "MatMulNBits", 1, "NBITS", {"T1": "float", "T2": "uint8"}),
    (MS, "MatMulNBits", 1, "NBITS", {"T1": "float16", "T2": "uint8"}),
    (MS, "MatMulNBits", 1, "NBITS", {"T1": "bfloat16", "T2": "uint8"}),
    (MS, "MatMulNBits", 1, "NBITS_ZP", {"T1": "float", "T2": "uint8", "T3": "uint8"}),
    (MS, "MatMulNBits", 1, "NBITS_ZP", {"T1": "float", "T2": "uint8", "T3": "float"}),
    (MS, "MatMulNBits", 1, "NBITS_ZP", {"T1": "float", "T2": "uint8", "T3": "float16"}),
    # the opset -> schema -> kernel rule: GlobalLpPool has one open-ended kernel from 2,
    # and a schema 22 that no kernel covers
    ("", "GlobalLpPool", 21, "POOL", {"T": "float"}),
    ("", "GlobalLpPool", 22, "POOL", {"T": "float"}),
]

_OUTPUTS = {"DynamicQuantizeLinear": ["y", "y_scale", "y_zero_point"]}


def _case_id(case):
    domain, op, opset, _sig, types = case
    return f"{domain or 'ai.onnx'}.{op}-{opset}-" + "-".join(f"{k}={v}" for k, v in types.items())


def _initializer(name: str, type_name: str, shape: list[int]) -> onnx.TensorProto:
    count = int(np.prod(shape)) if shape else 1
    if name in ("s", "xs", "ws", "ys"):
        values = [1.0] * count  # scales: 1.0 is representable in every scale type, float8e8m0 included
    elif name.endswith("zp"):
        values = [0] * count
    else:
        values = [1] * count
    return helper.make_tensor(name, _TYPES[type_name], shape, values)


def build_case(domain, op, opset, sig, types, ir_version):
    inits = []
    for name, ref, shape in SIG[sig]:
        inits.append(_initializer(name, types.get(ref, ref), shape))
    attrs = dict(NBITS_ATTRS) if op == "MatMulNBits" else {}
    if op == "DequantizeLinear" and "T3" in types and types["T3"] != types["T2"]:
        attrs["output_dtype"] = _TYPES[types["T3"]]
    outputs = _OUTPUTS.get(op, ["y"])
    node = helper.make_node(op, [i.name for i in inits], outputs, domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "case", [], [onnx.ValueInfoProto(name=o) for o in outputs], initializer=inits
    )
    imports = [helper.make_opsetid("", opset if not domain else 21)]
    if domain:
        imports.append(helper.make_opsetid(domain, opset))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_version
    return model


def assert_schema_valid(model):
    """Strict ONNX type/shape inference plus the full checker (outputs typed from inference)."""
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    typed = onnx.ModelProto()
    typed.CopyFrom(model)
    known = {vi.name: vi for vi in inferred.graph.value_info}
    known.update({vi.name: vi for vi in inferred.graph.output if vi.HasField("type")})
    del typed.graph.output[:]
    typed.graph.output.extend(known[o] for o in model.graph.node[0].output)
    onnx.checker.check_model(typed, full_check=True)


def _quiet_options():
    options = ort.SessionOptions()
    options.log_severity_level = 4
    return options


def ort_outcome(model):
    """('ok' | 'load' | 'run', message): how far onnxruntime gets with the model."""
    options = _quiet_options()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=[CPU])
    except Exception as exc:
        return "load", str(exc)
    try:
        session.run_with_ort_values(None, {})
    except Exception as exc:
        return "run", str(exc)
    return "ok", ""


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_table_prediction_matches_onnxruntime(table, case):
    domain, op, opset, sig, types = case
    model = build_case(domain, op, opset, sig, types, table.max_ir)
    if not domain:
        assert_schema_valid(model)  # so that only kernel availability can make onnxruntime refuse it

    found = table.match(domain, op, opset, types)
    if found is not None and not found.float16_cast:
        assert all(table.allows(found.kernel, name, t) for name, t in types.items())
    stage, message = ort_outcome(model)
    if found is not None:
        assert stage == "ok", f"table predicts {found} but onnxruntime failed at {stage}: {message[:300]}"
    else:
        assert stage == "load" and NO_KERNEL in message, (
            f"table has no kernel but onnxruntime got to {stage!r}: {message[:300]}"
        )


def test_sample_covers_every_outcome(table):
    found = [table.match(domain, op, opset, types) for domain, op, opset, _sig, types in CASES]
    assert sum(m is not None and not m.float16_cast for m in found) >= 20
    assert sum(m is None for m in found) >= 10
    assert sum(m is not None and m.float16_cast for m in found) >= 3


def test_combination_matters_where_the_union_would_say_yes(table):
    k = table.kernel("", "QLinearConv", 21)
    assert table.allows(k, "T1", "int8") and table.allows(k, "T2", "uint8")
    assert not k.accepts({"T1": "int8", "T2": "uint8"})
    assert table.match("", "QLinearConv", 21, {"T1": "int8", "T2": "uint8", "T3": "int8"}) is None


@pytest.mark.parametrize(
    "domain,op,types",
    [
        (MS, "QuantizeLinear", {"T1": "float16", "T2": "uint8"}),
        (MS, "DequantizeLinear", {"T1": "int8", "T2": "float16"}),
        (MS, "MatMulNBits", {"T1": "float", "T2": "uint8", "T3": "float16"}),
    ],
)
def test_float16_without_kernel_runs_through_casts(table, domain, op, types):
    kernel = table.kernel(domain, op, 1)
    assert not kernel.accepts(types)  # the registry alone says no ...
    found = table.match(domain, op, 1, types)
    assert found is not None and found.float16_cast  # ... onnxruntime casts to float (checked in the cases)
    bf16 = {name: "bfloat16" if t == "float16" else t for name, t in types.items()}
    assert table.match(domain, op, 1, bf16) is None


@pytest.mark.parametrize("x_type,scale_type", [("float", "float16"), ("float16", "float")])
def test_mixed_x_and_scale_types_pass_the_registry_but_fail_at_run(table, x_type, scale_type):
    """QuantizeLinear-23+ lets x and y_scale differ; the CPU kernel registry accepts the pair,
    yet the kernel reads both with x's type and fails on the first run (see the notes doc)."""
    types = {"T1": x_type, "T2": scale_type, "T3": "int8"}
    for opset in (23, 25):
        model = build_case("", "QuantizeLinear", opset, "QL23", types, table.max_ir)
        assert_schema_valid(model)
        assert table.kernel("", "QuantizeLinear", opset).accepts(types)
        assert not table.match("", "QuantizeLinear", opset, types).float16_cast
        stage, message = ort_outcome(model)
        assert stage == "run" and "Tensor type mismatch" in message, (stage, message[:300])
