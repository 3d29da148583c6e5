"""The text form `qlin check --diff` compares: the model's header (IR version, opset
imports) and each node of the main graph and of every function as onnx's printer writes
it (onnx.printer; a node's subgraphs are printed inside it). Initializer values are
left out: a fix changes nodes and the header, and a tensor's values would drown them."""

from __future__ import annotations

import difflib

import onnx
import onnx.printer

from .. import schema


def model_text(model: onnx.ModelProto) -> list[str]:
    lines = [f"ir_version: {model.ir_version}"]
    lines += [f"opset_import: {schema.domain_name(o.domain)} {o.version}" for o in model.opset_import]
    lines.append(f"graph {model.graph.name} {{")
    lines += _nodes(model.graph.node)
    lines.append("}")
    for f in model.functions:
        lines.append(f"function {f.domain}.{f.name} {{")
        lines += [f"  opset_import: {schema.domain_name(o.domain)} {o.version}" for o in f.opset_import]
        lines += _nodes(f.node)
        lines.append("}")
    return lines


def _nodes(nodes) -> list[str]:
    out = []
    for n in nodes:
        out += ["  " + line.strip() if i == 0 else line.rstrip()
                for i, line in enumerate(onnx.printer.to_text(n).strip("\n").splitlines())]
    return out


def unified(path: str, before: list[str], after: list[str]) -> str:
    """A unified diff of two text forms, two lines of context."""
    return "\n".join(difflib.unified_diff(before, after, f"{path}", f"{path} (fixed)", n=2, lineterm=""))
