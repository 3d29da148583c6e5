"""Hardening: model-local functions that call each other in a cycle, and subgraphs nested as
deep as protobuf allows (and deeper). A verdict or a clean refusal, never a RecursionError."""

from __future__ import annotations

import json

import onnx
import pytest
from google.protobuf.internal.encoder import _VarintBytes
from hardening_helpers import assert_bad_input, assert_both_refuse, cli, guard, save_raw  # noqa: F401
from onnx import TensorProto, helper

OPS = [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]


def _quantize_body(out="y", src="x", scale=0.0):
    """Constant scale (zero: rule QL501 reports it) and a QuantizeLinear."""
    return [
        helper.make_node("Constant", [], [f"{out}_s"],
                         value=helper.make_tensor("", TensorProto.FLOAT, [], [scale])),
        helper.make_node("QuantizeLinear", [src, f"{out}_s"], [out], name="q_bottom"),
    ]


def _fn(name, body):
    return helper.make_function("local", name, ["x"], ["y"], body, OPS)


def _call(name, out="y", src="x"):
    return helper.make_node(name, [src], [out], domain="local")


def _model_calling(first: str, functions) -> onnx.ModelProto:
    g = helper.make_graph([_call(first)], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])])
    m = helper.make_model(g, opset_imports=OPS, functions=functions)
    m.ir_version = 10
    return m


def _if_calling(name):
    """An If whose then-branch calls local.NAME (a call hidden in a subgraph)."""
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [4])
    then = helper.make_graph([_call(name)], "then", [], [y])
    orelse = helper.make_graph(_quantize_body(scale=0.5), "else", [], [y])
    return [
        helper.make_node("Constant", [], ["c"], value=helper.make_tensor("", TensorProto.BOOL, [], [True])),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=orelse),
    ]


CYCLES = {
    "self": ("F", [_fn("F", [_call("F")])], "local.F -> local.F"),
    "pair": ("F", [_fn("F", [_call("G")]), _fn("G", [_call("F")])], "local.F -> local.G -> local.F"),
    "three": ("A", [_fn("A", [_call("B")]), _fn("B", [_call("C")]), _fn("C", [_call("A")])],
              "local.A -> local.B -> local.C -> local.A"),
    "in-subgraph": ("F", [_fn("F", _if_calling("G")), _fn("G", [_call("F")])],
                    "local.F -> local.G -> local.F"),
    "unreachable": ("Q", [_fn("Q", _quantize_body()), _fn("F", [_call("G")]), _fn("G", [_call("F")])],
                    "local.F -> local.G -> local.F"),
}


@pytest.mark.parametrize("name", list(CYCLES))
def test_function_cycle_is_refused(name, tmp_path, guard):  # noqa: F811
    first, functions, chain = CYCLES[name]
    path = save_raw(_model_calling(first, functions), tmp_path / "m.onnx")
    guard.watch(path)
    line = assert_both_refuse(path, "cycle", out=tmp_path / "o.onnx")
    assert chain in line


