from itertools import compress

import numpy as np

from .. import schema
from ..model.facts import shared_with
from ..model.tensors import UnsafeData, read_value
from ..schema import dtypes
from ..schema.ops import INT8S
from .base import WARNING, ModelRule, Violation
from .base_numeric import INT32_MAX, by_channel, constant_array, constant_tensor, farthest, g3, span
from .base_qdq import zero_point_of

# The integer ops: (x's input, x's zero point, w's input, w's zero point) by op; a missing
# zero point is 0
INTEGER_OPS = {
    "MatMulInteger": (0, 2, 1, 3),
    "ConvInteger": (0, 2, 1, 3),
    "QLinearMatMul": (0, 2, 3, 5),
    "QLinearConv": (0, 2, 3, 5),
}
CONV_OPS = ("Conv", "ConvInteger", "QLinearConv")  # a weight of one row per output channel (axis 0)
QDQ_OPS = ("Conv", "MatMul", "Gemm")  # the float ops onnxruntime fuses into the ops above
READ = set(INTEGER_OPS) | set(QDQ_OPS)
EIGHT_BIT = INT8S  # x's types QLinearConv and QLinearMatMul take (T1)


class AccumulatorOverflow(ModelRule):
    """
    ## What it checks
    For every MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv, and every
    Conv, MatMul and Gemm whose input and weight come from DequantizeLinear nodes of
    8-bit integers (the groups a runtime runs as those integer ops), with constant
    weights and a single input zero point: that the largest sum one output can
    reach stays within int32. For output channel c that is

        max |x_q - x_zp| x sum over k of |w_q[k, c] - w_zp[c]|

    with max |x_q - x_zp| the farthest end of x's type from its zero point (255 for
    uint8 with zero point 0, 128 for int8 with 0): the exact worst case over every
    input, from the weights themselves (not K x the largest weight).

    ## Why is this bad?
    "The production MUST never overflow. The accumulation may overflow if and only
    if in 32 bits." (MatMulInteger, ConvInteger; QLinearMatMul: "Production must
    never overflow, and accumulation may overflow if and only if in 32 bits.") The
    spec lets the sum of products wrap in int32: an input that drives the sum past
    2^31-1 gives a wrong output, in every conforming runtime, silently. QLinearConv
    adds an int32 bias "quantized using scale = x_scale * w_scale" to that same
    int32 sum. A DequantizeLinear -> Conv / MatMul / Gemm group of 8-bit types is
    computed in float by the spec, but onnxruntime runs it as QLinearConv or
    QLinearMatMul (docs/targets.md, QT501) and then accumulates in int32 too.

    ## Example
    ```
    MatMulInteger(a: uint8, zero point 0, b: int8 [40000, 1] all -128)
    # 255 x 40000 x 128 = 1.31e9 fits; with b [70000, 1]: 2.28e9 > 2^31-1
    ```

    ## Fix
    Split the reduction (two MatMuls over halves of K, added in float), or quantize
    the weights with a larger scale so their values sit farther from the ends of
    their type; an input zero point in the middle of its type's range halves the
    largest |x_q - x_zp|.
    """

    code = "QL506"
    name = "accumulator-overflow"
    severity = WARNING
    summary = "An integer MatMul/Conv (or its 8-bit QDQ group) whose int32 sum can overflow."

    def check_model(self, view):
        for body in view.bodies:
            # the (domain, op) kinds this rule reads, decided once per distinct kind
            read = {k for k in set(body.kinds)
                    if k[1] in READ and schema.normalize_domain(k[0]) == schema.AI_ONNX}
            if not read:
                continue
            # (op, transB, x's type, w's type and dims) -> whether K bounds every sum
            within: dict = {}
            # (op, id of x's DequantizeLinear shape of facts, id of w's) found clear (``_qdq``);
            # None where a pair of shapes cannot stand for its nodes (``_pairs``)
            clear: set | None = set() if _pairs(body) else None
            dequantized = view.of_family(body, schema.LINEAR_DEQUANTIZE)  # (``producer``'s map)
            kinds, io, nodes = body.kinds, body.io, body.nodes
            for i in compress(range(len(kinds)), map(read.__contains__, kinds)):  # (found at C speed)
                op = kinds[i][1]
                node = nodes[i]
                if op in INTEGER_OPS:
                    found = _integer(view, body, i, node)
                elif op in QDQ_OPS:
                    found = _qdq(view, body, node, op, io[i][0], within, dequantized, clear)
                else:
                    continue
                message = None if found is None else _message(view, node, *found)
                if message:
                    yield Violation(message, at=view.node_site(body, i))


