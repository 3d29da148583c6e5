"""Chain probes: x -> QuantizeLinear -> DequantizeLinear -> op -> (QuantizeLinear -> DQ, or the
graph's output), filed under probe_keys.chain_key. A runtime may rewrite such a chain when it
loads the model (onnxruntime's default graph optimizations move the DQ past the op, or run the
op on the quantized values), so whether it runs is a fact of the chain, not of its nodes.

Every op of probe_keys.CHAIN_OPS, after a per-tensor DQ of every type that QuantizeLinear and
DequantizeLinear both allow, at the first opset of each of their versions from 13.

Weight chains: a blocked DQ of an initializer read by MatMul or by Gemm (transB 0 and 1) as its
second input, the blocks along the axis the op sums over or along the other one (openvino
2026.4 compiles only the first), in every type DequantizeLinear allows blocked; and a per-axis
or blocked DQ of an initializer read by MatMul through a Transpose (onnxruntime's n-bits
quantizer in QDQ form). QDQ MatMuls: Q -> DQ -> MatMul whose other operand is a DQ of a weight
(the same type, or int8 beside uint8), in float and float16, with a Q after or not.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from qlin_cli import schema
from qlin_cli.schema import dtypes
from qlin_cli.schema.ir import ir_for_opset
from qlin_cli.targets import probe_keys

SHAPE = [1, 4, 8, 8]
OPSETS = sorted({s.since for s in schema.versions(schema.AI_ONNX, "DequantizeLinear") if s.since >= 13})


def _i64(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _op(op: str, opset: int) -> tuple[onnx.NodeProto, list[onnx.TensorProto], int]:
    """The op reading "d" into "t" at ``opset``, its constant inputs, its output count."""
    attrs, consts, ins = {}, [], ["d"]
    axes = opset >= 13
    if op == "Transpose":
        attrs = {"perm": [0, 1, 3, 2]}
    elif op == "Reshape":
        consts, ins = [_i64("shape", [1, 4, 64])], ["d", "shape"]
    elif op in ("Squeeze", "Unsqueeze"):
        if axes:
            consts, ins = [_i64("axes", [0])], ["d", "axes"]
        else:
            attrs = {"axes": [0]}
    elif op in ("MaxPool", "AveragePool"):
        attrs = {"kernel_shape": [2, 2]}
    elif op == "Slice":
        consts = [_i64("starts", [0]), _i64("ends", [4]), _i64("axes", [3])]
        ins = ["d", "starts", "ends", "axes"]
    elif op == "Gather":
        consts, ins, attrs = [_i64("indices", [0, 2])], ["d", "indices"], {"axis": 1}
    elif op == "Resize":
        consts = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
        ins, attrs = ["d", "", "scales"], {"mode": "nearest"}
    elif op in ("Concat", "Add", "Mul"):
        ins, attrs = ["d", "d"], ({"axis": 1} if op == "Concat" else {})
    elif op == "Split":
        attrs = {"axis": 1, **({"num_outputs": 2} if opset >= 18 else {})}
    elif op == "Expand":
        consts, ins = [_i64("expanded", [2, 4, 8, 8])], ["d", "expanded"]
    elif op == "Tile":
        consts, ins = [_i64("repeats", [1, 1, 1, 2])], ["d", "repeats"]
    elif op in ("DepthToSpace", "SpaceToDepth"):
        attrs = {"blocksize": 2}
    elif op == "Pad":
        consts, ins = [_i64("pads", [0, 0, 1, 1, 0, 0, 1, 1])], ["d", "pads"]
    outs = 2 if op == "Split" else 1
    return helper.make_node(op, ins, [f"t{i}" for i in range(outs)], **attrs), consts, outs


def chain(quant_type: str, op: str, opset: int, tail: str) -> onnx.ModelProto:
    """x -> Sigmoid -> Q -> DQ -> op -> tail -> Sigmoid, per-tensor, the scale float and the
    zero point 0. The chain stands inside the graph, as in a model: openvino fails a 16-bit
    Q -> DQ pair whose ends are graph input and output (QT308), which is not the chain's fact."""
    proto = dtypes.BY_NAME[quant_type].proto
    consts = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
              helper.make_tensor("z", proto, [], [0])]
    node, extra, outs = _op(op, opset)
    nodes = [helper.make_node("Sigmoid", ["x"], ["x0"]),
             helper.make_node("QuantizeLinear", ["x0", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), node]
    out_type = TensorProto.INT64 if op == "ArgMax" else TensorProto.FLOAT
    names = [f"t{i}" for i in range(outs)]
    if tail == "QuantizeLinear":
        nodes += [helper.make_node("QuantizeLinear", ["t0", "s", "z"], ["q2"]),
                  helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["y0"])]
        names[0] = "y0"
    if op != "ArgMax":  # (its output is int64)
        nodes.append(helper.make_node("Sigmoid", [names[0]], ["y"]))
        names[0] = "y"
    outputs = [helper.make_tensor_value_info(n, out_type, None) for n in names]
    graph = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              outputs, [*consts, *extra])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_for_opset(opset))


