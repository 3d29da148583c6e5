"""What predict._body_sites works out once per body rather than per node gives what the
per-node functions give: each group's key from ``fusion.texts`` is ``fusion.group``'s, and the
classes ``predict._Classes`` numbers while the sites are made never put together two sites
that ``site_classes.class_key`` keeps apart (a class of one numbering is a class of the other,
or a part of one: findings asked once per class stay each node's own). On the bundled fixtures,
the quantizer corpus, and the QDQ chain of the benchmarks."""

from __future__ import annotations

import pytest
from site_models import analysed, every_model

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import fusion, predict, site_classes


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[str]:
    return every_model(tmp_path_factory.mktemp("numbers"), 400)


def test_group_texts_are_the_groups_keys(models):
    seen = 0
    for path in models:
        a = analysed(path)
        for body in a.bodies:
            text_of = fusion.texts(a, body)
            for i in range(len(body.nodes)):
                g = fusion.group(a, body, i)
                assert text_of(i) == (None if g is None else g.text), (path, body.nodes[i].name)
                seen += g is not None
    assert seen > 300


def test_classes_numbered_with_the_sites_refine_class_key(models):
    numbered = 0
    for path in models:
        a = analysed(path)
        placed = predict._read(a)[1]
        early = a.memo("targets.site_classes", dict)
        fresh: dict = {}
        by_number: dict = {}
        for site, _ in placed:
            if id(site) not in early:
                continue
            numbered += 1
            mine = class_key = site_classes.class_key(site, fresh)
            assert by_number.setdefault(early[id(site)], mine) == class_key, path
    assert numbered > 1000


def test_the_version_in_force_is_convert_s():
    """probe_keys asks onnx.defs itself for the version of an op in force (no convert module
    imported for a check naming a target): what convert.opsteps.since_at gives."""
    from qlin_cli.convert import opsteps
    from qlin_cli.targets import probe_keys

    ops = [*opsteps.ops()[::3], "MatMul", "Gemm", "Transpose", "ReduceMean", "NoSuchOp"]
    for op in ops:
        for opset in (1, 7, 11, 13, 17, 18, 19, 21, 23, 25, opsteps.newest_opset()):
            assert probe_keys._since(op, opset) == opsteps.since_at(op, opset), (op, opset)
    assert probe_keys._since("MatMul", None) is None


def test_negative_scale_read_from_the_bytes_is_the_arrays(models):
    """``nodes.negative_scale`` reads a float32 / float64 scale's bytes as they are: the same
    answer as its values read as an array, on every node of the models and on scales with
    -0.0, NaN, negative and mixed values."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from qlin_cli.targets import nodes

    def slow(f):
        s = nodes.scale_values(f)
        return None if s is None else bool((s < 0).any())

    seen = 0
    for path in models:
        a = analysed(path)
        for body in a.bodies:
            for f in (a.facts(body, i) for i in range(len(body.nodes))):
                if f is not None and nodes.is_linear(f):
                    assert nodes._plain_negative(f) in (None, slow(f)), (path, f.location)
                    seen += nodes._plain_negative(f) is not None
    assert seen > 400
    for dtype in (np.float32, np.float16):
        for values in ([-0.0], [np.nan], [0.5, -0.25], [0.5, 2.0], [-1e-30], [np.inf, -np.inf]):
            s = numpy_helper.from_array(np.array(values, dtype), "s")
            node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=0)
            g = helper.make_graph([node], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(values)])],
                                  [helper.make_tensor_value_info("y", TensorProto.UINT8, [len(values)])], [s])
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
            a = analyze(m, ".")
            f = a.facts(a.bodies[0], 0)
            assert nodes.negative_scale(f) == slow(f) == bool((np.array(values, dtype) < 0).any())

