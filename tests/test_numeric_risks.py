"""The numeric-risk rules (QL504 subnormal-scale, QL505 dead-channel, QL506
accumulator-overflow, QL507 one-sided-zero-point, QL605 bias-overflow):
each fires on a planted case with its arithmetic in the message, and is silent on every
quantizer output of the corpus (fixtures/corpus.py)."""

from __future__ import annotations

import os
import sys

import corpus
import numpy as np
import pytest
from onnx import helper, numpy_helper
from paths import FIXTURES

from qlin_cli.check.engine import check_file, check_model

sys.path.insert(0, FIXTURES)
from builders import F32, qdq_model, tensor  # noqa: E402
from family_builders import conv_qdq  # noqa: E402

CODES = {"QL504", "QL505", "QL506", "QL507", "QL605"}


def _messages(model, code):
    return [d.message for d in check_model(model, ".") if d.code == code]


def test_float32_scale_underflows_where_the_node_computes_in_float16():
    model = qdq_model(op="DequantizeLinear", x_type="uint8", x_shape=(2, 3), opset=23,
                      scale=np.array([0.1, 1e-5, 2e-9], F32), zero_point=np.zeros(3),
                      attrs={"axis": 1, "output_dtype": 10})
    (m,) = _messages(model, "QL504")
    assert "holds 1e-05 at index 1 (and 1 more such value), below float16's smallest normal 6.104e-05" in m
    assert "the subnormal 1.0014e-05 (0.14% off, 8 of 11 bits)" in m
    model = qdq_model(op="DequantizeLinear", x_type="uint8", opset=23, scale=np.float32(2e-9),
                      attrs={"output_dtype": 10})
    assert "the scale becomes 0 (a division by zero)" in _messages(model, "QL504")[0]
    # the same float32 scales computed in float32 are fine
    assert not _messages(qdq_model(op="DequantizeLinear", x_type="uint8", scale=np.float32(2e-9)), "QL504")


def test_float32_subnormal_scale():
    (m,) = _messages(qdq_model(scale=np.float32(1e-39)), "QL504")
    assert "holds 1e-39, a float subnormal (below 1.1755e-38): it keeps 20 significant bits of 24" in m


def _float_bias(values, w_scale):
    model = conv_qdq(w_scale=w_scale)
    g = model.graph
    g.node.remove(next(n for n in g.node if n.name == "node0"))
    bq = next(t for t in g.initializer if t.name == "bq")
    bq.CopyFrom(numpy_helper.from_array(np.asarray(values, F32), "b"))
    return model


def test_float_bias_beyond_int32_at_input_scale_times_weight_scale():
    (m,) = _messages(_float_bias([1, 2, 32000, 3], np.full(4, 1e-6, F32)), "QL605")
    assert "bias 3.2e+04 / (0.02 * 1e-06) = 1.6e+12 > 2^31-1" in m
    assert "at least |bias| / (0.02 * (2^31-1)) = 0.000745" in m
    assert not _messages(_float_bias([1, 2, 32000, 3], np.full(4, 1e-3, F32)), "QL605")


def _int32_bias(value):
    model = conv_qdq()
    bq = next(t for t in model.graph.initializer if t.name == "bq")
    bq.CopyFrom(tensor("bq", np.array([0, 1, value, 3]), "int32"))
    return model


def test_int32_bias_at_the_limit_or_without_accumulator_headroom():
    (m,) = _messages(_int32_bias(-(2**31)), "QL605")
    assert "holds -2147483648 at index 2, the int32 limit" in m
    # K 3 (weights [4, 3, 1, 1]) x 128 (uint8, zero point 128) x 1 (weights all 1) = 384 of headroom
    (m,) = _messages(_int32_bias(2**31 - 100), "QL605")
    assert "|2147483548| + 3 x 128 x 1 = 2147483932 > 2^31-1 = 2147483647" in m
    assert not _messages(_int32_bias(2**31 - 1000), "QL605")


