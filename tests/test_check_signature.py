"""The clean-verdict cache: a node is skipped only when everything a rule reads
matches a node that raised nothing. Each variant below differs from a clean node
in one thing and must still be reported."""

from __future__ import annotations

import numpy as np
from builders import make, tensor
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_model

CLEAN = {"scale": "s_ok", "zp": "z_ok", "attrs": {"axis": 1}, "x": "x"}
VARIANTS = {
    "scale value": ({"scale": "s_zero"}, "QL501"),
    "zero point type": ({"zp": "z_int32"}, "QL201"),
    "attribute value": ({"attrs": {"axis": 5}}, "QL401"),
    "attribute present": ({"attrs": {"axis": 1, "saturate": 0}}, "QL303"),
    "x shape": ({"x": "x_wide"}, "QL405"),
}


def _model():
    inits = [tensor("s_ok", np.full(3, 0.5, np.float32)), tensor("s_zero", np.zeros(3, np.float32)),
             tensor("z_ok", np.zeros(3), "int8"), tensor("z_int32", np.zeros(3), "int32")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("x_wide", TensorProto.FLOAT, [2, 4])]
    nodes, outputs = [], []
    cases = [("clean_a", CLEAN), ("clean_b", CLEAN)]
    cases += [(name.replace(" ", "_"), {**CLEAN, **change}) for name, (change, _) in VARIANTS.items()]
    for name, c in cases:
        nodes.append(helper.make_node("QuantizeLinear", [c["x"], c["scale"], c["zp"]], [f"y_{name}"],
                                      name=name, **c["attrs"]))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", TensorProto.UNDEFINED, None))
    return make(helper.make_graph(nodes, "g", inputs, outputs, initializer=inits), {"": 21})


def test_every_variant_of_a_clean_node_is_still_checked():
    model = _model()
    by_node: dict[str, set[str]] = {}
    for d in check_model(model, "."):
        by_node.setdefault(d.node, set()).add(d.code)
    assert "clean_a" not in by_node and "clean_b" not in by_node
    for name, (_, code) in VARIANTS.items():
        assert code in by_node.get(name.replace(" ", "_"), set()), (name, by_node)
