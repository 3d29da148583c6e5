"""qlin's evaluator against onnx.reference and onnxruntime (CPU), one process.

16M-element float32 inputs (4096 x 4096), QuantizeLinear at opset 21, scale and
zero point in initializers, onnxruntime with graph optimizations disabled.
Times are the best of N runs of each engine's model-level entry point; the
engines run one after the other over all cases (onnxruntime's threads spin
after a run). Every output is compared bit for bit with qlin's.

    python bench/bench_evaluator.py [--repeat N] [--rounds R] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from qlin_cli.evaluator import evaluate  # noqa: E402

SHAPE = (4096, 4096)


def model(out_type: int, scale: np.ndarray, zp: np.ndarray, **attrs) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "z")]
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "bench", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", out_type, SHAPE)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def cases(rng):
    rows, cols = SHAPE
    per_axis = (rng.random(cols, dtype=np.float32) + 0.5) * 0.05
    blocks = (rng.random((rows, cols // 32), dtype=np.float32) + 0.5) * 0.05
    return [
        ("uint8 per-tensor", model(TensorProto.UINT8, np.float32(0.0371), np.uint8(128))),
        ("int8 per-axis (last axis)",
         model(TensorProto.INT8, per_axis, np.zeros(cols, np.int8), axis=-1)),
        ("int8 blocked (block 32)",
         model(TensorProto.INT8, blocks, np.zeros(blocks.shape, np.int8), axis=1,
               block_size=32)),
        ("int16 per-tensor", model(TensorProto.INT16, np.float32(0.00093), np.int16(-7))),
        ("float8e4m3fn per-tensor",
         model(TensorProto.FLOAT8E4M3FN, np.float32(0.0371),
               np.zeros((), ml_dtypes.float8_e4m3fn))),
        ("int4 blocked (block 32)",
         model(TensorProto.INT4, blocks * 20, np.zeros(blocks.shape, ml_dtypes.int4), axis=1,
               block_size=32)),
    ]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def same_bits(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> bool:
    """Bit-equal, except that a peer's float8 -0 where x is -0 counts as +0: the
    spec adds the zero point (-0 + 0 = +0), both peers skip it for float8
    (tests/test_evaluator_spec.py)."""
    if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
        return False
    u = np.dtype(f"u{a.dtype.itemsize}")
    b = np.ascontiguousarray(b).view(u)
    if a.dtype.itemsize == 1 and a.dtype.kind == "V" or str(a.dtype).startswith("float8"):
        b = np.where((x == 0) & np.signbit(x) & (b == 0x80), 0, b).astype(u)
    return bool(np.array_equal(a.view(u), b))


def ort_session(m):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE, dtype=np.float32) * 3).astype(np.float32)
    feeds = {"x": x}
    # One engine at a time over all cases: onnxruntime's worker threads keep
    # spinning after a run and would steal the cores from whatever runs next.
    # The three phases run ``--rounds`` times; each engine keeps its best time,
    # so a burst of load from elsewhere on a shared machine hurts no engine alone.
    todo = cases(rng)
    ours = {name: evaluate(m, feeds)[0] for name, m in todo}
    t_q, t_r, t_o, notes = {}, {}, {}, {name: "" for name, _ in todo}
    for _ in range(args.rounds):
        for name, m in todo:
            t = best(lambda m=m: evaluate(m, feeds), args.repeat)
            t_q[name] = min(t, t_q.get(name, t))
        for name, m in todo:
            ref = ReferenceEvaluator(m)
            with np.errstate(all="ignore"):
                r = ref.run(None, feeds)[0]
                t = best(lambda ref=ref: ref.run(None, feeds), max(2, args.repeat // 2))
            t_r[name] = min(t, t_r.get(name, t))
            if not same_bits(ours[name], r, x) and "ref" not in notes[name]:
                notes[name] += " (ref differs)"
        for name, m in todo:
            try:
                sess = ort_session(m)
                o = sess.run(None, feeds)[0]
                t = best(lambda sess=sess: sess.run(None, feeds), args.repeat)
                mine = ours[name]
                if not same_bits(mine, o.view(mine.dtype) if o.dtype != mine.dtype else o, x) \
                        and "ort" not in notes[name]:
                    notes[name] += " (ort differs)"
            except Exception as e:  # onnxruntime cannot return some types to Python
                t = float("nan")
                if "ort" not in notes[name]:
                    notes[name] += f" (ort: {type(e).__name__})"
            prev = t_o.get(name, float("nan"))
            t_o[name] = t if np.isnan(prev) else prev if np.isnan(t) else min(t, prev)
            sess = None  # let its threads go before the next phase
    rows = [(name, t_q[name], t_r[name], t_o[name], notes[name]) for name, _ in todo]

    head = ("case", "qlin ms", "onnx.reference ms", "onnxruntime ms",
            "reference / qlin", "onnxruntime / qlin")
    fmt = "| {} | {:.1f} | {:.1f} | {} | {:.1f}x | {} |" if args.markdown else \
        "{:<28} {:>8.1f} {:>18.1f} {:>15} {:>17.1f}x {:>18}"
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("{:<28} {:>8} {:>18} {:>15} {:>18} {:>18}".format(*head))
    for name, t_q, t_r, t_o, note in rows:
        ort_ms = "n/a" if np.isnan(t_o) else f"{t_o:.1f}"
        ort_ratio = "n/a" if np.isnan(t_o) else f"{t_o / t_q:.2f}x"
        print(fmt.format(name, t_q, t_r, ort_ms, t_r / t_q, ort_ratio) + note)
    print(f"({os.cpu_count()} cores, best of {args.repeat} runs x {args.rounds} rounds; "
          f"onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
