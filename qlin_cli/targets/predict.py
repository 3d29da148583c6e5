"""The prediction engine: a model and target names in, every reason each target would refuse
the model or compute something else out; the capability matrix; the conversion plan.

* ``findings(model, base_dir, targets)`` walks the model once (``model.walk``: main graph,
  subgraphs, model-local functions per call signature), reads each node's facts
  (``model.facts.read_facts``; only small scale / zero-point tensors are ever read, never
  weights) and applies every target's model and node checks. Each result is a ``Finding``
  (qlin_cli/finding.py, the type of every finding) with ``target`` and ``convertible`` set.
* ``capability_matrix()`` gives one JSON-serialisable row per target (``qlin targets``).
* ``plan(model, base_dir, target)`` chooses the ai.onnx opset, IR version, domain and
  ``--lower`` that make the model run on the target, by predicting each candidate's
  findings, or says why nothing can (``qlin convert --target``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import onnx
from onnx import AttributeProto

from .. import schema
from ..finding import Finding
from ..model.analysis import Analysis, analyze
from ..model.facts import ArrayConst, Location, NodeFacts, shared_with
from ..model.view import short_title
from ..schema import dtypes, ir
from . import fusion, nodes, probe_keys, records, site_classes, weights
from .base import ERROR, ModelInfo, NodeSite, Target, TargetFinding
from .records import Record
from .registry import get

__all__ = ["Choice", "Plan", "capability_matrix", "findings", "model_info", "plan", "sites"]


def placed_json(p: Finding) -> dict:
    """A target's finding in the JSON of ``qlin convert --target`` and ``qlin inspect``."""
    return {"target": p.target, "code": p.code, "severity": p.severity, "message": p.message,
            "node": p.node, "op_type": p.op_type, "domain": p.domain, "opset": p.opset,
            "graph": p.graph, "convertible": p.convertible}


# ---- reading the model once -----------------------------------------------------------------
def _elem_type(vi: onnx.ValueInfoProto) -> str | None:
    t = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
    return dtypes.name_of(t) if t else None


def model_info(model: onnx.ModelProto, a: Analysis | None = None,
               graph_from: onnx.ModelProto | None = None) -> ModelInfo:
    """The model-level facts the targets read (no tensor data is touched); ``a``, the model's
    analysis, gives the ops of every node without reading them from the model again (or
    those of a model with the same nodes); ``graph_from``, a model whose graph is ``model``'s
    (which may be a header alone: convert/state.py ``Result.graph_from``)."""
    functions = frozenset((schema.normalize_domain(fn.domain), fn.name) for fn in model.functions)
    opsets: dict[str, int] = {}
    for o in model.opset_import:
        opsets.setdefault(schema.normalize_domain(o.domain), o.version)
    used: set[str] = set()
    float_ops: dict[str, tuple[str, str]] = {}
    for body in _bodies(model, a):  # (domain as spelled, op type) of its nodes, its nodes
        kinds = body[0]
        distinct = set(kinds)
        for spelled, op in distinct:
            d = schema.normalize_domain(spelled)
            if (d, op) not in functions:  # a call of a model-local function: its body comes on its own
                used.add(d)
        if not any(op in probe_keys.FLOAT_OPS for _, op in distinct):
            continue
        for (spelled, op), n in zip(kinds, body[1], strict=True):
            if op in probe_keys.FLOAT_OPS and (schema.normalize_domain(spelled), op) not in functions:
                key = probe_keys.float_key(n, opsets.get(schema.AI_ONNX))
                if key is not None:
                    float_ops.setdefault(key, (op, n.name or op))
    graph = (model if graph_from is None else graph_from).graph
    # (the analysis' census read the initializers' types where the graph is its model's)
    types = (a.initializer_types if a is not None and (graph_from or model) is a.model
             else {t.data_type for t in graph.initializer})
    inits = frozenset(dtypes.name_of(t) for t in types if t)
    return ModelInfo(
        ir_version=model.ir_version,
        opsets=opsets,
        node_domains=frozenset(used),
        functions=functions,
        graph_input_types=tuple(_elem_type(vi) for vi in graph.input),
        initializer_types=inits,
        float_ops=tuple((key, op, label) for key, (op, label) in float_ops.items()),
    )


def _bodies(model: onnx.ModelProto, a: Analysis | None) -> Iterator[tuple[list, list]]:
    """((domain as spelled, op type) of each node, the nodes) of every body with nodes."""
    if a is not None:
        return ((body.kinds, body.nodes) for body in a.bodies)
    from ..model.graphs import bodies

    found = ([n for n in b.owner.node] for b in bodies(model))
    return (([(n.domain, n.op_type) for n in ns], ns) for ns in found if ns)


def sites(model: onnx.ModelProto, base_dir: str, info: ModelInfo | None = None) -> Iterator[NodeSite]:
    """Every node (outside calls of model-local functions) as a ``NodeSite``, in walk order."""
    return sites_in(analyze(model, base_dir), info)


def sites_in(a: Analysis, info: ModelInfo | None = None) -> Iterator[NodeSite]:
    """``sites`` of an analysed model (its facts read once, shared with check and inspect).
    Nodes whose sites are equal share one ``NodeSite`` where they read the same scales (a
    scale, or a zero point of more than one element, of equal content in another initializer
    makes a site of its own, of the same class)."""
    return (site for site, _ in _placed(a, info or model_info(a.model, a)))


