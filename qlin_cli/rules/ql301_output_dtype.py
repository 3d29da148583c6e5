from ..schema import dtypes
from .base import Rule, fmt_types


class OutputDtype(Rule):
    """
    ## What it checks
    That a non-zero `output_dtype` names a type the op can produce; that a
    DequantizeLinear without it does not take an output type it cannot produce
    from its scale ("If output_dtype is not supplied then the output type is the
    same as x_scale", so a float8e8m0 scale needs `output_dtype`); and for
    QuantizeLinear that it equals the zero point's type when both are given
    ("If both output_dtype and y_zero_point are specified, output_dtype must be
    T3").

    ## Why is this bad?
    The output type is ambiguous or impossible: runtimes refuse the node, and
    onnx.reference raises "Mismatched output data-types" at run time.

    ## Example
    ```
    QuantizeLinear(x, s, zp: uint8, output_dtype=INT8)
    ```

    ## Fix
    Drop `output_dtype` and let the zero point decide, or make the zero point
    the same type.
    """

    code = "QL301"
    name = "output-dtype"
    summary = "output_dtype names an illegal type or disagrees with the zero point."

    def check(self, n):
        spec = n.spec
        if "output_dtype" not in spec.attributes:
            return
        od = n.attr_int("output_dtype")
        allowed = spec.allowed(spec.outputs[0])
        if not od:
            implied = n.implied_out_type
            if spec.kind == "dequantize" and implied is not None and implied not in allowed:
                yield (
                    f"no output_dtype, so its output takes the scale's type {implied}, which it "
                    f"cannot produce (allowed: {fmt_types(allowed)}): set output_dtype"
                )
            return
        name = dtypes.name_of(od)
        if name not in allowed:
            yield (
                f"output_dtype {od} ({name}) is a type it cannot produce (allowed: "
                f"{fmt_types(allowed)}): choose one of those"
            )
            return
        zp = n.zero_point_index
        if spec.kind == "quantize" and n.present_at(zp):
            zt = n.in_type(zp)
            if zt is not None and zt != name:
                yield (
                    f"output_dtype {name} but its zero point '{n.input_name(zp)}' is {zt}; they "
                    f"must be equal: drop output_dtype or make the zero point {name}"
                )
