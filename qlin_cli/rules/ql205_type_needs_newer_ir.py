from operator import attrgetter

from onnx import AttributeProto

from ..model.graphs import nodes_of
from ..model.tensors import census
from ..schema import dtypes, ir
from .base import Fix, ModelRule, SetIrVersion, Violation


class TypeNeedsNewerIr(ModelRule):
    """
    ## What it checks
    That the model's `ir_version` is at least the IR version that introduced every
    element type it stores or declares (initializers, Constant and other tensor
    attributes, graph inputs, outputs and value_info, in every graph): IR 9 for
    the float8 types, IR 10 for int4/uint4, IR 11 for float4e2m1, IR 12 for
    float8e8m0, IR 13 for int2/uint2, IR 14 for the float6 types; and every
    feature it uses: IR 8 for model-local functions, IR 10 for node metadata.

    ## Why is this bad?
    onnx.proto's version notes name the IR that brought each type ("Added UINT4,
    INT4, overload field for functions and metadata_props on multiple proto
    definitions" for IR 10), and Versioning.md calls the IR specification "the
    abstract model for graphs and operators and the concrete format that represents
    them": the IR version says which types and fields a file may contain; a reader
    that supports IR 7 has no int4 and may refuse the file or misread the
    tensor's bytes. onnx.checker does not look, so quantizers get it wrong: int4
    weights written into an IR 7 file, float8 tensors into IR 8 files.

    ## Example
    ```
    ir_version: 7
    initializer w_q: int4 [64, 64]
    ```

    ## Fix
    Raise `ir_version` to the version the message names (the finding carries
    that edit); `qlin convert` always writes the IR a model needs.
    """

    code = "QL205"
    mended_by_convert = True  # convert writes the IR the stored types need
    name = "type-needs-newer-ir"
    summary = "An element type or feature newer than the model's IR version."

    fixable = True

    def check_model(self, view):
        model = view.model
        have = model.ir_version
        first: dict[str, tuple[str, str, int]] = {}  # type -> (graph, tensor name, count)
        newer = {dtypes.BY_NAME[t].proto for t, v in ir.TYPE_MIN_IR.items() if v > have}
        if not newer:
            return self._features(view, have)
        for body in view.graphs():
            if not _mentions(body, newer):
                continue
            for name, elem in _declared(body):
                t = dtypes.name_of(elem) if elem else None
                # only the types of the table are newer than some IR (an IR below 3 says
                # nothing of float: other rules speak of such an IR itself)
                if t is None or ir.TYPE_MIN_IR.get(t, have) <= have:
                    continue
                g, n, c = first.get(t, (body.path, name, 0))
                first[t] = (g, n, c + 1)
        for t, (graph, name, count) in sorted(first.items(), key=lambda kv: ir.TYPE_MIN_IR[kv[0]]):
            need = ir.TYPE_MIN_IR[t]
            more = f" (and {count - 1} more {t} tensor{'s' if count > 2 else ''})" if count > 1 else ""
            yield Violation(
                f"{t} is a type IR {need} introduced but the model declares IR {have}{more}: set "
                f"ir_version to {need} or later",
                Fix(f"set ir_version to {need}", (SetIrVersion(need),)),
                at=view.site(graph, name, f"tensor '{name}' ({t})"))
        yield from self._features(view, have)

    def _features(self, view, have):
        model = view.model
        if len(model.functions) and have < ir.FUNCTIONS_MIN_IR:
            need = ir.FUNCTIONS_MIN_IR
            yield Violation(
                f"{len(model.functions)} model-local function(s), a feature of IR {need}, but the model "
                f"declares IR {have}: set ir_version to {need} or later",
                Fix(f"set ir_version to {need}", (SetIrVersion(need),)),
                at=view.site("main", "functions", "model"))
        if have < ir.NODE_METADATA_MIN_IR:
            for body in view.bodies:
                if not any(map(len, map(_METADATA, body.nodes))):  # (looked for at C speed)
                    continue
                for i, node in enumerate(body.nodes):
                    if len(node.metadata_props):
                        need = ir.NODE_METADATA_MIN_IR
                        yield Violation(
                            f"node metadata_props, a field of IR {need}, but the model declares IR "
                            f"{have}: set ir_version to {need} or later",
                            Fix(f"set ir_version to {need}", (SetIrVersion(need),)),
                            at=view.node_site(body, i))
                        return


_METADATA = attrgetter("metadata_props")


def _mentions(body, types: set[int]) -> bool:
    """Whether a graph body stores or declares a tensor of one of ``types`` (element type
    numbers): one pass over the type numbers only."""
    g = body.owner
    if not types.isdisjoint({data_type for data_type, _ in census(g).distinct}):
        return True
    if any(st.values.data_type in types for st in g.sparse_initializer):
        return True
    if not types.isdisjoint({vi.type.tensor_type.elem_type for vi in (*g.input, *g.output, *g.value_info)}):
        return True
    if not body.may_hold(AttributeProto.TENSOR, AttributeProto.TENSORS):  # (no node holds a tensor)
        return False
    nodes = nodes_of(body.owner)
    return any(a.HasField("t") or len(a.tensors) for i in body.attributed for a in nodes[i].attribute)


def _declared(body):
    """(name, element type) of every tensor a graph body stores or declares."""
    g = body.owner
    for t in g.initializer:
        yield t.name, t.data_type
    for st in g.sparse_initializer:
        yield st.values.name, st.values.data_type
    for vi in (*g.input, *g.output, *g.value_info):
        if vi.type.HasField("tensor_type"):
            yield vi.name, vi.type.tensor_type.elem_type
    nodes = body.owner.node
    for i in body.attributed:
        node = nodes[i]
        for a in node.attribute:
            if a.HasField("t"):
                yield node.output[0] if node.output else a.name, a.t.data_type
            for t in a.tensors:
                yield a.name, t.data_type
