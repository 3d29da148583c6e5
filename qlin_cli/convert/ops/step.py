"""The state of one non-Q/DQ node while it walks its op's version steps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..opsteps import StepDiff


@dataclass
class OpStep:
    """One step of one node: the node as it is now (``node``), the constants the rewrite
    adds (``before``), and what a step may ask about the node's inputs."""

    node: onnx.NodeProto
    op: str
    frm: int  # since_version the node is at
    to: int  # since_version it goes to
    diff: StepDiff | None
    const: Callable[[str], np.ndarray | None]  # a constant input's value (None: not constant)
    rank: Callable[[str], int | None]  # an input's rank (None: unknown)
    namer: Callable[[str], str]
    before: list[onnx.NodeProto] = field(default_factory=list)
    after: list[onnx.NodeProto] = field(default_factory=list)  # nodes that read the node's outputs
    changes: list[str] = field(default_factory=list)
    exact: bool = True  # False: the rewrite is not exact by construction and must be proven
    made: dict[str, np.ndarray] = field(default_factory=dict)  # constants added on the walk so far

    def value(self, name: str) -> np.ndarray | None:
        """A constant input's value: one this walk added, or one of the model's."""
        if not name:
            return None
        return self.made[name] if name in self.made else self.const(name)

    @property
    def up(self) -> bool:
        return self.to > self.frm

    def attr(self, name: str):
        for a in self.node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return None

    def drop_attr(self, name: str) -> None:
        keep = [a for a in self.node.attribute if a.name != name]
        del self.node.attribute[:]
        self.node.attribute.extend(keep)

    def set_attr(self, name: str, value) -> None:
        self.drop_attr(name)
        self.node.attribute.append(helper.make_attribute(name, value))

    def input(self, i: int) -> str:
        return self.node.input[i] if i < len(self.node.input) else ""

    def set_input(self, i: int, name: str) -> None:
        while len(self.node.input) <= i:
            self.node.input.append("")
        self.node.input[i] = name
        while self.node.input and self.node.input[-1] == "":
            self.node.input.pop()

    def add_const(self, base: str, value: np.ndarray) -> str:
        """A Constant node placed before the node; returns the value's name."""
        name = self.namer(f"{self.node.name or self.op}_{base}")
        self.made[name] = np.asarray(value)
        self.before.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
            np.asarray(value), "")))
        return name
