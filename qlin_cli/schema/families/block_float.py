"""Block floating point fake quantization (AMD Quark).

Source: AMD Quark's operator page for com.amd.quark BFPQuantizeDequantize 1 (x and y
of type T, "T in ( tensor(float) )"; attributes with their defaults; "axis ...
Accepted range is [-r, r-1]"; bfp_method "'to_bfp' ... and 'to_bfp_prime'";
rounding_mode "0 for rounding half away from zero, 1 for rounding half upward and 2
for rounding half to even"). The page states nothing else (no limits on bit_width,
block_size or the sub-block attributes), so qlin checks nothing else beyond the domain
import every node gets (QL103).
"""

from __future__ import annotations

from ..ops import A_STRING, BLOCK_FLOAT, QUARK, Constraint
from .common import FLOAT, other, out, spec

SPECS = (
    spec(QUARK, "BFPQuantizeDequantize", 1, BLOCK_FLOAT,
         [other("x", "T")], [out("y", "T", role="other")], {"T": FLOAT},
         {"bfp_method": "to_bfp", "axis": 1, "bit_width": 16, "block_size": 8, "rounding_mode": 0,
          "sub_block_size": 2, "sub_block_shift_bits": 1, "convert_to_bfloat_before_bfp": 0},
         attribute_types={"bfp_method": A_STRING},
         constraints=(
             Constraint("bfp_method", "one-of", ("to_bfp", "to_bfp_prime"),
                        "bfp_method: \"'to_bfp' for the vanilla BFP and 'to_bfp_prime' for ... "
                        "MicroeXponents\""),
             Constraint("rounding_mode", "one-of", (0, 1, 2),
                        "rounding_mode: \"0 for rounding half away from zero, 1 for rounding half "
                        "upward and 2 for rounding half to even\""),
             Constraint("axis", "axis-unless-rank-1", 0,
                        "axis: \"Accepted range is [-r, r-1] where r = rank(input)\"; \"When the rank "
                        "of the input is 1, the axis can be ignored\"")),
         source="AMD Quark operator page BFPQuantizeDequantize"),
)