def _dq_weights(scale, rows):
    node = helper.make_node("DequantizeLinear", ["wq", "s", "zp"], ["y"], name="node0", axis=0)
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", 1, (4, 3))],
                              initializer=[tensor("wq", rows, "int8"), tensor("s", np.asarray(scale, F32)),
                                           tensor("zp", np.zeros(4), "int8")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_dequantized_channel_of_zero_points_under_an_outlier_scale():
    rows = np.array([[127, -5, 3], [0, 0, 0], [-127, 9, 1], [50, 127, 0]])
    (m,) = _messages(_dq_weights([0.01, 0.5, 0.02, 0.01], rows), "QL505")
    assert "channel 1 (axis 0) of constant 'wq' holds only its zero point 0" in m
    assert "scale 0.5 is 33.3x the median channel scale 0.015" in m
    assert "every weight below 0.25 in size rounded to 0" in m
    # a pruned channel: onnxruntime writes scale 1.0 for an all-zero range; a modest scale is no outlier
    assert not _messages(_dq_weights([0.01, 1.0, 0.02, 0.01], rows), "QL505")
    assert not _messages(_dq_weights([0.01, 0.1, 0.02, 0.01], rows), "QL505")


def _matmul_integer(k, b_value=255, a_zp=0, b_type="uint8"):
    """MatMulInteger(a: uint8 [1, k] with zero point ``a_zp``, b: [k, 2] constant, column 0
    all ``b_value``, column 1 all 1)."""
    b = np.ones((k, 2))
    b[:, 0] = b_value
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp"], ["y"], name="mm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", 2, (1, k))],
                              [helper.make_tensor_value_info("y", 6, (1, 2))],
                              initializer=[tensor("b", b, b_type), tensor("a_zp", a_zp, "uint8")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_integer_matmul_whose_int32_sum_can_wrap():
    (m,) = _messages(_matmul_integer(34000), "QL506")
    assert "can overflow at output 0: max |x_q - x_zp| 255 (uint8, zero point 0) x sum of |w_q - w_zp|" in m
    assert "over its 34000 weights of 'b' 8670000 = 2.21e+09 > 2^31-1" in m
    assert not _messages(_matmul_integer(32000), "QL506")  # 255 x 8160000 = 2.08e9 fits
    assert not _messages(_matmul_integer(34000, a_zp=128), "QL506")  # 128 x 8670000 fits


def _qdq_matmul(k, x_type="uint8", op="MatMul", trans_b=False):
    """DQ(x: ``x_type``) and DQ(w: int8 [k, 1] all -128, zero point 0) -> ``op``."""
    w = np.full((1, k) if trans_b else (k, 1), -128)
    nodes = [helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["x"], name="x_dq"),
             helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["w"], name="w_dq"),
             helper.make_node(op, ["x", "w"], ["y"], name="op", **({"transB": 1} if trans_b else {}))]
    inits = [tensor("sx", np.float32(0.1)), tensor("zx", 0, x_type), tensor("wq", w, "int8"),
             tensor("sw", np.float32(0.01)), tensor("zw", 0, "int8")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("xq", 2 if x_type == "uint8" else 5,
                                                                         (1, k))],
                              [helper.make_tensor_value_info("y", 1, (1, 1))], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_an_8_bit_qdq_group_an_integer_kernel_would_run_is_held_to_int32_too():
    (m,) = _messages(_qdq_matmul(70000), "QL506")
    assert "255 (uint8, zero point 0) x sum of |w_q - w_zp| over its 70000 weights of 'w' 8960000" in m
    (m,) = _messages(_qdq_matmul(70000, op="Gemm", trans_b=True), "QL506")
    assert "over its 70000 weights" in m
    assert not _messages(_qdq_matmul(60000), "QL506")
    # 16-bit activations: no integer kernel of QLinearMatMul's types runs the group
    assert not _messages(_qdq_matmul(70000, x_type="int16"), "QL506")