def _placed(a: Analysis, info: ModelInfo) -> list[tuple[NodeSite, Location]]:
    """(site, location) of every node (outside calls of model-local functions), in walk order."""
    model = a.model
    inputs = {vi.name for vi in model.graph.input}
    main_scope = a.bodies[0].scope if a.bodies and a.bodies[0].path == "main" else None
    # the main scope has read the initializers' names already
    inits = (main_scope.initializer_names() if main_scope is not None
             else (t.name for t in model.graph.initializer))
    main_inputs = inputs.difference(inits)
    main_outputs = {vi.name for vi in model.graph.output}
    found: list[tuple[NodeSite, Location]] = []
    for body in a.bodies:
        _body_sites(a, body, info, main_inputs, main_outputs, found)
    return found


def _body_sites(a: Analysis, body, info: ModelInfo, main_inputs, main_outputs, found: list) -> None:
    """The sites of one body's nodes, each with the node's location, appended to ``found``;
    what reads a node's output comes from the body's consumer map (``BodyView.consumers``,
    which the model rules share).

    A site is built once per distinct value: nodes whose sites would be equal share the
    first one's (a target's findings on a site depend on its value only), found by a key of
    plain tuples. An op of no family qlin knows is keyed by its op, domain and typed inputs
    and outputs without reading its facts: the targets read nothing else of it (its kernel,
    its domain; no attribute, no constant)."""
    made: dict[tuple, NodeSite] = {}  # key -> the site of that value
    main = body.path == "main"
    kinds, scope, known = body.kinds, body.scope, body.facts
    distinct = set(kinds)
    doms = {d: schema.normalize_domain(d) for d in {k[0] for k in distinct}}
    opsets = tuple(scope.opsets.items()) if scope is not None else ()
    path, in_function = (scope.path, scope.is_function) if scope is not None else (body.path, False)
    functions = info.functions
    typed = _typer(scope)
    op_of = {k: (k[1], doms[k[0]]) for k in distinct}
    ops = list(map(op_of.__getitem__, kinds))  # (op type, domain) of every node, one tuple per op
    unknown = {k for k in distinct if not schema.knows(*k)}  # ops of no family qlin knows
    a.read_all(body)  # (a converted model's: every node's at once)
    linear = _linear_sites(a, body, ops, opsets, main_inputs if main else (), main_outputs if main else (),
                           made)
    group_of = fusion.texts(a, body)
    for index, (ins, outs) in enumerate(body.io):
        op = ops[index]
        if functions and (op[1], op[0]) in functions:
            continue  # a call of a model-local function: runtimes inline its body, walked on its own
        f = None if kinds[index] in unknown else known.get(index) or a.facts(body, index)
        if f is None:  # an op of no family qlin knows
            group = group_of(index) if op[0] in fusion.GROUP_OPS else None
            cast = weights.undequantized(body, index) if op[0] in weights.WEIGHTED else None
            key = (op, typed(ins), typed(outs), group, cast)
            site = made.get(key)
            if site is None:
                site = made[key] = NodeSite(facts=a.any_facts(body, index), in_main_graph=main, opsets=opsets,
                                            group=group, weight_cast=cast)
            found.append((site, Location(path, index, body.nodes[index].name, in_function)))
        elif f.spec is None:  # a family op the scope's opset has no schema for
            site = made.get((f,))
            if site is None:
                site = made[(f,)] = NodeSite(facts=f, in_main_graph=main, opsets=opsets)
            found.append((site, f.location))
        else:
            found.append((linear(f, index, ins, outs), f.location))


def _typer(scope):
    """names -> the tuple of their types in ``scope`` (None where unknown or unnamed)."""
    if scope is None:
        return lambda names: (None,) * len(names)
    get, find = scope.types.get, scope.find_type

    def typed(names: tuple) -> tuple:
        found = tuple(map(get, names))  # the body's own types: one look-up each, in C
        if None in found:
            found = tuple([(get(n) or find(n)) if n else None for n in names])
        return found
    return typed


