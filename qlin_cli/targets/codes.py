"""The QT codes: every reason a deployment target refuses a model or computes something
else than the spec. Each code is one class here, documented like a rule (What it checks /
Why is this bad? / Example / Fix); ``get(code)`` and ``all_codes()`` find them.

QT1xx the model as a whole (opset, IR version, domains), QT2xx kernels and element types,
QT3xx granularity, shapes and values, QT4xx semantic divergences: the runtime runs the node
but computes something else than the spec (always warnings).

Which targets emit a code, and from which fact, is in each target module and in
docs/targets.md.
"""

from __future__ import annotations

import inspect

from .base import ERROR, WARNING


class Code:
    code: str = ""
    name: str = ""
    severity: str = ERROR
    summary: str = ""

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def to_json(cls) -> dict:
        return {"code": cls.code, "name": cls.name, "severity": cls.severity, "summary": cls.summary}


# ---- QT1xx: the model ------------------------------------------------------------------
class VersionNotMeasured(Code):
    """
    ## What it checks
    That the runtime version a target names (`onnxruntime@1.33`) is one qlin measured.

    ## Why is this bad?
    Every fact of a versioned target comes from that release, installed and probed
    (tools/gen_target_data.py). A newer release is judged as the newest measured one,
    which may refuse what the newer one runs, or the other way round.

    ## Example
    ```
    qlin check --target onnxruntime@1.40 model.onnx
    ```

    ## Fix
    Measure the release: `make target-data RUNTIME=onnxruntime VERSION=1.40.0`.
    """

    code = "QT100"
    name = "version-not-measured"
    severity = WARNING
    summary = "The runtime version is newer than the versions qlin measured; judged as the newest."


class OpsetTooNew(Code):
    """
    ## What it checks
    That the ai.onnx opset the model imports is one the target loads.

    ## Why is this bad?
    Runtimes refuse a model whose opset is newer than the one they were built for,
    before looking at a single node: onnxruntime 1.31 stops at opset 26 ("Opset 27 is
    under development and support for this is limited"), TensorRT 10 at 24.

    ## Example
    ```
    opset_import: [{domain: "", version: 28}]     # onnxruntime: at most 26
    ```

    ## Fix
    `qlin convert --target NAME` moves every node to the newest opset the target
    loads and proves each rewritten Q/DQ node; nodes that need the newer opset (a
    float6 output needs QuantizeLinear-28) are refused with the reason.
    """

    code = "QT101"
    name = "opset-too-new"
    summary = "The model's ai.onnx opset is newer than the target loads."


class OpsetTooOld(Code):
    """
    ## What it checks
    That the ai.onnx opset the model imports is not older than the target supports.

    ## Why is this bad?
    TensorRT's ONNX parser supports opset 9 and later; older models are not parsed.

    ## Example
    ```
    opset_import: [{domain: "", version: 8}]
    ```

    ## Fix
    `qlin convert --target NAME` raises the opset.
    """

    code = "QT102"
    name = "opset-too-old"
    summary = "The model's ai.onnx opset is older than the target supports."


class IrTooNew(Code):
    """
    ## What it checks
    That the model's `ir_version` is one the target loads.

    ## Why is this bad?
    onnxruntime 1.31 refuses IR 14 ("Unsupported model IR version: 14, max supported
    IR version: 13") whatever the model contains. ai.onnx opset 28 and the float6
    types need IR 14.

    ## Example
    ```
    ir_version: 14
    ```

    ## Fix
    `qlin convert --target NAME` writes the lowest IR the converted model needs; it
    is refused when a type the model stores needs the newer IR.
    """

    code = "QT103"
    name = "ir-too-new"
    summary = "The model's IR version is newer than the target loads."


