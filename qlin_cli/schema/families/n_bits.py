"""Packed low-bit weights quantized in blocks.

Source: onnxruntime's registered schemas (1.31.1) and their descriptions.
MatMulNBits: B is "Packed uint8 tensor of shape (N, k_blocks, blob_size), where
k_blocks = ceil(K / block_size) and blob_size = (block_size * bits / 8)"; scales
"(N, k_blocks)"; zero_points packed uint8 "(N, ceil(k_blocks * bits / 8))" or unpacked
"(N, k_blocks)" of A's type; bias "[N]"; bits "supported values: 2, 4, 8"; block_size
"Must be a power of two and >= 16". GatherBlockQuantized: data "Block-wise quantized"
along quantize_axis; scales "Same rank as data"; bits "Must be 2, 4 or 8"; block_size
"a power of 2 and not smaller than 16, or 0" (0 only for float8 / float4 data); both
axes "Accepted range is [-r, r-1]".
"""

from __future__ import annotations

from ..ops import MICROSOFT, N_BITS, OTHER, Constraint, Group
from .common import FLOAT8S, INT32, other, out, q, s, spec, z

_FLOATS = frozenset({"float", "float16", "bfloat16"})

SPECS = (
    spec(MICROSOFT, "MatMulNBits", 1, N_BITS,
         [other("A", "T1"), q("B", "T2", 0), s("scales", "T1", 0), z("zero_points", "T3", 0, True),
          other("g_idx", "T4", True), other("bias", "T1", True)],
         [out("Y", "T1", role=OTHER)],
         {"T1": _FLOATS, "T2": frozenset({"uint8"}), "T3": _FLOATS | {"uint8"}, "T4": INT32},
         {"K": None, "N": None, "accuracy_level": 0, "bits": 4, "block_size": None,
          "weight_prepacked": 0},
         required=frozenset({"K", "N", "block_size"}), groups=(Group("B", 1, ()),),
         constraints=(
             Constraint("bits", "one-of", (2, 4, 8), "bits: \"supported values: 2, 4, 8\""),
             Constraint("block_size", "pow2-min", 16,
                        "block_size: \"Must be a power of two and >= 16\""),
             Constraint("accuracy_level", "one-of", (0, 1, 2, 3, 4),
                        "accuracy_level \"can be: 0(unset), 1(fp32), 2(fp16), 3(bf16), or 4(int8)\""),
             Constraint("K", "min", 1, "K: the input feature dimension"),
             Constraint("N", "min", 1, "N: the output feature dimension")),
         source="onnxruntime registered schema"),
    spec(MICROSOFT, "GatherBlockQuantized", 1, N_BITS,
         [q("data", "T1", 0), other("indices", "Tind"), s("scales", "T2", 0),
          z("zero_points", "T1", 0, True)],
         [out("output", "T2", role=OTHER)],
         {"T1": frozenset({"int4", "uint4", "uint8", "float4e2m1"}) | FLOAT8S, "T2": _FLOATS,
          "Tind": frozenset({"int32", "int64"})},
         {"bits": 4, "block_size": 128, "gather_axis": 0, "quantize_axis": 1},
         groups=(Group("data", 0, ()),),
         constraints=(
             Constraint("bits", "one-of", (2, 4, 8), "bits: \"Must be 2, 4 or 8\""),
             Constraint("block_size", "pow2-min-or-0", 16,
                        "block_size: \"a power of 2 and not smaller than 16, or 0\""),
             Constraint("quantize_axis", "axis", 0, "quantize_axis: \"Accepted range is [-r, r-1]\""),
             Constraint("gather_axis", "axis", 0, "gather_axis: \"Accepted range is [-r, r-1]\"")),
         source="onnxruntime registered schema"),
)
