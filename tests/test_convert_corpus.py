"""Real quantizer output (fixtures/corpus.py: onnxruntime's quantize_static QDQ and
QOperator, quantize_dynamic, contrib 16-bit, int4 and MatMul n-bits) converted across
opsets 10..25 and domains.

Each conversion either gives a model onnxruntime runs with bit-identical outputs (graph
optimizations off, so the ops run as written), or is refused, and then every reason is
one of the ways a target cannot express a node: a type, a granularity or an op it lacks,
an attribute value or a run-time value its schema cannot state. A refusal for any other
reason (an unknown type, a proof that cannot run, a failing converter) fails the test.
"""

from __future__ import annotations

import os
import re

import corpus
import onnx
import pytest

from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.write import write_model
from qlin_cli.model.analysis import analyze

pytest.importorskip("onnxruntime")

INEXPRESSIBLE = re.compile("|".join([
    r"is not allowed by", r"is not available in", r"does not exist at opset",
    r"which the target does not allow", r"exists only from opset", r"may be negative",
    r"is computed at run time", r"Resize-10", r"needs x and y_scale of one type",
    r"has no \w+ and ai.onnx", r"lacks",
]))
TARGETS = [10, 13, 17, 19, 21, 25]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("corpus"))


def _targets(path: str):
    model = onnx.load(path, load_external_data=False)
    source = {o.domain or "": o.version for o in model.opset_import}[""]
    found = [(t, None) for t in TARGETS if t != source]
    domains = {n.domain for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")}
    found.append((source, "ai.onnx" if "com.microsoft" in domains else "com.microsoft"))
    return model, found


def _same(a, b) -> bool:
    return all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


NAMES = sorted(c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES)


@pytest.mark.parametrize("name", NAMES)
def test_real_quantizer_output_converts_or_is_refused_for_a_reason(name, models, tmp_path):
    path = models[name]
    cfg = corpus.BY_NAME[name]
    model, targets = _targets(path)
    # one analysis of the source serves every target (as convert_pipeline gives its own)
    a = analyze(model, os.path.dirname(path))
    want = corpus.run(path, cfg.model, optimize=False)
    converted = 0
    for to, domain in targets:
        r = convert_model(model, os.path.dirname(path), Options(to, domain), types=a.inferred, analysis=a)
        if r.model is None:
            odd = [f"{x.where} {x.title}: {x.detail}" for x in r.refused
                   if not INEXPRESSIBLE.search(x.detail)]
            assert not odd, (to, domain, odd)
            continue
        out = str(tmp_path / f"{to}_{domain}.onnx")
        write_model(r.model, os.path.dirname(path), out)
        got = corpus.run(out, cfg.model, optimize=False)
        assert _same(want, got), (to, domain)
        converted += 1
    assert converted >= 1 or cfg.opset in (10, 11)  # every model has some target it can reach
