"""What a target does with a Q -> DQ pair (QT308 and QT408 read it): shared by the two
codes, apart from targets/nodes.py (which reads nodes and knows no probe)."""

from __future__ import annotations

from .. import schema
from . import nodes, probe_keys


def pair_fate(target, site) -> str | None:
    """What ``target`` does with the Q -> DQ pair ending at the DequantizeLinear of ``site``
    (its ``pair_stripping`` fact; QT308, QT408): "removed" (where the release's pair probe
    of the type and granularity, per tensor or blocked, shows it), "fails" (a pair that is not
    blocked between a graph input and a graph output, or at a graph output after an ai.onnx
    op, where the release's probe of that failed: ``target.pair_failure``), or None (not such
    a pair, kept as written, or nothing measured; a pair the probe finds computed otherwise
    is QT406's)."""
    fact, f, p = target.pair_stripping, site.facts, site.producer
    if fact is None or nodes.kind(f) != nodes.DEQUANTIZE or p is None:
        return None
    if nodes.quant_type(p) not in fact.types:
        return None
    before = site.producer_site
    if p.granularity != schema.BLOCKED:  # what fails was measured with pairs per tensor
        if before is not None and before.x_is_graph_input and site.y_is_graph_output:
            return "fails" if target.pair_failure(nodes.quant_type(p)) else None
        after = before.x_from if before is not None else None
        if (site.y_is_graph_output and after is not None and after[1] == schema.AI_ONNX
                and target.pair_failure(nodes.quant_type(p), after[0])):
            return "fails"
    found = target.arithmetic(probe_keys.PAIR, site)
    return "removed" if found is not None and found.differs == probe_keys.REMOVED else None
