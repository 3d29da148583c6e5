"""Refuse models whose external data is unsafe, before anything reads it."""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import AttributeProto

from ..errors import QlinError
from .tensors import UnsafeData, check_external, is_external


def all_graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto]:
    """The main graph and every subgraph, in functions too (no recursion)."""
    stack: list = [model.graph]
    node_lists = [fn.node for fn in model.functions]
    while stack or node_lists:
        if stack:
            g = stack.pop()
            yield g
            nodes = g.node
        else:
            nodes = node_lists.pop()
        for node in nodes:
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == AttributeProto.GRAPHS:
                    stack.extend(a.graphs)


def all_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto that can carry data: initializers and tensor attributes."""
    graphs = list(all_graphs(model))
    node_lists = [g.node for g in graphs] + [fn.node for fn in model.functions]
    for g in graphs:
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield sp.values
            yield sp.indices
    for nodes in node_lists:
        for node in nodes:
            for a in node.attribute:
                if a.type == AttributeProto.TENSOR:
                    yield a.t
                elif a.type == AttributeProto.TENSORS:
                    yield from a.tensors


def validate_model_files(model: onnx.ModelProto, base_dir: str, path: str) -> int:
    """Check every external-data reference; returns how many there are.

    Raises QlinError naming the model file and the first unsafe reference.
    """
    count = 0
    cache: dict = {}
    for tensor in all_tensors(model):
        if not is_external(tensor):
            continue
        count += 1
        try:
            check_external(tensor, base_dir, cache)
        except UnsafeData as e:
            raise QlinError(path, f"tensor {tensor.name!r}: {e}") from None
    return count
