"""Check one model file: load it, reach every quantization node, run the rules.

Node rules run on the facts of each node of a known op (with a cache of clean
verdicts keyed on the facts but for the constants' values); model rules then run
once on the ``ModelView`` the walk filled (every body, its nodes, the facts already
read).
"""

from __future__ import annotations

import os
from itertools import chain, compress
from operator import not_

import onnx

from .. import rules as rule_registry
from ..errors import QlinError, unexpected
from ..gc_pause import paused_collection
from ..model.analysis import IGNORE_KEY, Analysis, analyze
from ..model.facts import NodeFacts, op_in_scope, read_facts
from ..model.graphs import label_of, reading
from ..model.load import load_model_bytes
from ..model.safety import validate_model_files
from ..model.view import short_title
from ..rules.base import ModelRule, Violation
from .diagnostic import Diagnostic, node_frame
from .result import FileResult, summarize  # noqa: F401 (their home before check/result.py)
from .suppress import Suppression

# Shapes of facts (``NodeFacts.shape_key``: all but names, location and values) on which
# the node rules that read no value raised nothing, across the models of one process: a
# folder of variants, or the API called again, checks each node shape once. Such a rule's
# verdict on a node is a function of that key (tests/test_rules_values.py); the rules that
# read values are asked about every node (``Rule.clean_values``), never kept here.
_CLEAN_ANYWHERE: dict[tuple, None] = {}
_CLEAN_LIMIT = 4096


class _Clean:
    """Which shapes of facts raised nothing under the node rules that read no value: in this
    model (by the identity ``ModelView.shape_of`` gives), and in any model of the process
    under the same rules (by key)."""

    def __init__(self, node_rules: list):
        self.here: set[int] = set()
        self.signature = tuple(r.code for r in node_rules)

    def known(self, shape: NodeFacts) -> bool:
        if id(shape) in self.here:
            return True
        if (self.signature, shape.shape_key()) in _CLEAN_ANYWHERE:
            self.here.add(id(shape))
            return True
        return False

    def add(self, shape: NodeFacts) -> None:
        self.here.add(id(shape))
        if len(_CLEAN_ANYWHERE) >= _CLEAN_LIMIT:
            try:  # the oldest goes (threads may race here: losing an entry is harmless)
                del _CLEAN_ANYWHERE[next(iter(_CLEAN_ANYWHERE))]
            except (KeyError, StopIteration, RuntimeError):
                pass
        _CLEAN_ANYWHERE[(self.signature, shape.shape_key())] = None


def check_model(
    model: onnx.ModelProto, base_dir: str, select=None, ignore=None, *, cache: bool = True,
    stats: dict | None = None,
) -> list[Diagnostic]:
    """Every finding of the selected rules on ``model`` (``check_analysis`` of its analysis)."""
    return check_analysis(analyze(model, base_dir), select, ignore, cache=cache, stats=stats)


def check_analysis(
    a: Analysis, select=None, ignore=None, *, cache: bool = True, stats: dict | None = None,
    frames: bool = True, suppression: Suppression | None = None,
) -> list[Diagnostic]:
    """Every finding of the selected rules on every known quantization node, then of the
    model rules on the whole analysis.

    ``cache``: a node whose facts equal, but for the constants' values, those of a node
    that raised nothing is not checked again by the rules that read no value (facts leave
    names out, so the verdict is the same); the rules that read values ask whether they
    can find anything on that shape once (``Rule.wants_values``), then look at all their
    nodes' values together (``Rule.clean_values``) and check only the nodes that look
    wrong. Without ``cache`` every rule checks every node. ``stats``, if
    given, gets ``nodes``: how many quantization nodes were checked. ``frames``: each
    finding on a node carries the node's view (``Finding.frame``); without, none does
    (what only a terminal shows is not built for JSON or a file). ``suppression``: what
    the file's configuration leaves out besides ``select`` / ``ignore`` (check/suppress.py);
    the nodes' ``qlin:ignore`` marks are applied in either case.
    """
    keep = suppression or Suppression(select, ignore)
    active = [r for r in rule_registry.all_rules() if keep.runs(r.code)]
    node_rules = [r for r in active if not isinstance(r, ModelRule)]
    model_rules = [r for r in active if isinstance(r, ModelRule)]
    found: list[tuple[tuple, Diagnostic]] = []  # (where it sorts, the finding)
    checked = _NodePass(a, node_rules, cache, frames, found).run()
    for rule in model_rules:
        for v in rule.check_model(a):
            found.append(((*a.order(v.at.graph, v.at.index), rule.code), placed(rule, v)))
    found.sort(key=lambda item: item[0])  # stable: a rule's findings keep their order
    if stats is not None:
        stats["nodes"] = checked
    kept = keep.kept((d for _, d in found), a.marked)
    return framed(a, kept) if frames else kept


