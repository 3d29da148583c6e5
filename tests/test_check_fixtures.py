"""Every rule has a committed fixture that triggers it and a near miss that does not."""

from __future__ import annotations

import json
import os

import pytest
from paths import FIXTURES, MODELS

from qlin_cli import rules
from qlin_cli.check.engine import check_file

with open(os.path.join(MODELS, "manifest.json")) as f:
    MANIFEST: dict[str, list[str]] = json.load(f)


@pytest.mark.parametrize("rel", sorted(MANIFEST))
def test_fixture_raises_exactly_what_the_manifest_says(rel):
    result = check_file(os.path.join(MODELS, rel))
    assert result.error is None
    found = {d.code for d in result.diagnostics if d.severity != "info"}
    assert set(MANIFEST[rel]) <= found, (rel, found)
    if not MANIFEST[rel]:
        assert found == set(), [d.message for d in result.diagnostics]


@pytest.mark.parametrize("rule", rules.all_rules(), ids=lambda r: r.code)
def test_every_rule_has_a_triggering_and_a_clean_fixture(rule):
    bad = os.path.join(MODELS, f"rules/{rule.code}-bad.onnx")
    ok = os.path.join(MODELS, f"rules/{rule.code}-ok.onnx")
    select = None if rule.default else [rule.code]  # a rule off by default runs when selected
    bad_codes = {d.code for d in check_file(bad, select).diagnostics}
    ok_codes = {d.code for d in check_file(ok, select).diagnostics}
    assert rule.code in bad_codes
    assert rule.code not in ok_codes


def test_unnamed_nodes_are_named_by_index_and_graph_path():
    result = check_file(os.path.join(MODELS, "scopes/loop-bad.onnx"))
    d = result.diagnostics[0]
    assert d.node == "#0"
    assert d.graph.startswith("main/loop.body/inner_if.")
    assert f"#0 in {d.graph}" in d.message


def test_function_nodes_use_the_functions_own_imports():
    result = check_file(os.path.join(MODELS, "scopes/function-bad.onnx"))
    by_code = {d.code: d for d in result.diagnostics}
    assert by_code["QL103"].graph == "function local.QuantizeBlock"
    assert "function does not import" in by_code["QL103"].message


def test_committed_fixtures_match_the_generator(tmp_path):
    import make_fixtures

    make_fixtures.write_all(str(tmp_path))
    for rel in MANIFEST:
        with open(os.path.join(MODELS, rel), "rb") as a, open(tmp_path / rel, "rb") as b:
            assert a.read() == b.read(), f"{rel} is stale: run `make fixtures`"
    with open(tmp_path / "manifest.json") as f:
        assert json.load(f) == MANIFEST
    assert os.path.exists(os.path.join(FIXTURES, "make_fixtures.py"))


