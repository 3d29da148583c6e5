"""Planted single mistakes in each op family, each reported on the right node, and the
unchanged model (the near miss) reported clean: QLinearConv, QLinearMatMul, QGemm,
com.microsoft QLinear ops, MatMulInteger, ConvInteger, DynamicQuantizeLinear,
DynamicQuantizeLSTM, MatMulNBits, GatherBlockQuantized and Quark's BFPQuantizeDequantize."""

from __future__ import annotations

import numpy as np
import pytest
from builders import make, tensor
from onnx import helper

from qlin_cli.check.engine import check_model
from qlin_cli.schema import dtypes

MS, QUARK = "com.microsoft", "com.amd.quark"
F32 = np.float32


def node_model(op, inputs, *, domain="", outputs=("y",), out_types=None, attrs=None, opset=13,
               imports=None, ir=10, name="target"):
    """One node ``name``: ``inputs`` is a list of (name, kind, value_or_shape, type) with kind
    "init" (an initializer holding value) or "in" (a graph input of that shape), or None for
    an absent optional input."""
    names, inits, graph_inputs = [], [], []
    for item in inputs:
        if item is None:
            names.append("")
            continue
        n, kind, v, t = item
        names.append(n)
        if kind == "init":
            inits.append(tensor(n, v, t))
        else:
            graph_inputs.append(helper.make_tensor_value_info(n, dtypes.BY_NAME[t].proto, list(v)))
    node = helper.make_node(op, names, list(outputs), name=name, domain=domain, **(attrs or {}))
    outs = [helper.make_tensor_value_info(o, dtypes.BY_NAME[t].proto, None)
            for o, t in zip(outputs, out_types or ["float"] * len(outputs), strict=True) if o]
    graph = helper.make_graph([node], "g", graph_inputs, outs, initializer=inits)
    opsets = imports if imports is not None else ({"": opset} | ({domain: 1} if domain else {}))
    model = make(graph, opsets)
    model.ir_version = ir
    return model


# The models here are one node each, built to test the quantization rules: their graph
# outputs carry no shape, which IR.md asks of a main graph (QL006, the validity rules'
# own tests hold it). Those rules are left out here.
VALIDITY = ["QL0"]


def found(model):
    return {(d.code, d.node) for d in check_model(model, ".", ignore=VALIDITY)}


def errors(model):
    return [d for d in check_model(model, ".", ignore=VALIDITY) if d.severity != "info"]


# ---- builders of a clean node per family, with one thing changeable ----------------------
def qlinear_conv(w_scale=None, w_zp=None, x_zp_type="uint8", x_scale=0.02,
                 y_zp=("y_zp", "init", 128, "uint8"), attrs=None, opset=13):
    w_scale = np.full(8, 0.01, F32) if w_scale is None else w_scale
    w_zp = np.zeros(np.shape(w_scale)) if w_zp is None else w_zp
    return node_model("QLinearConv", [
        ("x", "in", (1, 3, 8, 8), x_zp_type), ("x_s", "init", F32(x_scale), "float"),
        ("x_zp", "init", 0, x_zp_type), ("w", "init", np.ones((8, 3, 3, 3)), "int8"),
        ("w_s", "init", w_scale, "float"), ("w_zp", "init", w_zp, "int8"),
        ("y_s", "init", F32(0.05), "float"), y_zp], out_types=["uint8"], attrs=attrs, opset=opset)


def qlinear_matmul(a_zp_type="uint8", b_scale=None, scale_type="float", opset=13):
    b_scale = np.full(3, 0.01, F32) if b_scale is None else b_scale
    return node_model("QLinearMatMul", [
        ("a", "in", (2, 4), "uint8"), ("a_s", "init", F32(0.02), scale_type), ("a_zp", "init", 0, a_zp_type),
        ("b", "init", np.ones((4, 3)), "int8"), ("b_s", "init", b_scale, scale_type),
        ("b_zp", "init", np.zeros(np.shape(b_scale)), "int8"), ("y_s", "init", F32(0.05), scale_type),
        ("y_zp", "init", 0, "uint8")], out_types=["uint8"], opset=opset)


