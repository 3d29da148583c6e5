"""A target's findings asked once per class of sites (targets/site_classes.py) are the
findings asked node by node: on the bundled fixtures, the quantizer corpus and the type
space, for every target and some older measured releases, and on a model whose nodes
differ only in their scales' signs (the summary a check reads)."""

from __future__ import annotations

import glob
import os

import corpus
import numpy as np
import onnx
import pytest
import test_targets_matrix as tm
import type_space
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import predict, registry, site_classes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = [t.name for t in registry.all_targets()]
TARGETS += ["onnxruntime@1.18", "openvino@2024.6", "openvino@2025.3"]


def _both(model: onnx.ModelProto, base_dir: str) -> tuple[list, list]:
    """(findings with classes, findings node by node), each on a fresh analysis."""
    found = []
    for enabled in (True, False):
        site_classes.ENABLED = enabled
        try:
            a = analyze(model, base_dir)
            found.append([p.to_json() for p in predict.findings_in(a, TARGETS)])
        finally:
            site_classes.ENABLED = True
    return found[0], found[1]


def _alike(model: onnx.ModelProto, base_dir: str, targets: list) -> int:
    """Asserts that each node of the model, asked as the only node of its class (its hidden
    parts unreadable), gets the findings it gets asked alone; how many it asked. Two nodes of
    one class are asked on equal hidden sites, so this holds for classes of any size."""
    asked = 0
    for site, loc in predict._read(analyze(model, base_dir))[1]:
        for t in targets:
            assert site_classes.asker(t.findings_for)(site) == t.findings_for(site), (loc.label, t.name)
            asked += 1
    return asked


def test_fixtures_and_corpus_alike(tmp_path):
    paths = sorted(glob.glob(os.path.join(ROOT, "fixtures", "models", "**", "*.onnx"), recursive=True))
    paths += list(corpus.build(tmp_path).values())
    assert len(paths) > 150
    targets = [registry.get(name) for name in TARGETS]
    asked = sum(_alike(onnx.load(p, load_external_data=False), os.path.dirname(p), targets) for p in paths)
    assert asked > 8 * 2000


def test_type_space_alike():
    cases = type_space.space()[::7]
    assert len(cases) > 800
    targets = [registry.get(name) for name in TARGETS]
    assert sum(_alike(tm.build(case)[0], ".", targets) for case in cases) > 8 * 800


def _signed_chain(signs: list[float]) -> onnx.ModelProto:
    """QuantizeLinear nodes of one class but for their scales (float16 x, int8), the scales'
    signs as given."""
    nodes, inits, x = [], [], "x"
    for i, sign in enumerate(signs):
        inits.append(numpy_helper.from_array(np.array(sign * (0.5 + i / 64), np.float32), f"s{i}"))
        inits.append(numpy_helper.from_array(np.array(0, np.int8), f"z{i}"))
        nodes.append(helper.make_node("QuantizeLinear", [x, f"s{i}", f"z{i}"], [f"q{i}"], name=f"q{i}"))
        nodes.append(helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"],
                                      name=f"d{i}"))
        x = f"d{i}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.mark.parametrize("signs", [[1, -1, 1, -1], [-1, 1, 1, 1], [1, 1, 1, -1]])
def test_a_class_split_by_the_scales_sign(signs):
    with_classes, alone = _both(_signed_chain(signs), ".")
    assert with_classes == alone
    negative = {p["node"] for p in alone if p["code"] == "QT407"}
    # a runtime that miscomputes a negative scale says so on those nodes and no other
    assert negative == {f"q{i}" for i, s in enumerate(signs) if s < 0}


def test_a_hidden_value_read_raises_what_no_check_catches():
    with pytest.raises(site_classes.ValueRead):
        site_classes.HIDDEN.array()
    assert not issubclass(site_classes.ValueRead, Exception)
