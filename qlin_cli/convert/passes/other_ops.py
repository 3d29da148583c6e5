"""Plan every other ai.onnx node whose schema differs between the two opsets."""

from __future__ import annotations

from ... import schema
from .. import other_ops
from ..state import Context, Entry, PassResult, Refused, Rewrite
from .common import op_label, where


class PlanOtherOps:
    name = "other-ops"

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        to = ctx.opts.to_opset
        for site in ctx.sites:
            node = site.node
            if schema.normalize_domain(node.domain) != schema.AI_ONNX or schema.is_known_op(
                    node.domain, node.op_type):
                continue
            src = schema.opset_of(site.scope.opsets, schema.AI_ONNX)
            if src is None or src == to or not other_ops.needs_conversion(node.op_type, src, to):
                continue
            w, op = where(site), op_label(site)
            try:
                nodes = other_ops.convert_node(site, w, src, to, ctx.namer, ctx.source_ir)
            except other_ops.OpNotConvertible as e:
                result.refusals.append(Refused(w, op, str(e)))
                continue
            ctx.rewrites.append(Rewrite(site, nodes, [], Entry(
                w, op, "other-op", [f"onnx.version_converter {src} -> {to}"])))
        return result
