"""What `qlin check` reads once (issue 35, "each command does its work once"), held to what
it replaced:

* the file's bytes go to shape inference as they are: the types are those of the model
  serialized again, and so are the findings;
* a graph's initializers are read once (``tensors.census``); the skeleton decision made from
  the census is the one made tensor by tensor;
* the body maps the engine notes in its pass over the nodes are those the view builds.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS

from qlin_cli.check.engine import check_analysis, check_file
from qlin_cli.model import graphs, infer
from qlin_cli.model.analysis import analyze
from qlin_cli.model.load import load_model, load_model_bytes
from qlin_cli.model.tensors import census
from qlin_cli.model.view import BodyView

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def _keeps_each(model: onnx.ModelProto) -> bool:
    """The skeleton decision as it was made: every tensor looked at on its own."""
    from qlin_cli.model.safety import all_tensors

    if not all(t.data_location == TensorProto.EXTERNAL or infer.keeps_data(t) for t in all_tensors(model)):
        return False
    return not any(a.type in infer._SPARSE for b in graphs.bodies(model) for i in b.attributed
                   for a in b.owner.node[i].attribute)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_the_census_the_bytes_and_the_engine_change_nothing(path):
    model, data = load_model_bytes(path)
    assert data is not None and onnx.ModelProto.FromString(data) == model
    with graphs.reading(model):
        assert infer._same_as_skeleton(model) == _keeps_each(model)
        for b in graphs.bodies(model):
            if isinstance(b.owner, onnx.GraphProto):
                c = census(b.owner)
                assert c.names == [t.name for t in b.owner.initializer]
                assert c.typed == [(t.data_type, tuple(t.dims)) for t in b.owner.initializer]
    base = os.path.dirname(path)
    fresh = load_model(path)
    a, b = analyze(model, base, serialized=data), analyze(fresh, base)  # the bytes, or serialized again
    assert (a.inferred, a.inference_errors, a.marked) == (b.inferred, b.inference_errors, b.marked)
    assert [(d.code, d.node, d.message) for d in check_analysis(a)] == \
        [(d.code, d.node, d.message) for d in check_analysis(b)]
    for body in a.bodies:  # what the engine's pass noted is what the view builds
        view = BodyView(body.path, body.owner, body.scope, body.parent, list(body.nodes), dict(body.facts))
        assert body.kinds == view.kinds and body.io == view.io
        for family in {f.spec.family for f in body.facts.values() if f.spec is not None}:
            want = {}
            for i in sorted(body.facts):
                f = body.facts[i]
                if f.spec is not None and f.spec.family == family and f.outputs and f.outputs[0]:
                    want.setdefault(f.outputs[0], (i, f))
            assert a.of_family(body, family) == want


def _model(tensors, ir: int = 10) -> bytes:
    node = helper.make_node("Identity", ["x"], ["y"])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], list(tensors))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = ir
    return m.SerializeToString()


def test_a_bad_initializer_is_found_whichever_way_the_file_is_read(tmp_path):
    undefined = onnx.TensorProto(name="u", dims=[1], raw_data=b"\0")
    good = [numpy_helper.from_array(np.float32(0.5), f"t{k}") for k in range(20)]
    path = tmp_path / "m.onnx"
    path.write_bytes(_model([*good[:10], undefined, *good[10:]]))
    found = [(d.code, d.node) for d in check_file(str(path)).diagnostics if d.code == "QL007"]
    assert found == [("QL007", "u")]
    path.write_bytes(_model(good))
    assert not [d for d in check_file(str(path)).diagnostics if d.code == "QL007"]
