"""com.microsoft GatherBlockQuantized <-> its QDQ form: the table dequantized by one
DequantizeLinear, blocked along the node's ``quantize_axis`` (ai.onnx opset 21+), then a
Gather along its ``gather_axis``; both ways.

The page (onnxruntime's registered schema, 1.31.1): "It is similar to Gather ... Input
`data` is a constant. It is quantized block-wise along attribute `quantize_axis` with block
size specified by attribute `block_size`", a power of two >= 16 (0 only for float8 / float4
data); "If `zero_points` is not provided, the default value is 0 for int4/uint4, or
2^(bits-1) for uint8"; "`data` and `indices` are first used to generate the quantized
output. Then, `scales` and `zero_points` are used to dequantize the output"; "For uint8
data, the `gather_axis` must be 0 ... for `bits` < 8 the values are packed along the last
dimension (low-order bits first)". Defaults: bits 4, block_size 128, gather_axis 0,
quantize_axis 1. onnxruntime's kernel reads an int4 / uint4 table with bits 4 only, and a
uint8 table quantized along its last axis only (its zero points then packed along that
axis as the codes are); it computes ``float(code - zero point) * scale``.

Each gathered element keeps the scale and zero point of its place in the table, so
dequantizing the gathered elements and gathering the dequantized table are the same values
(DequantizeLinear-21: "y = (x - x_zero_point) * x_scale" per block of ``block_size`` along
``axis``). What ``prove`` checks bit for bit is the table: the page's dequantized table
against qlin's evaluator's DequantizeLinear-21 of the constants the QDQ form reads. Where
the two differ is an index out of range: Gather's page makes it an error, and
GatherBlockQuantized writes zeros; they agree on every index Gather accepts.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ... import schema
from ...schema import dtypes
from ...schema.qdq_forms import GATHER_BLOCK_QUANTIZED
from .nbits import BLOCKED_SINCE, TWO_BITS_SINCE, TYPES, default_zero_point, opset_for, unpack
from .nbits_proof import NBitsCase
from .to_qdq import Built, Lookups, NoForm, attribute_values

# the registered schema's defaults
# the op's attribute defaults, as schema/families/n_bits.py states them (bits 4, block_size
# 128, gather_axis 0, quantize_axis 1)
_SPEC = schema.lookup(*GATHER_BLOCK_QUANTIZED, 1)
DEFAULTS = _SPEC.attributes
FOUR_BIT = (TensorProto.INT4, TensorProto.UINT4)
SCALES = (np.dtype(np.float32), np.dtype(np.float16))
# the float data types the op takes (its T1, as schema/families/n_bits.py states it)
FLOAT_TABLES = tuple(sorted(dtypes.BY_NAME[t].proto for t in _SPEC.types["T1"]
                            if dtypes.BY_NAME[t].kind in ("float8", "float4")))
# the first DequantizeLinear that reads float4e2m1, as schema/ reads onnx.defs
FLOAT4_SINCE = schema.first_version(schema.AI_ONNX, "DequantizeLinear",
                                    lambda s: any("float4e2m1" in t for t in s.types.values()))


def _type(elem: int) -> str:
    return helper.tensor_dtype_to_string(elem).removeprefix("TensorProto.").lower()


def _axis(value: int, rank: int, what: str, name: str) -> int:
    if not -rank <= value < rank:
        raise NoForm(f"{what}={value} is outside '{name}', of rank {rank}")
    return value % rank


def _zero_points(node: onnx.NodeProto, look: Lookups) -> np.ndarray | None:
    name = node.input[3] if len(node.input) > 3 else ""
    if not name:
        return None
    zp = look.const(name)
    if zp is None:
        raise NoForm(f"its zero points '{name}' are computed at run time")
    return np.asarray(zp)


def table(node: onnx.NodeProto, look: Lookups) -> dict:
    """The page's reading of the node's constants: the codes (int32, in the table's shape:
    a uint8 table of 4-bit codes unpacked along its last axis), the zero points (int32, the
    scales' shape; the page's default where the node has none), the scales, the data's
    element type, bits, block_size and both axes (>= 0)."""
    attrs = {**DEFAULTS, **attribute_values(node)}
    name, scale_name = node.input[0], node.input[2]
    data, scales = look.const(name), look.const(scale_name)
    if data is None:
        raise NoForm(f"its data '{name}' is computed at run time")
    if scales is None:
        raise NoForm(f"its scales '{scale_name}' are computed at run time")
    data, scales = np.asarray(data), np.asarray(scales)
    elem, bits, bs = helper.np_dtype_to_tensor_dtype(data.dtype), attrs["bits"], attrs["block_size"]
    if elem == TensorProto.FLOAT4E2M1:
        raise NoForm(f"its data '{name}' is float4e2m1: DequantizeLinear reads it blocked from opset "
                     f"{max(FLOAT4_SINCE, BLOCKED_SINCE)}, "
                     "but qlin does not write that form yet")
    if elem in FLOAT_TABLES:
        return _float_table(node, attrs, data, scales)
    if scales.dtype not in SCALES:
        raise NoForm(f"its scales '{scale_name}' are {scales.dtype}; qlin writes the QDQ form of float32 "
                     "and float16 scales only")
    if bs < 16 or bs & (bs - 1):
        raise NoForm(f"block_size={bs}: the page takes a power of two >= 16 for integer data")
    rank = data.ndim
    qa = _axis(attrs["quantize_axis"], rank, "quantize_axis", name)
    ga = _axis(attrs["gather_axis"], rank, "gather_axis", name)
    zp = _zero_points(node, look)
    if zp is not None and zp.dtype != data.dtype:
        raise NoForm(f"its zero points '{node.input[3]}' are {zp.dtype}, not its data's {data.dtype}")
    if elem in FOUR_BIT:
        if bits != 4:
            raise NoForm(f"bits={bits} with {_type(elem)} data '{name}': a 4-bit type holds bits=4 only")
        codes, default = data.astype(np.int32), 0
        zero = None if zp is None else zp.astype(np.int32)
    elif elem == TensorProto.UINT8:
        codes, zero, default = _uint8(node, attrs, data, zp, qa, ga)
    else:
        raise NoForm(f"its data '{name}' is {_type(elem)}: qlin writes the QDQ form of int4, uint4 and "
                     "uint8 tables only")
    want = list(codes.shape)
    want[qa] = -(-codes.shape[qa] // bs)
    if list(scales.shape) != want:
        raise NoForm(f"its scales '{scale_name}' have shape {list(scales.shape)}, where data '{name}' "
                     f"{list(codes.shape)} in blocks of {bs} along axis {qa} takes {want}")
    if zero is None:
        zero = np.full(want, default, np.int32)
    elif list(zero.shape) != want:
        raise NoForm(f"its zero points '{node.input[3]}' have shape {list(zp.shape)}, not the scales' {want}")
    return {"elem": elem, "bits": bits, "block_size": bs, "quantize_axis": qa, "gather_axis": ga,
            "codes": codes, "zero": zero, "scales": scales, "default": zp is None}


def _float_table(node: onnx.NodeProto, attrs: dict, data: np.ndarray, scales: np.ndarray) -> dict:
    """A float8 table: "dequantization is simply `output[...] = float(data[...]) *
    scales[block_index(...)]`", no zero points, block_size 0 for one block along the whole
    axis, and a scale dimension of 1 on another axis broadcast along it (written out in full
    for DequantizeLinear, whose blocked scales have the data's shape but along the axis)."""
    name, scale_name = node.input[0], node.input[2]
    if len(node.input) > 3 and node.input[3]:
        raise NoForm(f"its float8 data '{name}' has zero points '{node.input[3]}', which the page forbids")
    if scales.dtype not in SCALES:
        raise NoForm(f"its scales '{scale_name}' are {scales.dtype}; qlin writes the QDQ form of float32 "
                     "and float16 scales only")
    rank = data.ndim
    qa = _axis(attrs["quantize_axis"], rank, "quantize_axis", name)
    ga = _axis(attrs["gather_axis"], rank, "gather_axis", name)
    bs = attrs["block_size"] or data.shape[qa]
    if attrs["block_size"] and (bs < 16 or bs & (bs - 1)):
        raise NoForm(f"block_size={bs}: the page takes 0 or a power of two >= 16")
    want = list(data.shape)
    want[qa] = -(-data.shape[qa] // bs)
    if scales.ndim != rank or any(d not in (w, 1) or (i == qa and d != w)
                                  for i, (d, w) in enumerate(zip(scales.shape, want, strict=True))):
        raise NoForm(f"its scales '{scale_name}' have shape {list(scales.shape)}, where data '{name}' "
                     f"{list(data.shape)} in blocks of {bs} along axis {qa} takes {want} (or 1 off it)")
    full = np.ascontiguousarray(np.broadcast_to(scales, want))
    return {"elem": helper.np_dtype_to_tensor_dtype(data.dtype), "bits": 8, "block_size": bs,
            "quantize_axis": qa, "gather_axis": ga, "codes": data.astype(np.float32),
            "zero": np.zeros(want, np.float32), "scales": full, "default": False,
            "broadcast": list(scales.shape) != want}


def _uint8(node: onnx.NodeProto, attrs: dict, data: np.ndarray, zp: np.ndarray | None, qa: int, ga: int):
    """(codes, zero points or None, the default zero point) of a uint8 table: 4-bit codes
    unpacked along the last axis, 8-bit ones as they are."""
    name, rank, bits, bs = node.input[0], data.ndim, attrs["bits"], attrs["block_size"]
    if ga != 0:
        raise NoForm(f"gather_axis={attrs['gather_axis']} with uint8 data '{name}': the page gathers "
                     "uint8 data along axis 0 only")
    if rank < 2 or qa != rank - 1:
        raise NoForm(f"quantize_axis={attrs['quantize_axis']} with uint8 data '{name}' of rank {rank}: "
                     "onnxruntime reads a uint8 table quantized along its last axis only (where the "
                     "page packs 4-bit codes)")
    if bits not in TYPES:
        raise NoForm(f"bits={bits}: DequantizeLinear has no {bits}-bit type qlin writes (2, 4 and 8 only)")
    codes = _unpacked(data, bits, data.shape[-1] * 8 // bits)
    blocks = -(-codes.shape[-1] // bs)
    packed = [*data.shape[:-1], -(-blocks * bits // 8)]
    if zp is not None and list(zp.shape) != packed:
        raise NoForm(f"its zero points '{node.input[3]}' have shape {list(zp.shape)}, where {blocks} "
                     f"blocks of {bits}-bit zero points packed in uint8 take {packed}")
    return codes, (None if zp is None else _unpacked(zp, bits, blocks)), default_zero_point(bits)


def _unpacked(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """A uint8 array's codes, low bits first along its last axis, the first ``count`` of each row."""
    rows = unpack(packed.reshape(-1, packed.shape[-1]), bits, count)
    return rows.reshape(*packed.shape[:-1], count).astype(np.int32)


def dequantized(w: dict) -> np.ndarray:
    """The page's dequantized table: float(code - zero point) * scale, per block along the
    quantize axis, in the scales' type."""
    qa, bs = w["quantize_axis"], w["block_size"]
    per = np.repeat(np.arange(w["scales"].shape[qa]), bs)[: w["codes"].shape[qa]]
    z = np.take(w["zero"], per, axis=qa)
    s = np.take(w["scales"], per, axis=qa).astype(np.float32)
    return ((w["codes"] - z).astype(np.float32) * s).astype(w["scales"].dtype)


def _tensor(name: str, elem: int, values: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values).astype(helper.tensor_dtype_to_np_dtype(elem)), name)


def to_qdq(node: onnx.NodeProto, opset: int, look: Lookups) -> tuple[Built, GatherCase]:
    """DequantizeLinear (blocked along quantize_axis) of the table, then Gather along
    gather_axis: (the nodes and new initializers, the proof). An int4 / uint4 table is read
    where it is; a uint8 table of 4-bit codes is unpacked into uint4, and the page's default
    zero point of uint8 data (2^(bits-1)) is written out (DequantizeLinear's is 0)."""
    if opset < BLOCKED_SINCE:
        raise NoForm(f"blocked DequantizeLinear (and int4 / uint4) come with opset {BLOCKED_SINCE}: add "
                     f"--to-opset {BLOCKED_SINCE}")
    w = table(node, look)
    if opset < opset_for(w["bits"]):
        raise NoForm(f"bits=2: its codes are uint2, which DequantizeLinear reads from opset {TWO_BITS_SINCE} "
                     f"(DequantizeLinear-{TWO_BITS_SINCE}): add --to-opset {TWO_BITS_SINCE}")
    base = node.name or node.op_type
    inits: list[onnx.TensorProto] = []
    scale = node.input[2]
    if w.get("broadcast"):
        scale = look.namer(f"{base}_table_scale")
        inits.append(numpy_helper.from_array(w["scales"], scale))
    if w["elem"] in FOUR_BIT or w["elem"] in FLOAT_TABLES:
        elem, data = w["elem"], node.input[0]
    else:
        elem = TYPES[w["bits"]]
        data = node.input[0]
        if w["bits"] < 8:
            data = look.namer(f"{base}_table_q")
            inits.append(_tensor(data, elem, w["codes"]))
    zp = node.input[3] if len(node.input) > 3 else ""
    if (zp and w["elem"] == TensorProto.UINT8 and w["bits"] < 8) or (not zp and np.any(w["zero"] != 0)):
        zp = look.namer(f"{base}_table_zero_point")
        inits.append(_tensor(zp, elem, w["zero"]))
    table_out = look.namer(f"{base}_table")
    dq = helper.make_node("DequantizeLinear", [data, scale] + ([zp] if zp else []), [table_out],
                          name=look.namer(f"{base}_dq"), axis=w["quantize_axis"], block_size=w["block_size"])
    gather = helper.make_node("Gather", [table_out, node.input[1]], [node.output[0]],
                              name=look.namer(f"{base}_gather"), axis=w["gather_axis"])
    shape = list(w["codes"].shape)
    changes = [f"GatherBlockQuantized -> DequantizeLinear ({_type(elem)} {shape}, blocks of "
               f"{w['block_size']} along axis {w['quantize_axis']}), Gather (axis {w['gather_axis']}) "
               "(QDQ form)"]
    if w["elem"] == TensorProto.UINT8 and w["bits"] < 8:
        changes.append(f"its {w['bits']}-bit codes unpacked from uint8 into {_type(elem)}")
    if w["default"] and np.any(w["zero"] != 0):
        changes.append(f"its default zero point ({int(w['zero'].flat[0])}) written out: DequantizeLinear's "
                       "is 0")
    written = {t.name: t for t in inits}
    proof = [written[x] if x in written else numpy_helper.from_array(np.asarray(look.const(x)), x)
             for x in dq.input if x]
    return Built([dq, gather], inits, changes), GatherCase(w, dq, proof)


class GatherCase(NBitsCase):
    """What proves a GatherBlockQuantized rewrite: the page's dequantized table against
    qlin's evaluator's DequantizeLinear-21 of the constants it reads (``inits``)."""

    def want(self) -> np.ndarray:
        return dequantized(self.w)


# ---- the way back: a Gather of a blocked DequantizeLinear of a constant table ----------------

def _layout(dq: onnx.NodeProto, gather: onnx.NodeProto, codes: np.ndarray, scale: np.ndarray,
            whole: bool = False):
    """(block size, quantize axis, gather axis) of a Gather of a blocked DequantizeLinear, each
    checked against what GatherBlockQuantized takes (NoForm naming the value). With ``whole``
    (a float8 table), blocks as long as the axis or longer are one block along it: block size 0."""
    attrs = attribute_values(dq)
    bs = attrs.get("block_size", 0)
    rank = codes.ndim
    if rank < 1 or scale.ndim != rank:
        raise NoForm(f"its scale '{dq.input[1]}' has rank {scale.ndim}, not the table's {rank}")
    one_block = whole and bs and bs >= codes.shape[_axis(attrs.get("axis", 1), rank, "axis", dq.input[0])]
    if not one_block and (not bs or bs < 16 or bs & (bs - 1)):  # (one block: written as block_size 0)
        raise NoForm(f"'{dq.input[0]}' is dequantized in blocks of {bs}, and GatherBlockQuantized takes "
                     "a power of two >= 16" + (" or one block along the axis" if whole else ""))
    if scale.dtype not in SCALES:
        raise NoForm(f"its scale '{dq.input[1]}' is {scale.dtype}; qlin writes float32 and float16 scales "
                     "only")
    if any(a.name == "output_dtype" and a.i not in (0, helper.np_dtype_to_tensor_dtype(scale.dtype))
           for a in dq.attribute):
        raise NoForm("its output_dtype is not its scale's type, which GatherBlockQuantized writes")
    qa = _axis(attrs.get("axis", 1), rank, "axis", dq.input[0])
    ga = _axis(next((a.i for a in gather.attribute if a.name == "axis"), 0), rank, "the Gather's axis",
               dq.input[0])
    want = list(codes.shape)
    want[qa] = -(-codes.shape[qa] // bs)
    if list(scale.shape) != want:
        raise NoForm(f"its scale '{dq.input[1]}' has shape {list(scale.shape)}, where the table "
                     f"{list(codes.shape)} in blocks of {bs} along axis {qa} takes {want}")
    return bs, qa, ga


def _float_back(dq: onnx.NodeProto, elem: int, codes: np.ndarray, zero: np.ndarray | None, bs: int,
                qa: int) -> int:
    """The block size GatherBlockQuantized writes for a float8 table (0 for one block along the
    axis; float4 has no QDQ form qlin writes, so none back). The page's float8 reading has no
    zero point: a zero point of +0 everywhere (x - 0 = x) is left out, any other stays QDQ."""
    if elem == TensorProto.FLOAT4E2M1:
        raise NoForm(f"its table '{dq.input[0]}' is float4e2m1: qlin writes GatherBlockQuantized of "
                     "float8 tables, not float4")
    if zero is not None and np.any(np.ascontiguousarray(zero).view(np.uint8)):
        raise NoForm(f"its float8 zero point '{dq.input[2]}' is not +0 everywhere, and GatherBlockQuantized "
                     "reads float8 data without zero points")
    return 0 if bs >= codes.shape[qa] and (bs < 16 or bs & (bs - 1)) else bs


def from_qdq(dq: onnx.NodeProto, gather: onnx.NodeProto, weight: onnx.TensorProto, scale: np.ndarray,
             zero: np.ndarray | None, namer, codes: np.ndarray | None = None,
             ) -> tuple[onnx.NodeProto, list, dict]:
    """The GatherBlockQuantized of ``gather`` reading ``dq``'s blocked table (``weight``,
    its ``scale`` and ``zero`` point arrays): (node, new initializers, the page's reading of
    the node as ``table`` gives it, for the proof). An int4 / uint4 table stays where it is
    (bits 4; the page's default zero point 0 is DequantizeLinear's); a uint8 or int8 table
    becomes uint8 with bits 8 (int8 codes and zero points shifted by 128, the same
    differences), its zero point written wherever the page's default, 128, is not it.
    NoForm when the layout has none. ``codes``: the table as read already (one stored outside
    the model file, read from beside it)."""
    codes = numpy_helper.to_array(weight) if codes is None else codes
    rank = codes.ndim
    elem = weight.data_type
    bs, qa, ga = _layout(dq, gather, codes, scale, whole=elem in FLOAT_TABLES)
    inits: list[onnx.TensorProto] = []
    inputs = [dq.input[0], gather.input[1], dq.input[1]]
    zp = dq.input[2] if len(dq.input) > 2 else ""
    base = gather.name or "Gather"
    bits = 4
    if elem in (TensorProto.UINT8, TensorProto.INT8):
        if ga != 0 or rank < 2 or qa != rank - 1:
            raise NoForm(f"its {_type(elem)} table '{dq.input[0]}' is quantized along axis {qa} and gathered "
                         f"along axis {ga}: onnxruntime's GatherBlockQuantized reads uint8 tables gathered "
                         "along axis 0 and quantized along their last axis only")
        bits, shift = 8, (128 if elem == TensorProto.INT8 else 0)
        z = (np.zeros(scale.shape, np.int32) if zero is None else zero.astype(np.int32)) + shift
        if shift:
            inputs[0] = namer(f"{base}_table_q")
            inits.append(_tensor(inputs[0], TensorProto.UINT8, codes.astype(np.int32) + shift))
        if not np.any(z != 128):  # the page's default
            zp = ""
        elif shift or zero is None:
            zp = namer(f"{base}_table_zero_point")
            inits.append(_tensor(zp, TensorProto.UINT8, z))
    elif elem in FLOAT_TABLES:
        bits, bs, zp = 8, _float_back(dq, elem, codes, zero, bs, qa), ""
    elif elem not in FOUR_BIT:
        raise NoForm(f"its table '{dq.input[0]}' is {_type(elem)}: qlin writes GatherBlockQuantized from "
                     "int4, uint4, 8-bit and float8 tables only (a 2-bit table stays QDQ)")
    if zp:
        inputs.append(zp)
    domain, op = GATHER_BLOCK_QUANTIZED
    node = helper.make_node(op, inputs, [gather.output[0]], name=namer(f"{base}_{op}"), domain=domain,
                            bits=bits, block_size=bs, gather_axis=ga, quantize_axis=qa)
    # what the proof holds against the source's DequantizeLinear: the node as written, read
    # back as the way there reads a GatherBlockQuantized
    written = {dq.input[0]: codes, dq.input[1]: scale}
    if zero is not None:
        written[dq.input[2]] = zero
    written.update({t.name: numpy_helper.to_array(t) for t in inits})
    return node, inits, table(node, Lookups(written.get, lambda name: None, namer))
