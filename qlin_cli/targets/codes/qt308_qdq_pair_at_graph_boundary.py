"""QT308 qdq-pair-at-graph-boundary: the logic is here (``pairs.pair_fate``, shared with
QT408), each target's fact is its ``pair_stripping`` and ``pair_failure`` (the release's pair
probes); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code


class QdqPairAtGraphBoundary(Code):
    """
    ## What it checks
    That a 16-bit QuantizeLinear -> DequantizeLinear pair does not connect a graph
    input directly to a graph output, nor a MaxPool to a graph output.

    ## Why is this bad?
    openvino's CPU plugin removes 16-bit Q -> DQ pairs (see QT408) by connecting
    the pair's input to its consumers; between a graph input and a graph output
    that rewiring fails and `compile_model` stops with "FQ stripping failed"
    (src/common/low_precision_transformations/src/qdq_stripping.cpp). Measured per
    release by the pair probes (graph input -> Q -> DQ -> graph output, and AveragePool,
    MaxPool, Sigmoid or Transpose -> Q -> DQ -> graph output, int16 and uint16); the message
    is the release's own.

    ## Example
    ```
    graph input x -> QuantizeLinear(int16) -> DequantizeLinear -> graph output y
    ```

    ## Fix
    Put the pair between other ops (it is removed then, see QT408), or drop it.
    """

    code = "QT308"
    name = "qdq-pair-at-graph-boundary"
    summary = "A 16-bit Q -> DQ pair links a graph input to a graph output."

    @staticmethod
    def check(target, site):
        from .. import nodes, pairs

        if pairs.pair_fate(target, site) != "fails":
            return
        q = nodes.quant_type(site.producer)
        before = site.producer_site
        if before is not None and before.x_is_graph_input:
            where, error = "links a graph input to a graph output", target.pair_failure(q)
            fix = "drop the pair, or put it between other ops"
        else:
            where, error = f"after a {before.x_from[0]} ends at a graph output", target.pair_failure(
                q, before.x_from[0])
            fix = "drop the pair, or put an op between it and the output"
        yield target.finding("QT308", f"the {q} Q -> DQ pair {where}: the model fails to load ('{error}')",
                             fix=fix)
