"""`qlin check --fix` and `--diff`: apply the safe fixes that findings carry.

A finding's ``Fix`` is a list of precise edits (rules/base.py). Only fixes marked
safe are applied, each to the node (or model / function) the finding names:

* node edits (``SetAttribute``, ``RemoveAttribute``, ``ReshapeConstant``) on a
  QuantizeLinear / DequantizeLinear are proven before they are kept: the node before
  and after runs in qlin's evaluator on the probe inputs ``qlin convert`` proves its
  rewrites with (convert/verify.py), bit for bit; a fix whose proof fails is not
  applied. A reshaped constant that other nodes also read is copied under a new name
  for this node, so no other node changes;
* model edits (``AddOpsetImport``, ``RemoveOpsetImport``, ``SetIrVersion``) change no
  node, so no result; they go to the function's imports when the finding is in a
  function.

The fixed model is checked again in memory: the fixed findings must be gone and no
new one may appear, else nothing is written. It is then written in place atomically,
keeping the file's mode (convert/write.py ``write_model``). Models with external data
are left alone (the data file would be rewritten beside the model).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import onnx
from onnx import helper, numpy_helper

from .. import schema
from ..check.engine import check_model
from ..convert import qnode, verify
from ..errors import QlinError, unexpected
from ..model.analysis import analyze
from ..model.facts import read_facts
from ..model.graphs import function_path, node_label
from ..model.load import load_model
from ..model.safety import all_tensors
from ..model.tensors import is_external, read_value
from ..rules.base import (
    AddOpsetImport,
    RemoveAttribute,
    RemoveOpsetImport,
    ReshapeConstant,
    SetAttribute,
    SetIrVersion,
    SortNodes,
)
from .text import model_text, unified

NODE_EDITS = (SetAttribute, RemoveAttribute, ReshapeConstant)
MODEL_EDITS = (AddOpsetImport, RemoveOpsetImport, SetIrVersion, SortNodes)


@dataclass
class Outcome:
    """What --fix did (or, with --diff, would do) to one file."""

    path: str
    fixed: list = field(default_factory=list)  # the Diagnostics whose fix applies
    skipped: list = field(default_factory=list)  # (Diagnostic, why not)
    error: str | None = None
    written: bool = False
    diff: str = ""  # with --diff: the unified diff of the model's text form (fix/text.py)


def fixable(diagnostics) -> list:
    return [d for d in diagnostics if d.fix is not None and d.fix.safe]


def fix_file(path: str, diagnostics, select=None, ignore=None, *, write: bool = True,
             post=None, types: dict | None = None) -> Outcome:
    """Apply the safe fixes of ``diagnostics`` (the findings of ``path`` checked with
    ``select`` / ``ignore``; ``post`` filters a re-check's findings as the caller's
    configuration filtered these). ``types``: inference's types from the check's analysis
    (``FileResult.types``), so the fixes read the nodes as the rules did; without them
    the model is analysed again."""
    out = Outcome(path)
    todo = fixable(diagnostics)
    if not todo:
        return out
    try:
        model = load_model(path)
        if any(is_external(t) for t in all_tensors(model)):
            out.skipped = [(d, "the model has external data; --fix leaves such models alone")
                           for d in todo]
            return out
        base_dir = os.path.dirname(os.path.abspath(path))
        before = None if write else model_text(model)
        nodes = _index(model, base_dir, types)
        batch = _Batch()
        for d in todo:
            why = _apply(model, nodes, d, base_dir, batch)
            if why is None:
                out.fixed.append(d)
            else:
                out.skipped.append((d, why))
        batch.finish()
        if not out.fixed:
            return out
        problem = _recheck(model, base_dir, diagnostics, out.fixed, select, ignore, post)
        if problem is not None:
            out.skipped += [(d, problem) for d in out.fixed]
            out.fixed = []
            return out
        if before is not None:
            out.diff = unified(path, before, model_text(model))
        if write:
            from ..convert.write import write_model

            write_model(model, base_dir, path, source=path, in_place=True)
            out.written = True
    except QlinError as e:
        out.error = e.reason
    except Exception as e:  # never a traceback
        out.error = unexpected(e)
    if out.error is not None and not out.written:
        out.fixed = []  # nothing was written: no finding is fixed (a read-only folder, a full disk)
    return out


def _index(model, base_dir, types: dict | None) -> dict:
    """(graph path, node label) -> (scope, owner, index, node), the first time met, each
    node typed as the check that found it typed it (its inference, propagated)."""
    a = analyze(model, base_dir, types=types)
    found = {}
    for body, index, node in a.nodes():
        found.setdefault((body.path, node_label(node, index)), (body.scope, body.owner, index, node))
    return found


class _Batch:
    """Model edits of one --fix run that are made once for all findings: the opset imports
    each finding removes are dropped in one pass per model or function (a rebuild of the
    list per finding made 10,000 unused imports take 90 s), and a body is sorted once however
    many QL108 findings ask for it."""

    def __init__(self):
        self.removals: dict[int, tuple[object, set[str]]] = {}  # id(target) -> (target, domains)
        self.sorted: set[str] = set()  # graphs sorted in this run

    def remove(self, target, domain: str) -> None:
        self.removals.setdefault(id(target), (target, set()))[1].add(schema.normalize_domain(domain))

    def removing(self, target, domain: str) -> bool:
        pending = self.removals.get(id(target))
        return pending is not None and schema.normalize_domain(domain) in pending[1]

    def finish(self, target=None) -> None:
        """Drop the pending imports (of ``target`` only, when given)."""
        for key, (t, domains) in list(self.removals.items()):
            if target is not None and t is not target:
                continue
            keep = [o for o in t.opset_import if schema.normalize_domain(o.domain) not in domains]
            del t.opset_import[:]
            t.opset_import.extend(keep)
            del self.removals[key]


def _apply(model, nodes, d, base_dir, batch: _Batch) -> str | None:
    """Apply one finding's fix; None when done, else why not."""
    edits = d.fix.edits
    if all(isinstance(e, MODEL_EDITS) for e in edits):
        return _apply_to_model(model, d, batch)
    if not all(isinstance(e, NODE_EDITS) for e in edits):
        return "its edits mix the node and the model"
    site = nodes.get((d.graph, d.node))
    if site is None:
        return "its node was not found"
    scope, owner, index, node = site
    facts = read_facts(node, index, scope, base_dir)
    if not schema.is_linear(facts.spec):
        return "only QuantizeLinear / DequantizeLinear fixes can be proven"
    new = onnx.NodeProto()
    new.CopyFrom(node)
    added: dict = {}
    reshapes: list = []
    for e in edits:
        why = _edit_node(model, site, new, e, base_dir, added, reshapes)
        if why is not None:
            return why
    opsets = {schema.normalize_domain(k): v for k, v in scope.opsets.items()}
    failed = _prove(d, facts, node, new, opsets, _constants(facts, node, scope, base_dir), added, reshapes)
    if failed is not None:
        return f"not proven: {failed}"
    for name, new_name, shape in reshapes:
        init = next(t for t in owner.initializer if t.name == name)
        if new_name == name:
            del init.dims[:]
            init.dims.extend(shape)
        else:
            owner.initializer.append(numpy_helper.from_array(added[new_name], new_name))
    node.CopyFrom(new)
    return None


