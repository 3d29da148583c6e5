"""com.microsoft MatMulNBits -> its QDQ form: the packed weights unpacked into a [K, N] uint4
(bits 4) or uint8 (bits 8) initializer, DequantizeLinear blocked along K (axis 0,
block_size), MatMul, and an Add for the bias.

The page (onnxruntime's registered schema): "dequantized_weight = (quantized_weight -
zero_point) * scale", then "Matrix multiplication between the input matrix A and the
dequantized weight matrix"; B "Packed uint8 tensor of shape (N, k_blocks, blob_size) ...
for 4 bits, the first 4 bits are stored in the lower 4 bits of a byte"; zero points
"Packed (uint8) format has shape (N, ceil(k_blocks * bits / 8)) ... If not provided, a
default zero point is used: 2^(bits - 1)". DequantizeLinear-21 computes "y = (x -
x_zero_point) * x_scale" per block of ``block_size`` along ``axis``: the dequantized
weights are the same values, which nbits_proof.py proves bit for bit on the model's own weights
(the unpacking here against qlin's evaluator's DequantizeLinear of what is written, read
as onnx reads it).
"""

from __future__ import annotations

import functools
import math
import sys
from typing import NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ... import schema
from ...schema.qdq_forms import N_BITS_MATMUL
from ..sites import Namer
from .to_qdq import (
    _READ_TYPES,
    Built,
    Lookups,
    NoForm,
    Plain,
    _made,
    attribute_values,
    made_node,
    raw_tensor,
    read_raw,
)

# the first DequantizeLinear with block_size (and uint4 / int4), as schema/ reads onnx.defs
BLOCKED_SINCE = schema.first_version(schema.AI_ONNX, "DequantizeLinear",
                                     lambda s: "block_size" in s.attributes)
# the first DequantizeLinear that reads uint2 (2-bit codes), as schema/ reads onnx.defs
TWO_BITS_SINCE = schema.first_version(schema.AI_ONNX, "DequantizeLinear",
                                      lambda s: any("uint2" in t for t in s.types.values()))
TYPES = {2: TensorProto.UINT2, 4: TensorProto.UINT4, 8: TensorProto.UINT8}


def opset_for(bits: int) -> int:
    """The first opset whose DequantizeLinear reads the codes written for ``bits``, blocked."""
    return TWO_BITS_SINCE if bits == 2 else BLOCKED_SINCE


def default_zero_point(bits: int) -> int:
    """The zero point of a packed uint8 table that has none: "If zero_points is not provided,
    default zero point is used: 2^(bits - 1)" (MatMulNBits; GatherBlockQuantized likewise)."""
    return 1 << (bits - 1)


