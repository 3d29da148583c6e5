"""Prove every planned Q/DQ rewrite bit for bit on probe inputs (convert/verify.py)."""

from __future__ import annotations

from .. import verify
from ..state import Context, PassResult, Refused


class Prove:
    name = "prove"

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        if not ctx.opts.verify:
            return result
        cases = [r for r in ctx.rewrites if r.case is not None]
        for i, r in enumerate(cases):
            why = verify.prove(r.case)
            if why is None:
                r.entry.verified = True
            else:
                result.refusals.append(Refused(r.entry.where, r.entry.op, f"the proof failed: {why}"))
            if ctx.progress:
                ctx.progress(i + 1, len(cases))
        return result