class DomainUnsupported(Code):
    """
    ## What it checks
    That every node's domain is one the target has operators for (model-local
    functions excepted: runtimes inline them).

    ## Why is this bad?
    A node of an unknown domain stops the load: onnxruntime reports
    "com.amd.quark:ExtendedQuantizeLinear(-1) is not a registered function/op"
    (unless a custom-op library for it is registered), openvino "No conversion rule
    found for operations", TensorRT's operator support list holds only ai.onnx ops.

    ## Example
    ```
    node {op_type: "ExtendedQuantizeLinear", domain: "com.amd.quark"}
    ```

    ## Fix
    For Q/DQ nodes, `qlin convert --target NAME` moves them to a domain the target
    runs (ai.onnx or com.microsoft) where that domain can express them; other ops
    need the vendor's custom-op library or a rewrite.
    """

    code = "QT104"
    name = "domain-unsupported"
    summary = "A node's domain has no operators in the target."


# ---- QT2xx: kernels and types -------------------------------------------------------------
class OpUnsupported(Code):
    """
    ## What it checks
    That the target implements the op at the schema version the model's opset puts
    in force (onnxruntime: a CPU kernel registered for that version, or a function
    body it can inline; TensorRT: the op is in its ONNX operator support matrix).

    ## Why is this bad?
    onnxruntime matches kernels against the schema version in force, and an
    open-ended kernel covers only the version it starts at: GlobalLpPool at opset 22
    fails with "Could not find an implementation" although a kernel from version 2
    exists. The op may also be one the runtime writes itself: onnxruntime's default
    session options fuse an activation's DequantizeLinear -> MatMul -> QuantizeLinear
    into QLinearMatMul when they load the model, and releases 1.18 and 1.19 have no
    QLinearMatMul-21 kernel ("Failed to find kernel for QLinearMatMul(21)", measured on
    1.18.1, 1.19.2 and 1.20.1, which runs it); the finding is on that DequantizeLinear.
    TensorRT does not implement QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger
    or DynamicQuantizeLinear.

    ## Example
    ```
    opset 22: GlobalLpPool(x)      # onnxruntime 1.31: kernels for version 2 only
    opset 21: x -> Q -> DQ -> MatMul(DQ(w)) -> Q -> DQ   # onnxruntime 1.18 and 1.19
    ```

    ## Fix
    Import an opset whose version of the op the target implements (`qlin convert
    --target NAME` for the Q/DQ ops), or express the op with ones the target has
    (QDQ format instead of QOperator ops for TensorRT).
    """

    code = "QT201"
    name = "op-unsupported"
    summary = "The target has no implementation of the op at this version."


class TypeUnsupported(Code):
    """
    ## What it checks
    That the target implements the op for the node's element types (onnxruntime:
    one kernel registration accepts all of them together, or float16 arguments that
    it can cast to float; openvino and TensorRT: the documented or measured types).

    ## Why is this bad?
    The spec allows far more types than any runtime implements: onnxruntime's CPU
    provider has no QuantizeLinear for bfloat16 or int32 x and no DequantizeLinear
    for float4e2m1, int2 or float8e8m0 scales; openvino cannot quantize to
    float4e2m1; TensorRT quantizes only to INT8, FP8 (e4m3fn), INT4 and FP4; NNAPI
    takes uint8 (and int8 weights of Conv / MatMul). The model is refused at load
    ("Could not find an implementation"), or the node leaves NNAPI for the CPU.
    onnxruntime 1.31's default session options also fuse a float8 DequantizeLinear
    into the op it feeds (MatMul, or a Conv followed by a QuantizeLinear), making a
    QLinearConv / QLinearMatMul that takes no float8: "Type 'tensor(float8e4m3fn)' of
    input parameter ... of operator (QLinearConv) ... is invalid" (measured for the four
    float8 types; with optimizations off the model runs).

    ## Example
    ```
    QuantizeLinear-21(x: bfloat16, y_scale: bfloat16, y_zero_point: int8)   # onnxruntime
    ```

    ## Fix
    Store the node with types the target has (the message lists them); `qlin
    convert --target NAME` helps only where a domain or opset of the target
    implements the same types.
    """

    code = "QT202"
    name = "type-unsupported"
    summary = "The target has no implementation of the op for these element types."


