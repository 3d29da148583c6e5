from onnx import AttributeProto

from .base import Rule


class AttributeType(Rule):
    """
    ## What it checks
    That every attribute the schema defines carries an integer (`axis`,
    `block_size`, `output_dtype`, `precision` and `saturate` are all INT).

    ## Why is this bad?
    An attribute of the wrong type is rejected by onnx.checker and onnxruntime,
    and tools that read it may silently fall back to the default.

    ## Example
    ```
    QuantizeLinear(x, s, zp, axis=1.0)    # FLOAT, not INT
    ```

    ## Fix
    Write the attribute as an integer.
    """

    code = "QL105"
    name = "attribute-type"
    summary = "Attribute defined by the schema but not of type INT."

    def check(self, n):
        for name, kind in n.attr_types.items():
            if name in n.spec.attributes and kind != AttributeProto.INT and name not in n.refs:
                yield (
                    f"attribute '{name}' is of type {AttributeProto.AttributeType.Name(kind)}; it "
                    f"must be INT: write it as an integer"
                )
