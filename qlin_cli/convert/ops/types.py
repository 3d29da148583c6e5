"""Whether a node's actual types are allowed by an onnx.defs schema, position by position."""

from __future__ import annotations

from ..opsteps import formal_inputs, formal_outputs


def _bind(formals, actual: list[str | None]):
    """(formal, actual type) pairs: the last variadic formal takes every remaining value."""
    for i, t in enumerate(actual):
        if not formals:
            return
        f = formals[i] if i < len(formals) else (formals[-1] if formals[-1].option == "variadic" else None)
        if f is None:
            return
        yield f, t


def type_problems(schema, in_types: list[str | None], in_present: list[bool],
                  out_types: list[str | None], source=None) -> list[str]:
    """Why the node's types do not fit ``schema`` (empty: they fit). An unknown type fits
    only when every type ``source`` (the schema the node had) allows, the target allows."""
    why: list[str] = []
    bound: dict[str, str] = {}
    src_in = formal_inputs(source) if source is not None else []
    src_out = formal_outputs(source) if source is not None else []
    for kind, formals, src, types, present in (
            ("input", formal_inputs(schema), src_in, in_types, in_present),
            ("output", formal_outputs(schema), src_out, out_types, [True] * len(out_types))):
        for i, (f, t) in enumerate(_bind(formals, types)):
            if not present[i]:
                continue
            if t is None:
                s = src[i] if i < len(src) else (src[-1] if src and src[-1].option == "variadic" else None)
                if s is None or not s.types <= f.types:
                    why.append(f"the type of {kind} {i} ({f.name}) is unknown and the target "
                               f"allows fewer types")
                continue
            full = f"tensor({t})"
            if full not in f.types and t not in f.types:
                allowed = ", ".join(sorted(x[7:-1] if x.startswith("tensor(") else x for x in f.types))
                why.append(f"{kind} {i} ({f.name}) is {t}, which the target does not allow "
                           f"(allowed: {allowed})")
                continue
            if not f.type_str.startswith("tensor(") and len(f.types) > 1:
                other = bound.setdefault(f.type_str, t)
                if other != t:
                    why.append(f"{kind} {i} ({f.name}) is {t} but another {f.type_str} is {other}")
    return why