class MixedScaleType(Code):
    """
    ## What it checks
    That a QuantizeLinear-23 or later node whose target kernel reads the scale as x's
    type gets a scale of x's type.

    ## Why is this bad?
    QuantizeLinear-23 gives x and y_scale separate type constraints, and
    onnxruntime's kernel registration accepts float and float16 for both, so the
    model loads; the kernel then reads the scale as x's type and the first run fails
    with "Tensor type mismatch". Measured in docs/targets-onnxruntime-notes.md.

    ## Example
    ```
    QuantizeLinear-23(x: float, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Store the scale in x's type (a float16 scale widens to float exactly).
    """

    code = "QT203"
    name = "mixed-scale-type"
    summary = "x and the scale have different types; the target fails at the first run."


class UnreadableType(Code):
    """
    ## What it checks
    That every element type the model stores or declares (initializers, graph
    inputs, Q/DQ inputs and outputs) is one the target can read at all.

    ## Why is this bad?
    openvino's ONNX reader stops at the first tensor of a type it does not know
    ("Unsupported type"): the float8 fnuz types, int2/uint2 and the float6 types,
    even when only a zero point has that type.

    ## Example
    ```
    initializer zp: float8e4m3fnuz
    ```

    ## Fix
    Store the tensor in a type the target reads (the message lists it); no
    conversion changes element types.
    """

    code = "QT204"
    name = "unreadable-type"
    summary = "The model stores an element type the target cannot read."


class ProbeRefused(Code):
    """
    ## What it checks
    That the runtime version judged ran the probe models of the node's kind: the same
    op at the same schema version, with the same input types and granularity
    (qlin_cli/targets/probe_keys.py). Every probe is loaded, compiled and run in that
    release, installed in a throwaway environment (tools/gen_target_data.py). openvino
    has no kernel registry to read, so its probes are its data; onnxruntime's probes
    find the kernels that exist and still refuse a case at load or run time
    (onnxruntime 1.18 registers DequantizeLinear-21 and fails every blocked one at its
    first run; it has no QLinearMatMul-21 kernel though its registry lists
    QLinearMatMul from version 10 on).

    ## Why is this bad?
    When every probe of that kind failed in the release, a model with such a node
    fails the same way: openvino 2026.4 reads a per-channel QLinearConv weight scale
    along the input's axis 1 and stops ("The number of dequantization scale elements
    '4' must match the input shape dimension '2'"), and has no conversion rule for
    com.microsoft QGemm or QLinearConv. The message quotes the release's own error.

    ## Example
    ```
    QLinearConv-10(x: uint8, w: uint8 [4, 2, 3, 3], w_scale: float [4])   # openvino 2026.4
    ```

    ## Fix
    Express the node in a form the release runs (a QDQ graph: DequantizeLinear ->
    Conv -> QuantizeLinear, which onnxruntime's quantizer writes with
    `quant_format=QDQ`), use a release that runs it (the message says which, for a
    versioned target), or `qlin convert --target NAME` for Q/DQ nodes.
    """

    code = "QT205"
    name = "probe-refused"
    summary = "The runtime version refused every probe model of the node's kind."


