"""The hand-written part of the step tables: steps whose meaning changed although the
signature did not (``SEMANTIC_CHANGES``), and steps whose schemas agree in every respect a node
can see (``SAME_MEANING``), each with its evidence."""

from __future__ import annotations

from ...model.propagate import REDUCE

FIRST_OPSET = 10
AI_ONNX = ""

# --------------------------------------------------------------------------------------------
# Hand-written: steps whose meaning changed although the signature did not (or not only).
# Key: (op, the since_version that brought the change). Evidence for each is in the comment
# above it: the op's doc and attribute text in onnx.defs (old vs new schema), the onnx pull
# request that created the version (named by number), and the adapter onnx.version_converter
# registers for the step (convert.h in onnx).
# --------------------------------------------------------------------------------------------
_NEG_AXIS = ("negative values accepted in {what} (counted from the back); going below 11 needs "
             "them made non-negative from the input rank")
# The ops whose `axis` attribute, and those whose `axes` attribute, accept negative values
# from version 11 (onnx #2281, below). TopK's axis too: see its own entry.
NEG_AXIS_OPS = ("ArgMax", "ArgMin", "Compress", "Concat", "Flatten", "Hardmax", "LogSoftmax",
                "Softmax", "Split")
NEG_AXES_OPS = (*sorted(REDUCE), "Squeeze", "Unsqueeze")

SEMANTIC_CHANGES: dict[tuple[str, int], str] = {
    # onnx #2281 "Supporting negative axes for all existing onnx ops" created these version-11
    # schemas; each new attribute/input text adds "Negative value means counting dimensions
    # from the back. Accepted range is [-r, r-1]". version_converter registers only
    # CompatibleAdapter for 10<->11, i.e. it does not rewrite a negative axis going down.
    **{(op, 11): _NEG_AXIS.format(what="axis") for op in NEG_AXIS_OPS},
    **{(op, 11): _NEG_AXIS.format(what="axes") for op in NEG_AXES_OPS},
    ("Scan", 11): _NEG_AXIS.format(what="scan_input_axes/scan_output_axes"),
    # TopK-11 was created by #2126 (largest/sorted attributes, visible in the signature) and
    # then given the same negative-axis sentence by #2281.
    ("TopK", 11): _NEG_AXIS.format(what="axis"),
    # Slice-11 (#2281): the axes input gains the negative-axis sentence; the doc also defines
    # INT_MIN ends for backward slicing. axes is an input, so going down needs it constant.
    ("Slice", 11): "negative values accepted in the axes input; going below 11 needs a constant "
                   "axes made non-negative from the input rank",
    # Gather-11 came from #2260 "Support for negative indices in Gather, GatherElements,
    # ScatterElements, OneHot": indices text changes from "within bounds" to "[-s, s-1]".
    ("Gather", 11): "negative indices accepted (counted from the end of the axis); Gather-1 "
                    "required indices in [0, s-1]",
    # OneHot-11 (#2281 with #2260): indices range goes from [0, depth) to [-depth, depth-1] and
    # the axis attribute accepts negative values.
    ("OneHot", 11): "negative indices ([-depth, depth-1]) and negative axis accepted; at 9 "
                    "negative indices gave an all-off_value row",
    # If-11 from #2345 "Relax IF's shape inference rule": the outputs text changes from "must
    # be of the same shape and same data type" to "same data type ... may produce different
    # shapes".
    ("If", 11): "then/else branches may yield outputs of different shapes; at 1 they had to "
                "match",
    # Softmax/LogSoftmax/Hardmax-13 from #2879 "Update softmax family ops behavior to align
    # with other frameworks": the doc changes from coercing the input to 2-D at `axis`
    # (normalising over all trailing dimensions) to normalising along the single dimension
    # `axis`; the default axis also moves from 1 to -1 (visible in the attributes too).
    # version_converter has dedicated adapters (Softmax_12_13 / Softmax_13_12) both ways.
    ("Softmax", 13): "axis now names the one dimension to normalise over (was: coerce to 2-D "
                     "at axis and normalise over all trailing dimensions together)",
    ("LogSoftmax", 13): "axis now names the one dimension to normalise over (was: coerce to "
                        "2-D at axis and normalise over all trailing dimensions together)",
    ("Hardmax", 13): "axis now names the one dimension to take the max over (was: coerce to "
                     "2-D at axis and take it over all trailing dimensions together)",
    # Resize-13: the coordinate_transformation_mode text drops "tf_half_pixel_for_nn" (the
    # roi/scales inputs also become optional, which the signature shows).
    ("Resize", 13): "coordinate_transformation_mode 'tf_half_pixel_for_nn' removed",
    # Resize-19 from #4862 "Add Resize-19: half_pixel_symmetric": a new allowed value of an
    # existing attribute; version_converter registers CompatibleAdapter 18<->19, so it keeps
    # the value going down.
    ("Resize", 19): "coordinate_transformation_mode gains 'half_pixel_symmetric'; going down "
                    "a node using it must be refused",
    # Pad-19 from #4793 "Pad-19: Add 'wrap' mode": mode text lists `wrap` as a fourth mode.
    ("Pad", 19): "mode gains 'wrap'; going down a node using it must be refused",
    # ScatterElements/ScatterND-18 from #4411: the reduction text adds max and min ("(Opset 18
    # change): Adds max/min to the set of allowed reduction ops"). version_converter's
    # Scatter_18_17 adapter refuses those values.
    ("ScatterElements", 18): "reduction gains 'max' and 'min'; going down a node using them "
                             "must be refused",
    ("ScatterND", 18): "reduction gains 'max' and 'min'; going down a node using them must be "
                       "refused",
    # GroupNormalization-21 (#5758): version 18 is flagged deprecated because its scale and
    # bias were per group; at 21 they are per channel (C). version_converter's
    # GroupNormalization_20_21 adapter expands scale/bias, and no 21->20 adapter exists.
    ("GroupNormalization", 21): "scale and bias are per channel (C); at 18 they were per group",
    # GridSample-20 (#5010): mode values renamed bilinear->linear, bicubic->cubic and N-D input
    # accepted; version_converter's GridSample_19_20 adapter renames the mode.
    ("GridSample", 20): "mode values renamed (bilinear->linear, bicubic->cubic, default follows) "
                        "and N-D inputs accepted",
    # RoiAlign-16 (#3762): the new coordinate_transformation_mode defaults to 'half_pixel'
    # while version 10 behaved as 'output_half_pixel'; version_converter's 15->16 adapter sets
    # the attribute to 'output_half_pixel' going up, and there is no adapter down.
    ("RoiAlign", 16): "new coordinate_transformation_mode defaults to 'half_pixel'; version 10 "
                      "behaved as 'output_half_pixel'",
    # Mod-28: the doc changes from "If fmod is 0, T is constrained to integer data types" to
    # "If fmod is 0, the output is A - floor(A / B) * B" with floating-point special cases: a
    # floating-point Mod with fmod=0 is valid only from 28.
    ("Mod", 28): "fmod=0 accepted for floating-point inputs (floor modulo); below 28 fmod=0 "
                 "required integer types",
    # BitShift-28: adds signed types with an arithmetic right shift, and defines the result for
    # shift amounts that are negative or >= the bit width (the version-11 doc leaves them
    # undefined).
    ("BitShift", 28): "shift amounts < 0 or >= the bit width now defined (0, or -1 for a right "
                      "shift of a negative value); signed types added with arithmetic right shift",
}

