from .base import FamilyRule, attr_value


class OpAttributeValue(FamilyRule):
    """
    ## What it checks
    For the quantization ops beyond QuantizeLinear / DequantizeLinear: that the
    attribute values in force (given, or the default) are ones the op's
    documentation allows: MatMulNBits `bits` in {2, 4, 8}, `block_size` a power
    of two >= 16, `accuracy_level` 0 to 4; GatherBlockQuantized `bits`,
    `block_size` and both axes; QLinearConv / ConvInteger `group` >= 1 and
    `auto_pad`; DynamicQuantizeLSTM `direction`; QLinearSoftmax and QLinearConcat
    `axis` within the input's rank; Quark BFPQuantizeDequantize `bfp_method`,
    `rounding_mode` and `axis` (in [-r, r-1], not read for rank-1 inputs).

    ## Why is this bad?
    Kernels are written for the documented values only: other values are
    refused when the session is created, or silently compute something else
    (a MatMulNBits block size that is not a power of two has no kernel).

    ## Example
    ```
    com.microsoft.MatMulNBits(A, B, scales, K=64, N=64, bits=3, block_size=32)
    ```

    ## Fix
    Use a documented value (the message quotes the documentation); for packed
    weights that means quantizing again with supported settings.
    """

    code = "QL305"
    name = "op-attribute-value"
    summary = "An attribute value outside what the op's documentation allows."

    def check(self, n):
        for c in n.spec.constraints:
            value = attr_value(n, c.attribute)
            if value is None or isinstance(value, list):
                continue
            how = "" if n.has(c.attribute) else " (the default)"
            head = f"attribute '{c.attribute}' is {value!r}{how}"
            bad = _broken(c, value, n)
            if bad:
                yield f"{head}; {bad} (documented: {c.source}): use a documented value"


def _pow2(v) -> bool:
    return isinstance(v, int) and v > 0 and v & (v - 1) == 0


def _broken(c, v, n) -> str | None:
    if c.kind == "one-of":
        return None if v in c.arg else "the op takes " + ", ".join(repr(a) for a in c.arg)
    if not isinstance(v, int):
        return None
    if c.kind == "min":
        return None if v >= c.arg else f"it must be at least {c.arg}"
    if c.kind == "pow2-min":
        return None if v >= c.arg and _pow2(v) else f"it must be a power of two >= {c.arg}"
    if c.kind == "pow2-min-or-0":
        return None if v == 0 or (v >= c.arg and _pow2(v)) else f"it must be 0 or a power of two >= {c.arg}"
    if c.kind in ("axis", "axis-unless-rank-1"):
        i = c.arg if c.arg >= 0 else len(n.present) + c.arg
        r = n.in_rank(i)
        if r is None or (c.kind == "axis-unless-rank-1" and r == 1):
            return None
        if -r <= v <= r - 1:
            return None
        return f"it is outside [{-r}, {r - 1}] for input '{n.input_name(i)}' of rank {r}"
    return None