class ProbeVariesByCpu(Code):
    """
    ## What it checks
    That the probe models of the node's kind ran on every CPU the runtime version was
    measured on (tools/gen_target_data.py ``--merge`` adds a CPU's outcomes to a
    release's data; the data names each CPU by model and ISA flags).

    ## Why is this bad?
    openvino's CPU plugin picks its kernels by the instructions the CPU has: a node
    that compiles on one CPU may have no kernel on another, and the model then fails
    to load on the machine it is deployed to, not on the one it was tested on.
    Measured: openvino 2026.4.1 compiles an int8-activation (signed x) QLinearConv on
    the CPU its data was first measured on, and stops on an AMD EPYC with AVX-512 VNNI
    ("No suitable implementations"). A warning, since the model runs on some CPUs.

    ## Example
    ```
    QLinearConv-10(x: int8, w: int8, ...)   # openvino 2026.4.1 on an AMD EPYC
    ```

    ## Fix
    Use the form that compiles on every measured CPU (uint8 activations, or a QDQ
    graph: DequantizeLinear -> Conv -> QuantizeLinear), or test on the deployment CPU.
    The message names each CPU and its outcome.
    """

    code = "QT206"
    name = "probe-varies-by-cpu"
    severity = "warning"
    summary = "The runtime version ran the node's kind on some measured CPUs only."


# ---- QT3xx: granularity, shapes, values --------------------------------------------------------
class GranularityUnsupported(Code):
    """
    ## What it checks
    That the target supports the node's granularity for its quantized type.

    ## Why is this bad?
    TensorRT 10 documents block quantization for INT4 only, and only on 2-D tensors
    (scale rank at most 2); other blocked nodes do not build. openvino reads a blocked
    DequantizeLinear of a 1-D tensor as per-axis and refuses it (measured). NNAPI takes
    per-tensor scales only, except int8 Conv weights per output channel (onnxruntime's
    NNAPI provider source); other nodes run on the CPU provider instead.

    ## Example
    ```
    DequantizeLinear-21(x: int8 [64, 128], x_scale: [64, 4], block_size=32)   # TensorRT 10
    ```

    ## Fix
    Use a granularity the target documents for that type (per-tensor or per-axis),
    or a target version that supports it.
    """

    code = "QT301"
    name = "granularity-unsupported"
    summary = "The target does not support this granularity for this type."


class BlockNotDividing(Code):
    """
    ## What it checks
    That `block_size` divides the quantized dimension.

    ## Why is this bad?
    The spec allows a last, shorter block (the scale has ceil(D / B) entries along
    the axis). openvino's ONNX frontend refuses it ("must be divisible by the block
    size"), and TensorRT's parser requires an integral block ("Inferred block size
    is not an integer").

    ## Example
    ```
    x: [4, 8], axis=1, block_size=3, y_scale: [4, 3]
    ```

    ## Fix
    Choose a block size that divides the dimension, or pad the tensor to a multiple
    of the block size.
    """

    code = "QT302"
    name = "block-not-dividing"
    summary = "The block size does not divide the quantized dimension."


class BlockedQuantizeWithoutZeroPoint(Code):
    """
    ## What it checks
    That a blocked QuantizeLinear has a zero point input.

    ## Why is this bad?
    openvino's ONNX frontend builds the zero point of a blocked quantize by
    reshaping a scalar zero to the blocked shape, which fails when the input is
    absent ("Requested output shape ... is incompatible with input shape"): the
    model does not load. Measured with openvino 2026.4.

    ## Example
    ```
    QuantizeLinear-21(x, y_scale[4, 2], block_size=4, output_dtype=INT4)
    ```

    ## Fix
    Give the node an all-zero zero point of the output type and the scale's shape
    (the result does not change).
    """

    code = "QT303"
    name = "blocked-quantize-without-zero-point"
    summary = "A blocked quantize has no zero point; the target fails to load it."


class ScaleNotPositive(Code):
    """
    ## What it checks
    That every value of a constant scale is strictly positive.

    ## Why is this bad?
    The spec allows negative scales (the sign folds into the values) and
    onnxruntime's symmetric n-bit quantizer writes them on purpose, but TensorRT
    requires "strictly positive values" (IQuantizeLayer) and its parser stops with
    "Scale coefficients must all be positive".

    ## Example
    ```
    x_scale = [0.02, -0.01]
    ```

    ## Fix
    Negate the scale entry and the quantized values it scales (for a weight DQ: the
    stored integers of that channel), which leaves every result unchanged.
    """

    code = "QT304"
    name = "scale-not-positive"
    summary = "A scale holds a zero or negative value; the target refuses it."


