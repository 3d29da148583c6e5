"""One finding, wherever it comes from: a rule on a node or a site of the model, a
target's profile, or a node `qlin convert` refuses. What is wrong and where are fields,
composed only when rendered."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding", "Fix"]


@dataclass(frozen=True)
class Fix:
    """Edits that make the finding go away. ``safe``: they cannot change any result.
    (Here, not with the rules: a report read from the results cache needs no rule loaded.)"""

    title: str
    edits: tuple
    safe: bool = True


@dataclass(frozen=True)
class Finding:
    """One finding, of a rule, a target or convert: what is wrong (``detail``) and where (the
    other fields), kept apart and composed only when rendered (``message``)."""

    code: str
    severity: str
    detail: str  # the violation's own message, without the location
    node: str  # the node's label (name or #index); "" when the finding is not on a node
    op_type: str
    domain: str
    opset: int
    graph: str
    fix: Fix | None = None
    where: str = ""  # how a message names the place: "node 'q1' (QuantizeLinear-21 (ai.onnx))", "model"
    title: str = ""  # what it is on, short: "QuantizeLinear-21 ai.onnx", "opset import com.microsoft 1"
    # a compact view of the node for the terminal: (kind, name, text, marked) rows,
    # kind "input", "attribute" or "output"; marked: the message names it
    frame: tuple = ()
    target: str = ""  # the target whose finding it is ("onnxruntime"); "" for a rule's
    convertible: bool = False  # a target's finding that `qlin convert --target TARGET` removes
    ways_out: tuple[str, ...] = ()  # a convert refusal's: the options that get past it, each tried

    def with_frame(self, frame: tuple) -> Finding:
        """This finding with the node's view ``frame`` (``dataclasses.replace`` without its
        look at every field: a report of thousands of findings frames each)."""
        new = object.__new__(Finding)
        new.__dict__.update(self.__dict__)
        new.__dict__["frame"] = frame
        return new

    @property
    def message(self) -> str:
        """The finding in one line, its place first, for formats without columns."""
        return f"{self.where}: {self.detail}" if self.where else self.detail

    def to_json(self) -> dict:
        """One finding in the JSON contract, version 2: ``message`` without the location (a
        target's finding is reported like a rule's: its code names the target's rules)."""
        return {
            "code": self.code, "severity": self.severity, "message": self.detail,
            "title": self.title, "node": self.node, "op_type": self.op_type,
            "domain": self.domain, "opset": self.opset, "graph": self.graph,
            "fix": None if self.fix is None else {
                "title": self.fix.title, "safe": self.fix.safe,
                "edits": [e.describe() for e in self.fix.edits],
            },
        }
