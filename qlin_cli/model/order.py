"""The topological order of a body's nodes (QL108's fix): each node after the producers of
everything it reads, its subgraphs' outer reads included, otherwise in the order given."""

from __future__ import annotations

import heapq


def topological_order(io, extra_reads=None) -> list[int] | None:
    """Node indices in an order where every node follows the producers (in the same body) of
    its inputs, and of ``extra_reads[i]`` (names node i's subgraphs read from outside); among
    the nodes ready at a time, the earliest first, so a sorted body keeps its order. None
    when the nodes read each other in a cycle (no order exists)."""
    producers: dict[str, int] = {}
    for i, (_, outs) in enumerate(io):
        for name in outs:
            if name:
                producers.setdefault(name, i)
    waits = [set() for _ in io]
    for i, (ins, _) in enumerate(io):
        for name in (*ins, *((extra_reads or {}).get(i, ()))):
            j = producers.get(name)
            if j is not None and j != i:
                waits[i].add(j)
            elif j == i:
                return None  # a node reading its own output
    readers: dict[int, list[int]] = {}
    for i, w in enumerate(waits):
        for j in w:
            readers.setdefault(j, []).append(i)
    ready = [i for i, w in enumerate(waits) if not w]
    heapq.heapify(ready)
    order = []
    while ready:
        j = heapq.heappop(ready)
        order.append(j)
        for i in readers.get(j, ()):
            waits[i].discard(j)
            if not waits[i]:
                heapq.heappush(ready, i)
    return order if len(order) == len(io) else None


def body_order(view, body) -> list[int] | None:
    """``topological_order`` of a body of a ``ModelView``, its nodes' subgraphs' outer reads
    counted as the nodes' own (memoized on the view)."""
    def compute():
        extra: dict[int, list[str]] = {}
        for child, (parent, i) in view.owners.items():
            if parent is body:
                extra.setdefault(i, []).extend(view.outer_reads.get(child, ()))
        return topological_order(body.io, extra)
    return view.memo(("order", body.path), compute)


def sort_body(view, path: str) -> str | None:
    """Put the nodes of the body at ``path`` in ``body_order``; None when done, else why not."""
    body = view.body(path)
    if body is None:
        return "its graph was not found"
    order = body_order(view, body)
    if order is None:
        return "its nodes read each other in a cycle"
    if order != list(range(len(order))):
        nodes = [body.owner.node[i] for i in order]
        copies = []
        for n in nodes:
            c = type(n)()
            c.CopyFrom(n)
            copies.append(c)
        del body.owner.node[:]
        body.owner.node.extend(copies)
    return None
