"""tools/probe_runner.py: outcomes are written case by case, and a case that kills the
runtime's process is recorded as a crash while the others still run (openvino 2025.3 died of
SIGSEGV on one of the bench's models and took every outcome with it)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import probe_runner  # noqa: E402

# Stands for the runtime's python: writes "ok" for each case not done yet, and dies of
# SIGSEGV at case "c1", as openvino did.
FAKE = """#!{python}
import json, os, signal, sys
folder = sys.argv[3]
cases = json.load(open(folder + "/cases.json"))
done = {{}}
if os.path.exists(folder + "/results.jsonl"):
    done = dict(json.loads(line) for line in open(folder + "/results.jsonl"))
with open(folder + "/results.jsonl", "a") as out:
    for case in cases:
        if case in done:
            continue
        if case == "c1":
            os.kill(os.getpid(), signal.SIGSEGV)
        out.write(json.dumps([case, "ok"]) + "\\n")
        out.flush()
"""


def test_a_crashing_case_is_recorded_and_the_rest_still_run(tmp_path):
    (tmp_path / "cases.json").write_text(json.dumps({f"c{i}": {} for i in range(4)}))
    (tmp_path / "results.jsonl").write_text(json.dumps(["c0", "left from another release"]) + "\n")
    fake = tmp_path / "python"
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = probe_runner.run_all(str(fake), "openvino", tmp_path)
    assert out["c0"] == out["c2"] == out["c3"] == "ok"
    assert out["c1"].startswith("crash: exit status") and str(-11) in out["c1"]
    assert sorted(out) == ["c0", "c1", "c2", "c3"]
    assert os.path.exists(tmp_path / "results.jsonl")


def test_an_arithmetic_probe_runs_only_when_the_output_is_the_pages():
    """A probe with ``expect:`` results (tools/probe_quantize.py) is "ok" only when the
    runtime's output is the page's, and otherwise names what it computed instead, or the
    first value that differs."""
    expect = {"spec": np.array([116, 5]), "divides in float": np.array([117, 5]),
              "divides in float16": np.array([116, 5])}
    assert probe_runner._compared(np.array([116, 5], np.int8), expect) == "ok"
    assert probe_runner._compared(np.array([117, 5], np.int8), expect) == "differs: divides in float"
    got = probe_runner._compared(np.array([116, 3], np.int8), expect)
    assert got == "differs: got 3 where the page gives 5"
    assert probe_runner._compared(None, {}) == "ok"  # a probe of any other kind
    feeds, split = probe_runner._split({"x": np.ones(2), "expect:spec": np.ones(2)})
    assert list(feeds) == ["x"] and list(split) == ["spec"]


def test_a_probe_of_what_the_page_leaves_undefined_names_what_the_runtime_did():
    """The missing-axis probes carry no page's result: the outcome names the alternative the
    output equals, float outputs compared as they are (not truncated to integers), or shows
    the first values."""
    along = np.array([[0.5, 0.25], [1.5, 0.75]], np.float32)
    expect = {"reads along axis 1": along}
    assert probe_runner._compared(along.copy(), expect) == "differs: reads along axis 1"
    got = probe_runner._compared(along + np.float32(0.125), expect)
    assert got == "differs: got [0.625, 0.375, 1.625, 0.875]"
    assert probe_runner._compared(along.reshape(-1), expect).startswith("differs: got")  # another shape


def test_float16_results_are_compared_by_their_codes_and_another_type_is_named():
    """A dequantize probe's page result is float16 / bfloat16 codes: a 2-byte float output
    is compared by its bits (openvino hands bfloat16 over as a 2-byte float array), an output
    of another width is named ("writes float32")."""
    page = np.array([1.5, -2.25], np.float16)
    expect = {"spec": page.view(np.uint16)}
    assert probe_runner._compared(page.copy(), expect) == "ok"
    assert probe_runner._compared(page.astype(np.float32), expect) == "differs: writes float32"
    other = np.array([1.5, -2.5], np.float16)
    assert probe_runner._compared(other, expect).startswith("differs: got ")


def test_an_output_the_api_cannot_hand_over_is_unread_not_run(tmp_path):
    """onnxruntime runs a float8e5m2 QuantizeLinear, and its Python API has no numpy type
    for the output: the probe says so, and is no run and no difference."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    pytest.importorskip("onnxruntime")
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [onnx.ValueInfoProto(name="y")],
                              initializer=[numpy_helper.from_array(np.array(1.0, np.float32), "s"),
                                           helper.make_tensor("zp", TensorProto.FLOAT8E5M2, [], [0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, tmp_path / "m.onnx")
    feeds = {"x": np.ones(2, np.float32), "expect:spec": np.zeros(2)}
    got = probe_runner.run_onnxruntime(str(tmp_path / "m.onnx"), feeds, {"x": TensorProto.FLOAT})
    assert got.startswith(("unread: ", "differs: ")), got  # "differs" where a release hands it over

