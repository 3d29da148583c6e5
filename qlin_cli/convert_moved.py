"""The measured runtimes' view of a converted model whose nodes are the source's, moved to
other versions of their ops by new opset imports (``Result.rewritten`` 0; the IR version may
differ too): read from the source's analysis, never from a second one.

Such a result differs from its source, as a runtime's checks see it, in the model-level facts
(opset imports, IR version) and in each node's version: its ``NodeFacts`` opset and schema,
its site's imports and, for the op of a QDQ group, the opset bucket of the group's key. A
``Moved`` makes the result's site of a node from the source's (``Moved.site``), so that the
source's sites, built once, serve both: a target is asked once per class of the source's
sites (targets/site_classes.py), about that class's site moved. Nothing of the result is
inferred or walked again: its types are the source's, which the same nodes at other
versions of their ops keep (a version whose inputs differ in role would change what the
node reads: ``Moved`` refuses such a model, ``NotMoved``, and it is analysed as any other).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from . import schema
from .finding import Finding


class NotMoved(Exception):
    """The result is not the source with moved versions as ``Moved`` reads it."""


class Moved:
    """The result's site of each of the source's sites (``site``), made on first use."""

    def __init__(self, a, model):
        from .targets import fusion

        if a.model.functions or model.functions or any(b.scope is None for b in a.bodies):
            raise NotMoved("functions, or a body without scope")
        old = {o.domain: o.version for o in a.model.opset_import}
        new = {o.domain: o.version for o in model.opset_import}
        self.old_opsets, self.new_opsets = tuple(old.items()), tuple(new.items())
        self.old_scope = SimpleNamespace(opsets=old, ops={})
        self.new_scope = SimpleNamespace(opsets=new, ops={})
        buckets = []
        for opsets in (old, new):
            v = schema.opset_of(opsets, schema.AI_ONNX)
            if v is None:
                raise NotMoved("no ai.onnx import")
            buckets.append(fusion.opset_bucket(v))
        self.old_bucket, self.new_bucket = buckets
        self._sites: dict[int, tuple] = {}  # id(source site) -> (source site, result site)
        self._facts: dict[int, tuple] = {}  # id(source facts) -> (source facts, result facts)

    def site(self, s):
        """The result's site of the node whose source site is ``s``."""
        got = self._sites.get(id(s))
        if got is not None:
            return got[1]
        if s.opsets != self.old_opsets:
            raise NotMoved("a body with imports of its own")
        changes = {"facts": self.facts(s.facts), "opsets": self.new_opsets}
        if s.producer is not None:
            changes["producer"] = self.facts(s.producer)
        if s.producer_site is not None:
            changes["producer_site"] = self.site(s.producer_site)
        if s.group is not None:
            changes["group"] = self._group(s.group)
        made = dataclasses.replace(s, **changes)
        self._sites[id(s)] = (s, made)
        return made

    def facts(self, f):
        """The result's facts of the node whose source facts are ``f``."""
        from .model.facts import NodeFacts

        got = self._facts.get(id(f))
        if got is not None:
            return got[1]
        was, now = self._op(self.old_scope, f), self._op(self.new_scope, f)
        if was.const_at != now.const_at or (was.opset, was.spec) != (f.opset, f.spec):
            raise NotMoved(f"{f.op}: its constants are other inputs at the new version")
        made = NodeFacts(f.op, now.domain, now.opset, now.imported, now.spec, f.in_typed, f.out_typed,
                         f.attr_items, f.values, f.inputs, f.outputs, f.location)
        self._facts[id(f)] = (f, made)
        return made

    @staticmethod
    def _op(scope, f):
        from .model.facts import OpInScope, op_in_scope

        op = op_in_scope(scope, f.domain, f.op)
        if op is None:  # an op of no family qlin knows: read_facts' resolution of it
            opset = schema.opset_of(scope.opsets, f.domain)
            op = OpInScope(f.domain, opset, opset is not None, None, (), f.op)
        return op

    def _group(self, text: str) -> str:
        if self.old_bucket:
            tail = f", {self.old_bucket}"
            if not text.endswith(tail):
                raise NotMoved("a group key without its opset bucket")
            text = text[:-len(tail)]
        return f"{text}, {self.new_bucket}" if self.new_bucket else text


