"""What the rules see of one node: its schema, attributes, input types, shapes and values."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import onnx
from onnx import AttributeProto

from .. import schema
from ..model.tensors import UnsafeData, read_value
from ..model.walk import Scope, node_label
from ..schema import dtypes
from ..schema.ops import DEFAULT_QUANT_TYPE


class NodeView:
    def __init__(self, node: onnx.NodeProto, index: int, scope: Scope, base_dir: str):
        self.node = node
        self.index = index
        self.scope = scope
        self.base_dir = base_dir
        self.domain = schema.normalize_domain(node.domain)
        self.imported = self.domain in scope.opsets or (
            self.domain == "" and "ai.onnx" in scope.opsets
        )
        self.opset = scope.opsets.get(self.domain, scope.opsets.get("ai.onnx") if self.domain == "" else None)
        self.spec = schema.lookup(self.domain, node.op_type, self.opset) if self.opset else None
        if self.spec is None and not self.imported:
            only = schema.versions(self.domain, node.op_type)
            if self.domain and len(only) == 1:  # a vendor op with one version: check against it
                self.spec = only[0]
        self.attrs = {a.name: a for a in node.attribute}
        self.inputs = list(node.input)  # protobuf field access is slow; read it once
        # types and shapes of x, scale and zero point, looked up once
        found = [scope.find_type(name) if name else None for name in self.inputs[:3]]
        found += [None] * (3 - len(found))
        self._types = [None if t is None or t[0] == 0 else dtypes.name_of(t[0]) for t in found]
        self._shapes = [None if t is None else t[1] for t in found]

    # ---- naming -----------------------------------------------------------
    @property
    def label(self) -> str:
        return node_label(self.node, self.index)

    @property
    def where(self) -> str:
        """How a message names the node: 'q1', or '#3 in main/loop.body'."""
        if self.node.name:
            return f"'{self.node.name}'"
        return f"#{self.index} in {self.scope.path}"

    @property
    def domain_name(self) -> str:
        return schema.DOMAIN_NAMES.get(self.domain, self.domain)

    # ---- inputs -------------------------------------------------------------
    def present(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] != ""

    def input_name(self, i: int) -> str:
        return self.inputs[i] if self.present(i) else ""

    def in_type(self, i: int) -> str | None:
        if i < 3:
            return self._types[i]
        t = self.scope.find_type(self.inputs[i]) if self.present(i) else None
        return None if t is None or t[0] == 0 else dtypes.name_of(t[0])

    def in_shape(self, i: int) -> tuple | None:
        if i < 3:
            return self._shapes[i]
        t = self.scope.find_type(self.inputs[i]) if self.present(i) else None
        return None if t is None else t[1]

    def in_rank(self, i: int) -> int | None:
        s = self.in_shape(i)
        return None if s is None else len(s)

    def in_value(self, i: int) -> np.ndarray | None:
        """The input's value when it is an initializer or a Constant; None otherwise.

        Values are cached per tensor in the scope, so a scale shared by a Q/DQ pair,
        or read by several rules, is read once.
        """
        tensor = self.scope.find_value(self.inputs[i]) if self.present(i) else None
        if tensor is None:
            return None
        cache = self.scope.read_cache
        if id(tensor) not in cache:
            try:
                cache[id(tensor)] = read_value(tensor, self.base_dir)
            except UnsafeData:
                cache[id(tensor)] = None  # the engine refuses unsafe files before rules run
        return cache[id(tensor)]

    def out_type(self) -> str | None:
        if not self.node.output or not self.node.output[0]:
            return None
        t = self.scope.find_type(self.node.output[0])
        return None if t is None or t[0] == 0 else dtypes.name_of(t[0])

    def signature(self) -> tuple:
        """Everything the rules read, except names: two nodes with one signature get
        the same verdict, so a clean verdict is computed once per signature."""
        attrs = tuple(
            (a.name, a.type, a.i if a.type == AttributeProto.INT else a.SerializeToString())
            for a in self.node.attribute
        )
        return (
            self.domain, self.node.op_type, self.opset, self.imported, attrs,
            tuple(bool(n) for n in self.inputs), len(self.node.output), self.out_type(),
            tuple(self._types), tuple(self._shapes), self._value_key(1), self._value_key(2),
        )

    def _value_key(self, i: int):
        tensor = self.scope.find_value(self.inputs[i]) if self.present(i) else None
        if tensor is None:
            return None
        if tensor.raw_data and len(tensor.raw_data) <= 4096:
            return (tensor.data_type, tuple(tensor.dims), tensor.raw_data)
        return ("tensor", id(tensor))

    # ---- attributes ---------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self.attrs

    def attr_int(self, name: str) -> int | None:
        a = self.attrs.get(name)
        if a is not None:
            return a.i if a.type == AttributeProto.INT else None
        return self.spec.attributes.get(name) if self.spec else None

    # ---- derived facts ------------------------------------------------------
    @cached_property
    def quant_type(self) -> str | None:
        """Type of the quantized side: y of a quantize node, x of a dequantize node."""
        spec = self.spec
        if spec is None:
            return None
        if spec.kind == "dequantize":
            return self.in_type(0)
        od = self.attr_int("output_dtype") if "output_dtype" in spec.attributes else 0
        if od:
            return dtypes.name_of(od)
        if self.present(2):
            return self.in_type(2)
        return DEFAULT_QUANT_TYPE

    @cached_property
    def implied_out_type(self) -> str | None:
        """The output type the schema implies: for quantize the quantized type; for
        dequantize ``output_dtype``, else the scale's type ("If output_dtype is not
        supplied then the output type is the same as x_scale"), or the one fixed
        type of versions without a choice."""
        spec = self.spec
        if spec is None:
            return None
        if spec.kind == "quantize":
            return self.quant_type
        od = self.attr_int("output_dtype") if "output_dtype" in spec.attributes else 0
        if od:
            return dtypes.name_of(od)
        out_types = spec.types[spec.outputs[0].types]
        if len(out_types) == 1:
            return next(iter(out_types))
        return self.in_type(1)

    @cached_property
    def axis(self) -> int | None:
        """The axis in force (explicit or the schema default); None when there is none."""
        return self.attr_int("axis")

    @cached_property
    def x_rank(self) -> int | None:
        return self.in_rank(0)

    @cached_property
    def block_size(self) -> int:
        return self.attr_int("block_size") or 0

    @cached_property
    def scale_rank(self) -> int | None:
        return self.in_rank(1)

    @cached_property
    def granularity(self) -> str | None:
        """per-tensor, per-axis or blocked, read from the scale's rank and block_size."""
        r = self.scale_rank
        if r is None:
            return schema.BLOCKED if self.block_size > 0 else None
        if self.block_size > 0:
            return schema.BLOCKED
        if r == 0:
            return schema.PER_TENSOR
        if r == 1:
            return schema.PER_AXIS
        return None  # rank >= 2 without block_size: not a granularity at all

    def normalized_axis(self) -> int | None:
        """The axis in [0, rank) or None when rank or axis is unknown or out of range."""
        if self.axis is None or self.x_rank is None:
            return None
        a = self.axis + self.x_rank if self.axis < 0 else self.axis
        return a if 0 <= a < self.x_rank else None
