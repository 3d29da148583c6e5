"""stacked._wired (every name at once) numbers the slots as _wired_each (name by name) does."""

from __future__ import annotations

import glob
import os

import onnx
from onnx import helper

from qlin_cli.convert.formats import stacked

ROOT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models")


def _chains():
    """Runs of up to four nodes of every fixture model's main graph."""
    for path in sorted(glob.glob(os.path.join(ROOT, "**", "*.onnx"), recursive=True)):
        try:
            nodes = list(onnx.load(path, load_external_data=False).graph.node)
        except Exception:
            continue
        for at in range(0, len(nodes), 4):
            yield nodes[at:at + 4]


def test_wired_at_once_is_wired_name_by_name():
    seen = 0
    for nodes in _chains():
        if any("" in list(n.input) + list(n.output) for n in nodes):
            continue
        assert stacked._wired(nodes) == stacked._wired_each(nodes)
        seen += 1
    assert seen > 100


def test_wired_with_a_name_left_out_is_wired_name_by_name():
    """An input left out (-1, no slot) and an output without a name (a slot of its own),
    named again after: the same slots either way."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", ""], ["q"]),
             helper.make_node("Split", ["q", "", "x"], ["a", "", "b"], axis=0),
             helper.make_node("Add", ["a", "b"], ["y"])]
    slots, made, wiring = stacked._wired(nodes)
    assert (slots, made, wiring) == stacked._wired_each(nodes)
    assert wiring[0][3] == (0, 1, -1) and "" in slots and "" in made


def test_wired_numbers_inputs_before_outputs_in_node_order():
    nodes = [helper.make_node("Mul", ["b", "a"], ["c"], name="m", axis=3),
             helper.make_node("Add", ["c", "a"], ["d"])]
    slots, made, wiring = stacked._wired(nodes)
    assert list(slots) == ["b", "a", "c", "d"] and made == {"c", "d"}
    assert wiring[0][3:] == ((0, 1), (2,)) and wiring[1][3:] == ((2, 1), (3,))
    assert wiring[0][2] == (nodes[0].attribute[0].SerializeToString(),) and wiring[1][2] == ()
