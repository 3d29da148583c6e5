from .base import ModelRule, Violation


class ExternalData(ModelRule):
    """
    ## What it checks
    That every tensor stored outside the model file can be read: its `location`
    names a file inside the model's folder (no absolute path, no `..` out of it, no
    link leading elsewhere), the file exists and is readable, and holds the
    `offset` + `length` bytes the tensor's dims and type need.

    ## Why is this bad?
    onnx.proto (TensorProto.external_data): "location" (required) is a "POSIX
    filesystem path relative to the directory where the ONNX protobuf model was
    stored", and the bytes at offset and length are the tensor's raw data. A missing or short file leaves the
    tensor without a value: onnx.checker rejects the model ("should be stored in
    ..., but it doesn't exist or is not accessible") and runtimes fail to load it.
    A path leaving the folder is refused by the checker and by qlin, which reads
    nothing there.

    ## Example
    ```
    initializer w: data_location EXTERNAL, location "weights.bin" (no such file)
    ```

    ## Fix
    Ship the data file beside the model, or re-save the model with its weights
    (onnx.save_model(..., save_as_external_data=True) writes both).
    """

    code = "QL008"
    name = "external-data"
    summary = "A tensor stored outside the model file whose data cannot be read."

    def check_model(self, view):
        problems = getattr(view, "external_problems", ())
        if not problems:
            return
        where = {}
        for body in view.graphs():
            for t in body.owner.initializer:
                where.setdefault(t.name, body.path)
        for name, why in problems:
            path = where.get(name, "main")
            yield Violation(why, at=view.site(path, name, f"tensor {name!r}"))
