"""Check one model file: load it, reach every Q/DQ node, run the rules."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import onnx

from .. import rules as rule_registry
from .. import schema
from ..errors import QlinError
from ..model.load import load_model
from ..model.safety import all_tensors, validate_model_files
from ..model.tensors import is_external
from ..model.walk import graph_paths, scope_types, walk
from .diagnostic import ERROR, WARNING, Diagnostic
from .node import NodeView


@dataclass
class FileResult:
    path: str
    error: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "error": self.error,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def selected(code: str, select: list[str] | None, ignore: list[str] | None) -> bool:
    """ruff-style selection: a code is in when a select prefix matches and no ignore does."""
    if select and not any(code.startswith(p.upper()) for p in select):
        return False
    return not (ignore and any(code.startswith(p.upper()) for p in ignore))


def inferred_types(model: onnx.ModelProto) -> dict | None:
    """Types and shapes from onnx shape inference, or None when it cannot run.

    Inference runs on a copy whose external tensors have their references
    removed (dims and types stay): onnx's inference otherwise allocates room
    for the external weights, gigabytes on a large model.
    """
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    for tensor in all_tensors(skeleton):
        if is_external(tensor):
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
    try:
        inferred = onnx.shape_inference.infer_shapes(
            skeleton, check_type=False, strict_mode=False, data_prop=False
        )
    except Exception:  # inference is a help, not a requirement
        return None
    return scope_types(inferred)


def check_model(
    model: onnx.ModelProto, base_dir: str, select=None, ignore=None
) -> list[Diagnostic]:
    active = [r for r in rule_registry.all_rules() if selected(r.code, select, ignore)]
    spec_free = [r for r in active if not r.needs_spec]
    extra = inferred_types(model) if _has_qdq(model) else None
    found: list[Diagnostic] = []
    clean: set[tuple] = set()  # signatures of nodes that raised nothing
    for scope, index, node in walk(model, extra):
        if not schema.is_known_op(node.domain, node.op_type):
            continue
        view = NodeView(node, index, scope, base_dir)
        signature = view.signature()
        if signature in clean:
            continue
        before = len(found)
        for rule in active if view.spec is not None else spec_free:
            for message in rule.check(view):
                found.append(
                    Diagnostic(
                        code=rule.code,
                        severity=rule.severity,
                        message=message,
                        node=view.label,
                        op_type=node.op_type,
                        domain=view.domain_name,
                        opset=view.opset or 0,
                        graph=scope.path,
                    )
                )
        if len(found) == before:
            clean.add(signature)
    return found


def _has_qdq(model: onnx.ModelProto) -> bool:
    graphs = (g.node for _, g in graph_paths(model))
    functions = (fn.node for fn in model.functions)
    return any(
        schema.is_known_op(n.domain, n.op_type) for nodes in (*graphs, *functions) for n in nodes
    )


def check_file(path: str, select=None, ignore=None) -> FileResult:
    result = FileResult(path)
    try:
        model = load_model(path)
        base_dir = os.path.dirname(os.path.abspath(path))
        validate_model_files(model, base_dir, path)
        result.diagnostics = check_model(model, base_dir, select, ignore)
    except QlinError as e:
        result.error = e.reason
    except Exception as e:  # never a traceback, and the other files of the run are still checked
        result.error = unexpected(e)
    return result


def unexpected(e: BaseException) -> str:
    """One line for an exception qlin did not foresee while reading a model."""
    if isinstance(e, UnicodeDecodeError):
        return "a name or string in the model is not valid UTF-8 (a corrupt or hostile file)"
    if isinstance(e, RecursionError):
        return "the model is nested too deeply to process"
    if isinstance(e, MemoryError):
        return "out of memory while processing the model"
    text = str(e).strip().splitlines()
    return f"internal error ({type(e).__name__}: {text[0][:160] if text else ''}); please report it"


def summarize(results: list[FileResult]) -> dict:
    return {
        "files": len(results),
        "errors": sum(r.count(ERROR) for r in results),
        "warnings": sum(r.count(WARNING) for r in results),
    }
