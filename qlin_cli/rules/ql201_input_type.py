from ..schema import semantics
from .base import Rule, raise_hint


class InputType(Rule):
    """
    ## What it checks
    That x, the scale and the zero point have types the op's version and domain
    allow. The allowed sets grow with the version: bfloat16/float16 x from
    ai.onnx 19, int16/uint16/int4/uint4 from 21, float4e2m1 from 23, float8e8m0
    scales from 24, int2/uint2 from 25; com.microsoft takes float/float16 x and
    int8..uint16/int4/uint4 zero points; com.amd.quark takes float x and scale.

    ## Why is this bad?
    No runtime has a kernel for a type outside the schema: the model fails to
    load, or a runtime that does not check computes garbage.

    ## Example
    ```
    opset 19: QuantizeLinear(x: float, s: float, zp: int4)     # int4 needs 21
    ```

    ## Fix
    Raise the opset to one that allows the type (the message names it), move
    the node to a domain that has it (`qlin convert --to-domain`), or change
    the type.
    """

    code = "QL201"
    name = "input-type"
    summary = "x, scale or zero point has a type the version/domain does not allow."

    def check(self, n):
        for p in n.problems():
            if p.kind != semantics.INPUT_TYPE:
                continue
            i, t = p.index, p.value
            hint = raise_hint(n, lambda s, i=i, t=t: i < len(s.inputs) and t in s.allowed(s.inputs[i]),
                              "change the type")
            if hint != "change the type":
                hint += ", or change the type"
            named = p.text.replace(f"'{p.subject}' is", f"'{p.subject}' ('{n.input_name(i)}') is", 1)
            yield f"{named}: {hint}"
