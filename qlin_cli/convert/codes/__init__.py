"""The QC codes: every reason `qlin convert` refuses a node, one module each
(``qc102_not_expressible.py``), named by code and name like the rules' and the targets'
modules; ``get(code)`` and ``all_codes()`` find them.

QC1xx Q/DQ nodes (the target opset or domain cannot write them), QC2xx other ops, QC3xx
model-local functions, QC4xx proofs. Every refusal is an error: nothing is written. The
pass that refuses (convert/passes/) attaches the reason and the ways out it tried
(``convert.refused``). Nothing here imports onnx: `qlin rules` lists the codes without it.
"""

from __future__ import annotations

from ...code import Code, Table

_TABLE = Table(__path__, __name__, "qc")
all_codes = _TABLE.all_codes
get = _TABLE.get
find = _TABLE.find

__all__ = ["Code", "all_codes", "find", "get"]