class _NodePass:
    """The node rules over every node of a known op (``check_analysis``), in one pass that
    also notes what the model rules read of every node: BodyView.kinds and .io,
    ModelView.of_family's maps."""

    def __init__(self, a: Analysis, node_rules: list, cache: bool, frames: bool, found: list):
        self.a, self.node_rules, self.cache, self.frames, self.found = a, node_rules, cache, frames, found
        # the node rules that apply to a family (None: no schema): (those that read no value,
        # those that do)
        self.by_family: dict[object, tuple[list, list]] = {}
        self.clean = _Clean([r for r in node_rules if not r.reads_values])
        self.later: dict[object, list] = {}  # a rule that reads values -> [(order, index, facts)]
        self.wanted: dict[int, list] = {}  # id(shape) -> ``later``'s lists of the rules that want its nodes
        self.checked = 0

    def run(self) -> int:
        """Every finding of the node rules (into ``found``); returns how many nodes were read."""
        for order, body in enumerate(self.a.bodies):
            self._body(order, body)
        for rule, nodes in self.later.items():  # each rule that reads values looks at all its nodes at once
            known = rule.clean_values([f for _, _, f in nodes]) or ()
            # the nodes not known clean (found at C speed: on most models none), in order
            looked = list(compress(range(len(known)), map(not_, known[:len(nodes)])))
            for k in chain(looked, range(len(known), len(nodes))):
                self._run(rule, *nodes[k])
        return self.checked

    def _run(self, rule, order: int, index: int, facts: NodeFacts) -> None:
        for v in rule.violations(facts):
            self.found.append(((order, index, rule.code), diagnostic(rule, v, facts, self.frames)))

    def _body(self, order: int, body) -> None:
        a, scope, judge = self.a, body.scope, self._judge
        ops, known = scope.ops, body.facts
        attributed = set(body.attributed)  # (as the bodies' walk found them, where it did)
        pre = body.walked  # what inference by kind read of the nodes (infer_kinds.ByKind), if it did
        kinds: list = [] if pre is None else pre.kinds
        io: list = [] if pre is None else pre.io
        one: dict = {}  # each kind once: a body has few
        families: dict = {}  # ModelView.of_family's map
        read = 0
        for index, node in enumerate(body.nodes):
            if pre is None:
                kind = (node.domain, node.op_type)
                kinds.append(one.setdefault(kind, kind))
            else:
                kind = kinds[index]
            op = ops.get(kind, False)  # op_in_scope's cache, read here without a call per node
            if op is False:
                op = op_in_scope(scope, *kind)
            if op is None:
                if pre is None:
                    io.append((tuple(node.input[:]), tuple(node.output[:])))
                continue
            facts = known.get(index)
            if facts is None:
                facts = known[index] = (
                    read_facts(node, index, scope, a.base_dir, op, index in attributed) if pre is None else
                    read_facts(node, index, scope, a.base_dir, op, index in attributed, io[index],
                               pre.attrs.get(index)))
            if pre is None:
                io.append((facts.inputs, facts.outputs))
            read += 1
            family = None if facts.spec is None else facts.spec.family
            if family is not None and facts.outputs and facts.outputs[0]:
                families.setdefault(family, {}).setdefault(facts.outputs[0], (index, facts))
            judge(order, index, facts, family)
        self.checked += read
        body.keep(kinds, io)
        a.keep_families(body, families)

    def _judge(self, order: int, index: int, facts: NodeFacts, family) -> None:
        """The node rules on one node: those that read no value once per shape of facts that
        raised nothing; the nodes those that read values want, noted for them (``run``)."""
        rules = self.by_family.get(family)
        if rules is None:  # Rule.applies_to reads the schema's family alone: asked once per family
            applying = [r for r in self.node_rules if r.applies_to(facts)]
            rules = self.by_family[family] = ([r for r in applying if not r.reads_values],
                                              [r for r in applying if r.reads_values])
        blind, valued = rules
        if not self.cache:  # every rule on every node
            for rule in blind + valued:
                self._run(rule, order, index, facts)
            return
        shape = self.a.shapes.setdefault(facts.shape_key(), facts)  # the first node read with these
        facts.share(shape)                                            # facts but for values
        clean = self.clean
        if blind and id(shape) not in clean.here and not clean.known(shape):
            before = len(self.found)
            for rule in blind:
                self._run(rule, order, index, facts)
            if len(self.found) == before:
                clean.add(shape)
        if valued:
            want = self.wanted.get(id(shape))
            if want is None:  # asked once per shape: which rules can find anything here
                want = self.wanted[id(shape)] = [self.later.setdefault(r, []) for r in valued
                                                 if r.wants_values(shape)]
            if want:
                entry = (order, index, facts)
                for nodes in want:
                    nodes.append(entry)


