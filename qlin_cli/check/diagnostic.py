"""One finding of one rule on one node."""

from __future__ import annotations

from dataclasses import asdict, dataclass

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    node: str
    op_type: str
    domain: str
    opset: int
    graph: str

    def to_json(self) -> dict:
        return asdict(self)
