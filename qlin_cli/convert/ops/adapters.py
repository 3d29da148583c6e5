"""Hand-written adapters for the structural and meaning changes of common ops.

Each is exact by construction (a value moves between an attribute and a constant
input, a negative axis becomes non-negative, a default is written out) or refuses
with the reason. Steps they do not cover go to convert/ops/generic.py or, failing
that, to onnx.version_converter with a proof.
"""

from __future__ import annotations

import numpy as np

from ...model.propagate import REDUCE
from ..opsteps import NEG_AXES_OPS, NEG_AXIS_OPS
from ..refusal import Refusal, UseFallback
from ..registry import register
from . import generic
from .step import OpStep

# Every Reduce op but ReduceSum (whose axes became an input at 13) moved axes at 18.
REDUCE_18 = tuple(sorted(REDUCE - {"ReduceSum"}))


def move(step: OpStep, attr: str, index: int, dtype, *, keep_scalar: bool = False) -> Refusal | None:
    """Going up, attribute ``attr`` becomes constant input ``index``; going down, back."""
    if step.up:
        v = step.attr(attr)
        if v is None:
            return None
        step.drop_attr(attr)
        arr = np.array(v, dtype)
        step.set_input(index, step.add_const(attr, arr))
        step.changes.append(f"{attr}: attribute -> input {index}")
        return None
    name = step.input(index)
    if not name:
        return None
    v = step.value(name)
    if v is None:
        return Refusal(f"{attr} is computed at run time (input {index}); opset {step.to} needs it "
                       f"as an attribute, a constant")
    step.set_input(index, "")
    value = v.item() if keep_scalar and v.ndim == 0 else v.reshape(-1).tolist()
    if isinstance(value, list) and keep_scalar and len(value) == 1:
        value = value[0]
    step.set_attr(attr, value)
    step.changes.append(f"{attr}: input {index} -> attribute")
    return None


def _then_generic(step: OpStep) -> Refusal | None:
    """After a meaning change is dealt with: the rest of the step, by the generic rules."""
    d = step.diff
    if d is None or not d.structural:
        return None
    if generic.handles(step, meaning_handled=True):
        return generic.apply(step)
    return UseFallback(f"{step.op} {step.frm} -> {step.to}: {d.structure_text()}")


@register(("Squeeze", "Unsqueeze"), 11, 13, both=True)
def _axes_to_input(step: OpStep) -> Refusal | None:
    return move(step, "axes", 1, np.int64)


@register("ReduceSum", 11, 13, both=True)
def _reduce_sum(step: OpStep) -> Refusal | None:
    return move(step, "axes", 1, np.int64) or _noop_axes(step)


@register(REDUCE_18, 13, 18, both=True)
def _reduce_18(step: OpStep) -> Refusal | None:
    return move(step, "axes", 1, np.int64) or _noop_axes(step)


def _noop_axes(step: OpStep) -> Refusal | None:
    if step.up:
        return None
    v = step.attr("noop_with_empty_axes")
    if v in (None, 0):
        step.drop_attr("noop_with_empty_axes")
        return None
    return Refusal(f"noop_with_empty_axes={v} exists only from opset {max(step.frm, step.to)}")


@register("Split", 11, 13, both=True)
def _split(step: OpStep) -> Refusal | None:
    return move(step, "split", 1, np.int64)


@register("Clip", 6, 11, both=True)
def _clip(step: OpStep) -> Refusal | None:
    if step.up:
        for attr, index in (("min", 1), ("max", 2)):
            v = step.attr(attr)
            if v is not None:
                step.drop_attr(attr)
                step.set_input(index, step.add_const(attr, np.array(v, np.float32)))
                step.changes.append(f"{attr}: attribute -> input {index}")
        return None
    for attr, index in (("min", 1), ("max", 2)):
        r = move(step, attr, index, np.float32, keep_scalar=True)
        if r:
            return r
    return None


@register("Pad", 2, 11, both=True)
def _pad(step: OpStep) -> Refusal | None:
    if step.up:
        r = move(step, "pads", 1, np.int64)
        v = step.attr("value")
        if v is not None:
            step.drop_attr("value")
            step.set_input(2, step.add_const("value", np.array(v, np.float32)))
            step.changes.append("value: attribute -> input 2")
        return r
    return move(step, "pads", 1, np.int64) or move(step, "value", 2, np.float32, keep_scalar=True)