# --------------------------------------------------------------------------------------------
# Hand-written: steps where the two schemas agree in every respect a node can see (same
# signature, same type lists, same meaning). Each entry says why the version exists.
# --------------------------------------------------------------------------------------------
_STRIDES = ("defaults of strides (and dilations) documented as 1 (onnx #2291); the "
            "converter's 10<->11 adapter is CompatibleAdapter")

SAME_MEANING: dict[tuple[str, int], str] = {
    # onnx #2291 "Updated docs for strides and dilations attributes": its message says the
    # versions were bumped only because the defaults were now written down.
    **{(op, 11): _STRIDES for op in (
        "AveragePool", "Conv", "ConvTranspose", "LpPool", "MaxPool", "MaxUnpool")},
    # onnx #2348 "Bump NMS version for avoiding regression in existing models": version 11 only
    # adds output shape inference; schema and text are otherwise unchanged.
    ("NonMaxSuppression", 11): "output shape inference added (onnx #2348); same op otherwise",
    # onnx #3059 "Advance NLL loss to opset 13": the function body is re-expressed with opset-13
    # ops; the schema's signature, types and doc (up to formatting) are unchanged.
    ("NegativeLogLikelihoodLoss", 13): "function body moved to opset-13 ops (onnx #3059); same "
                                       "op otherwise",
    # DepthToSpace-28: signature, types and all text identical to 13; the new schema only adds
    # a context-dependent function body (has_context_dependent_function False -> True).
    ("DepthToSpace", 28): "a function body added; same op otherwise",
}
