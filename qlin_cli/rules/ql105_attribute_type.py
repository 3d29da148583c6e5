from onnx import AttributeProto

from .base import Rule, op_title


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
        for name, a in n.attrs.items():
            if name in n.spec.attributes and a.type != AttributeProto.INT:
                kind = AttributeProto.AttributeType.Name(a.type)
                yield (
                    f"node {n.where} ({op_title(n)}) has attribute '{name}' of type {kind}; it "
                    f"must be INT: write it as an integer"
                )
