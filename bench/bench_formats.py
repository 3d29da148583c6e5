"""Benchmark `qlin convert --to-format qdq` against `qlin check` of the same model, side by
side and interleaved as whole processes (these machines are shared and noisy: the ratio is
the figure, not the seconds). The model: a chain of N QLinearMatMul nodes (16 x 16 int8
weights) between a QuantizeLinear and a DequantizeLinear, N = 300 and 3,000. Each ratio is
given for the wall time and for the CPU time of the processes (user + system, which other
work on the machine disturbs less); issue 36 asks at most 2x on 3,000 nodes."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def build(path: str, n: int) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    for i in range(n):
        inits += [numpy_helper.from_array(rng.integers(-100, 100, (16, 16)).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.01), f"ws{i}"),
                  numpy_helper.from_array(np.int8(0), f"wz{i}")]
        inputs = [f"q{i}", "s", "z", f"w{i}", f"ws{i}", f"wz{i}", "s", "z"]
        nodes.append(helper.make_node("QLinearMatMul", inputs, [f"q{i + 1}"], name=f"mm{i}"))
    nodes.append(helper.make_node("DequantizeLinear", [f"q{n}", "s", "z"], ["y"]))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)


def timed(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one qlin process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qlin_cli", *args], check=False, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    rounds = int(os.environ.get("QLIN_BENCH_ROUNDS", "3"))
    with tempfile.TemporaryDirectory() as tmp:
        for n in (300, 3000):
            path = os.path.join(tmp, f"chain{n}.onnx")
            build(path, n)
            check, convert = [], []
            for _ in range(rounds):  # interleaved
                check.append(timed(["check", "--no-cache", path]))
                convert.append(timed(["convert", path, "--to-format", "qdq", "--tolerance", "5",
                                      "--dry-run"]))
            c, c_cpu = (statistics.median(x[i] for x in check) for i in (0, 1))
            v, v_cpu = (statistics.median(x[i] for x in convert) for i in (0, 1))
            print(f"{n:5d} QLinearMatMul: check {c:.2f} s, convert --to-format qdq {v:.2f} s "
                  f"(median of {rounds}): {v / c:.1f}x check; CPU {c_cpu:.2f} s and {v_cpu:.2f} s: "
                  f"{v_cpu / c_cpu:.1f}x")


if __name__ == "__main__":
    main()