def qgemm(b_scale_len=10, trans_b=1):
    b = np.ones((10, 8)) if trans_b else np.ones((8, 10))
    return node_model("QGemm", [
        ("a", "in", (1, 8), "uint8"), ("a_s", "init", F32(0.02), "float"), ("a_zp", "init", 0, "uint8"),
        ("b", "init", b, "int8"), ("b_s", "init", np.full(b_scale_len, 0.01, F32), "float"),
        ("b_zp", "init", np.zeros(b_scale_len), "int8"), ("c", "init", np.zeros(10), "int32"),
        ("y_s", "init", F32(0.05), "float"), ("y_zp", "init", 0, "uint8")],
        domain=MS, out_types=["uint8"], attrs={"transB": trans_b})


def qlinear_add(b_type="uint8", a_scale=None):
    a_scale = F32(0.02) if a_scale is None else a_scale
    return node_model("QLinearAdd", [
        ("a", "in", (1, 8), "uint8"), ("a_s", "init", a_scale, "float"), ("a_zp", "init", 0, "uint8"),
        ("b", "in", (1, 8), b_type), ("b_s", "init", F32(0.02), "float"), ("b_zp", "init", 0, b_type),
        ("c_s", "init", F32(0.04), "float"), ("c_zp", "init", 0, "uint8")], domain=MS, out_types=["uint8"])


def qlinear_softmax(attrs=None):
    return node_model("QLinearSoftmax", [
        ("x", "in", (1, 10), "uint8"), ("x_s", "init", F32(0.1), "float"), ("x_zp", "init", 0, "uint8"),
        ("y_s", "init", F32(1 / 256), "float"), ("y_zp", "init", 0, "uint8")],
        domain=MS, out_types=["uint8"], attrs={"opset": 13, "axis": 1} if attrs is None else attrs)


def matmul_integer(b_zp=None, a_zp_type="uint8"):
    b_zp = np.zeros(3) if b_zp is None else b_zp
    return node_model("MatMulInteger", [
        ("a", "in", (2, 4), "uint8"), ("b", "init", np.ones((4, 3)), "int8"),
        ("a_zp", "init", 0, a_zp_type), ("b_zp", "init", b_zp, "int8")], out_types=["int32"])


def conv_integer(w_zp=None):
    w_zp = np.zeros(8) if w_zp is None else w_zp
    return node_model("ConvInteger", [
        ("x", "in", (1, 3, 8, 8), "uint8"), ("w", "init", np.ones((8, 3, 3, 3)), "int8"),
        ("x_zp", "init", 0, "uint8"), ("w_zp", "init", w_zp, "int8")], out_types=["int32"])


def dynamic_quantize(outputs=("y", "y_s", "y_zp"), y_type="uint8", opset=13):
    return node_model("DynamicQuantizeLinear", [("x", "in", (2, 4), "float")], outputs=outputs,
                      out_types=[y_type, "float", "uint8"][:len(outputs)], opset=opset)


def dynamic_lstm(w_scale_shape=(1, 64), direction=None):
    attrs = {"hidden_size": 16} | ({"direction": direction} if direction else {})
    return node_model("DynamicQuantizeLSTM", [
        ("x", "in", (4, 1, 8), "float"), ("w", "init", np.ones((1, 8, 64)), "int8"),
        ("r", "init", np.ones((1, 16, 64)), "int8"), None, None, None, None, None,
        ("w_s", "init", np.full(w_scale_shape, 0.01, F32), "float"),
        ("w_zp", "init", np.zeros(w_scale_shape), "int8"),
        ("r_s", "init", np.full((1, 64), 0.01, F32), "float"), ("r_zp", "init", np.zeros((1, 64)), "int8")],
        domain=MS, outputs=("y",), attrs=attrs)


