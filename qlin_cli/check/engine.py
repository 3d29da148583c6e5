"""Check one model file: load it, reach every quantization node, run the rules.

Node rules run on the facts of each node of a known op (with a cache of clean
verdicts keyed on the facts); model rules then run once on the ``ModelView`` the
walk filled (every body, its nodes, the facts already read).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import onnx

from .. import rules as rule_registry
from .. import schema
from ..errors import QlinError, unexpected
from ..gc_pause import paused_collection
from ..model.facts import NodeFacts, op_in_scope, read_facts
from ..model.graphs import all_nodes, reading
from ..model.infer import inference_input, inferred_types
from ..model.load import load_model
from ..model.safety import validate_model_files
from ..model.view import ModelView
from ..model.walk import walk_bodies
from ..rules.base import ModelRule, Violation
from .diagnostic import ERROR, INFO, WARNING, Diagnostic, node_frame


@dataclass
class FileResult:
    path: str
    error: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    nodes: int = 0  # quantization nodes checked (those of an op qlin has a schema for)

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "error": self.error,
            "nodes": self.nodes,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def selected(code: str, select: list[str] | None, ignore: list[str] | None) -> bool:
    """ruff-style selection: a code is in when a select prefix matches and no ignore does."""
    if select and not any(code.startswith(p.upper()) for p in select):
        return False
    return not (ignore and any(code.startswith(p.upper()) for p in ignore))


def check_model(
    model: onnx.ModelProto, base_dir: str, select=None, ignore=None, *, cache: bool = True,
    stats: dict | None = None,
) -> list[Diagnostic]:
    """Every finding of the selected rules on every known quantization node.

    ``cache``: a node whose facts equal those of a node that raised nothing is not
    checked again (facts leave names out, so the verdict is the same). ``stats``, if
    given, gets ``nodes``: how many quantization nodes were checked.
    """
    active = [r for r in rule_registry.all_rules() if selected(r.code, select, ignore)]
    node_rules = [r for r in active if not isinstance(r, ModelRule)]
    model_rules = [r for r in active if isinstance(r, ModelRule)]
    light = inference_input(model) if _has_known(model) else None
    # A node holds a qlin:ignore entry only if the key's bytes are in the model's: protobuf
    # keeps strings as they are, and inference's copy keeps every node's metadata. So most
    # models skip reading each node's metadata (2% of a check of 30,000 nodes).
    marks = light is None or IGNORE_KEY.encode() in light
    extra = inferred_types(model, light) if light is not None else None
    del light  # the walk does not need the copy
    found: list[tuple[tuple, Diagnostic]] = []  # (where it sorts, the finding)
    clean: set[NodeFacts] = set()
    view = ModelView(model, base_dir)
    checked = 0
    marked: dict[tuple[str, str], list[str]] = {}  # (graph, node label) -> its qlin:ignore codes
    for scope, owner, nodes in walk_bodies(model, extra):
        if not nodes:  # a body without nodes has no place in the view (rules meet it via graphs())
            continue
        body = view.body_of(scope, owner)
        body.nodes.extend(nodes)
        ops = scope.ops
        for index, node in enumerate(nodes):
            if marks and node.metadata_props:
                codes = node_ignores(node)
                if codes is not None:
                    marked[(body.path, node.name or f"#{index}")] = codes
            op = ops.get((node.domain, node.op_type), False)  # op_in_scope's cache, read
            if op is False:  # here without a call per node
                op = op_in_scope(scope, node.domain, node.op_type)
            if op is None:
                continue
            facts = body.facts[index] = read_facts(node, index, scope, base_dir, op)
            checked += 1
            if cache and facts in clean:
                continue
            before = len(found)
            order = (len(view.bodies) - 1, index)
            for rule in node_rules:
                if not rule.applies_to(facts):
                    continue
                for v in rule.violations(facts):
                    found.append(((*order, rule.code), diagnostic(rule, v, facts)))
            if len(found) == before:
                clean.add(facts)
    for rule in model_rules:
        for v in rule.check_model(view):
            found.append(((*view.order(v.at.graph, v.at.index), rule.code), placed(rule, v)))
    found.sort(key=lambda item: item[0])  # stable: a rule's findings keep their order
    if stats is not None:
        stats["nodes"] = checked
    return [d for _, d in found if not _suppressed(d, marked)]


IGNORE_KEY = "qlin:ignore"


def node_ignores(node) -> list[str] | None:
    """The codes a node's ``qlin:ignore`` metadata entry suppresses: None without the
    entry, [] (every code) for an empty value, else its comma-separated codes/prefixes."""
    for entry in node.metadata_props:
        if entry.key == IGNORE_KEY:
            return [c.strip().upper() for c in entry.value.split(",") if c.strip()]
    return None


def _suppressed(d: Diagnostic, marked: dict) -> bool:
    codes = marked.get((d.graph, d.node)) if marked else None
    return codes is not None and (not codes or any(d.code.startswith(c) for c in codes))


def diagnostic(rule, v: Violation, f: NodeFacts) -> Diagnostic:
    """A rule's violation placed on its node."""
    loc = f.location
    where = f"node {loc.where} ({f.title})"
    return Diagnostic(
        code=rule.code, severity=rule.severity, message=f"{where}: {v.message}",
        node=loc.label, op_type=f.op, domain=f.domain_name, opset=f.opset or 0, graph=loc.graph,
        fix=v.fix, where=where, frame=node_frame(f, v.message),
    )


def placed(rule, v: Violation) -> Diagnostic:
    """A model rule's violation at the site it names."""
    at = v.at
    return Diagnostic(
        code=rule.code, severity=rule.severity, message=f"{at.what}: {v.message}", node=at.label,
        op_type=at.op_type, domain=at.domain, opset=at.opset, graph=at.graph, fix=v.fix,
        where=at.what,
    )


def _has_known(model: onnx.ModelProto) -> bool:
    return any(schema.knows(n.domain, n.op_type) for n in all_nodes(model))


def check_file(path: str, select=None, ignore=None) -> FileResult:
    with paused_collection():  # see gc_pause.py: a third of the time on large models
        return _check_file(path, select, ignore)


def _check_file(path: str, select, ignore) -> FileResult:
    result = FileResult(path)
    try:
        model = load_model(path, weights=False)  # checking never reads values above 64 MiB
        base_dir = os.path.dirname(os.path.abspath(path))
        stats: dict = {}
        with reading(model):  # nothing below changes the model
            validate_model_files(model, base_dir, path)
            result.diagnostics = check_model(model, base_dir, select, ignore, stats=stats)
        result.nodes = stats["nodes"]
    except QlinError as e:
        result.error = e.reason
    except Exception as e:  # never a traceback, and the other files of the run are still checked
        result.error = unexpected(e)
    return result


def summarize(results: list[FileResult]) -> dict:
    """The counts of a run (JSON contract version 2): files given, files that could not
    be checked, quantization nodes checked, and findings by severity."""
    return {
        "files": len(results),
        "unchecked": sum(1 for r in results if r.error is not None),
        "nodes": sum(r.nodes for r in results),
        "errors": sum(r.count(ERROR) for r in results),
        "warnings": sum(r.count(WARNING) for r in results),
        "infos": sum(r.count(INFO) for r in results),
    }
