"""A target's findings on a node, asked once per class of nodes that differ only in what its
checks did not read.

Nodes of a real model rarely have equal sites: every QuantizeLinear has a scale of its own,
every blocked weight its own zero points.
Most of a target's checks never read a scale's value (the key of the node's probes, its
types, its neighbours), so their findings on one node are their findings on every node
whose site is the same but for its scale's values and its names. A class is such a set of
nodes (``class_key``: the site with each scale, each zero point of more than one element and
each constant too large to compare by content left out, and names and location dropped).

The target is asked about a class once, on a site whose hidden parts cannot be read
(``hidden``): reading one raises ``ValueRead``. A check that reads a hidden part therefore
cannot answer for the class, and the class is asked node by node from then on; one that
answers without reading any gave the answer every node of the class gets, so nothing here
can make a finding differ from asking each node (tests/test_site_classes.py holds them equal
on the fixtures, the quantizer outputs and the type space, for every target).
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable

from ..model.facts import NodeFacts
from . import nodes
from .base import NodeSite
from .nodes import ValueRead


class _Hidden:
    """Stands for a part of a site a class does not fix: any use of it raises ``ValueRead``
    (reading an attribute, truth, length, iteration, comparison, hashing)."""

    __slots__ = ()

    def __getattr__(self, name):
        raise ValueRead(name)

    def _read(self, *args):
        raise ValueRead("use")

    __bool__ = __len__ = __iter__ = __eq__ = __ne__ = __hash__ = __index__ = __int__ = __float__ = _read
    __lt__ = __le__ = __gt__ = __ge__ = __getitem__ = __contains__ = __str__ = __format__ = _read


HIDDEN = _Hidden()


def _value_key(f: NodeFacts, i: int, c) -> object:
    """How a constant input counts in a class: absent (None), hidden (the scale, and any
    constant known by identity only) or its content."""
    return value_key(c, _hides(f, i))


def _hides(f: NodeFacts, i: int) -> bool:
    """Whether a constant at input ``i`` is hidden whatever its value: the scale, and a zero
    point of other than one element (one of one element is compared by content: most are 0).
    Read from the facts' shape key alone (their schema and input shapes)."""
    return i == f.scale_index or (i == f.zero_point_index and nodes.element_count(f.in_shape(i)) != 1)


def hidden_inputs(f: NodeFacts, n: int) -> tuple[bool, ...]:
    """``_hides`` of each of the first ``n`` inputs: the same for facts of one shape."""
    return tuple([_hides(f, i) for i in range(n)])


def value_key(c, hides: bool) -> object:
    """``_value_key`` of constant ``c`` at an input that ``hides`` (``_hides``) or not."""
    if c is None:
        return None
    if hides:
        return HIDDEN_KEY
    key = c.content_key
    return HIDDEN_KEY if key is None else key


HIDDEN_KEY = ("hidden",)



def _facts_key(f, keys: dict) -> tuple | None:
    """The facts' part of a class (None for facts that are not a NodeFacts), once per facts
    object (``keys``: by identity; a producer's facts are keyed again by each reader)."""
    if not isinstance(f, NodeFacts):
        return None
    found = keys.get(("facts", id(f)))
    if found is None:
        found = f.shape_key() + tuple([_value_key(f, i, c) for i, c in enumerate(f.values)])
        keys[("facts", id(f))] = found
    return found


def _hidden_facts(f: NodeFacts) -> NodeFacts:
    values = tuple([c if _value_key(f, i, c) is not HIDDEN_KEY else (None if c is None else HIDDEN)
                    for i, c in enumerate(f.values)])
    return dataclasses.replace(f, values=values, inputs=HIDDEN, outputs=HIDDEN, location=HIDDEN)


_OWN = ("facts", "producer", "producer_site")  # keyed here; every other field is a plain value
_PLAIN = operator.attrgetter(*[fl.name for fl in dataclasses.fields(NodeSite) if fl.name not in _OWN])
_NOT_YET = object()


def class_key(site: NodeSite, keys: dict) -> int | None:
    """The site's class, a number (None where its facts are not a NodeFacts: such a site is
    asked alone); ``keys`` remembers the classes of sites by identity (a producer's among
    them) and numbers each class's key once, so that every later look-up hashes an int."""
    found = keys.get(id(site), _NOT_YET)
    if found is not _NOT_YET:
        return found
    f = _facts_key(site.facts, keys)
    if f is not None:
        p, ps = site.producer, site.producer_site
        key = (f, None if p is None else _facts_key(p, keys),
               None if ps is None else class_key(ps, keys)) + _PLAIN(site)
        numbers = keys.setdefault("classes", {})
        found = numbers.setdefault(key, len(numbers))
    keys[id(site)] = found
    return found