def _linear_sites(a: Analysis, body, ops: list, opsets: tuple, main_inputs, main_outputs, made: dict):
    """site(facts, index, inputs, outputs) of the body's Q/DQ nodes (and other nodes of a
    family qlin knows), one ``NodeSite`` per value in ``made``; ``ops`` is (op type, domain)
    of every node, ``opsets`` the body's imports, ``main_inputs`` / ``main_outputs`` the main
    graph's (empty outside it). What the maps of the body give is read here once, so that a
    node costs a few look-ups.

    A node's facts are told apart by their shape (``ModelView.shape_of``: one object per
    shape key, which the check has found for every node it read) and their constants, which
    is how the facts compare; each new site's class (site_classes.class_key) is numbered
    here from the same parts (``_Classes``)."""
    quantized: dict[str, NodeSite] = {}  # output name -> site of a linear Q
    roles: dict[int, tuple[bool, bool, int | None]] = {}  # id(spec) -> (is Q, is DQ, scale index)
    consumers, producers, main = body.consumers, body.producers, body.path == "main"
    after = _after_of(a, body)
    scope = body.scope
    find_value = scope.find_value if scope is not None else (lambda name: None)
    classes = _Classes(a, (main, opsets))
    fielded, constants = classes.kinds.get, classes.constants

    def site(f: NodeFacts, index: int, ins: tuple, outs: tuple) -> NodeSite:
        role = roles.get(id(f.spec))
        if role is None:
            k = nodes.kind(f)
            role = roles[id(f.spec)] = (k == nodes.QUANTIZE, k == nodes.DEQUANTIZE, f.scale_index)
        is_q, dq, si = role
        x = ins[0] if ins else ""
        y = outs[0] if outs else ""
        producer = quantized.get(x) if dq and x else None
        readers = consumers.get(y, ()) if y else ()
        maker = producers.get(x) if x else None
        # (what holds for the shape read from it: a summary worked out on a node's own facts
        # stays on them, 400 bytes a node)
        shape = shared_with(f) or a.shape_of(f)
        fields = (
            x in main_inputs,
            y in main_outputs,
            si is not None and si < len(ins) and ins[si] != "" and ins[si] in main_inputs,
            tuple([ops[j] + (k,) for j, k in readers]),
            None if maker is None else ops[maker],
            after(readers, shape.x_rank) if dq and readers else _NOTHING_AFTER,
            dq and bool(x) and maker is None and find_value(x) is not None,
        )
        values = constants(f.values, shape)
        # the fields as a number, hashed once, and the first equal fields, whose tuples the site
        # keeps (most sites' readers, and what follows them, are alike: one tuple for them all)
        kind, fields = fielded(fields) or classes.fields(fields)
        key = (id(shape), values, id(producer), kind)  # equal keys: equal facts, one producer
        found = made.get(key)
        if found is None:
            x_in, y_out, scale_in, readers_of, x_from, (then, reduced, partners), constant = fields
            # (the fields in NodeSite's order: a call by keyword took three times as long)
            p = None if producer is None else producer.facts
            found = made[key] = NodeSite(f, main, x_in, constant, y_out, p, producer, scale_in, readers_of,
                                         then, x_from, opsets, reduced, partners)
            classes.number(found, shape, values, producer, kind, is_q)
        if is_q and y:
            quantized[y] = found
        return found
    return site


class _Classes:
    """Numbers the classes of the sites ``_linear_sites`` makes as ``site_classes.class_key``
    would (its ``keys``: the analysis' ``targets.site_classes``), from what the site was
    found by: the facts' shape object and their constants (each by the first equal one:
    ``same``), the producer's, and the plain fields (with ``body``: the body's main flag and
    imports). Two sites of one class here are of one class there; a key here is never one
    there (so a class is at worst asked twice, once per way its sites were numbered)."""

    def __init__(self, a: Analysis, body: tuple):
        self.keys = a.memo("targets.site_classes", dict)
        self.numbers = self.keys.setdefault("classes", {})
        self.body = body
        self.first: dict[int, int] = {id(None): -1}  # id(constant) -> id of the first equal to it
        self.firsts: dict = {}  # constant -> the first equal to it
        self.content: dict[int, object] = {-1: None}  # id of a first constant -> its content key
        # a site's plain fields -> (their number (with the body's), the first equal fields)
        self.kinds: dict[tuple, tuple[int, tuple]] = {}
        self.facts: dict[int, tuple] = {}  # id(site) -> its facts' part of the key, of a producer's
        self.hiding: dict[int, tuple] = {}  # id(shape) -> per input, whether a constant there is hidden

    def same(self, c) -> int:
        """The id of the first constant equal to ``c`` (``Const`` equality: by content, or
        identity for a large one); the first is kept, so its id stays its own."""
        first = self.firsts.setdefault(c, c)
        self.first[id(c)] = id(first)
        if id(first) not in self.content:
            self.content[id(first)] = site_classes.value_key(first, False)
        return id(first)

    def constants(self, values: tuple, shape: NodeFacts) -> tuple:
        """The site key's part of constants ``values`` of facts of ``shape``: per input, -1
        where there is none, else the id of the first constant equal to it (``same``), or
        its own id where a class hides it whatever its value (a scale ...: told apart by
        identity, its content never read; sites of equal hidden values merely go unshared)."""
        hide = self.hiding.get(id(shape))
        if hide is None or len(hide) != len(values):
            hide = self.hiding[id(shape)] = site_classes.hidden_inputs(shape, len(values))
        first, same = self.first.get, self.same
        return tuple([(id(c) if c is not None else -1) if h else (first(id(c)) or same(c))
                      for c, h in zip(values, hide, strict=True)])

    def fields(self, fields: tuple) -> tuple[int, tuple]:
        """(the number of a site's plain fields in this body (the same in every body of the
        same main flag and imports), the fields), kept for the next equal fields."""
        every = self.keys.setdefault("fields", {})
        found = self.kinds[fields] = (every.setdefault((self.body, fields), len(every)), fields)
        return found

    def number(self, site: NodeSite, shape: NodeFacts, values: tuple, producer: NodeSite | None,
               kind: int, produces: bool) -> None:
        """``produces``: the site may be a producer (a QuantizeLinear's: its part of the key is
        kept for the DequantizeLinear sites reading it)."""
        hide = self.hiding[id(shape)]  # (hides: worked out before the values were read)
        content, hidden = self.content, site_classes.HIDDEN_KEY
        mine = (id(shape), tuple([hidden if h and v != -1 else content[v]
                                  for v, h in zip(values, hide, strict=True)]))
        if produces:
            self.facts[id(site)] = mine
        theirs = made = None
        if producer is not None:
            theirs, made = self.facts.get(id(producer)), self.keys.get(id(producer))
            if theirs is None or made is None:  # not numbered here: class_key numbers the site
                return
        numbers = self.numbers
        self.keys[id(site)] = numbers.setdefault(("site", mine, theirs, made, kind), len(numbers))


