from .. import schema
from ..schema import ir
from .base import INFO, Fix, ModelRule, SetIrVersion, Violation


class OpsetNeedsNewerIr(ModelRule):
    """
    ## What it checks
    That the model's `ir_version` is at least the IR version released with the
    ai.onnx opset it imports (onnx's release table, `onnx.helper.VERSION_TABLE`:
    opset 13 came with IR 7, opset 19 with IR 9, opset 21 with IR 10 ...).

    ## Why is this bad?
    It is not an error, and not a warning either. onnx's Versioning.md says the
    IR version and the operator set versions are "distinct and largely
    independent": an IR version names the file format, an opset the operators,
    and no sentence of IR.md or Versioning.md ties an opset to a minimum IR.
    onnx.checker accepts such files, and so does onnxruntime (onnxruntime's own
    16-bit QDQ output writes opset 21 at IR 7 and 8; AIMET writes opset 19 and 21
    at IR 8). So the finding is an info, for the one thing it tells: a runtime
    that decides from the IR version whether it reads a file (one made for IR 7)
    accepts it, then meets an opset it has never heard of instead of saying the
    file is too new. A type the IR does not have (int4 at IR 9) is an error, of
    QL205, because IR.md lists each type with the IR version that added it.

    ## Example
    ```
    ir_version: 7
    opset_import: [{domain: "", version: 21}]
    ```

    ## Fix
    Raise `ir_version` to the version the message names (the finding carries
    that edit).
    """

    code = "QL206"
    name = "opset-needs-newer-ir"
    severity = INFO
    summary = "The ai.onnx opset imported is newer than the model's IR version."

    fixable = True

    def check_model(self, view):
        model = view.model
        opset = schema.opset_of({o.domain: o.version for o in model.opset_import}, schema.AI_ONNX)
        if opset is None:
            return
        try:
            need = ir.ir_for_opset(opset)
        except ValueError:
            return  # an opset newer than onnx knows: nothing to compare with
        if need <= model.ir_version:
            return
        yield Violation(
            f"ai.onnx opset {opset} came with IR {need} but the model declares IR {model.ir_version}: "
            f"set ir_version to {need} or later",
            Fix(f"set ir_version to {need}", (SetIrVersion(need),)),
            at=view.site("main", "opset_import ai.onnx", f"opset import ai.onnx {opset}",
                         schema.AI_ONNX, opset))
