"""One finding, wherever it comes from: a rule on a node or a site of the model, a
target's profile, or a node `qlin convert` refuses. What is wrong and where are fields,
composed only when rendered."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding", "Fix", "alike", "more"]


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


# A runtime's behaviour found on many nodes, said once: the check report's and the convert
# report's text fold a target's warnings and infos of one message into the line of the first
# node (the JSON formats list each).


def alike(findings) -> list[tuple[object, list]]:
    """(finding, the other nodes' findings it stands for) in order: a target's warning or
    info whose message is the same on several nodes of one file is a behaviour of the
    runtime, said once at its first node; every other finding stands for itself."""
    groups: dict[tuple, list] = {}
    out: list[tuple[object, list]] = []
    for d in findings:
        if d.target and d.severity != "error":
            key = (d.code, d.target, d.detail)
            if key in groups:
                groups[key].append(d)
                continue
            groups[key] = []
            out.append((d, groups[key]))
        else:
            out.append((d, []))
    return out


def more(others: list, flag: str = "--show-all") -> str:
    """' (and 3 more nodes alike: a, b, c; --show-all lists each)' for the findings a line
    stands for (``flag``: the option that lists each)."""
    if not others:
        return ""
    names = ", ".join(o.node or "the model" for o in others[:3]) + (", ..." if len(others) > 3 else "")
    n = len(others)
    return f" (and {n:,} more node{'s' if n > 1 else ''} alike: {names}; {flag} lists each)"
