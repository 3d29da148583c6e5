import numpy as np

from .. import schema
from ..model.facts import shared_with
from .base import WARNING, ModelRule, Violation
from .base_numeric import constant_array, g3, int_range
from .base_qdq import fed_by, label, of_family, scale_of, zero_point_of

LOW, HIGH = "low", "high"  # which end of its type's range a zero point is at
_END = {LOW: "lowest", HIGH: "highest"}


class OneSidedZeroPoint(ModelRule):
    """
    ## What it checks
    A QuantizeLinear to an integer type of at most 16 bits whose zero point is the lowest
    (or the highest) value of its type, where the graph shows that the values it quantizes
    take the other sign:

    * x is a constant (a weight), or the DequantizeLinear of a constant: its values are
      known, and some of them have x / scale rounding below 0 (above 0 for a zero point at
      the highest value);
    * x is the output of a per-tensor DequantizeLinear (a requantization) whose own zero
      point is neither an end of its type nor its middle (128 for uint8, 0 for int8): an
      asymmetric quantizer put it there because the range it calibrated went below 0 (above
      0), down to (lowest - zero point) x scale, and that end divided by this scale rounds
      below 0 (above 0).

    A zero point at an end is not a fault in itself: the output of a Relu quantized to uint8
    has zero point 0 and loses nothing. The rule speaks only where the values that end cuts
    off are shown to exist.

    ## Why is this bad?
    The QuantizeLinear page: "The quantization formula is `y = saturate((x / y_scale) +
    y_zero_point)`", with saturation to the type's range ("uint8: [0, 255]", "int8:
    [-128, 127]"). With the zero point at the lowest value, every x / y_scale that rounds
    below 0 saturates to the zero point and dequantizes to 0: the whole sign is lost, not
    only outliers. The model runs, and the error shows only on data.

    ## Example
    ```
    w = [0.5, -0.3, 0.2]              # a constant with a negative value
    QuantizeLinear(w, scale=0.004, zero_point=uint8 0)
    # -0.3 / 0.004 = -75 rounds below 0: it saturates to 0 and dequantizes to 0
    ```

    ## Fix
    Compute the zero point from the range the values really take (an asymmetric range
    that includes the negative values: zero point round(-min / scale)), or quantize
    symmetrically (int8, zero point 0).
    """

    code = "QL507"
    name = "one-sided-zero-point"
    severity = WARNING
    summary = "A zero point at an end of its type's range where the values quantized take the other sign."

    def check_model(self, view):
        dequantized = None  # (id(body), i) -> the DequantizeLinear x comes from: made when first asked
        for body in view.bodies:
            found = list(of_family(view, body, schema.LINEAR_QUANTIZE))
            for (i, f), possible in zip(found, _ends_possible([f for _, f in found]), strict=True):
                end = _end(f) if possible else None
                if end is None:
                    continue
                if dequantized is None:
                    dequantized = {(id(b), k): (j, g) for b, k, _f, j, g in
                                   fed_by(view, schema.LINEAR_QUANTIZE, schema.LINEAR_DEQUANTIZE)}
                before = dequantized.get((id(body), i))
                known = _known(view, body, f, before)
                if known is not None:  # a constant's values decide, where they can be read
                    message = _constant(f, end, *known) if known[0] is not None else None
                else:
                    message = _requantized(f, end, *before) if before is not None else None
                if message:
                    yield Violation(message, at=view.node_site(body, i))


