"""The runtimes' view of a converted model, made cheaper: each shortcut gives what the long way
gives, on the bundled fixtures, the quantizer corpus and the QDQ chain of the benchmarks.

* ``ModelView.read_all`` reads the facts of a root scope's nodes itself (not through
  ``read_facts`` a node): field by field those ``read_facts`` reads of each node alone;
* ``predict._place_node`` with ``heads`` places a finding met before on another node from the
  first one's fields: the Finding made without ``heads``, field by field and in their order.
"""

from __future__ import annotations

import pytest
from site_models import analysed, every_model

from qlin_cli.finding import Finding
from qlin_cli.model.facts import read_facts
from qlin_cli.targets import predict


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[str]:
    return every_model(tmp_path_factory.mktemp("speed_sites"), 200)


def _fields(f) -> tuple:
    return (f.op, f.domain, f.opset, f.imported, f.spec, f.in_typed, f.out_typed, f.attr_items, f.values,
            f.inputs, f.outputs, f.location, type(f.location))


def test_facts_read_at_once_are_read_facts(models):
    read = 0
    for path in models:
        a = analysed(path)
        for body in a.bodies:
            a.read_all(body)
            for i, f in body.facts.items():
                alone = read_facts(body.nodes[i], i, body.scope, a.base_dir)
                assert _fields(f) == _fields(alone), (path, body.path, i)
                # the constants are the scope's, one object per name, whoever read them first
                assert all(c is None or body.scope.consts.get(n) is c or body.scope.parent is not None
                           for c, n in zip(f.values, f.inputs, strict=False)), (path, i)
                read += 1
    assert read > 1000


def test_findings_placed_from_the_first_are_those_placed_alone(models):
    placed = 0
    for path in models:
        a = analysed(path)
        for name in ("onnxruntime", "openvino", "tensorrt"):
            t = predict._targets([name])[0]
            info, sites = predict._read(a)
            heads: dict = {}
            for f, loc, x in predict._raw(t, info, sites):
                if f is None:
                    continue
                fast = predict._place_node(t, f, x, loc, heads)
                slow = predict._place_node(t, f, x, loc)
                assert type(fast) is Finding and fast == slow, (path, loc)
                assert list(vars(fast).items()) == list(vars(slow).items()), (path, loc)
                placed += 1
    assert placed > 1000
