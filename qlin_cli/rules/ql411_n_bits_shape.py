from ..schema import dtypes
from .base import FamilyRule, ceil_div
from .base_shapes import fmt_shape


class NBitsShape(FamilyRule):
    """
    ## What it checks
    com.microsoft MatMulNBits: that the attributes `K`, `N`, `bits` and
    `block_size` agree with the tensors. With k_blocks = ceil(K / block_size) and
    blob_size = block_size * bits / 8, B is [N, k_blocks, blob_size], scales
    [N, k_blocks] (or the older flat [N * k_blocks]), packed uint8 zero points
    [N, ceil(k_blocks * bits / 8)] (or flat), unpacked zero points the scales'
    shape, bias [N], and A's last dimension is K.

    com.microsoft GatherBlockQuantized: that scales have data's rank and
    ceil(D / block_size) entries along `quantize_axis` (data's last dimension
    counted unpacked for uint8 data of fewer bits), data's size elsewhere; zero
    points the scales' shape; no zero points and a block size of 0 only for
    float8 / float4 data; `gather_axis` 0 for uint8 data.

    ## Why is this bad?
    The attributes are how the kernel reads the packed bytes: when they disagree
    with the tensors, onnxruntime refuses the node, or reads weights and scales
    of the wrong blocks and computes garbage without a word.

    ## Example
    ```
    com.microsoft.MatMulNBits(A: [1, 64], B: [64, 2, 16], scales: [64, 2], K=64, N=64,
                              bits=4, block_size=16)     # block_size 16 makes k_blocks 4
    ```

    ## Fix
    Write the attributes the weights were packed with (the message gives the
    values the tensors imply), or repack the weights.
    """

    code = "QL411"
    name = "n-bits-shape"
    summary = "MatMulNBits / GatherBlockQuantized attributes disagree with the packed tensors."

    def check(self, n):
        if n.op == "MatMulNBits":
            yield from _matmul_nbits(n)
        elif n.op == "GatherBlockQuantized":
            yield from _gather(n)


def _matmul_nbits(n):
    k, nn, bits, bs = (n.attr_int(a) for a in ("K", "N", "bits", "block_size"))
    if not all(isinstance(v, int) and v > 0 for v in (k, nn, bits, bs)):
        return  # QL107 / QL305 report missing or bad attributes
    k_blocks = ceil_div(k, bs)
    blob = ceil_div(bs * bits, 8)
    attrs = f"K={k}, N={nn}, bits={bits}, block_size={bs}"
    b = n.in_shape(1)
    if b is not None and not _fits(b, (nn, k_blocks, blob)):
        implied = ""
        if len(b) == 3 and None not in b and b[2] * 8 % bits == 0:
            implied = f" (its shape implies N={b[0]} and block_size={b[2] * 8 // bits})"
        yield (f"B '{n.input_name(1)}' has shape {fmt_shape(b)} but {attrs} make it "
               f"[{nn}, {k_blocks}, {blob}] (N, ceil(K / block_size), block_size * bits / 8)"
               f"{implied}: write the attributes the weights were packed with")
    s = n.in_shape(2)
    if s is not None and not (_fits(s, (nn, k_blocks)) or _fits(s, (nn * k_blocks,))):
        yield (f"scales '{n.input_name(2)}' has shape {fmt_shape(s)} but {attrs} make it "
               f"[{nn}, {k_blocks}] (N, ceil(K / block_size)): give one scale per block")
    if n.present_at(3) and n.in_shape(3) is not None:
        z, zt = n.in_shape(3), n.in_type(3)
        if zt == "uint8":
            packed = ceil_div(k_blocks * bits, 8)
            ok = (_fits(z, (nn, packed)) or _fits(z, (nn * packed,))
                  or _fits(z, (ceil_div(nn * k_blocks * bits, 8),)))
            want = f"[{nn}, {packed}] (N, ceil(k_blocks * bits / 8))"
        else:
            ok = _fits(z, (nn, k_blocks)) or _fits(z, (nn * k_blocks,))
            want = f"[{nn}, {k_blocks}], the scales' shape"
        if not ok:
            yield (f"zero_points '{n.input_name(3)}' has shape {fmt_shape(z)} but {attrs} make it "
                   f"{want}: give one zero point per block")
    a = n.in_shape(0)
    if a is not None and a and a[-1] is not None and a[-1] != k:
        yield (f"A '{n.input_name(0)}' has {a[-1]} features in its last dimension "
               f"{fmt_shape(a)} but K={k}: K must be A's last dimension")
    if n.present_at(5) and n.in_shape(5) is not None and not _fits(n.in_shape(5), (nn,)):
        yield (f"bias '{n.input_name(5)}' has shape {fmt_shape(n.in_shape(5))} but N={nn}: give it "
               f"shape [{nn}]")


def _gather(n):
    data, scales = n.in_shape(0), n.in_shape(2)
    dt = n.in_type(0)
    is_float = dt is not None and dtypes.is_low_precision_float(dt)
    bs, bits = n.attr_int("block_size"), n.attr_int("bits")
    qa, ga = n.attr_int("quantize_axis"), n.attr_int("gather_axis")
    if bs == 0 and dt is not None and not is_float:
        yield (f"block_size 0 with {dt} data; 0 (one block per axis) is only for float8 / float4 "
               f"data: give the block size the data was quantized with")
        return
    if is_float and n.present_at(3):
        yield (f"zero points '{n.input_name(3)}' with {dt} data; float8 / float4 quantization is "
               f"symmetric and takes none: remove them")
    if dt == "uint8" and ga not in (0, None):
        yield f"gather_axis {ga} with uint8 data; uint8 data is gathered along axis 0 only"
    if data is None or scales is None or qa is None or bs is None or None in data:
        return
    r = len(data)
    if not -r <= qa < r:
        return  # QL305
    axis = qa % r
    if len(scales) != r:
        yield (f"scales '{n.input_name(2)}' has rank {len(scales)} {fmt_shape(scales)} but data "
               f"{fmt_shape(data)} has rank {r}: scales have data's rank")
        return
    real = list(data)
    if dt == "uint8" and bits in (2, 4):
        real[-1] = real[-1] * (8 // bits)  # packed along the last dimension
    want = list(real)
    want[axis] = 1 if bs == 0 else ceil_div(real[axis], bs)
    ok = all(s is None or s == w or (is_float and j != axis and s == 1)
             for j, (s, w) in enumerate(zip(scales, want, strict=True)))
    if not ok:
        yield (f"scales '{n.input_name(2)}' has shape {fmt_shape(scales)} but data "
               f"{fmt_shape(data)} with block_size {bs} along quantize_axis {qa} takes "
               f"{fmt_shape(tuple(want))}: give one scale per block")
    z = n.in_shape(3) if n.present_at(3) else None
    if z is not None and dt != "uint8" and not is_float and tuple(z) != tuple(scales):
        yield (f"zero points '{n.input_name(3)}' have shape {fmt_shape(z)} but scales "
               f"{fmt_shape(scales)}: give them the scales' shape")


def _fits(shape, want) -> bool:
    return len(shape) == len(want) and all(a is None or a == b for a, b in zip(shape, want, strict=True))