class ScaleNotConstant(Code):
    """
    ## What it checks
    That the scale is a build-time constant, not a graph input.

    ## Why is this bad?
    TensorRT documents that the scale of Q/DQ layers "must be a build-time
    constant"; a scale fed at run time cannot be. onnxruntime's NNAPI provider takes
    scales and zero points only from constant initializers.

    ## Example
    ```
    graph inputs: x, s;  QuantizeLinear(x, s)
    ```

    ## Fix
    Store the scale as an initializer (or a Constant).
    """

    code = "QT305"
    name = "scale-not-constant"
    summary = "The scale is fed at run time; the target needs a constant."


class ZeroPointNotZero(Code):
    """
    ## What it checks
    That a known zero point is all zeros, where the target only does symmetric
    quantization.

    ## Why is this bad?
    TensorRT supports symmetric quantization only: its parser stops with "Non-zero
    zero point is not supported" (outside DLA) for integer types. NNAPI needs zero
    points 0 for int8 weights (onnxruntime's NNAPI provider).

    ## Example
    ```
    y_zero_point: int8 = 3
    ```

    ## Fix
    Requantize symmetrically (zero point 0); no conversion can remove a non-zero
    zero point without changing results.
    """

    code = "QT306"
    name = "zero-point-not-zero"
    summary = "A non-zero zero point where the target only quantizes symmetrically."


class OddFourBitTensor(Code):
    """
    ## What it checks
    That a tensor quantized to INT4 or FP4 has an even number of elements.

    ## Why is this bad?
    TensorRT packs two 4-bit values in a byte and its parser refuses tensors with
    an odd element count ("4-bit quantization requires an even number of elements").

    ## Example
    ```
    DequantizeLinear(x: int4 [3, 5])
    ```

    ## Fix
    Pad the tensor to an even size.
    """

    code = "QT307"
    name = "odd-four-bit-tensor"
    summary = "A 4-bit tensor has an odd number of elements."


class QdqPairAtGraphBoundary(Code):
    """
    ## What it checks
    That a 16-bit QuantizeLinear -> DequantizeLinear pair does not connect a graph
    input directly to a graph output.

    ## Why is this bad?
    openvino's CPU plugin removes 16-bit Q -> DQ pairs (see QT408) by connecting
    the pair's input to its consumers; between a graph input and a graph output
    that rewiring fails and `compile_model` stops with "FQ stripping failed"
    (src/common/low_precision_transformations/src/qdq_stripping.cpp). Measured
    with openvino 2026.4.

    ## Example
    ```
    graph input x -> QuantizeLinear(int16) -> DequantizeLinear -> graph output y
    ```

    ## Fix
    Put the pair between other ops (it is removed then, see QT408), or drop it.
    """

    code = "QT308"
    name = "qdq-pair-at-graph-boundary"
    summary = "A 16-bit Q -> DQ pair links a graph input to a graph output."


# ---- QT4xx: semantic divergences -----------------------------------------------------------
class DivisionInFloat32(Code):
    """
    ## What it checks
    Quantize nodes whose division the spec does in float16 or bfloat16 (the scale's
    type) and the target does in float32.

    ## Why is this bad?
    The results differ wherever the two quotients round to different integers:
    x = 78.0625, scale = 0.669921875 (both float16) gives 116.5 in float16 (-> 116)
    and 116.52 in float32 (-> 117). onnxruntime divides float16 in float32 at every
    version (and casts float16 to float for com.microsoft nodes); openvino divides
    float16 and bfloat16 in float32. Measured.

    ## Example
    ```
    QuantizeLinear-21(x: float16, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Quantize from float32 (x and scale in float) when bit-exact results matter, or
    accept the difference (at most one step, on values near a rounding boundary).
    """

    code = "QT401"
    name = "division-in-float32"
    severity = WARNING
    summary = "The target divides in float32 where the spec divides in float16/bfloat16."