@register("Dropout", 10, 12, both=True)
def _dropout(step: OpStep) -> Refusal | None:
    if step.up:
        return move(step, "ratio", 1, np.float32)
    mode = step.input(2)
    if mode:
        v = step.value(mode)
        if v is None or bool(np.asarray(v).reshape(-1)[0]):
            return Refusal("training_mode is true or computed at run time; opset 10 has no training mode")
        step.set_input(2, "")
    if step.attr("seed") is not None:
        step.drop_attr("seed")
    return move(step, "ratio", 1, np.float32, keep_scalar=True)


@register("BatchNormalization", 9, 14)
def _batchnorm_up(step: OpStep) -> Refusal | None:
    """Version 9 runs in inference when only Y is asked for ("Output case #2: Y (test mode)");
    version 14 when training_mode is 0, its default: the same node, nothing to write."""
    if len([o for o in step.node.output if o]) > 1:
        return Refusal("a BatchNormalization-9 with its training outputs has no inference form in 14")
    return None


@register("BatchNormalization", 14, 9)
def _batchnorm_down(step: OpStep) -> Refusal | None:
    """In inference (training_mode absent or 0, Y alone) version 14 is version 9's test mode:
    drop training_mode. Training mode has no version 9 form that a runtime reads the same."""
    if step.attr("training_mode") or len([o for o in step.node.output if o]) > 1:
        return Refusal("BatchNormalization in training mode: opset 13 and older have no such node")
    if step.attr("training_mode") is not None:
        step.drop_attr("training_mode")
        step.changes.append("training_mode=0 dropped (version 9 is in inference with Y alone)")
    return None


def _non_negative(step: OpStep, attr: str) -> Refusal | None:
    v = step.attr(attr)
    if v is None:
        return None
    values = v if isinstance(v, list) else [v]
    if all(x >= 0 for x in values):
        return None
    rank = step.rank(step.input(0))
    if rank is None:
        return Refusal(f"{attr} {v} is negative and x's rank is unknown; opset {step.to} takes only "
                       f"non-negative {attr}")
    if step.op == "Unsqueeze":  # axes count in the output's rank
        rank += len(values)
    fixed = [x + rank if x < 0 else x for x in values]
    step.set_attr(attr, fixed if isinstance(v, list) else fixed[0])
    step.changes.append(f"{attr} {v} -> {fixed if isinstance(v, list) else fixed[0]}")
    return None


NEG_AXIS = (*NEG_AXIS_OPS, "TopK")
NEG_AXES = NEG_AXES_OPS


def negative_axes(step: OpStep) -> Refusal | None:
    """Going below 11, negative axes become non-negative (the rank must be known)."""
    if step.up:
        return _then_generic(step)
    r = _non_negative(step, "axis" if step.op in NEG_AXIS else "axes")
    return r or _then_generic(step)


def register_negative_axes() -> None:
    from ..opsteps import history
    for op in NEG_AXIS + NEG_AXES:
        older = [v for v in history(op) if v < 11]
        if 11 in history(op) and older:
            register(op, older[-1], 11, both=True)(negative_axes)


register_negative_axes()


@register(("Softmax", "LogSoftmax", "Hardmax"), 11, 13, both=True)
def _softmax(step: OpStep) -> Refusal | None:
    """At 11 the input is coerced to 2-D at ``axis`` (default 1); at 13 ``axis`` (default -1)
    is the one normalised dimension. They agree exactly when the axis is the last one."""
    rank = step.rank(step.input(0))
    old_default, new_default = 1, -1
    v = step.attr("axis")
    axis = v if v is not None else (old_default if step.up else new_default)
    if rank is None:
        return Refusal(f"x's rank is unknown, so axis {axis} cannot be compared with the last "
                       f"axis (the meaning of axis changed at 13)")
    a = axis + rank if axis < 0 else axis
    if a != rank - 1:  # onnx.version_converter reshapes around the op; the proof checks it
        return UseFallback(f"axis {a} is not the last of rank {rank}")
    step.set_attr("axis", a if not step.up else -1)
    step.changes.append(f"axis {axis} -> {a if not step.up else -1} (the last axis)")
    return None


@register("Pad", 18, 19, both=True)
def _pad_wrap(step: OpStep) -> Refusal | None:
    if not step.up and step.attr("mode") in (b"wrap", "wrap"):
        return Refusal("mode 'wrap' exists only from opset 19")
    return None