def _quantize_constant(values, zp, zp_type, scale=0.004, axis=None):
    """QuantizeLinear of the constant float ``values`` with ``zp`` (per axis where ``axis``)."""
    values = np.asarray(values, F32)
    node = helper.make_node("QuantizeLinear", ["w", "s", "zp"], ["y"], name="wq",
                            **({} if axis is None else {"axis": axis}))
    y = helper.make_tensor_value_info("y", 2 if zp_type == "uint8" else 3, values.shape)
    graph = helper.make_graph([node], "g", [], [y],
                              initializer=[tensor("w", values), tensor("s", np.asarray(scale, F32)),
                                           tensor("zp", zp, zp_type)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_zero_point_at_an_end_where_a_constant_takes_the_other_sign():
    (m,) = _messages(_quantize_constant([0.5, -0.3, 0.2, -0.1], 0, "uint8"), "QL507")
    assert "the zero point 0 is the lowest uint8 value, and 2 of the 4 values of constant 'w' are" in m
    assert "(the farthest -0.3 / 0.004 = -75), so they saturate to the zero point" in m
    (m,) = _messages(_quantize_constant([-0.5, 0.3, -0.2], 127, "int8"), "QL507")
    assert "the zero point 127 is the highest int8 value" in m and "is positive" in m
    # per axis: channel 1's scale is wide enough that its -0.3 rounds to 0; channel 0's -0.1 does not
    w = [[0.5, -0.1], [0.5, -0.3]]
    (m,) = _messages(_quantize_constant(w, np.zeros(2), "uint8", scale=[0.004, 1.0], axis=0), "QL507")
    assert "1 of the 4 values" in m and "-0.1 / 0.004 = -25" in m
    # near misses: values within half a step of 0, all of one sign, a zero point inside the range
    assert not _messages(_quantize_constant([0.5, -0.001, 0.2], 0, "uint8"), "QL507")
    assert not _messages(_quantize_constant([0.5, 0.3, 0.2], 0, "uint8"), "QL507")  # a Relu's output
    assert not _messages(_quantize_constant([0.5, -0.3, 0.2], 75, "uint8"), "QL507")
    assert not _messages(_quantize_constant([0.5, -0.3, 0.2], -128, "int8", scale=1.0), "QL507")


def _requantize(z1, z1_type="uint8", z2=0, z2_type="uint8", s1=0.1, s2=0.1, x_const=None):
    """DequantizeLinear 'dq' (scale ``s1``, zero point ``z1``) -> QuantizeLinear 'q' (``s2``, ``z2``);
    the DequantizeLinear's x a graph input, or the constant ``x_const``."""
    code = {"uint8": 2, "int8": 3}
    nodes = [helper.make_node("DequantizeLinear", ["xq", "s1", "z1"], ["x"], name="dq"),
             helper.make_node("QuantizeLinear", ["x", "s2", "z2"], ["y"], name="q")]
    inits = [tensor("s1", np.float32(s1)), tensor("z1", z1, z1_type), tensor("s2", np.float32(s2)),
             tensor("z2", z2, z2_type)]
    inputs = [helper.make_tensor_value_info("xq", code[z1_type], (4,))]
    if x_const is not None:
        inits.append(tensor("xq", np.asarray(x_const), z1_type))
        inputs = []
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", code[z2_type], (4,))],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_zero_point_at_an_end_after_a_dequantize_whose_range_reaches_past_it():
    (m,) = _messages(_requantize(20), "QL507")
    assert "x comes from DequantizeLinear 'dq' whose asymmetric zero point 20 (uint8)" in m
    assert "lowest end at (0 - 20) x 0.1 = -2, and -2 / 0.1 = -20 rounds below 0" in m
    (m,) = _messages(_requantize(-100, "int8", -128, "int8"), "QL507")
    assert "(-128 - (-100)) x 0.1 = -2.8" in m
    # the DequantizeLinear of a constant: its values are known, and only they count
    (m,) = _messages(_requantize(20, x_const=[0, 20, 40, 60]), "QL507")
    assert "1 of the 4 values of constant 'xq' (dequantized by 'dq') is negative" in m
    assert not _messages(_requantize(20, x_const=[20, 20, 40, 60]), "QL507")
    # near misses: a symmetric zero point (the middle) or one at the same end says nothing of
    # the sign; a range's end within half a step of 0
    assert not _messages(_requantize(128), "QL507")
    assert not _messages(_requantize(0), "QL507")
    assert not _messages(_requantize(0, "int8", -128, "int8"), "QL507")
    assert not _messages(_requantize(1, s1=0.01, s2=0.1), "QL507")  # -0.01 / 0.1 rounds to 0


@pytest.fixture(scope="module")
def corpus_paths(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("numeric_corpus"))


def test_silent_on_every_quantizer_output(corpus_paths):
    assert len(corpus_paths) >= 70
    found = {name: sorted({d.code for d in check_file(p).diagnostics} & CODES)
             for name, p in corpus_paths.items()}
    assert {n: c for n, c in found.items() if c} == {}
    assert os.path.exists(next(iter(corpus_paths.values())))


def _two_groups(k, x_type="uint8"):
    """``_qdq_matmul`` twice over, the second group of the same shapes of facts (its own tensors)."""
    one = _qdq_matmul(k, x_type)
    g = one.graph
    nodes = [helper.make_node(n.op_type, [i + "2" if i else i for i in n.input], [o + "2" for o in n.output],
                              name=n.name + "2") for n in g.node]
    nodes[0].input[0] = "xq"  # (x's DequantizeLinear of the second reads the graph's input too)
    g.node.extend(nodes)
    g.initializer.extend([tensor(t.name + "2", numpy_helper.to_array(t), None) for t in g.initializer])
    g.output.append(helper.make_tensor_value_info("y2", 1, (1, 1)))
    return one


def test_groups_of_one_pair_of_shapes_are_each_judged():
    """QL506 judges a MatMul by its DequantizeLinear nodes' shapes of facts once when that pair
    is clear whatever the values (ql506 ``_qdq``), and every group's values otherwise."""
    assert len(_messages(_two_groups(70000), "QL506")) == 2
    assert not _messages(_two_groups(70000, x_type="int16"), "QL506")
    assert not _messages(_two_groups(60000), "QL506")