def _apply_to_model(model, d, batch: _Batch) -> str | None:
    """A fix made of model edits (opset imports, the IR version, the order of a graph's
    nodes), in the model or the function the finding is on."""
    if any(isinstance(e, SortNodes) for e in d.fix.edits):
        from ..model.order import sort_body

        for e in d.fix.edits:
            if e.graph in batch.sorted:
                continue  # sorted for an earlier finding of this run: nothing is out of order there
            batch.finish()  # the analysis reads the imports as they will be written
            why = sort_body(analyze(model, ".", infer=False), e.graph)
            if why is not None:
                return why
            batch.sorted.add(e.graph)
        return None
    target = model
    if d.graph.startswith("function "):
        target = next((f for f in model.functions
                       if d.graph in (function_path(f), function_path(f, schema.domain_name(f.domain)))),
                      None)
        if target is None:
            return "its function was not found"
    for e in d.fix.edits:
        _model_edit(model, target, e, batch)
    return None


def _edit_node(model, site, new, e, base_dir, added: dict, reshapes: list) -> str | None:
    """One node edit made on ``new`` (a copy of the node); a reshaped constant is noted in
    ``added`` / ``reshapes`` and written only once the fix is proven. Why not, or None."""
    scope, owner, _, node = site
    if isinstance(e, SetAttribute):
        _drop_attr(new, e.name)
        new.attribute.append(helper.make_attribute(e.name, e.value))
        return None
    if isinstance(e, RemoveAttribute):
        _drop_attr(new, e.name)
        return None
    name = node.input[e.input_index] if e.input_index < len(node.input) else ""
    tensor = scope.find_value(name) if name else None
    if tensor is None or not isinstance(owner, onnx.GraphProto) or \
            name not in {t.name for t in owner.initializer}:
        return f"input {e.input_index} is not an initializer of the node's graph"
    value = read_value(tensor, base_dir)
    if value is None or value.size != _size(e.shape):
        return f"input {e.input_index} cannot take shape {list(e.shape)}"
    new_name = _fresh(model, f"{name}_scalar") if _readers(model, name) > 1 else name
    new.input[e.input_index] = new_name
    added[new_name] = value.reshape(e.shape)
    reshapes.append((name, new_name, e.shape))
    return None