def hidden(site: NodeSite, told: dict | None = None) -> NodeSite:
    """The site with its class's hidden parts unreadable (``_Hidden``); ``told``: the
    summaries (``nodes.SUMMARIES``) of its facts the class fixes, {name: value}."""
    changes: dict = {"facts": _hidden_facts(site.facts)}
    if told:
        changes["facts"].__dict__.update({nodes.summary_slot(k): v for k, v in told.items()})
    if site.producer is not None:
        changes["producer"] = _hidden_facts(site.producer)
    if site.producer_site is not None:
        changes["producer_site"] = hidden(site.producer_site)
    return dataclasses.replace(site, **changes)


def _same(site: NodeSite) -> NodeSite:
    return site


# Turned off by the tests that hold the classes' findings equal to each node's own
ENABLED = True


def asker(ask: Callable[[NodeSite], list], keys: dict | None = None,
          remap: Callable[[NodeSite], NodeSite] | None = None) -> Callable[[NodeSite], list]:
    """``ask`` (a target's ``findings_for`` or ``errors_for``) answered once per class: the
    class's answer where ``ask`` read nothing hidden, else the node's own. A check that reads
    a summary of a hidden value (``nodes.SUMMARIES``: whether a scale is negative) splits
    the class by that summary, worked out for each of its nodes from then on.

    ``remap``: the sites given are another model's, and ``ask`` is asked about each one's
    ``remap`` (the same node in a model that differs only in what ``remap`` changes, which
    keeps classes: convert_moved.py). The classes are the given sites' (``keys`` is then
    their model's), so the keys worked out for that model serve again."""
    remap = remap or _same
    keys = {} if keys is None else keys  # class_key's: shared by the askers of one analysis
    # class (an int), or (class, summaries) for a class split by summaries -> findings, or
    # None where a check read a hidden part
    answers: dict = {}
    split: dict = {}  # class -> the names of the summaries it is split by
    by_id: dict = {}  # id(site) -> (site, findings): the site kept so that its id stays its own

    def by_class(site: NodeSite, key: int) -> list | None:
        while True:
            names = split.get(key, ())
            told = {name: nodes.SUMMARIES[name](site.facts) for name in names} if names else {}
            sub = (key, tuple(told.values())) if names else key
            found = answers.get(sub, False)
            if found is not False:
                return found
            try:
                found = ask(hidden(remap(site), told))
            except ValueRead as e:
                name = e.args[0] if e.args else None
                if name in nodes.SUMMARIES and name not in names:
                    split[key] = names + (name,)
                    continue
                found = None
            answers[sub] = found
            return found

    def answer(site: NodeSite) -> list:
        if ENABLED:  # the usual site: of a class answered whole (not split, nothing hidden read)
            found = answers.get(keys.get(id(site), _NOT_YET))  # (split classes' keys are tuples)
            if found is not None:
                return found
        known = by_id.get(id(site))
        if known is not None:
            return known[1]
        key = keys.get(id(site), _NOT_YET) if ENABLED else None  # (class_key's first look-up, no call)
        if key is _NOT_YET:
            key = class_key(site, keys)
        found = None if key is None else by_class(site, key)
        if found is None:  # the node's own answer, kept (a class's is found again by its key)
            found = ask(remap(site))
            by_id[id(site)] = (site, found)
        return found
    answer.of_class = answers.get  # class number -> its sites' findings where answered whole, else None
    answer.clean = lambda key: key is not None and answers.get(key) == []  # answered whole: nothing
    answer.split = lambda key: split.get(key, ())  # the summaries a class is split by, if any
    answer.by_summaries = lambda site, names: _by_summaries(ask, remap(site), names)
    return answer


def _by_summaries(ask: Callable[[NodeSite], list], site: NodeSite, names: tuple) -> dict | None:
    """{each combination of values of the summaries ``names`` (nodes.SUMMARIES: each True,
    False or None): ``ask``'s findings on ``site``'s class told those values}, whether or not
    a node of the class has them; None where a check reads a hidden part or a summary not in
    ``names``, or fails on a combination (one no node may have)."""
    out = {}
    for values in itertools.product((True, False, None), repeat=len(names)):
        try:
            out[values] = ask(hidden(site, dict(zip(names, values, strict=True))))
        except (ValueRead, Exception):
            return None
    return out
