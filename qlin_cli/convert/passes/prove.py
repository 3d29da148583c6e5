"""Prove every planned rewrite bit for bit on probe inputs: Q/DQ nodes with qlin's
evaluator (convert/verify.py), other ops with onnx.reference (convert/ops/prove.py)."""

from __future__ import annotations

from .. import verify
from ..state import Context, PassResult, Refused
from .other_ops import OpCase, prove_case


class Prove:
    name = "prove"

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        cases = [r for r in ctx.rewrites if r.case is not None]
        for i, r in enumerate(cases):
            if isinstance(r.case, OpCase):
                if not ctx.opts.verify and r.case.exact:
                    continue
                ok, why = prove_case(r.case)
                r.entry.verified = ok
                if not ok and why is None:
                    r.entry.changes.append("not proven: no probe runs in onnx.reference")
            else:
                if not ctx.opts.verify:
                    continue
                why = verify.prove(r.case)
                r.entry.verified = why is None
                why = None if why is None else f"the proof failed: {why}"
            if why is not None:
                result.refusals.append(Refused(r.entry.where, r.entry.op, why))
            if ctx.progress:
                ctx.progress(i + 1, len(cases))
        return result
