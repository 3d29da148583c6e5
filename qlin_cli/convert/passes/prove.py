"""Prove every planned rewrite bit for bit on probe inputs: Q/DQ nodes with qlin's
evaluator (convert/verify.py), other ops with onnx.reference (convert/ops/prove.py)."""

from __future__ import annotations

from .. import verify
from ..entries import refused
from ..formats.measure import CannotMeasure, FormatCase, measure_all
from ..formats.nbits_proof import NBitsCase, prove_all
from ..state import Context, PassResult
from .other_ops import OpCase, prove_case


def _shape_of(case) -> tuple:
    """What a Q/DQ proof depends on, names left out: the node's facts (its values
    included), the rewrite's ops and attributes, the opsets and the constants it adds.
    Equal keys give the same verdict, so each distinct one is proven once."""
    after = tuple((n.op_type, n.domain, tuple(a.SerializeToString() for a in n.attribute),
                   tuple(bool(i) for i in n.input)) for n in case.after)
    added = tuple(sorted((v.dtype.str, v.shape, v.tobytes()) for v in case.added.values()))
    return (case.q.facts, after, tuple(sorted(case.after_opsets.items())), added)


def _measured(r, m, tolerance: int) -> str | None:
    """A format rewrite and its measurement ``m`` (never a proof: convert/formats/measure.py;
    a CannotMeasure when there is none): the refusal reason when it differs beyond
    ``tolerance`` or cannot be measured."""
    if isinstance(m, CannotMeasure):
        return f"its QDQ form cannot be measured: {m}"
    r.entry.measured = m
    r.entry.changes.append(f"measured: {m.text()}")
    if m.steps > tolerance:
        return (f"its QDQ form differs by up to {m.steps} step{'s' if m.steps > 1 else ''} of the "
                f"output on {m.differ:,} of {m.outputs:,} measured outputs ({', '.join(m.engines)}); "
                f"--tolerance {m.steps} allows it")
    return None


class Prove:
    name = "prove"
    requires = ("readings agree",)
    ensures = ("proven",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        seen: dict[tuple, str | None] = {}
        cases = [r for r in ctx.rewrites if r.case is not None]
        formats = [r for r in cases if isinstance(r.case, FormatCase)]
        measured = dict(zip(map(id, formats), measure_all([r.case for r in formats]), strict=True))
        weights = [r for r in cases if isinstance(r.case, NBitsCase)]
        proofs = dict(zip(map(id, weights), prove_all([r.case for r in weights]), strict=True))
        for i, r in enumerate(cases):
            if isinstance(r.case, FormatCase):
                why = _measured(r, measured[id(r)], ctx.opts.tolerance)
            elif isinstance(r.case, NBitsCase):
                why = proofs[id(r)]
                r.entry.verified = why is None
                if why is None:
                    r.entry.changes.append("the dequantized weights proven bit for bit (qlin's evaluator)")
                why = None if why is None else f"the proof failed: {why}"
            elif isinstance(r.case, OpCase):
                if not ctx.opts.verify and r.case.exact:
                    continue
                ok, why = prove_case(r.case)
                r.entry.verified = ok
                if not ok and why is None:
                    r.entry.changes.append("not proven: no probe runs in onnx.reference")
            else:
                if not ctx.opts.verify:
                    continue
                key = _shape_of(r.case)
                if key not in seen:
                    seen[key] = verify.prove(r.case)
                why = seen[key]
                r.entry.verified = why is None
                why = None if why is None else f"the proof failed: {why}"
            if why is not None and isinstance(r.case, FormatCase):
                result.refusals.append(refused(r.site, "QC402", why))
            elif why is not None:
                result.refusals.append(refused(r.site, "QC401", why))
            if ctx.progress:
                ctx.progress(i + 1, len(cases))
        return result
