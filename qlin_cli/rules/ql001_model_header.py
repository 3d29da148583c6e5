import onnx

from .base import ModelRule, Violation


class ModelHeader(ModelRule):
    """
    ## What it checks
    The fields of the model itself that onnx.checker requires: an `ir_version`,
    one onnx knows; opset imports exactly when the IR has them (IR 3 and later);
    opset versions that fit a 32-bit integer; metadata keys without repeats.

    ## Why is this bad?
    Versioning.md: "the `ModelProto.ir_version` property MUST be present in every
    model"; onnx.proto: "All ModelProtos MUST have at least one entry that specifies
    which version of the ONNX OperatorSet is being imported" (from IR 3, when opset
    imports came).
    A file without them cannot be read as any version: onnx.checker rejects it,
    and runtimes refuse to load it. onnx.checker also rejects metadata_props with
    a key twice ("Your model has duplicate keys in metadata_props").

    ## Example
    ```
    ir_version: 0
    opset_import: []
    ```

    ## Fix
    Set `ir_version` to the version the file was written for (`qlin convert`
    writes the lowest one its content needs) and import the ai.onnx opset its
    nodes were written for.
    """

    code = "QL001"
    name = "model-header"
    summary = "The model lacks an IR version or opset imports, or repeats a metadata key."

    def check_model(self, view):
        model = view.model
        here = view.site("main", "model", "model")
        ir = model.ir_version
        if not ir:
            yield Violation("the model declares no ir_version (IR.md: it MUST be present)", at=here)
        elif ir > onnx.IR_VERSION:
            yield Violation(f"ir_version {ir} is newer than any IR onnx {onnx.__version__} knows "
                            f"(newest: {onnx.IR_VERSION})", at=here)
        if ir >= 3 and not model.opset_import:
            yield Violation("the model imports no opset: from IR 3 on it must import the ai.onnx "
                            "opset its nodes were written for", at=here)
        elif 0 < ir < 3 and model.opset_import:
            yield Violation(f"IR {ir} has no opset imports; the model has {len(model.opset_import)}",
                            at=here)
        for o in model.opset_import:
            if not -2**31 <= o.version < 2**31:
                yield Violation(f"opset import version {o.version} does not fit a 32-bit integer", at=here)
        keys = [e.key for e in model.metadata_props]
        for key in sorted({k for k in keys if keys.count(k) > 1}):
            yield Violation(f"metadata_props has the key {key!r} more than once", at=here)
