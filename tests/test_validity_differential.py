"""qlin check against onnx.checker.check_model(full_check=True), one planted defect at a
time (tests/validity_mutations.py) in valid models: onnxruntime's quantizer output (every
configuration of fixtures/corpus.py) and models with an If, a Loop and a model-local function.

The property: whenever the checker rejects a model, qlin reports an error on it. The other
way round, an error qlin reports on a model the checker accepts must come from a rule whose
doc quotes the spec sentence it rests on: those rules are listed in BEYOND_THE_CHECKER.
"""

from __future__ import annotations

import os
from collections import Counter

import corpus
import make_fixtures
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from validity_mutations import MUTATIONS, mutate, places

from qlin_cli import rules
from qlin_cli.check.engine import check_file

EXAMPLES = int(os.environ.get("QLIN_FUZZ_EXAMPLES", "60"))  # make fuzz: 5,000
# Errors qlin reports where onnx.checker (full) accepts the model, each with its spec sentence:
BEYOND_THE_CHECKER = {
    # DequantizeLinear-13's page: its output is float only; a declared int64 output is not it
    "QL202",
    # IR.md: a value's declared type is its type; the checker's inference leaves out the
    # outputs of model-local function calls, qlin's does not
    "QL010",
    # onnx.proto's version notes: int4 "Added" in IR 10; onnxruntime's quantizer writes int4
    # into an IR 7 file (cnn_qdq_u8s4_op13), which the checker does not look at
    "QL205",
}


# `make test` plants defects in every other corpus configuration (in name order: each float
# model and quantizer mode keeps configurations among them); `make fuzz` in all of them
ALL_BASES = os.environ.get("QLIN_VALIDITY_BASES") == "all"


def bases(folder) -> dict[str, onnx.ModelProto]:
    built = corpus.build(folder)
    names = sorted(built) if ALL_BASES else sorted(built)[::2]
    found = {name: onnx.load(built[name]) for name in names}
    found.update(if_branch=make_fixtures.if_model(False), loop_body=make_fixtures.loop_model(False),
                 function=make_fixtures.function_model(False))
    return found


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    found = bases(tmp_path_factory.mktemp("validity_bases"))
    for model in found.values():
        onnx.checker.check_model(model, full_check=True)  # each base is valid to begin with
    return found


def judge(model: onnx.ModelProto, path: str) -> tuple[bool, list[str], str | None]:
    """(the checker rejects, qlin's error codes, qlin's could-not-check reason). ``path`` is
    a new file, removed after: rewriting one file over and over made ext4 write each one out
    to the disk (a truncated file's data is flushed when it is closed), 40% of the wall time."""
    onnx.save(model, path)
    try:
        onnx.checker.check_model(path, full_check=True)
        rejected = False
    except Exception:
        rejected = True
    r = check_file(path, frames=False)  # the codes are compared: no node views are drawn
    os.remove(path)
    assert r.error is None or not r.error.startswith("internal error"), r.error
    return rejected, sorted({d.code for d in r.diagnostics if d.severity == "error"}), r.error


SHARDS = 4  # the bases in four parts: two workers share the work evenly


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_defect_the_checker_rejects_is_an_error(valid, tmp_path, shard):
    seen: Counter = Counter()
    missed, beyond = [], []
    for name, base in sorted(valid.items())[shard::SHARDS]:
        for kind in MUTATIONS:
            for place in range(len(places(base))):
                model = mutate(base, kind, place)
                if model is None:
                    continue
                rejected, errors, error = judge(model, str(tmp_path / f"m{sum(seen.values())}.onnx"))
                seen[(kind, rejected)] += 1
                if rejected and not errors and error is None:
                    missed.append((name, kind, place))
                if not rejected and set(errors) - BEYOND_THE_CHECKER:
                    beyond.append((name, kind, place, errors))
    assert not missed, missed[:20]
    assert not beyond, beyond[:20]
    rejected = sum(n for (_, r), n in seen.items() if r)
    assert rejected >= 1500 // SHARDS // (1 if ALL_BASES else 2), seen  # hundreds, every kind among them
    # every kind a base of the shard takes is rejected somewhere in it
    assert {k for (k, r), _ in seen.items() if r} == {k for k, _ in seen}, seen


def test_every_kind_of_defect_is_planted_in_some_base(valid):
    """The shards above each see the kinds their bases take: together, every kind."""
    planted = {kind for kind in MUTATIONS for base in valid.values()
               if any(mutate(base, kind, place) is not None for place in range(len(places(base))))}
    assert planted == set(MUTATIONS)


def test_rules_beyond_the_checker_quote_their_spec():
    for code in BEYOND_THE_CHECKER:
        doc = rules.get(code).doc()
        assert '"' in doc and ("IR.md" in doc or "page" in doc or "spec" in doc.lower()), code


@pytest.mark.fuzz
@settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_one_defect_anywhere(data, valid, tmp_path_factory):
    folder = tmp_path_factory.mktemp("validity_fuzz")
    found = valid
    name = data.draw(st.sampled_from(sorted(found)))
    base = found[name]
    kind = data.draw(st.sampled_from(sorted(MUTATIONS)))
    place = data.draw(st.integers(0, len(places(base)) - 1))
    model = mutate(base, kind, place, data.draw(st.integers(0, 50)))
    if model is None:
        return
    rejected, errors, error = judge(model, os.path.join(str(folder), "m.onnx"))
    if rejected:
        assert errors or error is not None, (name, kind, place)
    else:
        assert not set(errors) - BEYOND_THE_CHECKER, (name, kind, place, errors)
