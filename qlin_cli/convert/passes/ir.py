"""Choose the IR version: the user's, or the lowest that carries the opsets, every
element type stored and every feature used (schema/ir.py)."""

from __future__ import annotations

import onnx

from ...errors import QlinError
from ...model.graphs import bodies
from ...schema import dtypes, ir
from ..state import Context, PassResult


def types_used(model: onnx.ModelProto, found_bodies: list | None = None) -> set[str]:
    """The element types the model stores or declares (``found_bodies``: ``bodies(model)``,
    when the caller walked them already)."""
    found: set[str] = set()
    for b in bodies(model) if found_bodies is None else found_bodies:
        g = b.owner
        if isinstance(g, onnx.GraphProto):
            found.update(map(dtypes.name_of, {t.data_type for t in g.initializer}))
            for v in (*g.input, *g.output, *g.value_info):
                if v.type.HasField("tensor_type"):
                    found.add(dtypes.name_of(v.type.tensor_type.elem_type))
        if not b.may_hold(onnx.AttributeProto.TENSOR):
            continue  # no node of the body has a tensor attribute (the walk saw each one's)
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    found.add(dtypes.name_of(a.t.data_type))
    return found


def has_node_metadata(model: onnx.ModelProto, found_bodies: list | None = None) -> bool:
    return any(len(n.metadata_props) for b in (bodies(model) if found_bodies is None else found_bodies)
               for n in b.owner.node)


class ChooseIR:
    name = "ir"
    requires = ("imports",)
    ensures = ("ir version",)

    def __call__(self, ctx: Context) -> PassResult:
        model = ctx.model
        opsets = {o.domain or "": o.version for o in model.opset_import}
        before = model.ir_version
        walked = list(bodies(model))
        used = types_used(model, walked)
        need = ir.ir_needed(opsets, used, bool(model.functions), False)
        if need < ir.NODE_METADATA_MIN_IR:  # (else the nodes' metadata cannot raise it: not looked for)
            need = ir.ir_needed(opsets, used, bool(model.functions), has_node_metadata(model, walked))
        asked = ctx.opts.ir_version
        if asked is not None and asked < need:
            raise QlinError("--ir-version", f"{asked} cannot carry the result: it needs IR {need} or "
                                            f"later ({ir.why_needed(opsets, used, need)})")
        model.ir_version = asked or need
        return PassResult(modified=model.ir_version != before)
