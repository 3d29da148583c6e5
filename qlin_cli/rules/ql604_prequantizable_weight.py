from .. import schema
from ..schema import dtypes
from .base import INFO, ModelRule, Violation
from .base_qdq import of_family


class PrequantizableWeight(ModelRule):
    """
    ## What it checks
    For every QuantizeLinear (any domain) whose input is a constant float tensor
    (an initializer that is not also a graph input, or a Constant) and whose
    scale and zero point are constants too: that tensor could be stored already
    quantized, with only the DequantizeLinear left in the graph.

    ## Why is this bad?
    Nothing is wrong with the result, but the model stores the float weights (4x
    the bytes of int8, 8x of int4) and quantizes them again at every run, and
    runtimes that fold the pair at load time spend that time on every session.
    onnxruntime's quantizer writes this form only when asked to
    (AddQDQPairToWeight).

    ## Example
    ```
    QuantizeLinear(conv1_w: float initializer, s, zp) -> w_q
    DequantizeLinear(w_q, s, zp) -> w
    ```

    ## Fix
    Store `w_q` as an initializer of the quantized type (the QuantizeLinear's
    output, computed once) and remove the QuantizeLinear: `qlin convert MODEL
    --weights fold -o OUT` does it, checked bit for bit against onnx.reference.
    """

    code = "QL604"
    name = "prequantizable-weight"
    severity = INFO
    summary = "A QuantizeLinear of a constant float weight that could be stored quantized."

    def check_model(self, view):
        for body in view.bodies:
            for i, f in of_family(view, body, schema.LINEAR_QUANTIZE):
                if not f.present_at(0):
                    continue
                x = f.inputs[0]
                if x in body.graph_inputs:
                    continue
                tensor = body.scope.find_value(x)
                if tensor is None or _overridable(body, x):
                    continue
                if f.value(f.scale_index) is None:
                    continue
                zi = f.zero_point_index
                if f.present_at(zi) and f.value(zi) is None:
                    continue
                qt = f.quant_type or "quantized"
                shape = "[" + ", ".join(str(d) for d in tensor.dims) + "]"
                yield Violation(
                    f"quantizes the constant '{x}' ({dtypes.name_of(tensor.data_type)} {shape}) at every "
                    f"run: store it quantized ({qt}) as an initializer and keep only the DequantizeLinear",
                    at=view.node_site(body, i))


def _overridable(body, name: str) -> bool:
    """An outer graph's initializer that is also that graph's input can be fed."""
    b = body.parent
    while b is not None:
        if name in b.graph_inputs:
            return True
        b = b.parent
    return False