def _weight_model(quant_type: str, shape: list[int], scale: list[int], zero_point: bool, dq_attrs: dict,
                  rest: list[onnx.NodeProto], opset: int, seed: int) -> onnx.ModelProto:
    """x [2, 32] and DQ(w) -> ``rest`` (reading "x" and "wd", writing "y"): w of ``shape`` holds
    random codes 0 and 1, its scale 0.05 of shape ``scale``, its zero point 0 or none."""
    codes = np.random.default_rng(seed).integers(0, 2, int(np.prod(shape))).astype(np.float32)
    proto = dtypes.BY_NAME[quant_type].proto
    consts = [helper.make_tensor("w", proto, shape, codes.tolist()),
              numpy_helper.from_array(np.full(scale, 0.05, np.float32), "s")]
    if zero_point:
        consts.append(helper.make_tensor("wz", proto, scale, [0] * int(np.prod(scale))))
    ins = ["w", "s", "wz"] if zero_point else ["w", "s"]
    nodes = [helper.make_node("DequantizeLinear", ins, ["wd"], **dq_attrs), *rest]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "probe", [x], [y], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_for_opset(opset))


def weight(quant_type: str, op: str, trans_b: int, axis: int, opset: int,
           zero_point: bool) -> onnx.ModelProto:
    """x [2, 32] -> op(x, DQ(w)) with w [32, 16] (or [16, 32] for Gemm transB=1), blocks of 8
    along ``axis`` of w, with a zero point of 0 or without."""
    k, n, block = 32, 16, 8
    shape = [n, k] if trans_b else [k, n]
    scale = [d // block if i == axis else d for i, d in enumerate(shape)]
    node = helper.make_node(op, ["x", "wd"], ["y"], **({"transB": 1} if trans_b else {}))
    return _weight_model(quant_type, shape, scale, zero_point, {"axis": axis, "block_size": block}, [node],
                         opset, 3)


def weights(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    feeds = {"x": np.random.default_rng(12).normal(size=[2, 32]).astype(np.float32)}
    for opset in [o for o in OPSETS if o >= 21]:
        dq = schema.lookup(schema.AI_ONNX, "DequantizeLinear", opset)
        for quant_type in sorted(dq.quantized_types - {"int32"}):
            for op, trans_b in (("MatMul", 0), ("Gemm", 0), ("Gemm", 1)):
                for axis in (0, 1):
                    for zero_point in (False, True):
                        model = weight(quant_type, op, trans_b, axis, opset, zero_point)
                        along = axis == (1 if trans_b else 0)  # the axis of w the op sums over
                        key = probe_keys.weight_key(key_of(model, 0), op, opset, 1, along)
                        if key is not None:
                            yield key, model, feeds


def paired(act: str, weight: str, float_type: str, opset: int, tail: str) -> onnx.ModelProto:
    """x -> Sigmoid -> Q -> DQ -> MatMul(., DQ(w)) -> tail -> Sigmoid in ``float_type``, the
    activation of type ``act`` and the weight w [8, 8] of type ``weight``, per-tensor."""
    ft = dtypes.BY_NAME[float_type]
    scale = numpy_helper.from_array(np.array(0.05, ft.numpy), "s")
    consts = [scale, helper.make_tensor("z", dtypes.BY_NAME[act].proto, [], [0]),
              helper.make_tensor("wz", dtypes.BY_NAME[weight].proto, [], [0]),
              helper.make_tensor("w", dtypes.BY_NAME[weight].proto, [8, 8],
                                 np.random.default_rng(4).integers(0, 2, 64).tolist())]
    nodes = [helper.make_node("Sigmoid", ["x"], ["x0"]),
             helper.make_node("QuantizeLinear", ["x0", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node("DequantizeLinear", ["w", "s", "wz"], ["wd"]),
             helper.make_node("MatMul", ["d", "wd"], ["t0"])]
    last = "t0"
    if tail == "QuantizeLinear":
        nodes += [helper.make_node("QuantizeLinear", ["t0", "s", "z"], ["q2"]),
                  helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["y0"])]
        last = "y0"
    nodes.append(helper.make_node("Sigmoid", [last], ["y"]))
    graph = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("x", ft.proto, SHAPE)],
                              [helper.make_tensor_value_info("y", ft.proto, None)], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_for_opset(opset))


def pairs(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    for opset in OPSETS:
        q = schema.lookup(schema.AI_ONNX, "QuantizeLinear", opset)
        dq = schema.lookup(schema.AI_ONNX, "DequantizeLinear", opset)
        floats = ["float"] + (["float16"] if "float16" in dq.allowed(dq.inputs[1]) else [])
        for float_type in floats:
            x = np.random.default_rng(11).normal(size=SHAPE)
            feeds = {"x": x.astype(dtypes.BY_NAME[float_type].numpy)}
            for act in sorted(q.quantized_types & dq.quantized_types):
                for weight in sorted({act, "int8"} if act == "uint8" else {act}):
                    for tail in probe_keys.CHAIN_TAILS:
                        model = paired(act, weight, float_type, opset, tail)
                        key = probe_keys.paired_key(key_of(model, 2), opset, weight, tail)
                        if key is not None:
                            yield key, model, feeds


def transposed(quant_type: str, opset: int, zero_point: bool, blocks: int) -> onnx.ModelProto:
    """x [2, 32] -> MatMul(x, Transpose(DQ(w))) with w [16, 32] quantized per axis along axis 0
    (``blocks`` 0) or in ``blocks`` blocks along axis 1, with a zero point of 0 or without."""
    n, k = 16, 32
    attrs = {"axis": 1, "block_size": k // blocks} if blocks else {"axis": 0}
    rest = [helper.make_node("Transpose", ["wd"], ["wt"], perm=[1, 0]),
            helper.make_node("MatMul", ["x", "wt"], ["y"])]
    scale = [n, blocks] if blocks else [n]
    return _weight_model(quant_type, [n, k], scale, zero_point, attrs, rest, opset, 5)


def transposes(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    feeds = {"x": np.random.default_rng(13).normal(size=[2, 32]).astype(np.float32)}
    for opset in [o for o in OPSETS if o >= 21]:
        dq = schema.lookup(schema.AI_ONNX, "DequantizeLinear", opset)
        for quant_type in sorted(dq.quantized_types - {"int32"}):
            for blocks in (0, 1, 2):
                for zero_point in (False, True):
                    model = transposed(quant_type, opset, zero_point, blocks)
                    key = probe_keys.transposed_key(key_of(model, 0), opset)
                    if key is not None:
                        yield key, model, feeds


def chains(key_of) -> Iterator[tuple[str, onnx.ModelProto, dict[str, np.ndarray]]]:
    """(key, model, feeds) of every chain probe; ``key_of(model, index)``: the node key of
    node ``index`` of a model."""
    yield from weights(key_of)
    yield from transposes(key_of)
    yield from pairs(key_of)
    feeds = {"x": np.random.default_rng(11).normal(size=SHAPE).astype(np.float32)}
    for opset in OPSETS:
        q = schema.lookup(schema.AI_ONNX, "QuantizeLinear", opset)
        dq = schema.lookup(schema.AI_ONNX, "DequantizeLinear", opset)
        for quant_type in sorted(q.quantized_types & dq.quantized_types):
            for op in probe_keys.CHAIN_OPS:
                for tail in probe_keys.CHAIN_TAILS:
                    if op == "ArgMax" and tail == "QuantizeLinear":
                        continue  # its output is int64
                    model = chain(quant_type, op, opset, tail)
                    key = probe_keys.chain_key(key_of(model, 2), op, opset, tail)
                    if key is not None:
                        yield key, model, feeds
