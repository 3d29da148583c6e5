"""A function body is read once per signature of its calls (model/specialize.py), but
written once: every reading must plan the same rewrite of each node, or the node is
refused. The readings are all proven; the model gets one copy."""

from __future__ import annotations

from ..entries import refused
from ..state import Context, PassResult


def _key(r) -> tuple:
    return (id(r.site.owner), r.site.index)


class Unify:
    name = "unify"
    requires = ("format planned", "weights planned", "shift planned", "qdq planned", "other ops planned")
    ensures = ("readings agree",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        seen: dict[tuple, object] = {}
        for r in ctx.rewrites:
            first = seen.setdefault(_key(r), r)
            if first is r:
                continue
            same = [n.SerializeToString() for n in first.nodes] == [n.SerializeToString() for n in r.nodes]
            if not same:
                result.refusals.append(refused(
                    r.site, "QC301",
                    f"its function is called with signatures that need different rewrites "
                    f"({first.site.scope.path} vs {r.site.scope.path})"))
        return result


def one_per_node(rewrites: list) -> list:
    """The rewrites to apply and report: one per node, proven only if every reading was."""
    kept: dict[tuple, object] = {}
    for r in rewrites:
        first = kept.setdefault(_key(r), r)
        if first is not r:
            first.entry.verified = first.entry.verified and r.entry.verified
    return list(kept.values())