def test_long_function_chain_is_checked(tmp_path, guard):  # noqa: F811
    """F0 -> F1 -> ... -> F1499 -> QuantizeLinear: no cycle, no recursion limit (1,500
    levels: half as many again as Python's default limit of 1,000 frames, which qlin
    leaves as it is)."""
    n = 1500
    fns = [_fn(f"F{i}", [_call(f"F{i + 1}")]) for i in range(n - 1)] + [_fn(f"F{n - 1}", _quantize_body())]
    path = save_raw(_model_calling("F0", fns), tmp_path / "m.onnx")
    guard.watch(path)
    r = cli("check", "--format", "json", "--ignore", "QL006", path)  # its inputs have no shape: QL006
    assert r.exit_code == 1, r.output
    codes = [d["code"] for d in json.loads(r.stdout)["files"][0]["diagnostics"] if d["severity"] != "info"]
    assert codes == ["QL501"]
    # convert runs the same rules first through all 1,500 levels: the bad scale refuses it
    r = cli("convert", path, "--to-opset", 23, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 1 and "has 1 error (QL501)" in r.stderr, r.output
    assert not (tmp_path / "o.onnx").exists()


def test_functions_with_the_same_name_in_other_domains_are_no_cycle(tmp_path, guard):  # noqa: F811
    other = helper.make_function("other", "F", ["x"], ["y"], _quantize_body(), OPS)
    fns = [_fn("F", [helper.make_node("F", ["x"], ["y"], domain="other")]), other]
    m = _model_calling("F", fns)
    m.opset_import.append(helper.make_opsetid("other", 1))
    path = save_raw(m, tmp_path / "m.onnx")
    guard.watch(path)
    assert cli("check", path).exit_code == 1  # QL501 at the bottom, no refusal


# ---- deep nesting: raw protobuf, so the depth is not limited by the builder -----------------

def _ld(field: int, payload: bytes) -> bytes:
    return _VarintBytes((field << 3) | 2) + _VarintBytes(len(payload)) + payload


def _vi(name: bytes) -> bytes:  # ValueInfoProto: uint8 tensor
    return _ld(1, name) + _ld(2, _ld(1, _VarintBytes(1 << 3) + _VarintBytes(TensorProto.UINT8)))


def _graph_attr(name: bytes, graph: bytes) -> bytes:
    return _ld(1, name) + _VarintBytes(20 << 3) + _VarintBytes(onnx.AttributeProto.GRAPH) + _ld(6, graph)


_ELSE = helper.make_graph(
    [helper.make_node("Constant", [], ["y"], value=helper.make_tensor("", TensorProto.UINT8, [4], [0] * 4))],
    "else", [], [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])]).SerializeToString()


def deep_graph(depth: int) -> bytes:
    """GraphProto bytes: ``depth`` Ifs, each then-branch holding the next; the innermost graph
    quantizes the main graph's x with a zero scale (QL501)."""
    g = helper.make_graph(_quantize_body(), "bottom", [],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])]).SerializeToString()
    for _ in range(depth):
        node = (_ld(1, b"c") + _ld(2, b"y") + _ld(4, b"If")
                + _ld(5, _graph_attr(b"then_branch", g)) + _ld(5, _graph_attr(b"else_branch", _ELSE)))
        g = _ld(1, node) + _ld(2, b"g") + _ld(12, _vi(b"y"))
    return g


def deep_model(depth: int, in_function: bool = False) -> bytes:
    inputs = (_ld(11, _ld(1, b"c") + _ld(2, _ld(1, _VarintBytes(8) + _VarintBytes(TensorProto.BOOL))))
              + _ld(11, _ld(1, b"x") + _ld(2, _ld(1, _VarintBytes(8) + _VarintBytes(TensorProto.FLOAT)))))
    if not in_function:
        main = deep_graph(depth) + inputs
        functions = b""
    else:  # the deep graph is the body of local.F's If; main calls F(c, x)
        body = deep_graph(depth)
        g = onnx.GraphProto()
        g.ParseFromString(body)  # depth is kept below the limit by the caller
        fn = helper.make_function("local", "F", ["c", "x"], ["y"], list(g.node), OPS)
        functions = _ld(25, fn.SerializeToString())
        call = helper.make_node("F", ["c", "x"], ["y"], domain="local").SerializeToString()
        main = _ld(1, call) + _ld(2, b"g") + _ld(12, _vi(b"y")) + inputs
    opsets = b"".join(_ld(8, o.SerializeToString()) for o in OPS)
    return _VarintBytes(1 << 3) + _VarintBytes(10) + opsets + _ld(7, main) + functions


def _deepest_parseable() -> int:
    """The deepest If nesting the Python protobuf parser accepts (found, not assumed)."""
    lo, hi = 1, 200
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            onnx.ModelProto().ParseFromString(deep_model(mid))
            lo = mid
        except Exception:
            hi = mid - 1
    return lo