@register("Resize", 18, 19, both=True)
def _resize_19(step: OpStep) -> Refusal | None:
    if not step.up and step.attr("coordinate_transformation_mode") in (b"half_pixel_symmetric",):
        return Refusal("coordinate_transformation_mode 'half_pixel_symmetric' exists only from opset 19")
    return None


@register(("ScatterElements", "ScatterND"), 16, 18, both=True)
def _scatter_18(step: OpStep) -> Refusal | None:
    if not step.up and step.attr("reduction") in (b"max", b"min"):
        return Refusal(f"reduction {step.attr('reduction').decode()} exists only from opset 18")
    return None


@register(("Gather",), 1, 11, both=True)
def _gather(step: OpStep) -> Refusal | None:
    if step.up:
        return None
    r = _non_negative(step, "axis")
    if r:
        return r
    indices = step.value(step.input(1))
    if indices is None:
        return Refusal("indices are computed at run time and may be negative, which Gather-1 does not "
                       "define")
    if np.any(np.asarray(indices) < 0):
        return Refusal("negative indices, which Gather-1 does not define")
    return None


EMPTY = np.zeros((0,), np.float32)


@register("Resize", 11, 13, both=True)
def _resize_13(step: OpStep) -> Refusal | None:
    """roi and scales became optional at 13, and 'tf_half_pixel_for_nn' left."""
    if step.up:
        if step.attr("coordinate_transformation_mode") == b"tf_half_pixel_for_nn":
            return Refusal("coordinate_transformation_mode 'tf_half_pixel_for_nn' does not exist "
                           "from opset 13")
        return None
    for index, base in ((1, "roi"), (2, "scales")):
        if not step.input(index):
            step.set_input(index, step.add_const(base, EMPTY))
            step.changes.append(f"{base}: an empty input written (optional only from 13)")
    return None


@register("Resize", 10, 11, both=True)
def _resize_11(step: OpStep) -> Refusal | None:
    """Resize-10 takes (X, scales) and maps coordinates as 'asymmetric' with nearest
    rounding down; Resize-11 says so with attributes (onnx's own Resize_10_11 adapter
    writes the same attributes; tests/test_convert_ops.py checks both modes against
    onnxruntime, since onnx.reference cannot run Resize-10)."""
    if step.up:
        scales = step.input(1)
        step.set_input(1, step.add_const("roi", EMPTY))
        step.set_input(2, scales)
        step.set_attr("coordinate_transformation_mode", "asymmetric")
        if step.attr("mode") in (None, b"nearest"):
            step.set_attr("nearest_mode", "floor")
        step.changes.append("inputs (X, scales) -> (X, roi, scales); asymmetric coordinates")
        return None
    if step.input(3):
        return Refusal("sizes exists only from opset 11")
    mode = step.attr("coordinate_transformation_mode") or b"half_pixel"
    if mode != b"asymmetric":
        return Refusal(f"coordinate_transformation_mode {mode.decode()!r}: Resize-10 maps "
                       f"coordinates as 'asymmetric' only")
    if step.attr("mode") == b"cubic":
        return Refusal("mode 'cubic' exists only from opset 11")
    nearest = step.attr("nearest_mode") or b"round_prefer_floor"
    if step.attr("mode") in (None, b"nearest") and nearest != b"floor":
        return Refusal("Resize-10 rounds nearest coordinates down: nearest_mode must be 'floor'")
    roi = step.value(step.input(1))
    if step.input(1) and (roi is None or roi.size):
        return Refusal("roi is used; Resize-10 has none")
    x, scales = step.input(0), step.input(2)
    del step.node.input[:]
    step.node.input.extend([x, scales])
    for name in ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                 "extrapolation_value"):
        step.drop_attr(name)
    step.changes.append("inputs (X, roi, scales) -> (X, scales)")
    return None


@register("Slice", 10, 11, both=True)
def _slice(step: OpStep) -> Refusal | None:
    """Negative axes (an input since 10) are accepted from 11: going down they must be
    constant, and are made non-negative."""
    if step.up or not step.input(3):
        return None
    axes = step.value(step.input(3))
    if axes is None:
        return Refusal("axes is computed at run time and may be negative, which Slice-10 does not accept")
    if np.all(axes >= 0):
        return None
    rank = step.rank(step.input(0))
    if rank is None:
        return Refusal("axes are negative and x's rank is unknown")
    fixed = np.where(axes < 0, axes + rank, axes).astype(axes.dtype)
    step.set_input(3, step.add_const("axes", fixed))
    step.changes.append(f"axes {axes.tolist()} -> {fixed.tolist()}")
    return None