_NOTHING_AFTER = ((), (), ())


def _after_of(a: Analysis, body):
    """after(readers, rank): what a DequantizeLinear's readers tell the fusion and chain
    checks: per reader, the op types reading its output 0, the axis it sums over, the
    quantized type of its other operand."""
    io, kinds, consumers, producers, known = body.io, body.kinds, body.consumers, body.producers, body.facts

    def one(j: int, k: int, rank: int | None) -> tuple:
        ins, outs = io[j]
        y = outs[0] if outs else ""
        op = kinds[j][1]
        other = 1 if k == 0 else 0
        m = producers.get(ins[other]) if other < len(ins) and ins[other] else None
        return (tuple([kinds[m][1] for m, _ in consumers.get(y, ())]) if y else (),
                _reduced(a, body, j, k, rank) if op == "MatMul" or op == "Gemm" else None,
                _shape(a, known.get(m) or a.any_facts(body, m)).quant_type
                if m is not None and kinds[m][1] == "DequantizeLinear" else None)

    def after(readers, rank: int | None) -> tuple[tuple, tuple, tuple]:
        if len(readers) == 1:  # the usual DequantizeLinear: read by one node
            then, reduced, partner = one(*readers[0], rank)
            return (then,), (reduced,), (partner,)
        found = [one(j, k, rank) for j, k in readers]
        then, reduced, partners = zip(*found, strict=True)
        return then, reduced, partners
    return after


def _shape(a: Analysis, f: NodeFacts) -> NodeFacts:
    """The facts of ``f``'s shape (``ModelView.shape_of``), ``f`` tied to them: what holds for
    the shape (its quantized type ...) is worked out once for every node of it."""
    return shared_with(f) or a.shape_of(f)


def _reduced(a: Analysis, body, index: int, slot: int, rank: int | None) -> int | None:
    """The axis of its input ``slot`` (of rank ``rank``) that node ``index`` (a MatMul or a
    Gemm) sums over; None for an unknown rank."""
    if rank is None or rank < 1 or slot > 1:
        return None
    if body.kinds[index][1] == "MatMul":
        return rank - 1 if slot == 0 or rank == 1 else rank - 2
    trans = a.any_facts(body, index).attrs.get("transA" if slot == 0 else "transB", 0)
    return (1 if slot == 0 else 0) if not trans else (0 if slot == 0 else 1)


def _targets(names: str | Sequence[str] | Iterable[Target]) -> list[Target]:
    if isinstance(names, str):
        from .registry import split_names

        names = split_names(names)
    return [n if isinstance(n, Target) else get(n) for n in names]


def _place_node(target: Target, f: NodeFacts, found: TargetFinding, loc: Location | None = None,
                heads: dict | None = None) -> Finding:
    """``found`` on the node at ``loc`` (default: ``f``'s own location) whose facts equal ``f``'s;
    ``heads`` keeps what is the same for every node of ``f``'s op, domain, version and schema
    (its op, domain, titles), and the first finding placed of each ``found`` there: another
    node's is that one's fields with the node's own place (a frozen Finding's init sets each
    of its 16 fields through object.__setattr__: most of placing 3,000 findings)."""
    loc = loc or f.location
    # (what the head reads: the title is the schema's, else the op)
    at = (f.op, f.domain, f.opset, id(f.spec)) if heads is not None else None
    if heads is not None:
        first = heads.get((at, id(found), target.name))
        if first is not None:
            return _placed_like(first, loc)
    head = None if heads is None else heads.get(at)
    if head is None:
        head = (f.op, f.domain_name, f.opset or 0, f.title, short_title(f.title))
        if heads is not None:
            heads[at] = head
    op, domain, opset, title, short = head
    placed = Finding(found.code, found.severity, found.message, loc.label, op, domain, opset, loc.graph,
                     where=f"node {loc.where} ({title})", title=short, target=target.name,
                     convertible=found.convertible)
    if heads is not None:  # (``found`` kept with it: its id stays its own)
        heads[(at, id(found), target.name)] = (found, dict(vars(placed)), title)
    return placed


def _placed_like(first: tuple, loc: Location) -> Finding:
    """The Finding ``_place_node`` makes of ``first``'s finding at ``loc``: its fields with the
    node, graph and place of ``loc`` (in the same order, the same values as its init sets)."""
    _, fields, title = first
    fields = fields.copy()
    fields["node"], fields["graph"], fields["where"] = loc.label, loc.graph, f"node {loc.where} ({title})"
    placed = object.__new__(Finding)
    placed.__dict__.update(fields)
    return placed


def _place_model(target: Target, found: TargetFinding) -> Finding:
    """A finding on the model as a whole, placed as the rules place theirs (QL001): node "model"."""
    return Finding(found.code, found.severity, found.message, "model", "", "", 0, "main", where="model",
                   title="model", target=target.name, convertible=found.convertible)


def findings(model: onnx.ModelProto, base_dir: str, targets: str | Sequence[str]) -> list[Finding]:
    """``findings_in`` of the model's analysis."""
    chosen = _targets(targets)  # an unknown name raises before anything is read
    return findings_in(analyze(model, base_dir), chosen)


