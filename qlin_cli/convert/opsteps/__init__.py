"""What changes in each version step of every ai.onnx op, read from onnx.defs.

A *step* is the move between two neighbouring versions (``since_version``) of
one op's schema. qlin converts between opset 10 and the newest opset onnx.defs
knows, so the steps that matter are those whose newer version lies above 10;
the older side is the version in force at opset 10 (it may be older than 10).

``diff`` compares two schemas of an op and sorts what differs into:

* **structural**: inputs or outputs (position, name, single/optional/variadic,
  homogeneity, minimum arity), the schema's input/output counts, attributes
  (name, type, required, default compared by its serialized value), or the
  deprecation flag. A node crossing such a step needs an adapter, or a refusal
  that says why.
* **types**: the allowed type lists. Formal inputs and outputs are bound to
  their types by position, so a constraint renamed ``T`` -> ``T1`` with the same
  types is no change; a literal type (``tensor(int64)``) counts as a constraint
  with one type. Which parameters share one constraint (of more than one type)
  is compared too: a split or merge is reported in ``regrouped``. A node crosses
  a type step unchanged when its actual types are allowed by the target schema,
  constraint sharing included.
* **meaning**: nothing in a schema's signature records what the op computes.
  Doc text and function bodies are not compared (their wording changes all the
  time without a change of meaning), so steps whose meaning changed with the
  signature left alone are listed by hand in ``SEMANTIC_CHANGES``. Steps whose
  schemas are the same for a node in every respect are listed, with the reason
  the version exists, in ``SAME_MEANING``.

A step is *type-only* when it is not structural, not in ``SEMANTIC_CHANGES``,
and either some type list changed or it is in ``SAME_MEANING``. A step that is
none of structural, semantic or type-only is *unclassified*: nothing visible
changed and nobody has said why the version exists (the tests fail on it).

Only ``onnx.defs`` is used; nothing here runs a model.

The package, one concern a module: ``notes`` (the hand-written tables), ``index``
(onnx.defs by op and version), ``records`` (what a step changes), ``compare`` (``diff``
and the steps a conversion walks).
"""

import importlib

from .index import _table, history, newest_opset, ops, schema_at, since_at, step_pairs
from .notes import AI_ONNX, FIRST_OPSET, NEG_AXES_OPS, NEG_AXIS_OPS, SAME_MEANING, SEMANTIC_CHANGES

# ``compare`` and ``records`` are imported when one of their names is first asked for: a
# target's check reads only the index (the version of an op in force), and the records'
# dataclasses took about 10 ms to make (`qlin check --target`, docs/performance.md)
_LATER = {**dict.fromkeys(("all_steps", "diff", "formal_inputs", "formal_outputs", "steps"), "compare"),
          **dict.fromkeys(("AttrChange", "CountChange", "Param", "ParamChange", "StepDiff", "TypeChange",
                           "_short"), "records")}


def __getattr__(name: str):
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = ["AI_ONNX", "FIRST_OPSET", "NEG_AXES_OPS", "NEG_AXIS_OPS", "SAME_MEANING", "SEMANTIC_CHANGES",
           "AttrChange", "CountChange", "Param", "ParamChange", "StepDiff", "TypeChange", "_short", "_table",
           "all_steps", "diff", "formal_inputs", "formal_outputs", "history", "newest_opset", "ops", "path",
           "schema_at", "since_at", "step_pairs", "steps"]