# What each bad fixture's message must say: the values involved and the way out.
MESSAGES = {
    "QL001": ["'author'", "more than once"],
    "QL002": ["'scale'", "defined 2 times"],
    "QL003": ["'nowhere'", "defined nowhere"],
    "QL004": ["'y'", "produced by 2 nodes"],
    "QL005": ["'nowhere'", "produced by no node"],
    "QL006": ["'x'", "no shape"],
    "QL007": ["'zero_point'", "UNDEFINED"],
    "QL008": ["missing.bin", "does not exist"],
    "QL009": ["axis", "missing"],
    "QL010": ["inconsistent type", "int64"],
    "QL011": ["'b'", "declared 2 times"],
    "QL012": ["ai.onnx 2 times", "keep one"],
    "QL101": ["4 inputs", "2 to 3"],
    "QL102": ["'block_size'", "opset to 21"],
    "QL103": ["com.microsoft", "version: 1"],
    "QL104": ["opset 9", "opset 10"],
    "QL105": ["FLOAT", "INT"],
    "QL201": ["int4", "opset to 21"],
    "QL202": ["declared uint8", "produces int8"],
    "QL203": ["float16", "opset to 23"],
    "QL301": ["output_dtype int8", "uint8"],
    "QL302": ["precision 3 (int8)"],
    "QL303": ["saturate=0", "int8"],
    "QL304": ["1.0", "use 0"],
    "QL401": ["axis 1 (the default)", "[-1, 0]"],
    "QL402": ["default is 1", "uses 0"],
    "QL403": ["per-axis", "opset to 13"],
    "QL404": ["no axis", "add axis"],
    "QL412": ["is a scalar but axis is set", "drop axis"],
    "QL405": ["length 4", "3 along axis 1"],
    "QL406": ["block_size 16", "[32, 63]", "set block_size to 32"],
    "QL407": ["rank 2", "no block_size"],
    "QL408": ["[3]", "[2]"],
    "QL409": ["shape [1]", "scalars"],
    "QL501": ["0.0 at index 1", "1 more"],
    "QL502": ["int32", "non-zero zero point"],
    "QL106": ["QLinearMatMul-10", "'y_zero_point' (input 7) is missing", "connect it"],
    "QL107": ["MatMulNBits-1 (com.microsoft)", "'K' is missing", "add it"],
    "QL108": ["reads 'xq'", "node 'q'", "comes after it", "sort the nodes"],
    "QL109": ["opset import com.microsoft 1", "no node", "remove the import"],
    "QL204": ["'a' is uint8", "'a_zero_point' is int8", "one type"],
    "QL205": ["tensor 'lut' (float8e4m3fn)", "IR 9", "declares IR 8", "ir_version to 9"],
    "QL206": ["opset 21 came with IR 10", "declares IR 9", "ir_version to 10"],
    "QL305": ["'rounding_mode' is 3", "0, 1, 2", "rounding half to even"],
    "QL410": ["w_scale 'w_scale' has shape [4]", "w [8, 3, 3, 3]", "a scalar or [8]", "output channel"],
    "QL411": ["B 'B' has shape [32, 2, 16]", "block_size=16", "[32, 4, 8]", "block_size=32"],
    "QL503": ["x_scale 'x_scale' holds 0.0", "non-zero"],
    "QL504": ["'scale' holds 3e-06", "float16 subnormal (below 6.104e-05)", "6 significant bits of 11",
              "floor the scale at 6.104e-05"],
    "QL505": ["channel 1 (axis 0) of constant 'w'", "max |w| 0.0004 / scale 0.004 = 0.1 <= 0.5",
              "max |w| / 127 = 3.15e-06"],
    "QL507": ["the zero point 0 is the lowest uint8 value", "1 of the 3 values of constant 'w' is negative",
              "the farthest -0.3 / 0.004 = -75", "dequantizes to 0"],
    "QL506": ["can overflow: max |x_q - x_zp| 255 (uint8, zero point 0)",
              "over its 34000 weights of 'b' 8670000",
              "2.21e+09 > 2^31-1", "split the reduction"],
    "QL601": ["from QuantizeLinear 'q'", "scale 0.04", "used 0.02", "share its initializers"],
    "QL602": ["DequantizeLinear 'dq'", "giving back 'xq'", "remove the pair"],
    "QL603": ["bias 'b'", "scale 0.001 at index 0", "1e-04", "'x' x 'w'"],
    "QL605": ["bias 'b' holds 2147483647 at index 2", "the int32 limit", "8.59e+04",
              "raise the weight scale"],
    "QL604": ["constant 'w' (float [4, 3])", "int8", "keep only the DequantizeLinear"],
}
# Findings about the model rather than a node: the site they name instead of 'node0'.
NOT_NODES = {"QL109": "opset import", "QL205": "tensor 'lut'", "QL206": "opset import ai.onnx",
             "QL001": "model", "QL002": "initializer 'scale'", "QL003": "node 'relu'",
             "QL005": "output 'nowhere' of main", "QL006": "input 'x' of main",
             "QL007": "initializer 'zero_point'", "QL008": "tensor 'scale'", "QL009": "node 'cat'",
             "QL010": "node 'add'", "QL011": "function local.F",
             "QL012": "opset import ai.onnx"}


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_message_names_node_values_and_fix(code):
    result = check_file(os.path.join(MODELS, f"rules/{code}-bad.onnx"), [code])
    message = next(d.message for d in result.diagnostics if d.code == code)
    assert message.startswith(NOT_NODES.get(code, "node 'node0'")), message
    for words in MESSAGES[code]:
        assert words in message, (code, words, message)


def test_every_rule_has_a_message_test():
    assert set(MESSAGES) == {r.code for r in rules.all_rules()}


def _blocked(**kw):
    import numpy as np
    from builders import qdq_model

    return qdq_model(x_shape=(4, 64), scale=np.full((4, 2), 0.1, np.float32),
                     zero_point=np.zeros((4, 2)), zp_type="int8", **kw)


@pytest.mark.parametrize("kw, code, hint", [
    ({"opset": 19, "attrs": {"axis": 1}}, "QL407", "raise the opset to 21"),
    ({"domain": "com.microsoft", "attrs": {"axis": 1}}, "QL407", "use ai.onnx opset 21 or later"),
    ({"op": "ExtendedQuantizeLinear", "domain": "com.amd.quark",
      "attrs": {"axis": 1, "block_size": 32}}, "QL403", "convert the node to ai.onnx opset 21"),
])
def test_blocked_scale_where_the_version_or_domain_has_none_points_to_ai_onnx(kw, code, hint):
    from qlin_cli.check.engine import check_model

    found = {d.code: d.message for d in check_model(_blocked(**kw), ".")}
    assert hint in found[code], found


@pytest.mark.parametrize("output_dtype, codes", [(None, {"QL301"}), (1, set())])
def test_dequantize_with_e8m0_scale_needs_output_dtype(output_dtype, codes):
    """"If output_dtype is not supplied then the output type is the same as x_scale";
    float8e8m0 is not an output type, so such a node must say which float it makes."""
    import numpy as np
    from builders import qdq_model

    from qlin_cli.check.engine import check_model

    attrs = {"output_dtype": output_dtype} if output_dtype else {}
    model = qdq_model(op="DequantizeLinear", opset=24, x_type="int8", scale=np.float32(2.0),
                      scale_type="float8e8m0", attrs=attrs, out_type="float")
    model.ir_version = 12  # float8e8m0 came with IR 12 (else QL205 and QL206 speak too)
    found = [d for d in check_model(model, ".")]
    assert {d.code for d in found} == codes, [d.message for d in found]
    if codes:
        assert "float8e8m0" in found[0].message and "set output_dtype" in found[0].message