def nbits(k=64, n=32, bits=4, block=32, a_k=None, scales_shape=None, imports=None, bias_len=None):
    k_blocks = -(-k // block)
    inputs = [("a", "in", (1, a_k or k), "float"),
              ("b", "init", np.zeros((n, k_blocks, block * bits // 8)), "uint8"),
              ("scales", "init", np.full(scales_shape or (n, k_blocks), 0.01, F32), "float"),
              ("zp", "init", np.full((n, -(-k_blocks * bits // 8)), 0x88), "uint8")]
    if bias_len is not None:
        inputs += [None, ("bias", "init", np.zeros(bias_len, F32), "float")]
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block}
    return node_model("MatMulNBits", inputs, domain=MS, attrs=attrs,
                      imports=imports, opset=21)


def gather_block(data_type="int4", scales_shape=(32, 2), zp=True, attrs=None):
    inputs = [("data", "init", np.zeros((32, 64)), data_type), ("ids", "in", (1, 8), "int64"),
              ("scales", "init", np.full(scales_shape, 0.1, F32), "float")]
    if zp:
        inputs.append(("zp", "init", np.zeros(scales_shape), data_type))
    return node_model("GatherBlockQuantized", inputs, domain=MS, opset=21,
                      attrs={"block_size": 32, "quantize_axis": 1} | (attrs or {}))


def bfp(attrs=None, imports=None, shape=(2, 16)):
    return node_model("BFPQuantizeDequantize", [("x", "in", shape, "float")], domain=QUARK, attrs=attrs,
                      imports=imports, opset=21)


# (name, clean model, model with one mistake, the code it must raise on node 'target')
CASES = [
    ("qlinearconv per-channel w scale of the wrong length", qlinear_conv,
     lambda: qlinear_conv(w_scale=np.full(4, 0.01, F32)), "QL410"),
    ("qlinearconv per-channel x scale", qlinear_conv, lambda: node_model("QLinearConv", [
        ("x", "in", (1, 3, 8, 8), "uint8"), ("x_s", "init", np.full(3, 0.02, F32), "float"),
        ("x_zp", "init", np.zeros(3), "uint8"), ("w", "init", np.ones((8, 3, 3, 3)), "int8"),
        ("w_s", "init", F32(0.01), "float"), ("w_zp", "init", 0, "int8"), ("y_s", "init", F32(0.05), "float"),
        ("y_zp", "init", 128, "uint8")], out_types=["uint8"]), "QL410"),
    ("qlinearconv zero point of the wrong type", qlinear_conv,
     lambda: qlinear_conv(y_zp=("y_zp", "init", 0, "int8")), "QL204"),
    ("qlinearconv zero scale", qlinear_conv, lambda: qlinear_conv(x_scale=0.0), "QL503"),
    ("qlinearconv missing zero point", qlinear_conv, lambda: qlinear_conv(y_zp=None), "QL106"),
    ("qlinearconv unknown attribute", qlinear_conv, lambda: qlinear_conv(attrs={"axis": 1}), "QL107"),
    ("qlinearconv group 0", qlinear_conv, lambda: qlinear_conv(attrs={"group": 0}), "QL305"),
    ("qlinearmatmul zero point type differs from a", qlinear_matmul,
     lambda: qlinear_matmul(a_zp_type="int8"), "QL204"),
    ("qlinearmatmul per-column b scale of the wrong length", qlinear_matmul,
     lambda: qlinear_matmul(b_scale=np.full(4, 0.01, F32)), "QL410"),
    ("qlinearmatmul float16 scales before opset 21", lambda: qlinear_matmul(scale_type="float16", opset=21),
     lambda: qlinear_matmul(scale_type="float16", opset=13), "QL204"),
    ("qgemm b scale with transB counts B's rows", qgemm, lambda: qgemm(b_scale_len=8), "QL410"),
    ("qlinearadd operands of two types", qlinear_add, lambda: qlinear_add(b_type="int8"), "QL204"),
    ("qlinearadd per-channel scale", qlinear_add,
     lambda: qlinear_add(a_scale=np.full(8, 0.02, F32)), "QL410"),
    ("qlinearsoftmax without opset", qlinear_softmax, lambda: qlinear_softmax({"axis": 1}), "QL107"),
    ("qlinearsoftmax axis out of range", qlinear_softmax,
     lambda: qlinear_softmax({"opset": 13, "axis": 2}), "QL305"),
    ("matmulinteger b zero point of the wrong length", matmul_integer,
     lambda: matmul_integer(b_zp=np.zeros(4)), "QL410"),
    ("matmulinteger a zero point type", matmul_integer, lambda: matmul_integer(a_zp_type="int8"), "QL204"),
    ("convinteger w zero point of the wrong length", conv_integer,
     lambda: conv_integer(w_zp=np.zeros(3)), "QL410"),
    ("dynamicquantizelinear missing output", dynamic_quantize,
     lambda: dynamic_quantize(outputs=("y", "y_s")), "QL106"),
    ("dynamicquantizelinear int8 output", dynamic_quantize, lambda: dynamic_quantize(y_type="int8"), "QL204"),
    ("dynamicquantizelinear before opset 11", dynamic_quantize, lambda: dynamic_quantize(opset=10), "QL104"),
    ("dynamicquantizelstm W scale shape", dynamic_lstm, lambda: dynamic_lstm(w_scale_shape=(1, 32)), "QL410"),
    ("dynamicquantizelstm direction", dynamic_lstm, lambda: dynamic_lstm(direction="sideways"), "QL305"),
    ("matmulnbits K disagrees with A", nbits, lambda: nbits(a_k=128), "QL411"),
    ("matmulnbits N disagrees with B", nbits, lambda: node_model("MatMulNBits", [
        ("a", "in", (1, 64), "float"), ("b", "init", np.zeros((32, 2, 16)), "uint8"),
        ("scales", "init", np.full((32, 2), 0.01, F32), "float")], domain=MS, opset=21,
        attrs={"K": 64, "N": 16, "bits": 4, "block_size": 32}), "QL411"),
    ("matmulnbits scales of the wrong shape", nbits, lambda: nbits(scales_shape=(32, 3)), "QL411"),
    ("matmulnbits bias of the wrong length", lambda: nbits(bias_len=32), lambda: nbits(bias_len=30), "QL411"),
    ("matmulnbits bits 3", nbits, lambda: nbits(bits=3, block=32), "QL305"),
    ("matmulnbits block size 24", nbits, lambda: nbits(block=24), "QL305"),
    ("matmulnbits without com.microsoft import", nbits, lambda: nbits(imports={"": 21}), "QL103"),
    ("gatherblockquantized scales of the wrong shape", gather_block,
     lambda: gather_block(scales_shape=(32, 4)), "QL411"),
    ("gatherblockquantized zero points with float8 data", lambda: gather_block("float8e4m3fn", zp=False),
     lambda: gather_block("float8e4m3fn"), "QL411"),
    ("gatherblockquantized quantize_axis out of range", gather_block,
     lambda: gather_block(attrs={"quantize_axis": 2}), "QL305"),
    ("bfp without its domain import", bfp, lambda: bfp(imports={"": 21}), "QL103"),
    ("bfp unknown method", bfp, lambda: bfp({"bfp_method": "to_mx"}), "QL305"),
    ("bfp axis out of range", bfp, lambda: bfp({"axis": 3}), "QL305"),
    ("bfp axis of the wrong type", bfp, lambda: bfp({"axis": 1.0}), "QL107"),
]


@pytest.mark.parametrize("name, clean, planted, code", CASES, ids=[c[0] for c in CASES])
def test_planted_mistake_is_reported_on_its_node(name, clean, planted, code):
    assert errors(clean()) == [], [d.message for d in errors(clean())]
    assert (code, "target") in found(planted()), [
        d.message for d in check_model(planted(), ".", ignore=VALIDITY)]


def test_bfp_axis_is_not_read_on_rank_1_inputs():
    """Quark's page: "When the rank of the input is 1, the axis can be ignored"."""
    assert errors(bfp({"axis": 3}, shape=(16,))) == []


def test_a_custom_domain_without_import_has_no_version_to_offer():
    model = node_model("MyOp", [("x", "in", (2,), "float")], domain="org.example", imports={"": 13})
    d = next(d for d in check_model(model, ".", ignore=VALIDITY) if d.code == "QL103")
    assert d.fix is None and "org.example" in d.message and d.node == "target"


def test_family_nodes_with_identical_facts_are_all_reported():
    """The clean-verdict cache covers the new families too: two equal bad nodes, two findings."""
    model = qlinear_conv(w_scale=np.full(4, 0.01, F32))
    node = model.graph.node[0]
    twin = model.graph.node.add()
    twin.CopyFrom(node)
    twin.name, twin.output[0] = "twin", "y2"
    names = [d.node for d in check_model(model, ".", ignore=VALIDITY) if d.code == "QL410"]
    assert names.count("target") == 2 and names.count("twin") == 2  # scale and zero point each