def unpack(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first ``count`` codes of each row of ``packed`` (uint8, last axis the bytes),
    low bits first."""
    rows = packed.reshape(packed.shape[0], -1).astype(np.uint8)
    if bits == 8:
        return rows[:, :count]
    per, mask = 8 // bits, (1 << bits) - 1
    codes = np.empty((rows.shape[0], rows.shape[1] * per), np.uint8)
    for j in range(per):  # the j-th code of every byte at once
        codes[:, j::per] = (rows >> (bits * j)) & mask
    return codes[:, :count]


def weights(node: onnx.NodeProto, look: Lookups) -> dict:
    """What the node's attributes and constants say: K, N, bits, block size, the codes
    [N, K], the scales [N, k_blocks], the zero points [N, k_blocks]."""
    k, n, bits, bs, packed, scales, zp = _checked(node, look)
    blocks = -(-k // bs)
    codes = unpack(np.asarray(packed).reshape(n, -1), bits, blocks * bs)[:, :k]
    zero = None if zp is None else unpack(np.asarray(zp).reshape(n, -1), bits, blocks)
    return _weights(k, n, bits, bs, codes, scales, zero)


def _weights(k: int, n: int, bits: int, bs: int, codes: np.ndarray, scales, zero) -> dict:
    blocks = -(-k // bs)
    if zero is None:
        zero = np.full((n, blocks), default_zero_point(bits), np.uint8)
    return {"K": k, "N": n, "bits": bits, "block_size": bs, "codes": codes,
            "scales": np.asarray(scales).reshape(n, blocks), "zero": zero}


def _checked(node: onnx.NodeProto, look: Lookups, memo: Attributes | None = None) -> tuple:
    """(K, N, bits, block size, B, scales, zero points or None) of a MatMulNBits node whose
    constants are as the page lays them out; NoForm when it has no DequantizeLinear form.
    ``memo``: the attributes read before (``Attributes``)."""
    attrs = attribute_values(node) if memo is None else memo.of(node).values
    k, n, bits, bs = attrs["K"], attrs["N"], attrs.get("bits", 4), attrs["block_size"]
    if bits not in TYPES:
        raise NoForm(f"bits={bits}: DequantizeLinear has no {bits}-bit type qlin writes (2, 4 and 8 only)")
    if attrs.get("weight_prepacked", 0):
        raise NoForm("its weights are prepacked in an execution provider's layout")
    blocks = -(-k // bs)
    packed, scales = look.const(node.input[1]), look.const(node.input[2])
    if packed is None or scales is None:
        raise NoForm("its weights or scales are computed at run time")
    if len(node.input) > 4 and node.input[4]:
        raise NoForm("it has g_idx (deprecated): blocks out of order have no DequantizeLinear form")
    _sized("B", packed, n * blocks * (bs * bits // 8))
    _sized("scales", scales, n * blocks)
    zp_name = node.input[3] if len(node.input) > 3 else ""
    zp = None
    if zp_name:
        zp = look.const(zp_name)
        if zp is None:
            raise NoForm("its zero points are computed at run time")
        if np.asarray(zp).dtype != np.uint8:
            raise NoForm("its zero points are floats: DequantizeLinear takes integer zero points")
        _sized("zero_points", zp, n * (-(-blocks * bits // 8)))
    return k, n, bits, bs, packed, scales, zp


class Attributes:
    """What the attributes of nodes read one after another say, each node's attributes read
    once where they equal those of the node read before, message by message (the nodes of one
    op mostly have the same): ``of(node)`` sets ``values`` (``attribute_values(node)``: a
    dict shared by such nodes, read it, never change it), ``accuracy_four`` (accuracy_level=4)
    and ``blocked`` (a block_size attribute not 0)."""

    __slots__ = ("_node", "_read", "values", "accuracy_four", "blocked")

    def __init__(self):
        self._node = self._read = None

    def of(self, node: onnx.NodeProto) -> Attributes:
        if node is self._node:  # (the same message again: nothing a pass reads changes it)
            return self
        self._node = node
        if self._read is None or node.attribute != self._read:
            self._read = list(node.attribute)
            self.values = attribute_values(node)
            self.accuracy_four = _accuracy_four(node)
            self.blocked = any(a.name == "block_size" and a.i for a in node.attribute)
        return self


def _accuracy_four(node: onnx.NodeProto) -> bool:
    """Whether the node has accuracy_level=4 (A quantized to int8 inside the node)."""
    return any(a.name == "accuracy_level" and a.i == 4 for a in node.attribute)


UNPACK_BYTES = 1 << 26  # the codes one ``weights_of`` unpacking may make


def weights_of(items: list, stored: bool = True) -> list[tuple | None]:
    """(``weights``, what ``to_qdq`` writes of it: ``_stored``) of many MatMulNBits nodes
    ([(node, its Lookups)]), in their order: the nodes of one layout (K, N, bits, block size,
    and B and zero points of the same types and sizes) unpacked and packed together, each row
    as ``weights`` and ``codes_tensor`` do it alone (the same codes and bytes). None for a node
    that ``weights`` would refuse, or cannot read: ``weights`` then says why, where the node
    is planned. ``stored`` False: the weights alone ((w, None) each), nothing packed."""
    groups: dict[tuple, list] = {}
    memo = Attributes()
    for at, (node, look) in enumerate(items):
        try:
            got = _checked(node, look, memo)
        except Exception:  # weights() raises it again, where the node is planned
            continue
        k, n, bits, bs, packed, _, zp = got
        p, z = np.asarray(packed), None if zp is None else np.asarray(zp)
        key = (k, n, bits, bs, p.dtype, p.size, None if z is None else (z.dtype, z.size))
        groups.setdefault(key, []).append((at, got, memo.accuracy_four))
    out: list[tuple | None] = [None] * len(items)
    for (k, n, bits, bs, *_), members in groups.items():
        blocks = -(-k // bs)
        size = max(1, UNPACK_BYTES // max(n * blocks * bs, 1))
        for start in range(0, len(members), size):
            part = members[start:start + size]
            codes = _unpacked([g[4] for _, g, _ in part], n, bits, blocks * bs)[:, :, :k]
            zeros = None if part[0][1][6] is None else _unpacked([g[6] for _, g, _ in part], n, bits, blocks)
            ws = [_weights(k, n, bits, bs, codes[c], g[5], None if zeros is None else zeros[c])
                  for c, (_, g, _) in enumerate(part)]
            packed = _stored(ws, codes, zeros, [four for *_, four in part]) if stored else [None] * len(ws)
            for (at, _, _), w, written in zip(part, ws, packed, strict=True):
                out[at] = (w, written)
    return out


def _stored(ws: list[dict], codes: np.ndarray, zeros: np.ndarray | None, fours: list[bool]) -> list[tuple]:
    """What ``to_qdq`` writes of weights of one layout (``ws``; ``codes`` and ``zeros`` their
    codes and zero points, [nodes, N, K] and [nodes, N, k_blocks], None for the page's default),
    worked out at once, a tuple a node: its codes' and zero points' bytes as its tensors store
    them ([K, N] and [k_blocks, N], the weights transposed), whether it has accuracy_level=4
    (``fours``)."""
    elem = TYPES[ws[0]["bits"]]
    count = len(ws)
    codes = stored_rows(codes.transpose(0, 2, 1).reshape(count, -1), elem)
    if zeros is None:  # the page's default: the same for every node
        zeros = [stored_rows(ws[0]["zero"].T.reshape(1, -1), elem)[0]] * count
    else:
        zeros = stored_rows(zeros.transpose(0, 2, 1).reshape(count, -1), elem)
    return list(zip(codes, zeros, fours, strict=True))


def _unpacked(tables: list, n: int, bits: int, count: int) -> np.ndarray:
    """``unpack`` of each of ``tables`` (read as [n, bytes]), [tables, n, count]: their rows
    unpacked in one call (the tables' values end to end, each in C order, are their rows)."""
    rows = np.concatenate(tables, axis=None).reshape(len(tables) * n, -1)
    return unpack(rows, bits, count).reshape(len(tables), n, count)


def _sized(what: str, value, size: int) -> None:
    """The page's size of a constant input (N * k_blocks * blob_size for B, N * k_blocks for
    the scales, N * ceil(k_blocks * bits / 8) for packed zero points); other sizes are refused."""
    if (value.size if type(value) is np.ndarray else np.asarray(value).size) != size:
        raise NoForm(f"its {what} holds {np.asarray(value).size} values where K, N, bits and "
                     f"block_size give {size}")


_SMALL_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))


def dequantized(w: dict) -> np.ndarray:
    """The page's dequantized weights, [N, K]: (code - zero point) * scale per block."""
    n, blocks = w["zero"].shape if w["zero"].ndim == 2 else (0, 0)
    if (blocks and blocks * w["block_size"] == w["K"] and w["codes"].shape == (n, w["K"])
            and w["scales"].shape == (n, blocks)):
        # whole blocks: each block's zero point and scale broadcast along it, not copied to
        # every code (the same operands element by element, so the same values)
        c = w["codes"].astype(np.float32).reshape(n, blocks, w["block_size"])
        z = w["zero"].astype(np.float32)[:, :, None]
        s = w["scales"]
        if s.dtype not in _SMALL_FLOATS:
            return ((c - z) * s[:, :, None]).astype(s.dtype).reshape(n, w["K"])
        # float32 or float16 scales: the product is float32 either way, computed in the codes'
        # own float32 copy (no array made a step; the same operations, so the same values)
        np.subtract(c, z, out=c)
        np.multiply(c, s[:, :, None], out=c)
        return c.astype(s.dtype, copy=False).reshape(n, w["K"])
    per_k = np.repeat(np.arange(w["zero"].shape[1]), w["block_size"])[: w["K"]]
    z = w["zero"][:, per_k].astype(np.float32)
    s = w["scales"][:, per_k]
    return ((w["codes"].astype(np.float32) - z) * s).astype(w["scales"].dtype)


def codes_tensor(name: str, elem: int, dims: list, codes: np.ndarray,
                 stored: np.ndarray | None = None) -> onnx.TensorProto:
    """The uint2 / uint4 / uint8 tensor ``elem`` of ``codes`` (uint8, within the type's range),
    its values in raw_data as onnx.proto lays them out: "uint4 and int4 values must be packed to
    4bitx2, the first element is stored in the 4 LSB and the second element is stored in the 4
    MSB", "uint2 and int2 values must be packed to 2bitx4 ... x0 | (x1 << 2) | (x2 << 4) | (x3
    << 6)"; the same message numpy_helper.from_array writes of the codes as ml_dtypes' type
    (tests/test_convert_formats_speed.py holds the two equal). raw_data, not int32_data (one
    varint an element or pair there): 1.5x smaller for random 4-bit codes, and written and read
    back (``read_codes``) at C speed. ``stored``: its bytes (``stored_rows`` of the codes), when
    already worked out."""
    t = onnx.TensorProto()
    t.dims.extend(dims)
    t.data_type = elem
    t.name = name
    if stored is None:
        stored = stored_rows(np.asarray(codes, np.uint8).reshape(1, -1), elem)[0]
    t.raw_data = stored.tobytes()
    return t


def stored_rows(rows: np.ndarray, elem: int) -> np.ndarray:
    """The raw_data bytes of each row of uint8 codes ([tables, codes]) of ``elem``, [tables,
    bytes]: ``pack``'s layout (low bits first, a row's last byte padded with zeros), which is
    onnx.proto's for uint2 and uint4; uint8 codes as they are."""
    bits = _BITS[elem]
    return pack(rows, bits, -(-rows.shape[1] * bits // 8))


_BITS = {elem: bits for bits, elem in TYPES.items()}  # the codes' element type -> its bits


def to_qdq(node: onnx.NodeProto, opset: int, look: Lookups, read: tuple | None = None) -> tuple[Built, dict]:
    """The QDQ form of a MatMulNBits node (``read``: its ``weights_of``, when already read: the
    weights, and what is written of them, ``_stored``)."""
    if opset < BLOCKED_SINCE:
        raise NoForm(f"blocked DequantizeLinear (and uint4) come with opset {BLOCKED_SINCE}: add "
                     f"--to-opset {BLOCKED_SINCE}")
    w, stored = (weights(node, look), (None, None, None)) if read is None else read
    if opset < opset_for(w["bits"]):
        raise NoForm(f"bits=2: its codes are uint2, which DequantizeLinear reads from opset {TWO_BITS_SINCE} "
                     f"(DequantizeLinear-{TWO_BITS_SINCE}): add --to-opset {TWO_BITS_SINCE}")
    base = node.name or node.op_type
    elem = TYPES[w["bits"]]
    bias = node.input[5] if len(node.input) > 5 else ""
    # the new names, made in the order they always were
    dq_inputs = named(look.namer, [f"{base}_weight_q", f"{base}_weight_scale", f"{base}_weight_zero_point"])
    weight, dq_name, *more = named(look.namer, [f"{base}_weight", f"{base}_dq"] + (
        [f"{node.output[0]}_product", f"{base}_matmul", f"{base}_bias"] if bias else [f"{base}_matmul"]))
    inits = [codes_tensor(dq_inputs[0], elem, [w["K"], w["N"]], w["codes"].T, stored[0]),
             raw_tensor(np.ascontiguousarray(w["scales"].T), dq_inputs[1]),
             codes_tensor(dq_inputs[2], elem, list(w["zero"].T.shape), w["zero"].T, stored[1])]
    nodes, twins = [], []  # (and the nodes as Plain twins, which the result's types read)
    _dq_made(nodes, twins, dq_inputs, [weight], dq_name, w["block_size"])
    product = more[0] if bias else node.output[0]
    _made(nodes, twins, "MatMul", [node.input[0], weight], [product], more[-2] if bias else more[0])
    if bias:
        _made(nodes, twins, "Add", [product, bias], [node.output[0]], more[-1])
    changes = [f"MatMulNBits -> DequantizeLinear (uint{w['bits']} [{w['K']}, {w['N']}], blocks of "
               f"{w['block_size']} along K), MatMul" + (", Add" if bias else "") + " (QDQ form)"]
    if _accuracy_four(node) if stored[2] is None else stored[2]:
        changes.append("accuracy_level=4 dropped: onnxruntime quantized A to int8 inside the node; the "
                       "MatMul computes in float, as the page's formula does")
    return Built(nodes, inits, changes, twins), w


def named(namer, bases: list[str]) -> list[str]:
    """``[namer(base) for base in bases]``: a sites.Namer's ``names`` (its set of names taken
    read once), any other namer called a name."""
    if type(namer) is not Namer:
        return [namer(base) for base in bases]
    return namer.names(bases)


def _dq_made(nodes: list, twins: list, inputs: list, outputs: list, name: str, block_size: int) -> None:
    """``_made(nodes, twins, "DequantizeLinear", inputs, outputs, name, axis=0,
    block_size=block_size)``: the node a copy of the one made so without inputs, outputs and
    name (``_dq_template``: made once a block size), given them; its twin's attributes those of
    that node (the same messages, shared by the twins of one block size: read, never changed)."""
    template, attributes = _dq_template(block_size)
    node = _NodeProto()
    node.CopyFrom(template)
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:  # (as made_node sets it)
        node.name = name
    nodes.append(node)
    twins.append(Plain("DequantizeLinear", tuple(inputs), tuple(outputs), name, "", attributes))


@functools.lru_cache(maxsize=64)
def _dq_template(block_size: int) -> tuple[onnx.NodeProto, tuple]:
    """The DequantizeLinear ``to_qdq`` writes for ``block_size``, without inputs, outputs and
    name, and its attributes."""
    node = made_node("DequantizeLinear", [], [], "", axis=0, block_size=block_size)
    return node, tuple(node.attribute)


_NodeProto = onnx.NodeProto


# ---- tables read from their bytes as onnx reads them: the read-backs here, nbits_proof.py's proofs
# 4-bit element types whose inline raw bytes ``raw_source`` and ``read_codes`` read, and their numpy types
_FOUR_BITS = {elem: helper.tensor_dtype_to_np_dtype(elem) for elem in (TensorProto.UINT4, TensorProto.INT4)}
INLINE = TensorProto.DEFAULT


def read_codes(tensors: list) -> dict[int, np.ndarray]:
    """id(tensor) -> numpy_helper.to_array(tensor) of the inline 4-bit tables among ``tensors``
    (raw_data, as codes_tensor writes them, or int32_data, as helper.make_tensor does), read
    together: to_array's own steps (the packed bytes: raw_data's, or the int32 values as uint8;
    onnx's _unpack_4bit; the element type) on their bytes joined end to end, each table's codes
    then its first prod(dims) of the codes of its own bytes (to_array drops an odd count's
    padding likewise). Tables of another size or stored outside the file are not here (to_array
    reads them); tests/test_formats_speed_tensors.py holds the two equal."""
    if _UNPACK4 is None:
        return {}
    raws: dict[tuple, list] = {}  # (element type, dims) -> [(table, its raw bytes)]
    typed: dict[int, list] = {}  # element type -> [(table, count, dims)] of int32_data
    for t in tensors:
        elem = t.data_type
        if elem not in _FOUR_BITS or t.HasField("segment") or t.data_location == TensorProto.EXTERNAL:
            continue
        dims = tuple(t.dims[:])  # (the message's dims read once)
        count = math.prod(dims)
        if t.HasField("raw_data"):
            data = t.raw_data
            if len(data) == (count + 1) // 2:
                raws.setdefault((elem, dims), []).append((t, data))
        elif len(t.int32_data) == (count + 1) // 2:
            typed.setdefault(elem, []).append((t, count, dims))
    out: dict[int, np.ndarray] = {}
    for (elem, dims), tables in raws.items():  # (those of one type and dims: from_bytes at once)
        read = from_bytes([data for _, data in tables], _FOUR_BITS[elem], dims)
        out.update(zip([id(t) for t, _ in tables], read, strict=True))
    for elem, tables in typed.items():
        data = np.concatenate([np.array(t.int32_data, dtype=np.int32) for t, _, _ in tables])
        data = data.view(np.uint32).astype(np.uint8)
        flat = _UNPACK4(data, [data.size * 2]).view(_FOUR_BITS[elem])
        at = 0
        for t, count, dims in tables:
            out[id(t)] = flat[at:at + count].reshape(dims)
            at += 2 * ((count + 1) // 2)
    return out


def raw_source(t: onnx.TensorProto) -> tuple | None:
    """(raw bytes, numpy type, dims) of a tensor read from its bytes (``from_bytes``, by
    ``_read_written`` here and nbits_proof's ``_joined``): inline raw_data (no segment, not
    external) of a plain numeric type read_raw reads so, or of 4 bits, exactly as long as its
    type and dims take; None for any other."""
    elem = t.data_type
    dtype = _READ_TYPES.get(elem)
    four = dtype is None
    if four:
        dtype = _FOUR_BITS.get(elem)
        if dtype is None or _UNPACK4 is None:
            return None
    if (sys.byteorder != "little" or not t.HasField("raw_data") or t.HasField("segment")
            or t.data_location != INLINE):
        return None
    raw, dims = t.raw_data, tuple(t.dims)
    count = math.prod(dims)
    if len(raw) != ((count + 1) // 2 if four else count * dtype.itemsize):
        return None
    return raw, dtype, dims


def from_bytes(values: list[bytes], dtype: np.dtype, dims: tuple) -> np.ndarray:
    """[len(values), *dims]: each of ``values`` (``raw_source``'s bytes) read as to_array reads
    a tensor's raw_data, all at once: plain types as they are, 4 bits through onnx's
    _unpack_4bit (each table's codes the first prod(dims) of its own bytes' codes, as to_array
    drops an odd count's padding)."""
    data = b"".join(values)
    if dtype not in _FOUR_CODES:
        return np.frombuffer(data, dtype).reshape(len(values), *dims)
    flat = _UNPACK4(np.frombuffer(data, np.uint8), [len(data) * 2]).view(dtype)
    return flat.reshape(len(values), -1)[:, :math.prod(dims)].reshape(len(values), *dims)


_UNPACK4 = getattr(numpy_helper, "_unpack_4bit", None)
_FOUR_CODES = set(_FOUR_BITS.values())


# ---- the way back: a blocked DequantizeLinear of constant weights and its MatMul ------------
SIGNED = {TensorProto.INT2: (2, 2), TensorProto.INT4: (4, 8), TensorProto.INT8: (8, 128)}  # (bits, shift)
UNSIGNED = {TensorProto.UINT2: 2, TensorProto.UINT4: 4, TensorProto.UINT8: 8}


def pack(codes: np.ndarray, bits: int, per_row: int) -> np.ndarray:
    """Rows of unsigned codes packed low bits first into ``per_row`` bytes each (zeros after
    the codes): the layout ``unpack`` reads."""
    n = codes.shape[0]
    per = 8 // bits
    padded = np.zeros((n, per_row * per), np.uint8)
    padded[:, : codes.shape[1]] = codes
    if bits == 8:
        return padded
    out = padded[:, 0::per].copy()
    for j in range(1, per):  # each shifted code added in, as a byte (the sum of the shifted codes, mod 256)
        out += padded[:, j::per] << (bits * j)
    return out


def from_qdq(dq: onnx.NodeProto, matmul: onnx.NodeProto, weight: onnx.TensorProto, scale: np.ndarray,
             zero: np.ndarray | None, namer, read: dict | None = None, back: list | None = None,
             later: list | None = None, memo: Attributes | None = None,
             ) -> tuple[onnx.NodeProto, list, dict | None]:
    """The MatMulNBits of ``matmul`` reading ``dq``'s blocked weights [K, N] (``weight``, its
    ``scale`` and ``zero`` point arrays): (node, initializers, the page's weights as
    ``weights`` gives them, for the proof). NoForm when the layout has none. ``read``: arrays
    numpy_helper.to_array gives, by name (``nbits_proof.NBitsCase.read``): ``weight``'s taken
    from there, or read and put there. ``back``: the page's weights are not read here (None in their place):
    (node, what its initializers read back as) is added to it, for ``read_back``. ``later``
    (with ``back``): the initializers are written by ``write_later`` (the node's zero point
    input added there too), with those of the other nodes of its layout at once. ``memo``: the
    attributes read before (``Attributes``)."""
    k, n, bits, shift, bs, raw = _layout(dq, weight, scale, zero, read, memo)
    base = matmul.name or "MatMul"
    b, scales, zero_points, name = named(namer, [f"{base}_B", f"{base}_scales", f"{base}_zero_points",
                                                 f"{base}_{N_BITS_MATMUL[1]}"])
    names = {"B": b, "scales": scales, "zero_points": zero_points}
    node = _nbits_made([matmul.input[0], b, scales], [matmul.output[0]], name, (k, n, bits, bs))
    # what the proof holds against the source's DequantizeLinear: the node as written, read
    # back as the way there reads a MatMulNBits (so the packing is proven too)
    inits: list = []
    written: dict = {}
    pending = _Pending(node, inits, written, names, (bits, shift, k, n, bs), raw, scale, zero)
    if later is not None and back is not None:
        later.append(pending)
    else:
        write_later([pending])
    look = Lookups(written.get, lambda name: None, namer)
    if back is not None:
        back.append((node, look))
        return node, inits, None
    return node, inits, weights(node, look)


def _nbits_made(inputs: list, outputs: list, name: str, layout: tuple) -> onnx.NodeProto:
    """``made_node`` of the MatMulNBits of ``layout`` (K, N, bits, block size) reading
    ``inputs``: a copy of the one made so without inputs, outputs and name (made once a
    layout), given them."""
    node = _NodeProto()
    node.CopyFrom(_nbits_template(*layout))
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:  # (as made_node sets it)
        node.name = name
    return node


@functools.lru_cache(maxsize=64)
def _nbits_template(k: int, n: int, bits: int, block_size: int) -> onnx.NodeProto:
    domain, op = N_BITS_MATMUL
    return made_node(op, [], [], "", domain, K=k, N=n, bits=bits, block_size=block_size)


def _layout(dq: onnx.NodeProto, weight: onnx.TensorProto, scale: np.ndarray, zero,
            read: dict | None, memo: Attributes | None = None) -> tuple:
    """(K, N, bits, the shift to unsigned codes, block size, the weight's codes as read) of a
    blocked DequantizeLinear ``from_qdq`` writes; NoForm when it has no MatMulNBits form."""
    attrs = attribute_values(dq) if memo is None else memo.of(dq).values
    bs = attrs.get("block_size", 0)
    if attrs.get("axis", 1) not in (0, -2) or not bs or bs < 16 or bs & (bs - 1):
        raise NoForm("its weights are not blocked along K (axis 0) in blocks of a power of two >= 16")
    elem = weight.data_type
    if elem in SIGNED:
        bits, shift = SIGNED[elem]
    elif elem in UNSIGNED:
        bits, shift = UNSIGNED[elem], 0
    else:
        raise NoForm("its weights are not 2-, 4- or 8-bit integers")
    raw = None if read is None else read.get(weight.name)
    if raw is None:
        raw = read_raw(weight)
        if read is not None:
            read[weight.name] = raw
    if raw.ndim != 2 or scale.ndim != 2:
        raise NoForm("its weights are not a [K, N] matrix")
    k, n = raw.shape
    blocks = -(-k // bs)
    if scale.shape != (blocks, n) or (zero is not None and zero.shape != scale.shape):
        raise NoForm(f"its scale has shape {list(scale.shape)}, not [{blocks}, {n}]")
    return k, n, bits, shift, bs, raw


class _Pending(NamedTuple):
    """A MatMulNBits ``from_qdq`` made whose initializers ``write_later`` writes."""

    node: onnx.NodeProto
    inits: list  # filled: B, scales, and the zero points where not the page's default
    written: dict  # filled: each initializer as read back (read_raw), by name
    names: dict  # the initializers' names: B, scales, zero_points
    layout: tuple  # (bits, shift, K, N, block size)
    raw: np.ndarray  # the weight's codes [K, N], as read
    scale: np.ndarray  # [k_blocks, N]
    zero: np.ndarray | None  # [k_blocks, N]


def write_later(items: list[_Pending]) -> None:
    """Write each pending node's initializers (and its zero point input, where the zero points
    are not the page's default): the unsigned codes [N, K] packed as B [N, k_blocks, blob], the
    scales [N, k_blocks], the zero points packed [N, ceil(k_blocks * bits / 8)]. The nodes of
    one layout (and types) are packed together: each row packed on its own, as alone."""
    groups: dict[tuple, list] = {}
    for p in items:
        key = (p.layout, p.raw.dtype, p.scale.dtype, None if p.zero is None else p.zero.dtype)
        groups.setdefault(key, []).append(p)
    for ((bits, shift, k, n, bs), *_), members in groups.items():
        size = max(1, UNPACK_BYTES // max(16 * k * n, 1))
        for start in range(0, len(members), size):
            _write_together(members[start:start + size], bits, shift, k, n, bs)


def _write_together(part: list[_Pending], bits: int, shift: int, k: int, n: int, bs: int) -> None:
    blocks = -(-k // bs)
    count = len(part)
    # (int16 holds every code shifted, 0..255, exactly: a quarter of int32's bytes to move)
    codes = (np.stack([p.raw for p in part]).astype(np.int16) + shift).transpose(0, 2, 1).astype(np.uint8)
    blob = bs * bits // 8
    packed = pack(codes.reshape(count * n, k), bits, blocks * blob).reshape(count, n, blocks, blob)
    scales = np.ascontiguousarray(np.stack([p.scale for p in part]).transpose(0, 2, 1))
    z = (np.zeros((count, blocks, n), np.int32) if part[0].zero is None
         else np.stack([p.zero for p in part]).astype(np.int32))
    zeros = (z + shift).transpose(0, 2, 1).astype(np.uint8)  # [count, N, k_blocks]
    given = (zeros != default_zero_point(bits)).reshape(count, -1).any(axis=1).tolist()
    per_row = -(-blocks * bits // 8)  # the zero points' bytes a column
    zp = None
    if any(given):
        zp = pack(zeros.reshape(count * n, blocks), bits, per_row).reshape(count, n, per_row)
    for c, p in enumerate(part):
        p.inits.extend([raw_tensor(packed[c], p.names["B"]), raw_tensor(scales[c], p.names["scales"])])
        if given[c]:  # the default zero point needs no input
            p.inits.append(raw_tensor(zp[c], p.names["zero_points"]))
            p.node.input.append(p.names["zero_points"])
    for place in range(3):  # B, scales, zero points
        _read_written([p for p in part if len(p.inits) > place], place)


def _read_written(part: list[_Pending], place: int) -> None:
    """The initializer at ``place`` of each pending node read back into its ``written``, as
    read_raw reads it: those like the first (the same type and dims, inline raw bytes of that
    size, as ``raw_source`` reads it) read from their bytes at once (``from_bytes``), any
    other by read_raw."""
    tensors = [p.inits[place] for p in part]
    first = raw_source(tensors[0]) if tensors else None
    if first is None:
        for p, t in zip(part, tensors, strict=True):
            p.written[t.name] = read_raw(t)
        return
    raw, dtype, dims = first
    elem, want, size = tensors[0].data_type, list(dims), len(raw)
    data = [t.raw_data for t in tensors]
    alike = [t.data_type == elem and t.dims == want and len(d) == size and t.HasField("raw_data")
             and not t.HasField("segment") and t.data_location == INLINE
             for t, d in zip(tensors, data, strict=True)]
    read = iter(from_bytes([d for d, a in zip(data, alike, strict=True) if a], dtype, dims))
    for p, t, a in zip(part, tensors, alike, strict=True):
        p.written[t.name] = next(read) if a else read_raw(t)


def read_back(items: list) -> list[dict]:
    """``weights(node, look)`` of each (node, look) of ``items`` (``from_qdq``'s ``back``), the
    nodes of one layout unpacked together (``weights_of``, the same codes as each alone)."""
    found = weights_of(items, stored=False)
    return [weights(node, look) if got is None else got[0]
            for (node, look), got in zip(items, found, strict=True)]
