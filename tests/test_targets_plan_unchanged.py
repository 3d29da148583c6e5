"""The plan's node as convert writes it, where convert leaves the node at its version
(targets/predict.py ``_unchanged``): worked out without importing convert, equal to what
convert's own rewrite gives (``_written`` then ``_retargeted``) on every linear node of the
fixtures at every opset."""

from __future__ import annotations

import glob
import os

import onnx
import pytest

from qlin_cli import schema
from qlin_cli.convert import keeps as keeps_module
from qlin_cli.convert import qnode
from qlin_cli.model.analysis import analyze
from qlin_cli.targets import nodes, predict

ROOT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models")


def _linear_facts():
    for path in sorted(glob.glob(os.path.join(ROOT, "**", "*.onnx"), recursive=True)):
        try:
            a = analyze(onnx.load(path, load_external_data=False), os.path.dirname(path))
            placed = predict._read(a)[1]
        except Exception:  # a fixture made to fail reading: not a model the plan reads
            continue
        for site, _ in placed:
            f = site.facts
            if nodes.is_linear(f) and f.spec is not None:
                yield f


@pytest.fixture(scope="module")
def linear_facts():
    return list({id(f): f for f in _linear_facts()}.values())


def test_known_attributes_are_qnodes():
    # one rule of what a rewrite keeps, convert's and the plan's
    assert qnode.KNOWN_ATTRS is keeps_module.KNOWN_ATTRS and qnode.keeps is keeps_module.keeps


def test_keeps_is_qnodes(linear_facts):
    asked = 0
    for f in linear_facts:
        q, mine = qnode.read(f), predict._AsRead(f)
        assert (mine.spec, mine.attrs, mine.refs, mine.new_zero_point) == (q.spec, q.attrs, q.refs, None)
        names = {a[0] for a in f.attr_items} | {"axis", "saturate", "block_size", "precision", "other"}
        for name in names:
            for attr_type in (onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT, onnx.AttributeProto.STRING):
                for value in (0, 1, -1, None):
                    ours = keeps_module.keeps(mine, name, attr_type, value)
                    assert ours == qnode.keeps(q, name, attr_type, value)
                    asked += 1
    assert asked > 1000


def test_unchanged_is_what_convert_writes(linear_facts):
    same = moved = 0
    for f in linear_facts:
        for opset in range(schema.oldest_opset(), schema.ir.newest_opset() + 1):
            mine = predict._unchanged(f, opset)
            q, written = predict._written(f, None, opset)
            if mine is None:
                moved += 1
                continue
            assert written is q  # convert made no step
            assert mine == predict._retargeted(f, written, opset)
            assert predict._written_once(f, None, opset) == (None, None, mine)
            same += 1
    assert same > 50 and moved > 50