class PrecisionIgnored(Code):
    """
    ## What it checks
    QuantizeLinear-23+ nodes with a `precision` attribute the target does not honour.

    ## Why is this bad?
    `precision` names the type the division is done in. onnxruntime 1.31 and
    openvino 2026.4 ignore it (measured: float16 and bfloat16 precision give the
    float32 result; onnxruntime does not even report an invalid type); TensorRT's
    parser warns that it "does not support setting quantization precision" and uses
    the scale's type.

    ## Example
    ```
    QuantizeLinear-23(x: float, y_scale: float, precision=FLOAT16)
    ```

    ## Fix
    Drop `precision` if the float32 result is what you want; otherwise quantize in
    the wanted type explicitly (cast x and the scale first).
    """

    code = "QT402"
    name = "precision-ignored"
    severity = WARNING
    summary = "The target ignores the precision attribute."


class Float8Conversion(Code):
    """
    ## What it checks
    Quantize nodes with a float8 output whose conversion the target does differently
    from the spec.

    ## Why is this bad?
    openvino (measured, 2026.4) converts through float16 (double rounding: 15.4999
    becomes 16 in float8e4m3fn instead of 15), ignores `saturate=0` (values beyond
    the largest float8 saturate instead of becoming NaN / Inf) and turns NaN into
    the negative largest value. onnxruntime with `saturate=0` maps values from 480 up
    to a few more to ±448 instead of NaN in float8e4m3fn (measured, 1.31.1). TensorRT
    documents FP8 outputs clamped to [-448, 448], so `saturate=0` is not honoured.

    ## Example
    ```
    QuantizeLinear-19(x: float, y_scale: float, y_zero_point: float8e4m3fn, saturate=0)
    ```

    ## Fix
    Nothing in the model changes it; validate float8 outputs on the target, and keep
    inputs within the float8 range if saturation behaviour matters.
    """

    code = "QT403"
    name = "float8-conversion"
    severity = WARNING
    summary = "The target converts to float8 differently from the spec."


class MissingAxisReadAsAxis1(Code):
    """
    ## What it checks
    com.microsoft QuantizeLinear / DequantizeLinear nodes with a 1-D scale of more than
    one element and no `axis`.

    ## Why is this bad?
    The com.microsoft schema says that without `axis` the scale must be a scalar
    (qlin reports QL404); onnxruntime reads such a node as per-axis along axis 1,
    as ai.onnx does (measured), so the model runs and means something the spec does
    not define.

    ## Example
    ```
    com.microsoft QuantizeLinear(x [2, 3], y_scale [3])      # no axis
    ```

    ## Fix
    State `axis` (1 is what onnxruntime uses).
    """

    code = "QT404"
    name = "missing-axis-read-as-axis-1"
    severity = WARNING
    summary = "The target reads a 1-D scale without axis as per-axis along axis 1."


class ZeroPointBeforeRounding(Code):
    """
    ## What it checks
    Integer quantize nodes with a zero point that is not known to be zero, on a target
    that adds the zero point before rounding.

    ## Why is this bad?
    The spec rounds x / scale half to even, then adds the zero point. openvino
    rounds x / scale + zero point: with an odd zero point every tie goes the other
    way (x / scale = 0.5, zero point 3: the spec gives 3, openvino 4). Measured with
    openvino 2026.4.

    ## Example
    ```
    QuantizeLinear(x, y_scale, y_zero_point: int8 = 3)
    ```

    ## Fix
    Use an even (or zero) zero point where ties matter, or accept a one-step
    difference on exact ties.
    """

    code = "QT405"
    name = "zero-point-before-rounding"
    severity = WARNING
    summary = "The target adds the zero point before rounding."