def findings_in(a: Analysis, targets: str | Sequence[str], *, advice: bool = True,
                severities: Sequence[str] | None = None) -> list[Finding]:
    """Every finding of every named target ("onnxruntime", "openvino,tensorrt-10" ...), model
    findings first, then nodes in walk order; target by target in the order given.

    A finding that says `qlin convert --target NAME` fixes it is checked against ``plan``:
    when no conversion makes the model run on that target, its message gives the other
    way out instead (and ``convertible`` is False). With ``advice`` False that check is
    skipped (every finding is the same but for that way out): for a caller that reads only
    the codes, severities and places, the plan's cost is saved. With ``severities``, only
    the findings of those severities are placed and returned (the others, and the plan,
    are worked out as without it: each finding returned is the same).

    Unknown names raise ``registry.UnknownTarget`` (a LookupError) before anything is read.
    """
    chosen = _targets(targets)
    info, placed = _read(a)
    out = []
    keys = a.memo("targets.site_classes", dict)  # the sites' classes, the same for every target
    for t in chosen:
        raw = _raw(t, info, placed, keys)
        if (
            advice
            and any(found.convertible for _, _, found in raw)
            and plan_in(a, t, _known=(info, placed, raw)).choice is None
        ):
            raw = [(f, loc, x.without_conversion() if x.convertible else x) for f, loc, x in raw]
        if severities is not None:
            raw = [item for item in raw if item[2].severity in severities]
        heads: dict = {}
        out += [_place_model(t, x) if f is None else _place_node(t, f, x, loc, heads) for f, loc, x in raw]
    return out


def groups_in(a: Analysis, target: str | Target) -> dict | None:
    """How the judged release runs the model's QDQ groups (a DequantizeLinear -> op ->
    QuantizeLinear around each op, targets/fusion.py), from its measured fusion:
    {"integer": n, "float": n, "not_measured": n, "float_ops": {op: n}}, each group
    counted once; None where the release's fusion was not measured (QT501's source)."""
    from . import fusion

    t = _targets([target])[0]
    table = getattr(t, "fusion_table", None)
    if table is None:
        return None
    counts = {"integer": 0, "float": 0, "not_measured": 0}
    float_ops: dict[str, int] = {}
    seen: set[int] = set()
    for site, _ in _read(a)[1]:
        if site.group is None or id(site) in seen:
            continue
        seen.add(id(site))
        done = table.outcome(site.group)
        kind = ("float" if done == fusion.FLOAT else "integer" if done and done.startswith(fusion.INTEGER)
                else "not_measured")  # a load error or crash: the model's errors say it
        counts[kind] += 1
        if kind == "float":
            float_ops[site.facts.op] = float_ops.get(site.facts.op, 0) + 1
    return {**counts, "float_ops": dict(sorted(float_ops.items()))}


def _read(a: Analysis) -> tuple[ModelInfo, list[tuple[NodeSite, Location]]]:
    """The model's info and (site, location) of every node, read once per analysis whichever
    target asks."""
    def compute():
        info = model_info(a.model, a)
        return info, list(_placed(a, info))
    return a.memo("targets.sites", compute)


Raw = list[tuple[NodeFacts | None, Location | None, TargetFinding]]


def _raw(t: Target, info: ModelInfo, placed: list[tuple[NodeSite, Location]],
         keys: dict | None = None) -> Raw:
    """(node facts and location, or None for the model; finding) of one target, model
    findings first. A site shared by several nodes is asked once, and so is a class of sites
    that differ only in what the target's checks do not read (site_classes)."""
    out: Raw = [(None, None, x) for x in t.model_findings(info)]
    keys = {} if keys is None else keys
    ask = site_classes.asker(t.findings_for, keys)
    # each site asked once, in the order of its first node (the order the asker met them in),
    # but those of a class answered whole with no finding (``clean``); the nodes are walked
    # again only where some site has findings
    answers = {id(site): site for site, _ in placed}
    told, clean = False, set()
    for i, site in answers.items():
        k = keys.get(i)
        if k in clean:
            answers[i] = ()
            continue
        found = answers[i] = ask(site)
        if found:
            told = True
        elif ask.clean(k):
            clean.add(k)
    if told:
        for site, loc in placed:
            found = answers[id(site)]
            if found:
                out += [(site.facts, loc, x) for x in found]
    return out


def capability_matrix() -> list[dict]:
    """One row per registered target: limits, domains, types, granularities, notes, sources."""
    from .registry import all_targets

    return [t.capability() for t in all_targets()]


# ---- planning a conversion -------------------------------------------------------------------
class Choice(Record):
    """What to pass to ``qlin convert`` (``convert.state.Options``) for the model to run."""
    __slots__ = ("to_opset", "to_domain", "ir_version", "lower", "lowered", "notes")
    _defaults = ((), ())

    to_opset: int
    to_domain: str | None  # None: every node keeps its domain; else "ai.onnx" or "com.microsoft"
    ir_version: int  # the IR the converted model needs (convert computes the same)
    lower: bool  # --lower: some Q/DQ nodes become primitive ops
    lowered: tuple[str, ...]  # where (node labels) lowering is needed
    notes: tuple[str, ...]

    def options(self) -> dict:
        """Keyword arguments for ``convert.state.Options``."""
        return {"to_opset": self.to_opset, "to_domain": self.to_domain, "lower": self.lower}

    def to_json(self) -> dict:
        return {
            "to_opset": self.to_opset,
            "to_domain": self.to_domain,
            "ir_version": self.ir_version,
            "lower": self.lower,
            "lowered": list(self.lowered),
            "notes": list(self.notes),
        }


