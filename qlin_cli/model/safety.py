"""Refuse models whose external data is unsafe, before anything reads it."""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import AttributeProto

from ..errors import QlinError
from ..schema import normalize_domain
from .graphs import bodies, initializers_of, nodes_of
from .tensors import UnsafeData, census, check_external, external_info, is_external


def all_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto that can carry data: initializers and tensor attributes."""
    found = list(bodies(model))
    for b in found:
        g = b.owner
        if isinstance(g, onnx.GraphProto):
            yield from initializers_of(g)
            yield from sparse_tensors(g)
    yield from attribute_tensors(found)


def external_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The tensors of ``all_tensors`` stored outside the file, in its order (a graph's
    initializers as its ``census`` found them)."""
    found = list(bodies(model))
    for b in found:
        g = b.owner
        if isinstance(g, onnx.GraphProto):
            c = census(g)
            for i in c.external:
                yield c.tensor(i)
            yield from (t for t in sparse_tensors(g) if is_external(t))
    yield from (t for t in attribute_tensors(found) if is_external(t))


def sparse_tensors(g: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """The values and indices of a graph's sparse initializers."""
    for sp in g.sparse_initializer:
        yield sp.values
        yield sp.indices


def attribute_tensors(found: list) -> Iterator[onnx.TensorProto]:
    """The tensors the nodes of the bodies ``found`` hold in TENSOR and TENSORS attributes."""
    for b in found:
        if not (b.attributed and b.may_hold(AttributeProto.TENSOR, AttributeProto.TENSORS)):
            continue
        nodes = nodes_of(b.owner)
        for i in b.attributed:
            for a in nodes[i].attribute:
                if a.type == AttributeProto.TENSOR:
                    yield a.t
                elif a.type == AttributeProto.TENSORS:
                    yield from a.tensors


def _fn_key(domain: str, name: str, overload: str) -> tuple[str, str, str]:
    return (normalize_domain(domain), name, overload)


def _fn_label(key: tuple[str, str, str]) -> str:
    domain, name, overload = key
    return f"{domain}.{name}" + (f":{overload}" if overload else "")


def function_cycle(model: onnx.ModelProto) -> list[str] | None:
    """The first cycle of calls among model-local functions, as ["d.F", "d.G", "d.F"], or None.

    Calls inside a function's subgraphs count. Both the call graph and the
    depth-first search are walked with explicit stacks: a chain of a hundred
    thousand functions cannot exhaust Python's recursion limit.
    """
    if not model.functions:
        return None
    calls: dict[tuple, list[tuple]] = {}
    for fn in model.functions:
        calls.setdefault(_fn_key(fn.domain, fn.name, fn.overload), [])
    caller: dict[str, tuple | None] = {}  # body path -> the function it belongs to
    for body in bodies(model):
        if body.parent is None:
            fn = body.owner
            caller[body.path] = (_fn_key(fn.domain, fn.name, fn.overload) if body.is_function
                                 else None)
        else:
            caller[body.path] = caller[body.parent]
        key_of = caller[body.path]
        if key_of is None:
            continue
        for node in body.owner.node:
            key = _fn_key(node.domain, node.op_type, node.overload)
            if key in calls:
                calls[key_of].append(key)
    done: set = set()
    for root in calls:
        if root in done:
            continue
        path, on_path, todo = [root], {root}, [iter(calls[root])]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                done.add(path[-1])
                on_path.discard(path.pop())
                todo.pop()
            elif nxt in on_path:
                return [_fn_label(k) for k in path[path.index(nxt):]] + [_fn_label(nxt)]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                todo.append(iter(calls[nxt]))
    return None


def validate_model_files(model: onnx.ModelProto, base_dir: str, path: str,
                         problems: list | None = None, locations: set | None = None) -> int:
    """Refuse what qlin must not process, before anything reads or infers:
    model-local functions that call each other in a cycle (functions are
    expanded inline: recursion never finishes, and onnx's inliner and
    onnxruntime overflow their stacks on it), and unsafe external data.
    Returns how many external-data references there are.

    Raises QlinError naming the model file and the first problem. ``problems``: a list
    that gets (tensor name, what is wrong) for each external tensor that is unsafe,
    missing or short instead (`qlin check` reports each as a finding and checks the
    rest; nothing reads such a tensor: ``model.facts.Const`` gives no value for it).
    ``locations``: a set that gets the location of every external tensor, safe or not.
    """
    cycle = function_cycle(model)
    if cycle:
        raise QlinError(
            path,
            "model-local functions call each other in a cycle: " + " -> ".join(cycle)
            + " (functions are expanded inline, so recursion can never finish)",
        )
    count = 0
    cache: dict = {}
    for tensor in external_tensors(model):
        count += 1
        info = external_info(tensor)
        if locations is not None:
            locations.add(info.get("location", ""))
        try:
            check_external(tensor, base_dir, cache, info)
        except UnsafeData as e:
            if problems is None:
                raise QlinError(path, f"tensor {tensor.name!r}: {e}") from None
            problems.append((tensor.name, str(e)))
    return count