def _integer(view, body, i: int, node):
    """(x's type, x's zero point, w, w's zero point) of an integer op, None when unknown."""
    xi, xz, wi, wz = INTEGER_OPS[node.op_type]
    if len(node.input) <= wi or not node.input[wi]:
        return None
    w = _integer_tensor(view, body, node.input[wi])
    if w is None:
        return None
    f = view.facts(body, i)
    zx = _optional(view, body, node, xz)
    x_type = f.in_type(xi) if f is not None else None
    if x_type is None and zx is not None and zx.dtype.kind in "iu":
        x_type = str(zx.dtype)  # (x and its zero point share a type)
    if x_type is None:
        return None
    zw = _optional(view, body, node, wz)
    zero = np.zeros(1, np.int64)
    return x_type, (zero if zx is None else zx), w, (zero if zw is None else zw)


def _optional(view, body, node, k: int):
    if len(node.input) <= k or not node.input[k]:
        return None
    return constant_array(view, body, node.input[k])


def _qdq(view, body, node, op: str, inputs: tuple, within: dict, dequantized: dict, clear: set | None):
    """The same for a float op (``op``: its type) whose x and w come from 8-bit DequantizeLinear
    nodes (``inputs``: the node's input names; ``within``: the shapes already known to stay within
    int32 whatever the values; ``dequantized``: the body's DequantizeLinear nodes by output,
    as ``producer`` reads them; ``clear``: the pairs of shapes found clear, None where the
    body's pairs cannot be keyed so: ``_pairs``)."""
    if len(inputs) < 2:
        return None
    px = dequantized.get(inputs[0])
    pw = dequantized.get(inputs[1])
    if px is None or pw is None:
        return None
    gemm = op == "Gemm"
    if gemm and any(a.name == "alpha" and a.f != 1.0 for a in node.attribute):
        return None
    fx, fw = px[1], pw[1]
    # what follows but the values reads the two DequantizeLinear nodes' shapes of facts, and
    # a MatMul's or Conv's op alone (a Gemm's attributes too): a pair of shapes found clear
    # whatever the values is clear for every node that reads it (a weight not constant: no
    # sum to bound, as below). (The weight's type and dims are its shape's where the scope is
    # the main graph's and no Constant takes an initializer's name: ``_pairs``.)
    pair = None
    if clear is not None and not gemm:
        pair = (op, id(shared_with(fx) or fx), id(shared_with(fw) or fw))
    if pair is not None and pair in clear:
        return None
    x_type = fx.in_type(0)
    if x_type not in EIGHT_BIT or fw.in_type(0) not in EIGHT_BIT or not fw.present_at(0):
        if pair is not None:
            clear.add(pair)
        return None
    w = _integer_tensor(view, body, fw.inputs[0])
    if w is not None:
        # (the type and dims of an initializer as the census read them: the tensor's own dims
        # read again would stay with it in memory)
        typed = body.scope.own_typed.get(fw.inputs[0]) or (w.data_type, tuple(w.dims))
        key = (op, gemm and _transposed(node), x_type, *typed)
        safe = within.get(key)
        if safe is None:
            k = _reduction(node, key[4])
            safe = within[key] = (k is not None and span(x_type) * k * span(dtypes.name_of(key[3]))
                                  <= INT32_MAX)
        if safe:
            if pair is not None:
                clear.add(pair)
            return None  # within int32 whatever the zero points and weights (none read)
    zx, zw = zero_point_of(fx), zero_point_of(fw)
    if w is None or zx is None or zw is None:
        return None
    return x_type, zx, w, zw


