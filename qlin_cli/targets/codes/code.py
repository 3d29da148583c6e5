"""What every QT code module defines: one ``Code`` subclass, documented like a rule (What it
checks / Why is this bad? / Example / Fix)."""

from __future__ import annotations

from ...severity import ERROR, cleandoc


class Code:
    code: str = ""
    name: str = ""
    severity: str = ERROR
    summary: str = ""

    @classmethod
    def doc(cls) -> str:
        return cleandoc(cls.__doc__ or "")

    @classmethod
    def to_json(cls) -> dict:
        return {"code": cls.code, "name": cls.name, "severity": cls.severity, "summary": cls.summary}
