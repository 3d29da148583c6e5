"""schema/inference.py's SHAPE_ONLY held to onnx: a node of each op, its inputs given as
initializers (inference is given their data) and as typed graph inputs (it is given none),
gets the same output types from strict inference, at each opset the op has there. Reshape,
which reads its shape's values, does not: the comparison can fail."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from qlin_cli.schema.inference import SHAPE_ONLY

F, I8, U8 = np.float32, np.int8, np.uint8


def _a(shape, dtype=F):
    return np.ones(shape, dtype)


# op -> (inputs in order, attributes)
NODES = {
    "DequantizeLinear": ([_a((2, 3), I8), _a((), F), _a((), I8)], {}),
    "QuantizeLinear": ([_a((2, 3)), _a((), F), _a((), U8)], {}),
    "MatMul": ([_a((2, 3)), _a((3, 4))], {}),
    "Gemm": ([_a((2, 3)), _a((3, 4)), _a((4,))], {}),
    "Conv": ([_a((1, 2, 5, 5)), _a((3, 2, 3, 3)), _a((3,))], {}),
    "ConvTranspose": ([_a((1, 2, 5, 5)), _a((2, 3, 3, 3))], {}),
    "MatMulInteger": ([_a((2, 3), U8), _a((3, 4), I8), _a((), U8), _a((), I8)], {}),
    "ConvInteger": ([_a((1, 2, 5, 5), U8), _a((3, 2, 3, 3), I8), _a((), U8), _a((), I8)], {}),
    "QLinearConv": ([_a((1, 2, 5, 5), U8), _a((), F), _a((), U8), _a((3, 2, 3, 3), I8), _a((), F),
                     _a((), I8), _a((), F), _a((), U8), _a((3,), np.int32)], {}),
    "QLinearMatMul": ([_a((2, 3), U8), _a((), F), _a((), U8), _a((3, 4), U8), _a((), F), _a((), U8),
                       _a((), F), _a((), U8)], {}),
    "Gather": ([_a((5, 4)), np.array([0, 2, 4], np.int64)], {}),
    "Add": ([_a((2, 3)), _a((3,))], {}),
    "Mul": ([_a((2, 3)), _a((3,))], {}),
    "Sigmoid": ([_a((2, 3))], {}),
    "LeakyRelu": ([_a((2, 3))], {}),
    "Softmax": ([_a((2, 3))], {}),
    "GlobalAveragePool": ([_a((1, 2, 5, 5))], {}),
    "AveragePool": ([_a((1, 2, 5, 5))], {"kernel_shape": [2, 2]}),
    "Concat": ([_a((2, 3)), _a((1, 3))], {"axis": 0}),
}
RESHAPE = ([_a((2, 3)), np.array([3, 2], np.int64)], {})


def _inferred(op: str, arrays: list, attrs: dict, opset: int, with_data: bool):
    names = [f"i{k}" for k in range(len(arrays))]
    tensors = [numpy_helper.from_array(a, n) for a, n in zip(arrays, names, strict=True)]
    inputs = [] if with_data else [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                                   for t in tensors]
    graph = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g", inputs, [],
                              tensors if with_data else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    out = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=False)
    return [vi.type for vi in out.graph.value_info if vi.name == "y"]


def test_every_op_of_the_list_has_a_node_here():
    assert set(NODES) == SHAPE_ONLY


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("op", sorted(NODES))
def test_an_op_of_the_list_infers_alike_without_its_inputs_data(op, opset):
    arrays, attrs = NODES[op]
    given, none = _inferred(op, arrays, attrs, opset, True), _inferred(op, arrays, attrs, opset, False)
    assert given and given == none


def test_an_op_that_reads_values_infers_otherwise_without_them():
    given, none = _inferred("Reshape", *RESHAPE, 21, True), _inferred("Reshape", *RESHAPE, 21, False)
    assert given != none