class Plan:
    """The outcome of ``plan``: ``choice`` None means no conversion makes the model run;
    ``blocking`` then holds the error findings of the closest candidate. ``needed`` is
    False when the model already runs as it is. (A mutable record: equal when its fields
    are, unhashable, shown as a dataclass shows itself.)"""

    __slots__ = ("target", "needed", "choice", "blocking", "tried")
    target: str
    needed: bool
    choice: Choice | None
    blocking: list[Finding]
    tried: int

    def __init__(self, target: str, needed: bool, choice: Choice | None,
                 blocking: list[Finding] | None = None, tried: int = 0):
        self.target, self.needed, self.choice, self.tried = target, needed, choice, tried
        self.blocking = [] if blocking is None else blocking

    def _values(self) -> tuple:
        return (self.target, self.needed, self.choice, self.blocking, self.tried)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Plan(target={self.target!r}, needed={self.needed!r}, choice={self.choice!r}, "
                f"blocking={self.blocking!r}, tried={self.tried!r})")

    def to_json(self) -> dict:
        return {
            "target": self.target,
            "needed": self.needed,
            "choice": None if self.choice is None else self.choice.to_json(),
            "blocking": [placed_json(p) for p in self.blocking],
            "tried": self.tried,
        }


_INT = AttributeProto.INT


def _retargeted(f: NodeFacts, written, opset: int) -> NodeFacts:
    """The facts of a linear Q/DQ node as convert writes it (``written``: convert's QNode for
    the target domain at ai.onnx ``opset``, or ``_AsRead``): its op, schema and attributes
    (those qnode.emit keeps, then the integers it writes), the zero point convert adds."""
    from ..convert.keeps import keeps

    spec = written.spec
    items = [a for a in f.attr_items if keeps(written, a[0], a[1], a[2] if a[1] == _INT else None)]
    have = {a[0] for a in items}
    items += [(name, _INT, v) for name, v in written.attrs.items() if name not in have]
    in_typed, values = list(f.in_typed), list(f.values)
    z = written.new_zero_point
    if z is not None:
        zp = np.zeros(z.shape, dtypes.BY_NAME[z.type_name].numpy)
        while len(in_typed) < 3:
            in_typed.append(None)
            values.append(None)
        in_typed[2], values[2] = (dtypes.BY_NAME[z.type_name].proto, tuple(z.shape)), ArrayConst(zp)
    return dataclasses.replace(
        f,
        op=spec.op_type,
        domain=spec.domain,
        opset=opset if spec.domain == schema.AI_ONNX else spec.since,
        imported=True,
        spec=spec,
        in_typed=tuple(in_typed),
        values=tuple(values),
        attr_items=tuple(items),
    )


def _other_op(f: NodeFacts, opset: int) -> NodeFacts:
    """A node of another op at the new ai.onnx opset (convert moves ai.onnx ops through
    their versions; types stay)."""
    if f.domain != schema.AI_ONNX or f.opset is None:
        return f
    spec = schema.lookup(f.domain, f.op, opset) if schema.knows(f.domain, f.op) else None
    return dataclasses.replace(f, opset=opset, spec=spec if spec is not None else f.spec)


class _AsRead:
    """What ``_retargeted`` reads of qnode.read(f) (its schema, integer attributes, references
    to function attributes, no zero point to add), without importing convert."""
    __slots__ = ("spec", "attrs", "refs", "new_zero_point")

    def __init__(self, f: NodeFacts):
        self.spec, self.attrs, self.new_zero_point = f.spec, dict(f.attrs), None
        self.refs = {name: value[1] for name, _, value in f.attr_items if isinstance(value, tuple)}


def _unchanged(f: NodeFacts, opset: int) -> NodeFacts | None:
    """``_retargeted(f, _written(f, None, opset)[1], opset)`` where convert leaves the node at
    its version (the schema in force at ai.onnx ``opset`` is the node's: adapters.convert
    makes no step and gives the node as qnode.read read it), worked out without importing
    convert (the plan behind a check's advice, most often the model's own opset, cost 4 ms
    of imports); None where convert moves the node to another version."""
    spec = f.spec
    now = schema.lookup(spec.domain, spec.op_type, opset)
    if now is None or now.since != spec.since:
        return None
    return _retargeted(f, _AsRead(f), opset)


def _written(f: NodeFacts, domain: str | None, opset: int):
    """What convert does with a linear Q/DQ node for ``domain`` (None: its own) at ai.onnx
    ``opset``: (its QNode as read, the rewritten QNode or convert's Refusal)."""
    from ..convert import domains, qnode

    q = qnode.read(f)
    return q, domains.convert_node(q, domain, opset)


def _lowerable(q, f: NodeFacts, opset: int) -> bool:
    """What ``convert --lower`` lowers (convert/lower.py): its static checks pass and the
    scale and zero point are constants."""
    from ..convert import lower

    return (lower.static_reason(q, opset) is None and nodes.scale_values(f) is not None
            and nodes.zero_point_values(f) is not None)


def _model_types(info: ModelInfo, facts: Iterable[NodeFacts]) -> set[str]:
    types = set(info.initializer_types) | {t for t in info.graph_input_types if t}
    for f in facts:
        if nodes.is_linear(f):
            types.update(t for t in (*f.in_types, nodes.out_type(f)) if t)
    return types


