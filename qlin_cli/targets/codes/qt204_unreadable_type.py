"""QT204 unreadable-type. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class UnreadableType(Code):
    """
    ## What it checks
    That every element type the model stores or declares (initializers, graph
    inputs, Q/DQ inputs and outputs) is one the target can read at all.

    ## Why is this bad?
    openvino's ONNX reader stops at the first tensor of a type it does not know
    ("Unsupported type"): the float8 fnuz types, int2/uint2 and the float6 types,
    even when only a zero point has that type.

    ## Example
    ```
    initializer zp: float8e4m3fnuz
    ```

    ## Fix
    Store the tensor in a type the target reads (the message lists it); no
    conversion changes element types.
    """

    code = "QT204"
    name = "unreadable-type"
    summary = "The model stores an element type the target cannot read."
