"""One conversion of a model file, from reading it to writing the result: what
`qlin convert` and ``qlin.convert`` both run. Nothing here prints or exits; a
conversion that ends without a model to write raises ``Stop``.

1. The model is read once and analysed once (model/analysis.py).
2. With a target, its profile plans the opset, domain and lowering (targets/predict.py).
   A model the target already runs is "converted" to itself: the result is the source,
   unchanged, and ``-o`` still gets it (a pipeline's next step finds its file).
3. The passes convert and prove each rewrite (convert/run.py).
4. A model with errors under `qlin check`'s rules is converted only when the converted
   model has none: the conversion is then the fix (int4 at opset 19 is an error there,
   and valid at 21), and the result lists the source's errors it resolved. Otherwise
   nothing is written and ``Stop`` carries the errors.
5. The result is analysed once (when it changed, had errors, or has a target): with a
   target, nothing is written when the target would refuse it, or would compute a node
   of it differently from the spec where it computes the source's node as the spec says
   (a new QT4xx warning); without one, the report lists such warnings of the runtimes
   whose arithmetic qlin measured (onnxruntime, openvino), naming each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .convert.state import Options, Result
from .errors import QlinError
from .finding import Finding


class Stop(QlinError):
    """The conversion ends without a model to write: ``reason`` says why, ``findings``
    are the errors behind it (the model's own, or the target's)."""

    def __init__(self, path: str, reason: str, findings: list[Finding] | None = None):
        super().__init__(path, reason)
        self.findings = list(findings or [])


@dataclass
class Request:
    path: str
    to_opset: int | None = None
    to_domain: str | None = None
    target: str | None = None
    ir_version: int | None = None
    lower: bool = False
    verify: bool = True
    vendor_axis: int | None = None
    output: str | None = None  # None: nothing written
    in_place: bool = False
    to_format: str | None = None  # "qdq": QOperator nodes to their QDQ form (convert/formats/)
    tolerance: int = 0  # steps a format rewrite may differ by (measured, never proven)
    weights: str | None = None  # "fold" / "unfold" / "strip" (convert/passes/weights.py)
    to_int8: bool = False  # uint8 Q/DQ -> int8, zero points - 128 (convert/passes/shift.py)
    to_symmetric: bool = False  # 8-bit Q/DQ -> int8, zero point 0 (convert/passes/symmetric.py)
    # the result's model whole; False: a result that rewrote no node may come back as a header
    # sharing the source's graph (``Result.graph_from``), for a caller that reads no model
    # after the pipeline has written it (`qlin convert`)
    whole: bool = True


def run(req: Request, progress=None) -> Result:
    """Convert ``req.path`` as asked; the result is written to ``req.output`` (its
    ``written`` says where). Raises Stop, or QlinError for a file that cannot be read."""
    from .gc_pause import paused_collection

    # as check does (gc_pause.py): the facts of every node live until the end, and each run
    # of the cyclic collector walked all of them again
    with paused_collection():
        result = _run(req, progress)
    if req.whole:
        result.whole()
    return result


def _run(req: Request, progress) -> Result:
    from .convert import write
    from .model.graphs import reading
    from .model.load import load_model_bytes

    path = req.path
    if req.output and not req.in_place:
        write.check_target(req.output, path, False)
    proto, data = load_model_bytes(path)
    held = [data]  # freed once inference has read them
    del data
    with reading(proto):  # nothing changes the source: its bodies and nodes are read once
        return _converted(req, proto, held, progress)


def _converted(req: Request, proto, held: list, progress) -> Result:
    from .convert.run import convert_model
    from .model.analysis import analyze
    from .model.safety import validate_model_files

    path = req.path
    base_dir = os.path.dirname(os.path.abspath(path))
    validate_model_files(proto, base_dir, path)
    # the file's bytes go to shape inference as they are (not the model serialized again)
    a = analyze(proto, base_dir, serialized=held.pop())
    errors, mended = model_errors(a, mended=True)
    to_opset, to_domain, lower = req.to_opset, req.to_domain, req.lower
    if req.target is not None:
        chosen = _targeted(req, proto, base_dir, a, errors, mended, progress)
        if isinstance(chosen, Result):
            return chosen
        to_opset, to_domain, lower = chosen
    if to_opset is None:
        to_opset = _model_opset(proto, path)
    opts = Options(to_opset, to_domain, req.ir_version, lower, req.verify, req.vendor_axis,
                   req.to_format, req.tolerance, req.weights, req.to_int8, req.to_symmetric)
    try:
        # a plain conversion (held against the runtimes without analysing its result where it
        # rewrites no node) does not copy a graph it does not change
        result = convert_model(proto, base_dir, opts, progress, source=path, types=a.inferred, analysis=a,
                               share_graph=not (errors or mended or req.target))
    except QlinError:
        raise
    except Exception:
        if errors:  # an invalid model the passes could not take: its errors are the reason
            raise _invalid(path, errors) from None
        raise
    if result.model is None:
        if errors:
            raise _invalid(path, errors)
        return result
    plain = result.changed and not (errors or mended or req.target)
    # a plain conversion that replaced no node is held to the runtimes without analysing its
    # result: its nodes are the source's, at the same or other versions of their ops
    model_level = _kept_differences(a, proto, result.model) if plain and not result.rewritten else None
    analysed = (errors or mended or req.target or result.changed) and model_level is None
    if analysed:
        result.whole()
    after = _analysed(a, result, base_dir, bool(errors or mended)) if analysed else None
    # the result's errors, read once: (those no conversion mends, those every one does)
    kept, still = model_errors(after, mended=True) if errors or mended else ([], [])
    if errors:
        if kept:
            raise _invalid(path, errors)
        result.resolved = errors
    if mended:  # the errors every conversion mends, listed as resolved where they are gone
        left = {(d.code, d.graph, d.node) for d in still}
        result.resolved = [*result.resolved, *(d for d in mended if (d.code, d.graph, d.node) not in left)]
    if req.target is not None:
        result.warnings = _hold_against(a, after, req.target, path)
    elif after is not None or model_level is not None:
        result.warnings = _differences(a, after) if model_level is None else model_level
        _held_to_the_domains_runtime(result.warnings, req.to_domain, path)
    return _write(result, proto, base_dir, req)


def _analysed(a, result: Result, base_dir: str, checked: bool):
    """The result's analysis: its types worked out from the source's and from the nodes the
    passes wrote (convert/result_types.py) where that covers it and its errors are not asked
    (``checked``: the rules read inference's errors, QL010), else from an inference of it whole."""
    from .convert.result_types import result_types
    from .model.analysis import analyze

    types = None if checked else result_types(a, result.model, result.made)
    return analyze(result.model, base_dir, types=types)


def _kept_differences(a, proto, model) -> list[Finding] | None:
    """``_differences`` of a result whose nodes are the source's, read without analysing it:
    from the model-level facts where no op moved to another version, else from the source's
    sites moved to the new versions (convert_moved.py); None where the result must be analysed."""
    if not _versions_moved(proto, model):
        return _model_differences(a, model)
    from . import convert_moved

    return convert_moved.differences(a, model, MEASURED_RUNTIMES, differing)


def _held_to_the_domains_runtime(warnings: list, domain: str | None, path: str) -> None:
    """Stop when a model moved into a vendor domain would be computed otherwise than the
    source by the runtime that defines the domain (a QT4xx warning of that runtime on a node
    it computed as the spec says in the source): the move is for that runtime alone."""
    from . import schema
    from .schema.ops import DOMAIN_RUNTIMES

    runtimes = DOMAIN_RUNTIMES.get(schema.domain_from_name(domain) or "", ()) if domain else ()
    worse = [w for w in warnings if getattr(w, "target", None) in runtimes and w.code.startswith("QT4")]
    if worse:
        raise Stop(path, f"converted, but {', '.join(runtimes)}, the runtime of {domain}, would compute "
                         f"{len(worse)} node(s) of the result otherwise than the source; nothing written "
                         f"(keep the nodes in ai.onnx)", worse)


def _targeted(req: Request, proto, base_dir: str, a, errors: list, mended: list, progress):
    """(opset, domain, lower) the target's plan chooses; or the Result when there is nothing
    to plan (the target runs the model as it is) or the plan goes through the QDQ form."""
    path = req.path
    try:
        plan = _plan(a, path, req.target)
    except Stop:
        if not (_has_qoperator(a) or _has_uint8(a) or _has_int32_dequantize(a)):
            raise
        return _through_forms(req, proto, base_dir, a, errors, progress)
    if plan.needed:
        return plan.choice.to_opset, plan.choice.to_domain, plan.choice.lower
    if errors:
        raise _invalid(path, errors)
    if not mended:
        return _write(unchanged(proto, f"already runs on {req.target} as it is"), proto, base_dir, req)
    # the target runs it, but it has errors every conversion mends (an IR older than its
    # types): converted at its own opset, which mends them, rather than copied as it is
    return _model_opset(proto, path), None, False


def _has_qoperator(a) -> bool:
    """Whether the model has a node with a QDQ form (schema/qdq_forms.py)."""
    from . import schema
    from .schema.qdq_forms import GATHER_BLOCK_QUANTIZED, N_BITS_MATMUL, form_of

    blocked = (N_BITS_MATMUL, GATHER_BLOCK_QUANTIZED)
    return any(form_of(n.domain, n.op_type) is not None
               or (schema.normalize_domain(n.domain), n.op_type) in blocked for _, _, n in a.nodes())


def _through_forms(req: Request, proto, base_dir: str, a, errors: list, progress) -> Result:
    """A target that runs no conversion of the model as it is may run another form of it:
    the QDQ form of its QOperator nodes (measured, within ``req.tolerance``; at opset 13
    where per-channel weights need it), then int8 for its uint8 Q/DQ tensors (exact), then
    zero point 0 for its 8-bit tensors with other zero points (measured, within the same
    ``req.tolerance``: convert/passes/symmetric.py), then
    float biases for its DequantizeLinear nodes of constant int32 (exact: the values they
    compute, for a runtime that quantizes no int32), each only where the target's plan still
    fails; then the target's plan. Stop names what still
    blocks, as `qlin check --target` names it on the last form."""
    from .model.analysis import analyze

    if errors:
        raise _invalid(req.path, errors)
    done, steps = None, []
    model, analysis = proto, a
    if _has_qoperator(a):
        done = _stage(req, base_dir, model, progress, {"to_format": "qdq", "tolerance": req.tolerance},
                      "its QOperator nodes need their QDQ form, which is refused")
        model, analysis, steps = done.model, analyze(done.model, base_dir), ["its QDQ form"]
    plan = _plan_or_none(analysis, req.target)
    if plan is None and _has_uint8(analysis):
        shifted = _stage(req, base_dir, model, progress, {"to_int8": True}, "its uint8 tensors cannot move")
        done = _joined(done, shifted)
        model, analysis, steps = shifted.model, analyze(shifted.model, base_dir), steps + ["int8"]
        plan = _plan_or_none(analysis, req.target)
    if plan is None and _has_asymmetric(analysis, base_dir):
        moved = _stage(req, base_dir, model, progress, {"to_symmetric": True, "tolerance": req.tolerance},
                       "its tensors with non-zero zero points cannot take zero point 0")
        done = _joined(done, moved)
        model, analysis, steps = moved.model, analyze(moved.model, base_dir), steps + ["zero point 0"]
        plan = _plan_or_none(analysis, req.target)
    if plan is None and _has_int32_dequantize(analysis):
        unfolded = _stage(req, base_dir, model, progress, {"weights": "unfold-bias"},
                          "its int32 biases cannot be computed once")
        done = _joined(done, unfolded)
        model, analysis, steps = unfolded.model, analyze(unfolded.model, base_dir), steps + ["float biases"]
        plan = _plan_or_none(analysis, req.target)
    if plan is None:
        named = [p for p in _target_findings(analysis, req.target) if p.severity == "error"]
        raise Stop(req.path, f"no conversion makes {req.target} run it, nor {' then '.join(steps) or 'it'} "
                             f"(what blocks {'that form' if steps else 'it'}){_defaults_note(model)}", named)
    result = done
    if plan.needed:
        c = plan.choice
        opts = Options(c.to_opset, c.to_domain, req.ir_version, c.lower, req.verify)
        from .convert.run import convert_model

        last = convert_model(model, base_dir, opts, progress, source=req.path)
        if last.model is None:
            return last
        result = _joined(done, last)
    result.note = f"through {' then '.join(steps)}: {req.target} runs no conversion of the model as it is"
    result.warnings = _held_as_new(analyze(result.model, base_dir), req.target, req.path)
    return _write(result, proto, base_dir, req)


def _defaults_note(model) -> str:
    """What the refusal adds when a Q/DQ node reads an initializer its graph also lists as an
    input: a default the caller may feed, which the rewrites that compute new values leave as
    it is (docs/convert.md, "Decisions")."""
    from .convert.formats.to_qoperator import is_op
    from .model.walk import graph_paths

    fed = set()
    for _, g in graph_paths(model):
        defaults = {i.name for i in g.input}.intersection(t.name for t in g.initializer)
        if defaults:
            fed.update(x for n in g.node if is_op(n, "QuantizeLinear") or is_op(n, "DequantizeLinear")
                       for x in n.input if x in defaults)
    if not fed:
        return ""
    shown = ", ".join(f"'{x}'" for x in sorted(fed)[:3]) + (", ..." if len(fed) > 3 else "")
    if len(fed) == 1:
        return (f"; the Q/DQ input {shown} is also a graph input (a default the caller may feed, from "
                f"which qlin computes no new value: take it out of the inputs if not meant to be fed)")
    return (f"; {len(fed)} Q/DQ inputs ({shown}) are also graph inputs (defaults the caller may feed, "
            f"from which qlin computes no new value: take them out of the inputs if not meant to be fed)")


def _stage(req: Request, base_dir: str, model, progress, options: dict, refused: str) -> Result:
    from .convert.run import convert_model

    opset = _model_opset(model, req.path)
    got = None
    for to in sorted({opset, max(opset, 13)}):
        got = convert_model(model, base_dir, Options(to, verify=req.verify, **options), progress,
                            source=req.path)
        if got.model is not None:
            return got
    raise Stop(req.path, f"no conversion makes {req.target} run it: {refused}", got.refused)


def _joined(first: Result | None, then: Result) -> Result:
    """``then`` with ``first``'s entries before its own and ``first``'s source versions."""
    if first is None:
        return then
    then.entries = first.entries + then.entries
    then.opsets_from, then.ir_from = first.opsets_from, first.ir_from
    then.added = first.added | then.added
    return then


def _plan_or_none(a, target: str):
    try:
        return _plan(a, "", target)
    except Stop:
        return None


def _target_findings(a, target: str):
    from .targets import predict

    return predict.findings_in(a, [target])


def _has_uint8(a) -> bool:
    """Whether an ai.onnx Q/DQ node reads or writes uint8 (a zero point of that type, or none)."""
    from onnx import TensorProto

    from .convert.formats.to_qoperator import is_op

    for body, _, node in a.nodes():
        if not (is_op(node, "QuantizeLinear") or is_op(node, "DequantizeLinear")):
            continue
        zp = node.input[2] if len(node.input) > 2 else ""
        if not zp and is_op(node, "QuantizeLinear"):
            return True  # no zero point: uint8, the pages' default
        t = body.scope.find_type(zp or node.input[0])  # a DequantizeLinear's x has its type
        if t is not None and t[0] == TensorProto.UINT8:
            return True
    return False


def _has_asymmetric(a, base_dir: str) -> bool:
    """Whether an ai.onnx Q/DQ node has a constant 8-bit zero point with a non-zero element."""
    import numpy as np

    from .convert.formats.to_qoperator import is_op
    from .model.tensors import read_value

    for body, _, node in a.nodes():
        if not (is_op(node, "QuantizeLinear") or is_op(node, "DequantizeLinear")) or len(node.input) < 3:
            continue
        t = body.scope.find_value(node.input[2]) if node.input[2] else None
        zp = None if t is None else read_value(t, base_dir)
        if zp is not None and np.asarray(zp).dtype in (np.uint8, np.int8) and np.asarray(zp).any():
            return True
    return False


def _has_int32_dequantize(a) -> bool:
    """Whether an ai.onnx DequantizeLinear reads a constant int32 tensor (a bias)."""
    from onnx import TensorProto

    from .convert.formats.to_qoperator import is_op

    for body, _, node in a.nodes():
        x = node.input[0] if node.input else ""
        if is_op(node, "DequantizeLinear") and x and body.scope.find_value(x) is not None:
            t = body.scope.find_type(x)
            if t is not None and t[0] == TensorProto.INT32:
                return True
    return False


def _held_as_new(after, target: str, path: str) -> list[Finding]:
    """A model in another format held against ``target``: Stop when it would refuse it;
    its warnings, for the report (the target refused the source's nodes, so no warning on
    the new nodes makes it compute worse than it did)."""
    from .targets import predict

    found = predict.findings_in(after, [target])
    refused = [p for p in found if p.severity == "error"]
    if refused:
        raise Stop(path, f"converted, but {target} would still refuse it; nothing written", refused)
    return [p for p in found if p.severity == "warning"]


def model_errors(a, mended: bool = False):
    """The model's findings of severity error under `qlin check`'s rules, but those the
    conversion mends whatever the target (rules marked ``mended_by_convert``); with
    ``mended``, (those, and the ones it mends)."""
    from . import rules
    from .check.engine import check_analysis

    codes = {r.code for r in rules.all_rules() if r.mended_by_convert}
    # only the rules that report errors run (a rule's findings all have its severity), as
    # many as the default set runs: the warning and info rules' work was thrown away
    errors_only = [r.code for r in rules.all_rules() if r.severity == "error" and r.default]
    found = [d for d in check_analysis(a, errors_only, frames=False) if d.severity == "error"]
    kept = [d for d in found if d.code not in codes]
    return (kept, [d for d in found if d.code in codes]) if mended else kept


def unchanged(proto, note: str) -> Result:
    """The source as its own conversion: nothing to change."""
    opsets = {o.domain: o.version for o in proto.opset_import}
    return Result(proto, [], [], opsets, dict(opsets), proto.ir_version, proto.ir_version, note=note)


def _write(result: Result, proto, base_dir: str, req: Request) -> Result:
    from .convert import write

    if result.model is None or not req.output:
        return result
    if result.model is proto and req.in_place:
        return result  # the file already holds it
    if req.whole:  # the model returned is the one written (its external tensors in its data file)
        result.whole()
    # the tensors the conversion wrote go to a data file where the source keeps its weights in one
    data = _data_files(proto, base_dir) if result.added else set()
    write.write_model(result.model, base_dir, req.output, source=req.path, in_place=req.in_place,
                      graph_from=result.graph_from, new=result.added if data else None, source_data=data)
    result.written = req.output
    return result


def _data_files(proto, base_dir: str) -> set[str]:
    """The data files the source's external tensors are in (checked when it was read)."""
    from .model.safety import external_tensors
    from .model.tensors import check_external

    return {check_external(t, base_dir)[0] for t in external_tensors(proto)}


def _plan(a, path: str, target: str):
    from .targets import predict, registry

    try:
        registry.get(target)
    except LookupError as e:
        raise QlinError("--target", registry.why(target, e)) from None
    plan = predict.plan_in(a, target)
    if plan.needed and plan.choice is None:
        # what blocks it, as `qlin check --target` names it on the source (the model's own
        # errors first): the closest candidate's blockers would name an opset step instead
        named = [p for p in predict.findings_in(a, [target]) if p.severity == "error"]
        raise Stop(path, f"no conversion makes {target} run it",
                   model_errors(a) + (named or list(plan.blocking)))
    return plan


def _invalid(path: str, errors: list[Finding]) -> Stop:
    codes = ", ".join(sorted({d.code for d in errors}))
    n = len(errors)
    return Stop(path, f"has {n} error{'s' if n > 1 else ''} ({codes}) that the conversion does not "
                      f"resolve: run `qlin check {path}`; nothing converted", errors)


# the runtimes whose arithmetic qlin measured: a conversion without --target is held
# against each, and the report says where one computes the result differently
MEASURED_RUNTIMES = ("onnxruntime", "openvino")


def _new_warnings(source: list[Finding], found: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """Of a target's findings on the converted model (``found``), the warnings the source's
    node did not have (its ``source`` findings): (all of them, those on nodes the target
    ran in the source, where the rewrite made it compute something else)."""
    refused = {(p.graph, p.node) for p in source if p.severity == "error"}
    before = {(p.code, p.graph, p.node) for p in source if p.severity == "warning"}
    new = [p for p in found if p.severity == "warning" and (p.code, p.graph, p.node) not in before]
    return new, [p for p in new if (p.graph, p.node) not in refused]


def differing(source: list, found: list, where) -> list:
    """Of a target's findings on the converted model (``found``), what the report keeps
    against its findings on the source: the result's errors where the source had none (the
    conversion makes the target refuse the model), then the warnings the source's node did
    not have, on nodes the target ran in the source (``_new_warnings``). ``where(item)``:
    (severity, code, place) of an item, a Finding or a target's finding and its place
    (convert_moved.py)."""
    said = [where(p) for p in source]
    refused = {place for severity, _, place in said if severity == "error"}
    before = {(code, place) for severity, code, place in said if severity == "warning"}
    kept = [p for p in found if where(p)[0] == "error"] if not refused else []
    for p in found:
        severity, code, place = where(p)
        if severity == "warning" and (code, place) not in before and place not in refused:
            kept.append(p)
    return kept


def _placed(p: Finding) -> tuple[str, str, tuple[str, str]]:
    return p.severity, p.code, (p.graph, p.node)


_KEPT = ("error", "warning")  # the severities ``differing`` reads (an info is never kept)


def _differences(a, after) -> list[Finding]:
    """What the measured runtimes do differently with the converted model, for the report:
    their errors on it when they ran the source (the conversion makes the runtime refuse the
    model), and their QT4xx warnings that the source's node did not have (it computes the
    result differently from the spec though it computed the source as the spec says)."""
    from .targets import predict

    out = []
    labels = None  # the source's places (_source_places), read when first asked
    for name in MEASURED_RUNTIMES:
        # of the source's findings only codes, severities and places are compared: no plan;
        # the result's are worded with the plan only where one of them offers a conversion
        found = predict.findings_in(after, [name], advice=False, severities=_KEPT)
        if not found:
            continue  # nothing it could report: the source's findings are not needed
        labels = _source_places(a) if labels is None else labels
        source = (predict.findings_in(a, [name], advice=False, severities=_KEPT) if _may_meet(found, labels)
                  else [])
        if any(p.convertible for p in found):
            found = predict.findings_in(after, [name], severities=_KEPT)
        out += differing(source, found, _placed)
    return out


def _source_places(a) -> tuple[set, int]:
    """Where a finding on the source can be: (the names of its nodes, and "model"; the
    length of its longest graph or function: an unnamed node is #index there)."""
    from .model.graphs import bodies, nodes_of

    names, longest = {"model"}, 0
    for body in bodies(a.model):
        nodes = nodes_of(body.owner)
        names.update(n.name for n in nodes)
        longest = max(longest, len(nodes))
    return names, longest


def _may_meet(found: list[Finding], places: tuple[set, int]) -> bool:
    """Whether the source's findings can change what ``differing`` keeps of ``found``: an
    error in it (kept only where the source had none), or a warning on a node the source's
    findings can name (its node names, #index within its longest graph, the model). A result
    whose warnings all sit on nodes the rewrite made keeps every one whatever the source has,
    so the source's runtime view is not worked out (a format conversion's new nodes)."""
    names, longest = places
    for p in found:
        if p.severity == "error" or p.node in names:
            return True
        if p.severity == "warning" and p.node.startswith("#") and not _beyond(p.node[1:], longest):
            return True
    return False


def _beyond(index: str, longest: int) -> bool:
    return index.isdigit() and int(index) >= longest


def _versions_moved(source, model) -> bool:
    """Whether some op of ``source`` is at another schema version under ``model``'s opset
    imports (the nodes are the same: only the imports may differ)."""
    from . import schema
    from .model.graphs import all_nodes

    def imports(m):
        return {schema.normalize_domain(o.domain): o.version for o in m.opset_import}

    before, after = imports(source), imports(model)
    moved = {d for d in set(before) | set(after) if before.get(d) != after.get(d)}
    if not moved:
        return False
    ops = {(schema.normalize_domain(n.domain), n.op_type) for n in all_nodes(source)}
    return any(_since(d, op, before.get(d)) != _since(d, op, after.get(d)) for d, op in ops if d in moved)


def _since(domain: str, op: str, opset: int | None) -> int | None:
    """The version of ``op`` in force at ``opset`` of its domain: onnx.defs' for ai.onnx
    (schema.ai_onnx_since), qlin's schema table for the vendor ops it knows; an op neither knows
    is taken to change with the opset."""
    from . import schema

    if opset is None:
        return None
    found = schema.ai_onnx_since(op, opset) if domain == schema.AI_ONNX else None
    if found is None and domain != schema.AI_ONNX:
        spec = schema.lookup(domain, op, opset)
        found = None if spec is None else spec.since
    return opset if found is None else found


def _model_differences(a, model) -> list[Finding] | None:
    """``_differences`` of a result whose nodes are the source's (``Result.rewritten`` 0):
    the measured runtimes' model findings (opset imports, IR version, domains) on the source
    (``a``) and on ``model``. None when one of them says `qlin convert --target` fixes it:
    its message then depends on the target's plan for the whole model (predict.findings_in),
    so the result is analysed as any other."""
    from .targets import predict, registry

    # the result's nodes and graph are the source's (its header may be alone: Result.graph_from)
    before, now = predict.model_info(a.model, a), predict.model_info(model, a, graph_from=a.model)
    out = []
    for name in MEASURED_RUNTIMES:
        t = registry.get(name)
        raw_source, raw_found = list(t.model_findings(before)), list(t.model_findings(now))
        if any(x.convertible for x in raw_source + raw_found):
            return None
        source = [predict._place_model(t, x) for x in raw_source]
        found = [predict._place_model(t, x) for x in raw_found]
        out += differing(source, found, _placed)
    return out


def _hold_against(a, after, target: str, path: str) -> list[Finding]:
    """The converted model, held against the target: Stop when the target would refuse it,
    or would compute a node differently from the spec where it ran the source's node as
    the spec says (a QT4xx warning the source's node did not have: the rewrite is not
    exact on that runtime). The target's warnings on nodes it refused in the source come
    back, for the report."""
    from .targets import predict

    found = predict.findings_in(after, [target])
    refused = [p for p in found if p.severity == "error"]
    if refused:
        raise Stop(path, f"converted, but {target} would still refuse it; nothing written", refused)
    new, worse = _new_warnings(predict.findings_in(a, [target]), found)
    if worse:
        raise Stop(path, f"converted, but {target} would compute {len(worse)} node(s) of the result "
                         f"differently from the spec, where it computes the source's as the spec says; "
                         f"nothing written", worse)
    return new


def _model_opset(proto, path: str) -> int:
    from . import schema

    found = schema.opset_of({o.domain: o.version for o in proto.opset_import}, schema.AI_ONNX)
    if found is None:
        raise QlinError(path, "the model imports no ai.onnx opset: give --to-opset")
    return found
