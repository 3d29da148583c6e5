"""QC301 function-rewrites-differ, refused by the unify pass (convert/passes/unify.py)."""

from __future__ import annotations

from ...code import Code


class FunctionRewritesDiffer(Code):
    """
    ## What it checks
    That a node in a model-local function gets the same rewrite from every call:
    qlin reads a function's body once per call signature (the types a call passes),
    and a body has only one text.

    ## Why is this bad?
    IR.md: a function's body is a list of nodes "that define the function"; it is
    one body for every call. When two calls type the body differently and the node
    needs a different rewrite for each (a zero point of another type, say), no one
    body is right for both: writing either would change what the other call computes.

    ## Example
    ```
    local.Quant(x: float) and local.Quant(x: float16), both calling
    QuantizeLinear(x, s, z) inside, converted to an opset that needs z's type written
    ```

    ## Fix
    Give each call signature its own function (copy the function under a second
    name), or inline the function before converting.
    """

    code = "QC301"
    name = "function-rewrites-differ"
    summary = "A function's calls need different rewrites of the same node."
