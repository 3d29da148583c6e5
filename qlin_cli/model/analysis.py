"""One analysis of a model, which every command reads.

``analyze(model, base_dir)`` runs onnx shape inference once and walks the model
once: every body with its scope (types declared, inferred, then propagated where
inference stops), its nodes, and the facts of its nodes read on first use. check,
the targets, inspect, --fix and convert all read that one ``Analysis``; the only
second inference a command makes is convert's look at its own result.

Types are the same for every command because they come from here:

* onnx shape inference knows no vendor op, so every value after a com.microsoft or
  com.amd.quark QuantizeLinear / DequantizeLinear would lose its type. For the
  inference only, those nodes are shown as their ai.onnx twins (same inputs, same
  attributes, the same output type rule; ``vendor_twins``) and put back right after.
* where inference still stops, ``model.propagate`` fills output types forward from
  the schemas' type variables, and ranks where an op's output rank follows from its
  inputs'.

Inference runs as onnx.checker's full_check runs it (strict, types checked): a model
it accepts pays nothing more, and for one it rejects ``inference_errors`` keeps each
node's error (see ``own_errors`` for the errors that are not the model's).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import onnx

from .. import schema
from .facts import NodeFacts, read_facts
from .graphs import MAIN, all_nodes, bodies, node_label, reading
from .infer import inference_bytes, run_inference
from .infer_kinds import by_kind, fits_by_kind
from .propagate import fill, fill_ranks
from .tensors import census
from .view import BodyView, ModelView
from .walk import type_of_bytes, walk_bodies

IGNORE_KEY = "qlin:ignore"
# marks a vendor node while it stands as its ai.onnx twin, so its inference errors
# (the twin's, not the model's) can be told apart
TWIN_MARK = "\x1fqlin-twin\x1f"


class Analysis(ModelView):
    """The model read once: its bodies (``ModelView``), inference's types and errors,
    the nodes' ``qlin:ignore`` marks. Build it with ``analyze``."""

    def __init__(self, model: onnx.ModelProto, base_dir: str):
        super().__init__(model, base_dir)
        self.inferred: dict | None = None  # inference's types by scope path (walk.scope_types)
        self.inference_errors: tuple[str, ...] = ()  # strict inference's errors, the model's own
        self.marked: dict[tuple[str, str], list[str]] = {}  # (graph, label) -> qlin:ignore codes
        # (tensor name, what is wrong) of each external tensor that cannot be read
        # (model/safety.validate_model_files; set by the check, which reports them)
        self.external_problems: tuple[tuple[str, str], ...] = ()
        # what inference by kind read of the main graph's nodes (infer_kinds.ByKind; else
        # None): the main body's ``io`` and ``kinds``, which the check then does not read again
        self.walked = None
        # the data types of the main graph's initializers (``Census.distinct``: read by the
        # walk, not again by the targets' model facts)
        self.initializer_types: frozenset[int] = frozenset()

    def nodes(self) -> Iterator[tuple[BodyView, int, onnx.NodeProto]]:
        """(body, index, node) of every node, in walk order."""
        for body in self.bodies:
            for index, node in enumerate(body.nodes):
                yield body, index, node

    def any_facts(self, body: BodyView, index: int) -> NodeFacts:
        """The facts of any node, of an op qlin knows or not (read once, then kept)."""
        f = self.facts(body, index)
        if f is None:
            key = ("any", body.path, index)
            f = self._memo.get(key)
            if f is None:
                f = self._memo[key] = read_facts(body.nodes[index], index, body.scope, self.base_dir)
        return f


def analyze(model: onnx.ModelProto, base_dir: str, *, infer: bool = True,
            types: dict | None = None, serialized: bytes | None = None,
            marked: bool | None = None) -> Analysis:
    """The analysis of ``model`` (tensors outside it are read relative to ``base_dir``).
    ``infer=False``: no shape inference (types are what the model declares, propagated);
    ``types``: inference's types as an earlier analysis of the same model found them
    (``Analysis.inferred``), taken instead of inferring again; ``serialized``: the bytes
    ``model`` was parsed from (``load.load_model_bytes``), which inference then reads
    rather than the model serialized again; ``marked``: whether the file holds IGNORE_KEY
    at all, where the caller looked (False: no node's mark to look for)."""
    a = Analysis(model, base_dir)
    a.inferred = types
    with reading(model):  # nothing below changes the model (the twins are put back)
        foreign = _imports_beyond_ai_onnx(model)
        marks, whole = True, False
        inferring = infer and types is None and any(True for _ in all_nodes(model))
        # inference by kind (infer_kinds.py) where it may try the model
        kinds = inferring and not foreign and fits_by_kind(model)
        if inferring:
            marks, whole = _infer(a, foreign, serialized, kinds)
        marks = marks and marked is not False
        found = {b.path: b for b in bodies(model)}  # which nodes have attributes, of what kinds
        for scope, owner, nodes in walk_bodies(model, a.inferred):
            if not nodes:  # a body without nodes has no place in the view (rules meet it via graphs())
                continue
            body = a.body_of(scope, owner)
            body.nodes.extend(nodes)
            if a.walked is not None and owner is model.graph and len(a.walked.io) == len(nodes):
                body.keep_walked(a.walked)
            seen = found.get(scope.path)
            if seen is not None and seen.owner is owner and body.found_attributed is None:
                body.found_attributed, body.found_attr_types = seen.attributed, seen.attr_types
            if not whole and _untyped(scope.types, nodes):
                walked = [(scope, i, n) for i, n in enumerate(nodes)]
                fill(walked)
                fill_ranks(walked)
            if marks:
                _note_ignores(a, body)
        a.initializer_types = frozenset(t for t, _ in census(model.graph).distinct)
    return a


