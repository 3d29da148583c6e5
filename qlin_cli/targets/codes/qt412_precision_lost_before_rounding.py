"""QT412 precision-lost-before-rounding: the logic is here, each target's fact is its
``arithmetic("near ties <type>", site)`` (the release's near-ties probes); docs/targets.md
lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class PrecisionLostBeforeRounding(Code):
    """
    ## What it checks
    Quantize nodes to int16 or uint16 on a target release that rounds x / y_scale after
    adding 32768 to it in float32, as that release's near-ties probe of the node's kind
    measured it.

    ## Why is this bad?
    QuantizeLinear's page: "For (x / y_scale), it’s rounding to the nearest even.": the
    quotient itself is rounded, then the zero point added ("y = saturate ((x / y_scale) +
    y_zero_point)"). A runtime that adds 32768 first (openvino quantizes through a
    FakeQuantize: x * 65535 / (its input range, 65535 * y_scale) + 32768 for int16 with
    zero point 0, or uint16 with zero point 32768) holds the sum in float32, which keeps 8
    fraction bits from 32768 up: a quotient within 1/512 of a tie lands on the tie and
    rounds to even. 17 / 0.33663276 = 50.500137 gives 50 where the page gives 51 (36 of
    26,000 normally distributed float values, int16 with zero point 0). Measured per release
    by near-ties probes (tools/probe_quantize.py: float32 and int32 x, a float32 scale,
    int16 and uint16 outputs): openvino 2026.4.1 at every version, x type and granularity
    probed (measured by hand, not yet in its data); onnxruntime 1.31.1 rounds as the page.
    8-bit outputs keep 16 or more fraction bits there (the near-ties probes quantize to
    16-bit types only).

    ## Example
    ```
    QuantizeLinear-21(x: float, y_scale: float = 0.33663276, y_zero_point: int16 = 0)
    ```

    ## Fix
    Accept a one-step difference on quotients that close to a tie, or quantize to 8 bits
    where bit-exact results matter.
    """

    code = "QT412"
    name = "precision-lost-before-rounding"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target adds 32768 to a 16-bit quotient in float32 before rounding it."

    @staticmethod
    def check(target, site):
        from .. import nodes, probe_keys

        q = nodes.quant_type(site.facts)
        if q not in ("int16", "uint16") or nodes.kind(site.facts) != nodes.QUANTIZE:
            return
        found = target.arithmetic(f"{probe_keys.NEAR_TIES} {q}", site)
        said = None if found is None else found.differs
        if said is None:
            return
        if said == probe_keys.OFFSET_FIRST:
            fact = ("x / y_scale is rounded after 32768 is added to it in float32, which keeps 8 of its "
                    f"fraction bits: quotients within 1/512 of a tie round to even ({q}: 17 / 0.33663276 = "
                    "50.500137 gives 50 where the page gives 51)")
        else:
            fact = (f"x / y_scale is rounded otherwise than the page near ties ({q}: of 17 / 0.33663276 = "
                    f"50.500137 and 5 other quotients within 1/512 of a tie, the release's probe {said})")
        yield target.finding("QT412", fact,
                             fix="accept a one-step difference near ties, or quantize to 8 bits where "
                                 "bit-exact results matter")
