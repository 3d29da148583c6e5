"""What a conversion carries from pass to pass, and what it reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import onnx

from ..finding import Finding
from .sites import Namer, Site


@dataclass
class Options:
    to_opset: int
    to_domain: str | None = None  # None: every node keeps its domain
    ir_version: int | None = None
    lower: bool = False
    verify: bool = True
    vendor_axis: int | None = None  # --quark-axis: the axis of a vendor node that omits it
    to_format: str | None = None  # "qdq": QOperator nodes become their QDQ form (convert/formats/)
    tolerance: int = 0  # the difference a format rewrite may have, in steps of its output
    weights: str | None = None  # "fold" / "unfold" / "strip" (passes/weights.py)
    to_int8: bool = False  # uint8 Q/DQ tensors -> int8, zero points - 128 (passes/shift.py)
    to_symmetric: bool = False  # 8-bit Q/DQ tensors -> int8, zero point 0 (passes/symmetric.py)


@dataclass
class Entry:
    where: str  # how the report names the node: "'q1' in main" (convert/entries.py where)
    op: str  # and its op: "QuantizeLinear (ai.onnx 13)" (op_label)
    # "converted" | "lowered" | "other-op" | "reformatted" (QOperator -> QDQ) | "kept" (valid
    # and unchanged at the target)
    action: str
    changes: list[str] = field(default_factory=list)
    verified: bool = False
    measured: object | None = None  # a format rewrite's formats.measure.Measured
    # the node as fields, as a Finding has them (set by run.py from the node's site): its
    # name (or #index), graph path, op, domain name and the opset its graph imports for it
    node: str = ""
    graph: str = ""
    op_type: str = ""
    domain: str = ""
    opset: int = 0


@dataclass
class Rewrite:
    """Nodes that replace one node, the initializers they add, and how to prove them."""

    site: Site
    nodes: list[onnx.NodeProto]
    inits: list[onnx.TensorProto]
    entry: Entry
    case: object | None = None  # verify.Case: before/after nodes and probe inputs
    twins: list | None = None  # ``nodes`` as formats.to_qdq.Plain, where the rewrite kept them


@dataclass
class PassResult:
    """What one pass did: whether it changed the model, what it reports, what it refuses."""

    modified: bool = False
    entries: list[Entry] = field(default_factory=list)
    refusals: list[Finding] = field(default_factory=list)  # QC codes (convert/codes/)


@dataclass
class Context:
    # the source while the planning passes read it; the working copy the finishing passes
    # change (run.py makes it once nothing is refused)
    model: onnx.ModelProto
    base_dir: str
    opts: Options
    source_ir: int
    opsets_from: dict[str, int]
    progress: Callable[[int, int], None] | None = None
    types: dict | None = None  # inference's types from an earlier analysis of the model, if any
    extra: dict | None = None  # shape inference's types, by scope path
    sites: list[Site] = field(default_factory=list)
    # the read pass's analysed bodies of the source (model/view.py BodyView: every node's names
    # read once), which sites.readers_anywhere counts
    bodies: list | None = None
    namer: Namer | None = None
    rewrites: list[Rewrite] = field(default_factory=list)
    reformatted: set = field(default_factory=set)  # (id(owner), index) of nodes the format pass rewrites
    dropped: set = field(default_factory=set)  # (id(graph), name) of initializers nothing reads any more
    retyped: dict = field(default_factory=dict)  # (id(graph), value name) -> its new element type
    ensured: set[str] = field(default_factory=set)  # what the passes run so far ensure
    changed: bool = False  # a finishing pass changed the working copy
    analysis: object | None = None  # the caller's analysis of the source (model/analysis.py), if any
    # the read pass's: site -> the facts its analysis read of the node (None: an op of no family)
    node_facts: Callable[[Site], object] | None = None
    # id(a body's owner in the source) -> that body's owner in the working copy
    copies: dict = field(default_factory=dict)
    # id(a body's owner in the working copy) -> {index there of a node the apply pass wrote: the
    # node as its to_qdq.Plain twin, or None}
    made: dict = field(default_factory=dict)
    added: set = field(default_factory=set)  # names of the initializers the apply pass added
    # (id(owner), node index or value name, what) -> a new name made once: a node a conversion
    # reads twice (a function's subgraph, once per call signature) gets the same new names
    named_once: dict = field(default_factory=dict)

    def name_once(self, key: tuple, base: str) -> str:
        """``namer(base)`` the first time ``key`` asks, the same name after."""
        name = self.named_once.get(key)
        if name is None:
            name = self.named_once[key] = self.namer(base)
        return name


@dataclass
class Result:
    model: onnx.ModelProto | None
    entries: list[Entry]
    refused: list[Finding]  # what was refused, one finding per node (code QCxxx, ways_out)
    opsets_from: dict[str, int]
    opsets_to: dict[str, int]
    ir_from: int
    ir_to: int
    changed: bool = False  # the converted model differs from the source (a pass modified it)
    # nodes the passes replaced (0: the result's nodes are the source's, only its opset
    # imports and IR version may differ)
    rewritten: int = 0
    # {index in the main graph of a node the passes wrote: its to_qdq.Plain twin or None}, where
    # they replaced nodes of that graph alone and changed no value's type, nor any other graph's
    # initializers (else None); the main graph's initializers may be fewer (those nothing read)
    made: dict | None = None
    # set by convert/pipeline.py: the source's errors the conversion resolved, a note on
    # the whole conversion ("already runs on openvino as it is"), the file written
    resolved: list = field(default_factory=list)
    note: str = ""
    written: str | None = None
    warnings: list = field(default_factory=list)  # the target's QT4xx warnings on the result
    # where set, ``model`` is the result's header alone (model/header.py) and its graph is this
    # model's, which the conversion left as it was: a conversion that rewrote no node, asked
    # with ``run.convert_model(share_graph=True)`` (the pipeline of `qlin convert`, which writes
    # it from there); ``whole`` copies the graph in
    graph_from: onnx.ModelProto | None = None
    # names of the initializers the conversion wrote (write.py stores the large ones in the
    # output's data file where the source keeps its weights there)
    added: set = field(default_factory=set)

    def whole(self) -> onnx.ModelProto | None:
        """The converted model whole (None when something was refused): the graph ``graph_from``
        shares copied in, once."""
        if self.graph_from is not None:
            from ..model.header import whole

            self.model, self.graph_from = whole(self.model, self.graph_from), None
        return self.model

    def count(self, action: str) -> int:
        return sum(1 for e in self.entries if e.action == action)

    @property
    def verified(self) -> int:
        return sum(1 for e in self.entries if e.verified)