class DequantizeArithmetic(Code):
    """
    ## What it checks
    Dequantize nodes whose product the target computes in another type than the spec.

    ## Why is this bad?
    The spec multiplies in the scale's type and converts to the output type.
    openvino (measured) rounds bfloat16 results differently (-21.875 becomes -21.75
    with a bfloat16 scale), and rounds a float32 product to a float16 or bfloat16
    `output_dtype` differently (-13.125 becomes -13.1328125). It also fuses a
    Q -> DQ pair into one FakeQuantize whose float arithmetic differs from the spec
    in the last bit.

    ## Example
    ```
    DequantizeLinear-23(x: int8, x_scale: float, output_dtype=FLOAT16)
    ```

    ## Fix
    Use a float scale and output, or accept last-bit differences.
    """

    code = "QT406"
    name = "dequantize-arithmetic"
    severity = WARNING
    summary = "The target computes the dequantize product in another type."


class NegativeScaleQuantize(Code):
    """
    ## What it checks
    Quantize nodes with a negative scale on a target that miscomputes them.

    ## Why is this bad?
    Negative scales are legal (the sign folds into the values). openvino turns a
    quantize into a FakeQuantize whose input range is then reversed: values beyond
    the quantized range saturate to the wrong end (127 becomes -128), and random
    inputs show other wrong values too (measured, 2026.4). It does not refuse the
    model, so nothing else tells you.

    ## Example
    ```
    QuantizeLinear(x, y_scale = -0.1, y_zero_point: int8 = 0)
    ```

    ## Fix
    Use a positive scale and negate the quantized values downstream (for a Q -> DQ
    pair, negate both scales: the result is unchanged).
    """

    code = "QT407"
    name = "negative-scale-quantize"
    severity = WARNING
    summary = "The target miscomputes quantize with a negative scale."


class QdqPairRemoved(Code):
    """
    ## What it checks
    16-bit QuantizeLinear -> DequantizeLinear pairs on a target that removes them.

    ## Why is this bad?
    openvino's CPU plugin strips FakeQuantize nodes of 65536 levels (a 16-bit
    Q -> DQ pair) and computes the consumer on the unquantized input: no rounding,
    no clamping to the 16-bit range (measured, 2026.4; the pass is
    src/common/low_precision_transformations/src/qdq_stripping.cpp). Results differ
    from the spec by up to half a quantization step, more where the input saturates.

    ## Example
    ```
    Relu -> QuantizeLinear(int16) -> DequantizeLinear -> Conv
    ```

    ## Fix
    Nothing in the model changes it; use 8-bit activations if the quantization
    itself must be reproduced on openvino.
    """

    code = "QT408"
    name = "qdq-pair-removed"
    severity = WARNING
    summary = "The target removes 16-bit Q -> DQ pairs and computes unquantized."


_CODES: dict[str, type[Code]] = {
    c.code: c
    for c in (
        VersionNotMeasured,
        OpsetTooNew,
        OpsetTooOld,
        IrTooNew,
        DomainUnsupported,
        OpUnsupported,
        TypeUnsupported,
        MixedScaleType,
        UnreadableType,
        ProbeRefused,
        ProbeVariesByCpu,
        GranularityUnsupported,
        BlockNotDividing,
        BlockedQuantizeWithoutZeroPoint,
        ScaleNotPositive,
        ScaleNotConstant,
        ZeroPointNotZero,
        OddFourBitTensor,
        QdqPairAtGraphBoundary,
        DivisionInFloat32,
        PrecisionIgnored,
        Float8Conversion,
        MissingAxisReadAsAxis1,
        ZeroPointBeforeRounding,
        DequantizeArithmetic,
        NegativeScaleQuantize,
        QdqPairRemoved,
    )
}


def all_codes() -> list[type[Code]]:
    return [_CODES[k] for k in sorted(_CODES)]


def get(code: str) -> type[Code]:
    """The code's class; KeyError for a code that does not exist."""
    return _CODES[code.upper()]


__all__ = ["Code", "all_codes", "get"]