def _ends_possible(found: list) -> list[bool]:
    """For each QuantizeLinear (``NodeFacts``), False where its zero point is known to hold
    neither end of its type's range, True otherwise (``_end`` then decides): the constant
    zero points whose bytes numpy reads as they are (``Const.plain``) are looked at
    together, one array per stored type and range, so that nodes with a zero point at no end
    cost no read each (a 50,000-node chain: 12,500 QuantizeLinear)."""
    possible = [True] * len(found)
    parts: dict = {}  # (dtype, the node type's (lowest, highest)) -> ([node positions], [bytes])
    shapes: dict = {}  # id of the facts a node's shape is tied to (shared_with) -> (zi, range)
    for k, f in enumerate(found):
        like = shared_with(f) or f
        known = shapes.get(id(like))
        if known is None:  # (the zero point's position and the type's range: the shape's)
            known = shapes[id(like)] = (like, like.zero_point_index, int_range(like.quant_type))
        _, zi, rng = known
        values = f.values
        c = values[zi] if zi is not None and zi < len(values) else None
        p = None if c is None or rng is None else c.plain()  # absent: 0, which may be an end
        if p is None or p[0].kind not in "iu" or not p[1]:
            continue
        ks, raws = parts.setdefault((p[0], rng), ([], []))
        ks.append(k)
        raws.append(p[1])
    for (dt, (low, high)), (ks, raws) in parts.items():
        data = np.frombuffer(b"".join(raws), dt).astype(np.int64)
        hit = (data == low) | (data == high)
        sizes = np.fromiter((len(r) for r in raws), np.int64, len(raws)) // dt.itemsize
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))  # every part holds a value
        for k, any_hit in zip(ks, np.logical_or.reduceat(hit, starts).tolist(), strict=True):
            possible[k] = any_hit
    return possible


def _end(f):
    """(LOW or HIGH, the zero point, the scale) where every zero point of the node is the lowest
    (or every one the highest) value of its integer type; None otherwise or where unknown. The
    zero point is read first: on nearly every node it is at no end, and the scale is not read."""
    rng = int_range(f.quant_type)
    if rng is None or rng[1] - rng[0] > 65535:
        return None
    zp = zero_point_of(f)
    if zp is None:
        return None
    zp = np.asarray(zp)
    if zp.size == 1:  # per tensor: one comparison, no array arithmetic
        first = int(zp.reshape(-1)[0])
        side = LOW if first == rng[0] else HIGH if first == rng[1] else None
    else:
        zp = zp.astype(np.int64).reshape(-1)
        first = int(zp[0]) if zp.size else 0
        low, high = bool(zp.size) and (zp == rng[0]).all(), bool(zp.size) and (zp == rng[1]).all()
        side = LOW if low else HIGH if high else None
    if side is None:
        return None
    scale = scale_of(f)
    if scale is None:
        return None
    s = np.asarray(scale, np.float64)
    if not (np.isfinite(s).all() and (s != 0).all()):
        return None
    return side, first, np.asarray(scale)


def _lost(q: np.ndarray, side: str) -> np.ndarray:
    """Which rounded quotients x / scale saturate to the zero point from the other side."""
    return q < 0 if side == LOW else q > 0


def _known(view, body, f, before):
    """(x's values, how the message names them) where x is a constant or a DequantizeLinear of
    one: (None, "") where such values cannot be judged (another type, a per-axis
    DequantizeLinear); None where x is not such a constant."""
    x = constant_array(view, body, f.inputs[0]) if f.inputs else None
    if x is not None:
        return (x, f"'{f.inputs[0]}'") if x.dtype.kind == "f" and x.size else (None, "")
    g = before[1] if before is not None else None
    xq = constant_array(view, body, g.inputs[0]) if g is not None and g.inputs else None
    if xq is None:
        return None
    s1, z1 = scale_of(g), zero_point_of(g)
    if s1 is None or z1 is None or np.size(s1) != 1 or np.size(z1) != 1 or xq.dtype.kind not in "iu" \
            or not xq.size:
        return None, ""
    z, s1 = float(np.asarray(z1).reshape(-1)[0]), float(np.asarray(s1).reshape(-1)[0])
    return (xq.astype(np.float64) - z) * s1, f"'{g.inputs[0]}' (dequantized by {label(g, before[0])})"


