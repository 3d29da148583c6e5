"""QT410 output-type-ignored: the logic is here, each target's fact is its
``unreadable_types`` and ``ran_exactly`` (the release's probe of the node's
exact kind); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class OutputTypeIgnored(Code):
    """
    ## What it checks
    Quantize nodes whose output type the target cannot hold, in a release that still loads
    and runs them (its probe of the node's exact kind ran, tools/gen_target_data.py).

    ## Why is this bad?
    The QuantizeLinear page (version 21 and on): "output_dtype: The output data type. If
    not supplied, the output data type is inferred from y_zero_point data type (T3)", so
    the node's output is a float8e4m3fnuz tensor. openvino has no float8 fnuz type (its
    readers refuse such tensors, QT204), yet releases 2025.3 to 2026.3 load
    QuantizeLinear(output_dtype=float8e4m3fnuz, saturate=0) and write a uint8 output
    (measured in 2025.3.0: every code 0): the model runs and computes something else.

    ## Example
    ```
    QuantizeLinear-21(x: float, y_scale: float, output_dtype=float8e4m3fnuz, saturate=0)
    ```

    ## Fix
    Quantize to a type the target holds (float8e4m3fn or float8e5m2 for openvino).
    """

    code = "QT410"
    name = "output-type-ignored"
    severity = WARNING
    summary = "The target runs the node but cannot write the output type the model asks for."

    @staticmethod
    def check(target, site):
        from .. import nodes

        f = site.facts
        out = nodes.out_type(f)
        if out not in target.unreadable_types or not nodes.is_linear(f):
            return
        if any(t in target.unreadable_types for t in f.resolved_types if t != out):
            return  # an input it cannot read: QT204
        if target.ran_exactly(site):
            from ...schema import dtypes

            held = [t for t in sorted(dtypes.SATURATE_APPLIES) if t not in target.unreadable_types]
            release = f"release {target.versions[0]}" if target.versions else "the release"
            yield target.finding(
                "QT410",
                f"{release} runs the node (its probe ran) but has no {out} type: the output is of "
                "another type",
                fix=f"quantize to {' or '.join(held)}" if out in dtypes.SATURATE_APPLIES and held
                else "quantize to a type the target holds",
            )