def framed(a: Analysis, found: list[Diagnostic]) -> list[Diagnostic]:
    """Each finding on a node with the node's view (``Finding.frame``): a model rule's or
    a target's, like a node rule's, so that a terminal shows every finding's node."""
    missing: dict[str, set[str]] = {}  # graph -> labels of the nodes to frame
    for d in found:
        if d.node and not d.frame:
            missing.setdefault(d.graph, set()).add(d.node)
    if not missing:
        return found
    facts = {}
    for body in a.bodies:
        labels = missing.get(body.path)
        for index, node in enumerate(body.nodes) if labels else ():
            key = (body.path, label_of(node.name, index))
            if key[1] in labels and key not in facts:
                facts[key] = a.any_facts(body, index)
    return [d.with_frame(node_frame(facts[(d.graph, d.node)], d.detail))
            if d.node and not d.frame and (d.graph, d.node) in facts else d for d in found]


def diagnostic(rule, v: Violation, f: NodeFacts, frames: bool = True) -> Diagnostic:
    """A rule's violation placed on its node (with the node's view unless not ``frames``)."""
    loc = f.location
    title = f.title
    return Diagnostic(
        code=rule.code, severity=rule.severity, detail=v.message,
        node=loc.label, op_type=f.op, domain=f.domain_name, opset=f.opset or 0, graph=loc.graph,
        fix=v.fix, where=f"node {loc.where} ({title})", title=short_title(title),
        frame=node_frame(f, v.message) if frames else (),
    )


def placed(rule, v: Violation) -> Diagnostic:
    """A model rule's violation at the site it names."""
    at = v.at
    return Diagnostic(
        code=rule.code, severity=rule.severity, detail=v.message, node=at.label,
        op_type=at.op_type, domain=at.domain, opset=at.opset, graph=at.graph, fix=v.fix,
        where=at.what, title=at.title or at.what,
    )


def check_file(path: str, select=None, ignore=None, targets=None, *, keep_types: bool = False,
               frames: bool = True, config=None) -> FileResult:
    """The findings of ``path``: the rules', then each named target's (one analysis for all).
    ``keep_types``: the result keeps inference's types (``FileResult.types``) for --fix;
    ``frames``: findings carry their node's view (``check_analysis``); ``config``: a
    config.Config whose per-path-ignores and per-node-ignores apply too."""
    with paused_collection():  # see gc_pause.py: a third of the time on large models
        keep = Suppression(select, ignore, config, path)
        return _check_file(path, keep, targets, keep_types, frames)


def _check_file(path: str, keep: Suppression, targets, keep_types: bool, frames: bool) -> FileResult:
    result = FileResult(path)
    try:
        # checking never reads values above 64 MiB; the file's bytes, when the model was parsed
        # from them whole, go to shape inference as they are
        marked: list = []  # whether the file holds a qlin:ignore mark (none: no node to look at)
        model, data = load_model_bytes(path, weights=False, look_for=IGNORE_KEY.encode(), found=marked)
        base_dir = os.path.dirname(os.path.abspath(path))
        stats: dict = {}
        with reading(model):  # nothing below changes the model
            unreadable: list = []  # external tensors that cannot be read: QL008 findings
            locations: set = set()
            validate_model_files(model, base_dir, path, unreadable, locations)
            result.data_files = tuple(sorted(os.path.join(base_dir, x) for x in locations))
            a = analyze(model, base_dir, serialized=data, marked=marked[0])
            del data
            a.external_problems = tuple(unreadable)
            result.diagnostics = check_analysis(a, stats=stats, frames=frames, suppression=keep)
            if targets:
                result.diagnostics += target_diagnostics(a, targets, frames=frames, suppression=keep)
        result.nodes = stats["nodes"]
        if keep_types:
            result.types = a.inferred
    except QlinError as e:
        result.error = e.reason
    except Exception as e:  # never a traceback, and the other files of the run are still checked
        result.error = unexpected(e)
    return result


def target_diagnostics(a: Analysis, targets, select=None, ignore=None, *,
                       frames: bool = True, suppression: Suppression | None = None) -> list[Diagnostic]:
    """The named targets' findings on the analysed model, as diagnostics (after the rules'),
    each with its node's view unless not ``frames``; left out as the rules' findings are
    (``check_analysis``: ``select``, ``ignore``, ``suppression`` and the nodes' marks)."""
    from ..targets import predict

    found = (suppression or Suppression(select, ignore)).kept(predict.findings_in(a, targets), a.marked)
    return framed(a, found) if frames else found