def _infer(a: Analysis, foreign: bool, serialized: bytes | None = None,
           kinds: bool = False) -> tuple[bool, bool]:
    """Run inference for ``a`` (vendor Q/DQ as twins when the model imports a domain other
    than ai.onnx; by kind first where ``kinds``: a model of ai.onnx alone that
    ``fits_by_kind``). Returns (whether a node may hold a qlin:ignore mark, whether inference
    typed the model whole: every op is ai.onnx's and strict inference found no error, so
    propagation has nothing to add)."""
    if foreign:
        with vendor_twins(a.model):
            light, skeleton = inference_bytes(a.model)
    else:
        found = by_kind(a.model, fits=True) if kinds else None  # onnx asked once per kind of node
        if found is not None:
            a.inferred = {MAIN: [(name, type_of_bytes(t)) for name, t in found.types]}
            a.walked = found._replace(types=None)  # (the types' bytes: read, not kept)
            # (the file's bytes hold every node's metadata; without them, look at each node)
            return serialized is None or IGNORE_KEY.encode() in serialized, True
        light, skeleton = inference_bytes(a.model, serialized)
    if light is None:
        return True, False
    marks = IGNORE_KEY.encode() in light  # inference's copy keeps every node's metadata
    a.inferred, errors = run_inference(a.model, light)
    a.inference_errors = own_errors(errors, skeleton)
    return marks, not foreign and not errors and a.inferred is not None


def _imports_beyond_ai_onnx(model: onnx.ModelProto) -> bool:
    """Whether the model or a function imports a domain other than ai.onnx (only then can a
    node be of a vendor op, or a call of a function)."""
    ai = schema.AI_ONNX
    return bool(model.functions) or any(schema.normalize_domain(o.domain) != ai for o in model.opset_import)


def _untyped(types: dict, nodes) -> bool:
    """Whether a node output lacks a type or a shape (what ``propagate`` may fill; most
    bodies inference typed whole need no second look)."""
    for node in nodes:
        for name in node.output:
            if name:
                t = types.get(name)
                if t is None or not t[0] or t[1] is None:
                    return True
    return False


def _note_ignores(a: Analysis, body: BodyView) -> None:
    for index, node in enumerate(body.nodes):
        if node.metadata_props:
            codes = node_ignores(node)
            if codes is not None:
                a.marked[(body.path, node_label(node, index))] = codes


def node_ignores(node) -> list[str] | None:
    """The codes a node's ``qlin:ignore`` metadata entry suppresses: None without the
    entry, [] (every code) for an empty value, else its comma-separated codes/prefixes."""
    for entry in node.metadata_props:
        if entry.key == IGNORE_KEY:
            return [c.strip().upper() for c in entry.value.split(",") if c.strip()]
    return None


# The errors strict inference reports that say nothing of the model itself.
CASCADE = "expected to have type but instead is null"  # an input whose producer failed: that error is listed
NO_DATA = "Data size mismatch"  # a tensor whose data the skeleton left out (model/infer.py)


def own_errors(errors: tuple[str, ...], skeleton: bool) -> tuple[str, ...]:
    """The errors that are the model's: not a vendor node's twin's, not an input left
    untyped by another listed error, not data the skeleton (not the model) lacks."""
    return tuple(e for e in errors if TWIN_MARK not in e and CASCADE not in e
                 and not (skeleton and NO_DATA in e))


@contextmanager
def vendor_twins(model: onnx.ModelProto):
    """While inside, every vendor-domain linear Q/DQ node of ``model`` stands as its
    ai.onnx twin (its name marked with TWIN_MARK)."""
    changed = []
    ai = schema.AI_ONNX
    opset = next((o.version for o in model.opset_import if schema.normalize_domain(o.domain) == ai), None)
    declared = None  # the main graph's initializer types, read when a twin's scale type is asked
    for n in all_nodes(model):
        d = schema.normalize_domain(n.domain)
        if d == schema.AI_ONNX or not schema.is_known_op(d, n.op_type):
            continue
        spec = schema.versions(d, n.op_type)[-1]
        if schema.is_linear(spec):
            if declared is None:
                declared = {t.name: t.data_type for t in model.graph.initializer}
            if not _twin_takes_scale(spec, opset, n, declared):
                continue
            changed.append((n, n.domain, n.op_type, n.name))
            n.domain, n.op_type = "", schema.op_for(schema.AI_ONNX, spec.kind)
            n.name = TWIN_MARK + n.name
    try:
        yield
    finally:
        for n, domain, op, name in changed:
            n.domain, n.op_type, n.name = domain, op, name


def _twin_takes_scale(spec, opset: int | None, node: onnx.NodeProto, declared: dict[str, int]) -> bool:
    """Whether the ai.onnx twin of a vendor Q/DQ, at the model's ai.onnx opset, takes the type
    the node's scale is stored in: com.microsoft DequantizeLinear takes a float16 scale
    (and gives float16) where ai.onnx DequantizeLinear-13 takes float alone and says float,
    so inference would type the output float. Such a node is left out of inference; the
    propagation types its output from its own schema. True where the type is not known."""
    from ..schema import dtypes

    if opset is None or len(node.input) < 2 or node.input[1] not in declared:
        return True
    twin = schema.lookup(schema.AI_ONNX, schema.op_for(schema.AI_ONNX, spec.kind), opset)
    if twin is None:
        return True
    return dtypes.name_of(declared[node.input[1]]) in twin.allowed(twin.inputs[1])


__all__ = ["Analysis", "IGNORE_KEY", "analyze", "node_ignores", "vendor_twins"]