def _pairs(body) -> bool:
    """Whether ``_qdq`` may judge a MatMul or Conv by its pair of shapes of facts: the weight's
    type and dims then are those its DequantizeLinear's facts hold (walk.Scope.own_typed
    keeps every initializer's unless a Constant took its name; a subgraph reads outer names)."""
    scope = body.scope
    return scope.parent is None and len(scope.own_typed) == scope.initializers


def _integer_tensor(view, body, name: str):
    """The TensorProto of constant integer weights ``name``, its data not read yet."""
    t = constant_tensor(view, body, name)
    d = None if t is None else dtypes.BY_PROTO.get(t.data_type)
    return t if d is not None and d.kind == "int" else None


def _reduction(node, dims: tuple[int, ...]) -> int | None:
    """How many weights one output sums (the K of ``_sums``), from the weight's dims alone."""
    if node.op_type in CONV_OPS:
        return int(np.prod(dims[1:])) if len(dims) >= 2 else None
    if len(dims) < 2:
        return None
    return dims[-1] if _transposed(node) else dims[-2]


def _transposed(node) -> bool:
    """A Gemm whose weight is stored (N, K): transB set."""
    return node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute)


def _cannot_overflow(node, qx: int, wt, zw) -> bool:
    """Whether the bound holds whatever the weights are: qx x K x the farthest a weight of
    its type can be from its zero point, within int32 (then the weights are not read)."""
    k = _reduction(node, tuple(wt.dims))
    zs = np.asarray(zw, np.int64).reshape(-1)
    if k is None or zs.size == 0:
        return False
    kind = dtypes.name_of(wt.data_type)
    far = max(farthest(kind, int(zs.min())) or 0, farthest(kind, int(zs.max())) or 0)
    return far > 0 and qx * k * far <= INT32_MAX


def _sums(node, w: np.ndarray, zw: np.ndarray):
    """sum over the reduction of |w_q - w_zp| per output, as (sums, K), None when the
    weight's layout or zero point is not one this rule reads."""
    w = w.astype(np.int64)
    zw = np.asarray(zw, np.int64)
    if node.op_type in CONV_OPS:
        if w.ndim < 2 or zw.size not in (1, w.shape[0]):
            return None
        rows = by_channel(w, 0)
        d = np.abs(rows - zw.reshape(-1, 1))
        return d.sum(axis=1), rows.shape[1]
    if w.ndim < 2:
        return None
    if _transposed(node):
        w = w.T
    k, n = w.shape[-2], w.shape[-1]
    if zw.size == 1:
        z = zw.reshape(())
    elif zw.size == n:
        z = zw.reshape(-1)
    else:
        try:
            z = np.broadcast_to(zw, w.shape)
        except ValueError:
            return None
    d = np.abs(w - z)
    return d.sum(axis=-2).reshape(-1), k


def _message(view, node, x_type: str, zx, wt, zw) -> str | None:
    zx = np.asarray(zx).reshape(-1)
    if zx.size != 1:
        return None
    z = int(zx[0])
    qx = farthest(x_type, z)
    if qx is None or _cannot_overflow(node, qx, wt, zw):
        return None
    try:
        w = read_value(wt, view.base_dir)
    except UnsafeData:
        return None
    if w.dtype.kind not in "iu":
        return None
    found = _sums(node, w, zw)
    if found is None:
        return None
    sums, k = found
    worst = qx * sums
    over = worst > INT32_MAX
    if not over.any():
        return None
    c = int(np.argmax(worst))
    more = int(over.sum()) - 1
    extra = f" (and {more} more)" if more else ""
    at = f" at output {c}" if sums.size > 1 else ""
    weights = node.input[3] if node.op_type.startswith("QLinear") else node.input[1]
    return (f"its int32 sum of products can overflow{at}{extra}: max |x_q - x_zp| {qx} ({x_type}, zero point "
            f"{z}) x sum of |w_q - w_zp| over its {k} weights of '{weights}' {int(sums[c])} = "
            f"{g3(worst[c])} > 2^31-1, and the spec lets the int32 accumulation wrap; split the reduction "
            f"or quantize the weights at a larger scale")