def _candidates(target: Target, info: ModelInfo, has_vendor: bool, types: set[str]):
    newest = ir.newest_opset()
    top = min(target.max_opset or newest, newest)
    bottom = max(target.min_opset or schema.oldest_opset(), schema.oldest_opset())
    current = info.ai_onnx_opset
    order = []
    if current is not None and bottom <= current <= top:
        order.append(current)
    order += [o for o in range(top, bottom - 1, -1) if o not in order]
    domains: list[str | None] = [None]
    if has_vendor:
        domains += [d for d in target.qdq_domains]
    for lower in (False, True):
        for domain in domains:
            for opset in order:
                yield opset, domain, lower


def plan(model: onnx.ModelProto, base_dir: str, target: str | Target) -> Plan:
    """``plan_in`` of the model's analysis."""
    t = _targets([target])[0]
    return plan_in(analyze(model, base_dir), t)


def plan_in(a: Analysis, target: str | Target, *, _known=None) -> Plan:
    """The conversion (opset, IR, domain, --lower) after which ``target`` runs the model.

    Candidates are tried in this order: no lowering before lowering; every node keeping
    its domain before moving vendor-domain Q/DQ nodes to a domain the target runs; the
    model's own opset (when the target loads it) before the others, newest first. A
    candidate is taken when the target's checks, applied to the nodes as the conversion
    would write them, find no error. The prediction is a plan, not a proof: convert
    the model with ``choice.options()`` and run ``findings`` on the result to confirm.
    """
    t = _targets([target])[0]
    model = a.model
    if _known is None:
        info, placed = _read(a)
        raw = _raw(t, info, placed)
    else:
        info, placed, raw = _known
    now = [_place_model(t, x) if f is None else _place_node(t, f, x, loc)
           for f, loc, x in raw if x.severity == ERROR]
    if not now:
        opset = info.ai_onnx_opset or schema.oldest_opset()
        return Plan(t.name, False, Choice(opset, None, model.ir_version, False), [], 0)
    all_sites = list({id(s): s for s, _ in placed}.values())
    types = _model_types(info, (s.facts for s in all_sites))
    has_vendor = any(nodes.is_linear(s.facts) and s.facts.domain != schema.AI_ONNX for s in all_sites)
    quark_axis = any(
        s.facts.domain == schema.QUARK
        and nodes.is_linear(s.facts)
        and not s.facts.has("axis")
        and s.facts.granularity == schema.PER_AXIS
        for s in all_sites
    )
    best: tuple | None = None  # (score, its errors, the candidate)
    tried = 0
    # nodes as each candidate writes them, and (target, site as retargeted) -> its error
    # findings: kept with the analysis, for every target planned on it (check --target a,b)
    cache: dict = a.memo("targets.plans", dict)
    lowers: set[tuple] = set()  # (opset, domain) where --lower would lower a node
    for opset, domain, lower in _candidates(t, info, has_vendor, types):
        tried += 1
        if lower and (opset, domain) not in lowers:
            continue  # it writes what the same candidate without --lower wrote, which was tried
        blocking, lowered, need, can_lower = _try(t, info, placed, types, opset, domain, lower, cache)
        if can_lower:
            lowers.add((opset, domain))
        if not blocking:
            notes = (
                ("pass --quark-axis 0 or 1: a per-axis com.amd.quark node omits axis",) if quark_axis else ()
            )
            name = None if domain is None else schema.domain_name(domain)
            return Plan(t.name, True, Choice(opset, name, need, lower, tuple(lowered), notes), [], tried)
        score = (len(blocking), sum(p.convertible for p in blocking))
        if best is None or score < best[0]:
            best = (score, blocking, (opset, domain, lower))
    if best is not None:  # the closest candidate's errors as findings_for gives them, notes and all
        best = (best[0], _try(t, info, placed, types, *best[2], {}, noted=True)[0])
    return Plan(t.name, True, None, [_unconvertible(p, t) for p in _refusal(now, best)], tried)


def _refusal(now: list[Finding], best) -> list[Finding]:
    """Why no conversion helps: the target's own errors on the model as it is; only when a
    conversion could have removed every one of them, the errors of the candidate that came
    closest (what stops each conversion)."""
    if best is None or not all(p.convertible for p in now):
        return now
    return best[1]


def _unconvertible(p: Finding, t: Target) -> Finding:
    """A placed finding whose conversion advice no conversion honours."""
    if not p.convertible:
        return p
    advice = f"run `qlin convert --target {t.name}`"
    return dataclasses.replace(
        p,
        convertible=False,
        detail=p.detail.replace(advice, f"no conversion makes the model run on {t.name}"),
    )