def _constant(f, end, x: np.ndarray, name: str) -> str | None:
    """The message where some of the constant values ``x`` lose their sign; None otherwise."""
    side, zp, scale = end
    s = _broadcast(f, scale, x)
    if s is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.rint(x.astype(np.float32) / s.astype(np.float32))
    lost = _lost(q, side)
    n = int(lost.sum())
    if not n:
        return None
    flat, sc = x.reshape(-1).astype(np.float64), s.reshape(-1)
    ratio = np.where(lost.reshape(-1), flat / sc, 0.0)
    k = int(np.argmin(ratio) if side == LOW else np.argmax(ratio))  # the farthest lost value
    sign = "negative" if (side == LOW) == (float(sc[k]) > 0) else "positive"
    many, verb, it = (f"{n} of the {x.size} values", "are", "they saturate") if n > 1 else (
        f"1 of the {x.size} values", "is", "it saturates")
    return (f"the zero point {zp} is the {_END[side]} {f.quant_type} value, and {many} of constant "
            f"{name} {verb} {sign} beyond half a step: x / scale rounds "
            f"{'below' if side == LOW else 'above'} 0 (the farthest {g3(flat[k])} / {g3(sc[k])} = "
            f"{g3(ratio[k])}), so {it} to the zero point "
            f"and dequantize{'' if n > 1 else 's'} to 0; compute the zero point from a range that includes "
            f"{'them' if n > 1 else 'it'}, or quantize symmetrically")


def _broadcast(f, scale, x) -> np.ndarray | None:
    """The scale as x's shape (per tensor, or per axis along the node's axis); None for another
    granularity or a shape that does not fit."""
    s = np.asarray(scale, np.float64)
    if s.size == 1:
        return np.full(x.shape, float(s.reshape(-1)[0]))
    axis = f.normalized_axis() if f.granularity == schema.PER_AXIS else None
    if axis is None or s.ndim != 1 or x.ndim <= axis or x.shape[axis] != s.size:
        return None
    shape = [1] * x.ndim
    shape[axis] = s.size
    return np.broadcast_to(s.reshape(shape), x.shape)


def _requantized(f, end, j: int, g) -> str | None:
    """The message where x comes from a per-tensor DequantizeLinear whose asymmetric zero point
    shows the values reach past this node's end; None otherwise."""
    side, zp, scale = end
    rng = int_range(g.quant_type)
    s1, z1 = scale_of(g), zero_point_of(g)
    if rng is None or s1 is None or z1 is None or np.size(s1) != 1 or np.size(z1) != 1 or np.size(scale) != 1:
        return None
    s1 = float(np.asarray(s1).reshape(-1)[0])
    s2 = float(np.asarray(scale).reshape(-1)[0])
    z1 = int(np.asarray(z1).reshape(-1)[0])
    middle = 0 if rng[0] < 0 else (rng[1] + 1) // 2
    if not (s1 > 0 and s2 > 0) or z1 in (rng[0], rng[1], middle):
        return None
    reach = (rng[0] - z1) * s1 if side == LOW else (rng[1] - z1) * s1
    q = float(np.rint(np.float32(reach) / np.float32(s2)))
    if not _lost(np.asarray(q), side):
        return None
    end_name, edge = _END[side], rng[0] if side == LOW else rng[1]
    way = "below" if side == LOW else "above"
    return (f"the zero point {zp} is the {end_name} {f.quant_type} value, but x comes from "
            f"DequantizeLinear {label(g, j)} whose asymmetric zero point {z1} ({g.quant_type}) puts its "
            f"range's {end_name} end at ({edge} - {z1 if z1 >= 0 else f'({z1})'}) x {g3(s1)} = "
            f"{g3(reach)}, and {g3(reach)} / {g3(s2)} = {g3(reach / s2)} rounds {way} 0, "
            f"so every value beyond half a step on "
            f"that side saturates to the zero point and dequantizes "
            f"to 0; quantize with a zero point from the same range")