def differences(a, model, runtimes, differing) -> list[Finding] | None:
    """``convert_pipeline._differences`` of ``model``, the source of analysis ``a`` with its
    nodes at other versions (``Moved``), from ``a``'s sites; None where the result must be
    analysed instead (``NotMoved``, or a finding of the result that offers a conversion: its
    message then depends on the target's plan for the whole result). ``differing``: what the
    report keeps of the result's findings against the source's (convert_pipeline.differing,
    given: that module imports this one)."""
    from .targets import predict, registry

    try:
        moved = Moved(a, model)
        info, placed = predict._read(a)
        # the result's imports and IR, the source's nodes and graph (``model`` may be a header
        # alone: convert/state.py Result.graph_from)
        now = predict.model_info(model, a, graph_from=a.model)
        keys = a.memo("targets.site_classes", dict)
        out: list[Finding] = []
        for name in runtimes:
            t = registry.get(name)
            found, refusing = _found(t, now, placed, keys, moved)
            if found is None:
                return None
            if refusing:  # the source refuses a node passed over: no error of the result is kept
                found = [item for item in found if item[2].severity != "error"]
            if not any(x.severity in ("error", "warning") for _, _, x in found):
                continue  # nothing it could report: the source's findings are not needed
            out += _new(t, predict._raw(t, info, _judged(placed, found), keys), found, moved, differing)
    except NotMoved:
        return None
    return out


_NEW = object()


def _found(t, now, placed: list, keys: dict, moved: Moved) -> tuple[list | None, bool]:
    """(target ``t``'s findings on the result that ``differing`` may keep, as (site, location,
    finding), the model's first; whether the source refuses a node passed over), or (None,
    False) where one offers a conversion. The nodes of a class answered whole are passed
    over where nothing of theirs can be kept (``_passes``): with no finding, or with what the
    source's nodes of that class have too."""
    from .targets import site_classes

    found = [(None, None, x) for x in t.model_findings(now)]
    if any(x.convertible for _, _, x in found):
        return None, False
    ask = site_classes.asker(t.findings_for, keys, moved.site)
    was = site_classes.asker(t.findings_for, keys)  # the source's
    passed: dict = {}  # class -> whether the source refuses its nodes (passed over), None: compared
    refusing = False
    tried: set = set()  # classes split by summaries whose every value was asked
    for site, loc in placed:
        k = keys.get(id(site))
        p = None if k is None else passed.get(k, _NEW)
        if p is True or p is False:
            refusing = refusing or p
            continue
        got = ask(site)
        if p is _NEW and k not in tried and (ask.split(k) or was.split(k)):
            tried.add(k)
            if _split_passes(ask, was, site, k):
                passed[k] = False
                continue
        if not got:
            if p is _NEW and ask.clean(k):
                passed[k] = False
            continue
        if any(x.convertible for x in got):
            return None, False
        if p is _NEW and ask.of_class(k) is not None:
            p = passed[k] = _passes(got, was(site), was.of_class(k))
            if p is not None:
                refusing = refusing or p
                continue
        found += [(site, loc, x) for x in got]
    return found, refusing


def _passes(got: list, source: list, whole) -> bool | None:
    """For a class whose nodes all have the result's findings ``got`` and the source's
    ``source`` (``whole``: the source's answer for the whole class, None where it has none):
    None where ``differing`` may keep something of them; else whether the source refuses them
    (an error there: the result's warnings there are dropped, and its errors everywhere).
    Kept otherwise: a result's error where the source has none, a warning the source's node
    lacks."""
    if whole is None:
        return None
    if any(x.severity == "error" for x in source):
        return True
    if any(x.severity == "error" for x in got):
        return None
    before = {x.code for x in source if x.severity == "warning"}
    return False if all(x.code in before for x in got if x.severity == "warning") else None


def _split_passes(ask, was, site, k) -> bool:
    """For a class split by summaries (site_classes: whether a scale is negative ...):
    whether its nodes can be passed over whatever their summaries, so that none is worked
    out node by node: for every value of them, the result's findings offer no conversion and
    ``_passes`` keeps nothing of them, with no error of the source's."""
    names = tuple(dict.fromkeys((*ask.split(k), *was.split(k))))
    mine, theirs = ask.by_summaries(site, names), was.by_summaries(site, names)
    if mine is None or theirs is None:
        return False
    return all(not any(x.convertible for x in got) and _passes(got, theirs[values], theirs[values]) is False
               for values, got in mine.items())


def _judged(placed: list, found: list) -> list:
    """The source's (site, location) pairs whose findings can change what ``differing`` keeps
    of ``found``: every one where ``found`` has an error (kept only if the source has none
    anywhere), else those at the places of its warnings (a warning is dropped only for a
    finding of the source at its own place; the model's findings are always worked out)."""
    if any(x.severity == "error" for _, _, x in found):
        return placed
    at = {(loc.graph, loc.label) for _, loc, _ in found if loc is not None}
    return [(site, loc) for site, loc in placed if (loc.graph, loc.label) in at]


def _new(t, source: list, found: list, moved: Moved, differing) -> list[Finding]:
    """What the report keeps of the result's findings against the source's (``differing``),
    compared before they are placed, then placed."""
    from .targets import predict

    def where(item) -> tuple:
        _, loc, x = item
        return x.severity, x.code, ("main", "model") if loc is None else (loc.graph, loc.label)

    heads: dict = {}
    return [predict._place_model(t, x) if s is None
            else predict._place_node(t, moved.site(s).facts, x, loc, heads)
            for s, loc, x in differing(source, found, where)]