def _constants(facts, node, scope, base_dir) -> dict:
    """The node's scale and zero point values that are constants, by name."""
    constants = {}
    for i in (facts.scale_index, facts.zero_point_index):
        if i is not None and i < len(node.input) and node.input[i]:
            t = scope.find_value(node.input[i])
            v = read_value(t, base_dir) if t is not None else None
            if v is not None:
                constants[node.input[i]] = v
    return constants


def _prove(d, facts, node, new, opsets, constants, added, reshapes) -> str | None:
    """None when ``node`` and ``new`` give the same bits on every probe input of
    convert/verify.py. The probes are made for the node as fixed (a one-element scale
    made a scalar is the per-tensor scale it stands for); the node before reads its
    original constants, the node after the reshaped ones."""
    import warnings

    import numpy as np

    q = qnode.read(facts)
    if q.q_type is None or (q.kind == "quantize" and q.x_type is None):
        return "the node's input types are unknown, so no probe inputs can be made"
    probe = dict(constants)
    for name, new_name, _ in reshapes:
        probe[name] = added[new_name]
    case = verify.Case(f"{d.graph}:{d.node}", q, [node], opsets, [new], opsets, probe, {},
                       facts.in_shape(0))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            batches = verify.feeds(case)
        except Exception as e:
            return f"no probe inputs fit the node ({str(e).splitlines()[0][:160]})"
        outputs = [o for o in node.output if o]
        for batch in batches:
            before_in = {**batch, **{n: constants[n] for n, _, _ in reshapes if n in constants}}
            after_in = {**batch, **added}
            try:
                before = verify.run_nodes([node], opsets, before_in)
                after = verify.run_nodes([new], opsets, after_in)
            except Exception as e:
                return f"the node does not evaluate ({str(e).splitlines()[0][:160]})"
            for o in outputs:
                if not verify.same_bits(before[o], after[o]):
                    return f"output {o!r} differs on a probe input"
    return None


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _drop_attr(node, name: str) -> None:
    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)


def _all_nodes(model):
    from ..model.graphs import all_nodes

    return all_nodes(model)


def _readers(model, name: str) -> int:
    return sum(1 for n in _all_nodes(model) for i in n.input if i == name)


def _fresh(model, base: str) -> str:
    used = {i for n in _all_nodes(model) for i in (*n.input, *n.output)}
    used |= {t.name for t in all_tensors(model)}
    name, k = base, 1
    while name in used:
        k += 1
        name = f"{base}_{k}"
    return name


def _model_edit(model, target, e, batch: _Batch) -> None:
    imports = target.opset_import
    if isinstance(e, AddOpsetImport):
        domain = "" if schema.normalize_domain(e.domain) == schema.AI_ONNX else e.domain
        if batch.removing(target, domain):
            batch.finish(target)  # removed before it is added again, as the findings ask
        if not any(o.domain == domain for o in imports):
            imports.append(helper.make_opsetid(domain, e.version))
    elif isinstance(e, RemoveOpsetImport):
        batch.remove(target, e.domain)
    elif isinstance(e, SetIrVersion):
        model.ir_version = max(model.ir_version, e.version)


def _key(d) -> tuple:
    return (d.code, d.graph, d.node, d.detail)


def _recheck(model, base_dir, before, fixed, select, ignore, post) -> str | None:
    """None when checking the fixed model finds nothing that was not found before
    (the fixed findings gone, and no new one)."""
    after = check_model(model, base_dir, select, ignore)
    if post is not None:
        after = post(after)
    fixed_ids = {id(d) for d in fixed}
    want = {_key(d) for d in before if id(d) not in fixed_ids}
    gone = {_key(d) for d in fixed}
    for k in (_key(d) for d in after):
        if k in gone or k not in want:
            return f"checking the fixed model finds {k[0]} on {k[2] or k[1]}; nothing written"
    return None
