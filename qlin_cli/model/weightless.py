"""The bytes shape inference reads, without the weights no op's inference reads.

onnx's shape inference parses the model it is given into C++ messages, infers, and
serializes the result back: every byte of inline weights is copied four times (in, the
C++ model, out, and the Python bytes of the result). On a 50,000-node model with 13 MB of
weights that was 37 MB of the check's peak memory and 10% of the inference's time.

Which data inference reads: an op's inference reads an input's values only where they
decide an output's shape (Reshape's shape, Slice's starts, Pad's pads, a Reduce's axes,
TopK's k ...), each a 1-D tensor or a scalar by its operator page; and only of the ops
listed in ``SHAPE_ONLY`` is it known that they read none. So a tensor goes without its
data when it has two or more dims, lies in the file (not external, nothing to leave out)
and every node that reads it, in any graph, is of an op of that list. A model with
model-local functions keeps everything (a function body reads its caller's names under
other names). Where a node of another op reads a weight, that weight keeps its data.
"""

from __future__ import annotations

import onnx

from ..schema import AI_ONNX, normalize_domain
from .graphs import all_nodes
from .tensors import census, element_count

# ai.onnx ops whose shape inference reads their inputs' types and shapes, never values
SHAPE_ONLY = frozenset({
    "DequantizeLinear", "QuantizeLinear", "MatMul", "Gemm", "Conv", "ConvTranspose",
    "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "Gather", "Add", "Mul",
})
# below this many bytes of such weights, the model goes as it is (nothing worth a pass)
WORTH_BYTES = 2**20


def without_weights(model: onnx.ModelProto, data: bytes) -> bytes | None:
    """``data`` (``model`` serialized) with the raw data of the main graph's weights that no
    op's inference reads left out (see the module's text); None when there are not
    WORTH_BYTES of them, or the bytes cannot be read so. ``model`` is read, not changed."""
    if len(model.functions) or not model.HasField("graph"):
        return None
    c = census(model.graph)
    outside = set(c.external)
    sizes = {typed: _bytes(*typed) for typed in set(c.typed)}
    wanted = [i for i, typed in enumerate(c.typed) if sizes[typed] and i not in outside]
    if sum(sizes[c.typed[i]] for i in wanted) < WORTH_BYTES:
        return None
    read = set()  # names some node of another op reads
    for node in all_nodes(model):
        if node.op_type not in SHAPE_ONLY or normalize_domain(node.domain) != AI_ONNX:
            read.update(node.input)
    cls = _reader()
    if cls is None:
        return None
    try:
        light = cls.FromString(data)
        tensors = light.graph.initializer
        if len(tensors) != len(c.typed):
            return None
        for i in wanted:
            t = tensors[i]
            if t.name not in read:
                t.ClearField("raw_data")
        return light.SerializeToString()
    except Exception:  # inference is a help: the model goes as it is
        return None


def _bytes(data_type: int, dims: tuple) -> int:
    """The bytes of a tensor of two or more non-negative dims of a type of whole bytes,
    else 0 (a tensor that keeps its data)."""
    bits = _BITS.get(data_type)
    if bits is None or bits % 8 or len(dims) < 2 or min(dims) < 0:
        return 0
    return element_count(dims) * bits // 8  # (saturating: dims a hostile file gives stay cheap)


def _reader():
    """A message class that reads a serialized ModelProto as its main graph's initializers,
    each as its name and raw data (field numbers from onnx.proto); every other field is
    kept as the bytes it was and written back so."""
    from .partial import reader

    return reader("qlin_weightless", (
        ("Tensor", (("name", 8, "string", False), ("raw_data", 9, "bytes", False))),
        ("Graph", (("initializer", 5, "Tensor", True),)),
        ("Model", (("graph", 7, "Graph", False),)),
    ))


def _bits() -> dict[int, int]:
    from ..schema import dtypes

    return {proto: d.bits for proto, d in dtypes.BY_PROTO.items()}


_BITS = _bits()
