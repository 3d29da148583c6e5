"""The groups onnxruntime's quantizers write (fixtures/corpus.py) that the matrix's facts one
at a time missed (tools/probe_fusion.py ``quantizer_cases``): a residual Add whose second
input's DequantizeLinear another group reads too, a Conv / Gemm / MatMul of each type pair
without a bias, with asymmetric weights, with float weights quantized in the graph or beside a
shared activation, int4 weights below opset 21 (com.microsoft Q/DQ), a Mul after a MatMul whose
Q -> DQ two groups read, a blocked weight transposed before its MatMul (openvino folds it into
the weight: "not in the runtime graph", an outcome too). Each key is measured in every release
of both runtimes; dropping the cases from the matrix, or the builder's way of making them,
makes these tests fail. And the openvino reader finds the layer of an Add / Mul of a constant
it folds into the op before it (named after a DequantizeLinear around the Add from 2026.1)."""

from __future__ import annotations

import probe_fusion
import probe_fusion_openvino

from qlin_cli.targets import fusion
from qlin_cli.targets.releases import measured as releases_of

_spec = probe_fusion._spec
# (spec, the key it makes), as the quantizer outputs have them
CASES = [
    (_spec(op="Add", act="uint8", b="act", shared="b"),
     "Add(uint8 tensor, uint8 tensor shared-dq) -> Q uint8"),
    (_spec(op="Add", act="int16", b="act", shared="b", opset=21),
     "Add(int16 tensor, int16 tensor shared-dq) -> Q int16"),
    (_spec(op="Mul", act="uint8", b="act", shared="ab", opset=13),
     "Mul(uint8 tensor shared-dq, uint8 tensor shared-dq) -> Q uint8, opset<21"),
    (_spec(op="Add", act="uint16", b="sym_const"), "Add(uint16 tensor, uint16 tensor sym const) -> Q uint16"),
    (_spec(op="Add", act="uint8", b="float", after="float"), "Add(uint8 tensor, float) -> float"),
    (_spec(op="Mul", act="uint16", b="const", before="MatMul", after="q", shared="act"),
     "MatMul -> Mul(uint16 tensor shared-dq, uint16 tensor sym const) -> Q uint16"),
    (_spec(op="Conv", act="int16", w="int16", gran="channel", axis=0, shared="act"),
     "Conv(int16 tensor shared-dq, int16 channel axis=0 sym const, int32 channel axis=0 sym const)"
     " -> Q int16"),
    (_spec(op="Conv", act="uint8", w="uint8", sym=False, bias="none", opset=11),
     "Conv(uint8 tensor, uint8 tensor const) -> Q uint8, opset<12"),
    (_spec(op="Conv", act="uint8", w="int4", gran="channel", axis=0, bias="none", opset=13, contrib=True),
     "Conv(uint8 tensor, int4 channel axis=0 sym const) -> Q uint8, opset<21"),
    (_spec(op="Gemm", act="uint8", w="int8", gran="channel", axis=0, transB=1, opset=13, pair=True),
     "Gemm transB=1(uint8 tensor, int8 channel axis=0, int32 channel axis=0 sym const) -> Q uint8, opset<21"),
    (_spec(op="MatMul", act="uint16", w="uint16", sym=False, bias="none"),
     "MatMul(uint16 tensor, uint16 tensor const) -> Q uint16"),
    (_spec(op="MatMul", act="float", w="uint4", gran="blocked", axis=0, block=64, sym=False, after="add",
           bias="none"), "MatMul(float, uint4 blocked axis=0 block=64 const) -> Add"),
    (_spec(op="MaxPool", act="uint8", after="float", opset=13), "MaxPool(uint8 tensor) -> float, opset<21"),
    (_spec(op="Transpose", act="int4", w="int4", gran="blocked", axis=1, block=64, after="float",
           weight_t=True),
     "Transpose(int4 blocked axis=1 block=64 sym const) -> float"),
]


def test_the_quantizer_groups_are_cases_of_the_matrix_measured_in_every_release():
    specs = {repr(sorted(s.items())) for s in probe_fusion.matrix()}
    for runtime in ("onnxruntime", "openvino"):
        tables = [fusion.table(runtime, v) for v in releases_of(runtime)]
        assert len(tables) >= 15 and all(tables), runtime
        for spec, key in CASES:
            assert repr(sorted(spec.items())) in specs, key
            assert [g.text for _, g in probe_fusion.measured_groups(probe_fusion.build(spec))][-1] == key
            assert all(t.outcome(key) is not None for t in tables), (runtime, key)


def test_an_asymmetric_constant_after_an_op_is_not_its_zero_point():
    """A Mul by a constant whose values were its zero point (0) folded the whole model to a
    constant: no layer held the Mul in any openvino release."""
    for act in ("int8", "uint16"):
        for op in ("Mul", "Add"):
            key = f"Conv -> {op}({act} tensor, {act} tensor const) -> Q {act}"
            for v in releases_of("openvino"):
                assert fusion.table("openvino", v).outcome(key) != probe_fusion_openvino.NOT_FOUND, (key, v)


def test_an_add_folded_into_the_op_before_it_is_read_in_that_layer():
    from onnx import helper

    names = [("MatMul", ["x", "w"], "m"), ("QuantizeLinear", ["m", "s", "z"], "q1"),
             ("DequantizeLinear", ["q1", "s", "z"], "dq1"), ("DequantizeLinear", ["c", "s", "z"], "dq2"),
             ("Add", ["dq1", "dq2"], "a"), ("QuantizeLinear", ["a", "s", "z"], "q2"),
             ("DequantizeLinear", ["q2", "s", "z"], "dq3")]
    model = helper.make_model(helper.make_graph(
        [helper.make_node(op, ins, [out], name=out) for op, ins, out in names], "g", [], []))
    fc = ["dq3", "FullyConnected", "i8", "bf16", "dq3", "bf16,i8"]  # 2026.1 on: named after dq3 alone
    assert probe_fusion_openvino.outcome_of(model, [fc], "a") == fusion.FLOAT
    fc_int = ["dq3", "FullyConnected", "i8", "f32", "dq3", "i8,i8"]
    assert probe_fusion_openvino.outcome_of(model, [fc_int], "a") == "runs in i8 (FullyConnected)"
    other = ["dq9", "FullyConnected", "i8", "f32", "dq9", "i8,i8"]
    assert probe_fusion_openvino.outcome_of(model, [other], "a") == probe_fusion_openvino.NOT_FOUND
    # the MatMul whose bias Add openvino folds into the FullyConnected named after the Add (the
    # uint16 MatMul of transformer_qdq_u16s8_op21), beside another FullyConnected
    named_add = ["a", "FullyConnected", "i8", "bf16", "a", "bf16,i8"]
    assert probe_fusion_openvino.outcome_of(model, [other, named_add], "m") == fusion.FLOAT
    assert probe_fusion_openvino.outcome_of(model, [other, fc], "m") == probe_fusion_openvino.NOT_FOUND
    table = fusion.table("openvino", "2026.4.1")
    assert table.outcome("MatMul -> Add(uint16 tensor, uint16 tensor const) -> Q uint16") == fusion.FLOAT