def _try(
    t: Target,
    info: ModelInfo,
    placed: list[tuple[NodeSite, Location]],
    types: set[str],
    opset: int,
    domain: str | None,
    lower: bool,
    cache: dict,
    noted: bool = False,
) -> tuple[list[Finding], list[str], int, bool]:
    """The error findings of one candidate, the nodes it lowers, the IR it needs, and whether
    ``--lower`` would lower a node here; the findings as ``Target.errors_for`` gives them, or
    with ``noted`` as ``findings_for`` does."""
    blocking: list[Finding] = []
    lowered: list[str] = []
    can_lower = False
    gone: set[int] = set()  # sites lowered to primitive ops
    domains_left: set[str] = set()
    moved: dict[int, NodeSite] = {}
    for site, loc in placed:
        f = site.facts
        if id(site) in gone:
            lowered.append(loc.label)
            continue
        new_site = moved.get(id(site))
        if new_site is None and nodes.is_linear(f):
            to = domain if domain is not None else f.domain
            at = ("written", id(site), domain, opset)  # the same for the candidate with --lower
            if at not in cache:
                cache[at] = _written_once(f, domain, opset)
            q, written, g = cache[at]
            if g is None:
                lowers = _lowerable(q, f, opset) and t.runs_lowered(nodes.quant_type(f), opset)
                can_lower = can_lower or lowers
                if lower and lowers:
                    lowered.append(loc.label)
                    gone.add(id(site))
                else:
                    why = written.reason
                    blocking.append(_place_node(t, f, TargetFinding(
                        "QT202", ERROR, f"at {schema.domain_name(to)} opset {opset} the node cannot be "
                                        f"written: {why}", target=t.name, label=t.label), loc))
                continue
        if new_site is None:
            new_site = moved[id(site)] = _moved_once(site, g if nodes.is_linear(f) else None, domain, opset,
                                                     moved, gone, cache)
        domains_left.add(new_site.facts.domain)
        blocking += [_place_node(t, f, x, loc) for x in _site_errors(t, new_site, noted, cache)]
    need = _ir_needed(info, opset, domains_left, types)
    new_info = records.replace(info, opsets=need[1], ir_version=need[0])
    found = t.model_findings(new_info) if noted else t.model_errors(new_info)
    blocking[:0] = [_place_model(t, x) for x in found if x.severity == ERROR]
    return blocking, lowered, need[0], can_lower


def _written_once(f: NodeFacts, domain: str | None, opset: int) -> tuple:
    """(the node as read, as written or convert's Refusal, its facts as written or None) for
    one candidate; a node convert leaves as it is: (None, None, its facts), convert not
    imported (the first two are read only where the third is None)."""
    g = _unchanged(f, opset) if domain is None else None
    if g is not None:
        return None, None, g
    from ..convert.refusal import Refusal  # (a plan's alone: a check without one imports no convert)

    q, written = _written(f, domain, opset)
    return q, written, None if isinstance(written, Refusal) else _retargeted(f, written, opset)


def _moved_once(site: NodeSite, g: NodeFacts | None, domain: str | None, opset: int, moved: dict, gone: set,
                cache: dict) -> NodeSite:
    """``_moved`` of the site (``g``: a linear node as written, None for another op, moved
    to ``opset`` here), the same object for every candidate that writes the node alike and
    moves its producer alike (the plans made on one analysis share ``cache``)."""
    p = site.producer_site
    after = None if p is None else "gone" if id(p) in gone else id(moved.get(id(p)))
    key = ("moved", id(site), domain if g is not None else None, opset, after)
    found = cache.get(key)
    if found is None:
        written = _other_op(site.facts, opset) if g is None else g
        found = cache[key] = _moved(site, written, moved, gone, opset)
    return found


def _site_errors(t: Target, site: NodeSite, noted: bool, cache: dict) -> list[TargetFinding]:
    """The site's error findings, found by identity first, then by its class (site_classes:
    a site that differs from one asked before only in what the checks do not read shares its
    errors)."""
    errors = cache.get(("errors", t.name, id(site)))
    if errors is None:
        ask = cache.get(("ask", t.name, noted))
        if ask is None:
            ask = site_classes.asker(t.findings_for if noted else t.errors_for)
            cache[("ask", t.name, noted)] = ask
        errors = [x for x in ask(site) if x.severity == ERROR]
        cache[("errors", t.name, id(site))] = errors
    return errors


def _moved(site: NodeSite, g: NodeFacts, moved: dict, gone: set, opset: int) -> NodeSite:
    """The site with the node as the conversion writes it, its producer's site moved too (or
    dropped, when the producer was lowered to primitive ops). A node with neighbours sees its
    body import ai.onnx ``opset`` (the checks of chains read the neighbours' versions); one
    without keeps the site's imports, so that a candidate opset that changes nothing of the
    node finds it in the cache."""
    new_site = dataclasses.replace(site, facts=g)
    if site.consumers or site.x_from:
        ai = schema.AI_ONNX
        opsets = tuple((d, opset if schema.normalize_domain(d) == ai else v) for d, v in site.opsets)
        new_site = dataclasses.replace(new_site, opsets=opsets)
    if site.producer_site is not None:
        p = moved.get(id(site.producer_site))
        if id(site.producer_site) in gone or p is None:
            return dataclasses.replace(new_site, producer=None, producer_site=None)
        return dataclasses.replace(new_site, producer=p.facts, producer_site=p)
    return new_site


def _ir_needed(info: ModelInfo, opset: int, domains_left: set[str], types: set[str]) -> tuple[int, dict]:
    """(the IR version the converted model needs, its opset imports)."""
    opsets = {
        d: v
        for d, v in info.opsets.items()
        if d == schema.AI_ONNX or d in domains_left or d not in schema.DOMAIN_NAMES
    }
    opsets[schema.AI_ONNX] = opset
    for d in domains_left - set(opsets):
        opsets[d] = schema.domain_version(d) if d in schema.DOMAIN_NAMES else 1
    need = ir.ir_needed(opsets, types, bool(info.functions), False)
    return need, opsets