@pytest.fixture(scope="module")
def deepest():
    return _deepest_parseable()


def _write(tmp_path, data: bytes, name="m.onnx"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("margin", [0, 1, 5])
def test_nesting_at_the_parser_limit_gets_a_verdict(margin, deepest, tmp_path, guard):  # noqa: F811
    depth = deepest - margin
    path = _write(tmp_path, deep_model(depth))
    guard.watch(path)
    r = cli("check", "--format", "json", "--ignore", "QL006", path)  # its inputs have no shape: QL006
    assert r.exit_code == 1, (depth, r.stdout, r.stderr)
    diags = [d for d in json.loads(r.stdout)["files"][0]["diagnostics"] if d["severity"] != "info"]
    assert [d["code"] for d in diags] == ["QL501"]
    assert diags[0]["graph"].count("then_branch") == depth
    out = tmp_path / "o.onnx"
    r = cli("convert", path, "--to-opset", 23, "-o", out)
    assert r.exit_code in (0, 1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    if r.exit_code == 2:
        assert_bad_input(r, path)
    if r.exit_code == 0:  # what qlin writes it can read back
        assert cli("check", out).exit_code == 1


@pytest.mark.parametrize("extra", [1, 10, 1000])
def test_nesting_beyond_the_parser_limit_is_refused(extra, deepest, tmp_path, guard):  # noqa: F811
    path = _write(tmp_path, deep_model(deepest + extra))
    guard.watch(path)
    assert_both_refuse(path, "nested", out=tmp_path / "o.onnx")


def test_deep_nesting_inside_a_function(deepest, tmp_path, guard):  # noqa: F811
    path = _write(tmp_path, deep_model(deepest - 2, in_function=True))
    guard.watch(path)
    r = cli("check", "--format", "json", "--ignore", "QL006", path)  # its inputs have no shape: QL006
    assert r.exit_code == 1, (r.stdout, r.stderr)
    r = cli("convert", path, "--to-opset", 23, "--dry-run")
    assert r.exit_code in (0, 1, 2) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output


def test_deeply_nested_types(tmp_path, guard):  # noqa: F811
    """sequence(sequence(...(tensor))) value_info, as deep as the parser allows, then deeper."""
    def nested(depth):
        t = helper.make_tensor_type_proto(TensorProto.FLOAT, [4])
        for _ in range(depth):
            t = helper.make_sequence_type_proto(t)
        return t

    for depth, parses in ((40, True), (200, False)):
        body = _quantize_body()
        g = onnx.GraphProto()
        g.node.extend(body)
        g.name = "g"
        g.input.add().CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]))
        g.output.add().CopyFrom(helper.make_tensor_value_info("y", TensorProto.UINT8, [4]))
        vi = g.value_info.add()
        vi.name = "deep"
        vi.type.CopyFrom(nested(depth))
        m = helper.make_model(g, opset_imports=OPS[:1])
        m.ir_version = 10
        try:
            data = m.SerializeToString()
        except Exception:  # the encoder has a depth limit too: build the bytes by hand
            data = _hand_nested(depth)
        path = _write(tmp_path, data, f"t{depth}.onnx")
        guard.watch(path)
        r = cli("check", path)
        if parses:
            assert r.exit_code == 1, (r.stdout, r.stderr)
        else:
            assert_bad_input(r, path, "nested")


def _hand_nested(depth):
    t = _ld(1, _VarintBytes(8) + _VarintBytes(TensorProto.FLOAT))  # TypeProto{tensor_type}
    for _ in range(depth):
        t = _ld(4, _ld(1, t))  # TypeProto{sequence_type{elem_type}}
    vi = _ld(1, b"deep") + _ld(2, t)
    g = _ld(2, b"g") + _ld(13, vi)
    return _VarintBytes(8) + _VarintBytes(10) + _ld(8, OPS[0].SerializeToString()) + _ld(7, g)
