"""Benchmark the format conversions against `qlin check` of the same model, side by side and
interleaved as whole processes (these machines are shared and noisy: the ratio is the figure,
not the seconds). Four models of N nodes each (N = 300 and 3,000), one per direction:

* `qop`: a chain of QLinearMatMul nodes (16 x 16 int8 weights) between a QuantizeLinear and a
  DequantizeLinear, converted with `--to-format qdq --tolerance 5`;
* `qdq`: the same chain in QDQ form (DequantizeLinear of the activation and of the weight,
  MatMul, QuantizeLinear: four nodes a group), converted with `--to-format qoperator`;
* `nbits`: a chain of com.microsoft MatMulNBits nodes (4 bits, 32 x 32, blocks of 32, opset 21),
  converted with `--to-format qdq`;
* `blocked`: blocked int4 DequantizeLinear + MatMul pairs (opset 21), `--to-format qoperator`.

Each ratio is given for the wall time and for the CPU time of the processes (user + system,
which other work on the machine disturbs less); issue 36 asks at most 2x on 3,000 nodes.
QLIN_BENCH_ROUNDS (3) sets the rounds, QLIN_BENCH_SIZES (300,3000) the sizes,
QLIN_BENCH_MODELS (all four) the models. QLIN_BENCH_AGAINST=DIR also runs the qlin_cli of
another tree (DIR holding its qlin_cli/, on PYTHONPATH) in the same rounds, interleaved, and
prints its ratios below, then the ratio of the two trees' convert CPU medians (the figure to
trust for a change on a shared machine)."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

WIDTH = 16
NBITS_K = 32


def _save(nodes, inits, x_shape, y_shape, opset: int, path: str, ms: bool = False) -> None:
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    onnx.save(helper.make_model(g, opset_imports=opsets, ir_version=8 if opset < 21 else 10), path)


def build(path: str, n: int) -> None:
    """n QLinearMatMul nodes between a QuantizeLinear and a DequantizeLinear (opset 13)."""
    import numpy as np
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    for i in range(n):
        inits += [numpy_helper.from_array(rng.integers(-100, 100, (WIDTH, WIDTH)).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.01), f"ws{i}"),
                  numpy_helper.from_array(np.int8(0), f"wz{i}")]
        inputs = [f"q{i}", "s", "z", f"w{i}", f"ws{i}", f"wz{i}", "s", "z"]
        nodes.append(helper.make_node("QLinearMatMul", inputs, [f"q{i + 1}"], name=f"mm{i}"))
    nodes.append(helper.make_node("DequantizeLinear", [f"q{n}", "s", "z"], ["y"]))
    _save(nodes, inits, [1, WIDTH], [1, WIDTH], 13, path)


def build_qdq(path: str, n: int) -> None:
    """n // 4 QDQ MatMul groups (DequantizeLinear x2, MatMul, QuantizeLinear; opset 13)."""
    import numpy as np
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    for i in range(n // 4):
        inits += [numpy_helper.from_array(rng.integers(-100, 100, (WIDTH, WIDTH)).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.01), f"ws{i}"),
                  numpy_helper.from_array(np.int8(0), f"wz{i}")]
        nodes += [helper.make_node("DequantizeLinear", [f"q{i}", "s", "z"], [f"a{i}"], name=f"dqa{i}"),
                  helper.make_node("DequantizeLinear", [f"w{i}", f"ws{i}", f"wz{i}"], [f"b{i}"],
                                   name=f"dqw{i}"),
                  helper.make_node("MatMul", [f"a{i}", f"b{i}"], [f"m{i}"], name=f"mm{i}"),
                  helper.make_node("QuantizeLinear", [f"m{i}", "s", "z"], [f"q{i + 1}"], name=f"q{i}")]
    nodes.append(helper.make_node("DequantizeLinear", [f"q{n // 4}", "s", "z"], ["y"]))
    _save(nodes, inits, [1, WIDTH], [1, WIDTH], 13, path)


def build_nbits(path: str, n: int) -> None:
    """n MatMulNBits nodes (4 bits, K = N = 32, one block of 32 per column, zero points) at opset 21."""
    import numpy as np
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    k, nodes, inits = NBITS_K, [], []
    for i in range(n):
        codes = rng.integers(0, 16, (k, k)).astype(np.uint8)  # [N, K]
        packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).reshape(k, 1, k // 2)
        zero = rng.integers(0, 16, (k, 1)).astype(np.uint8)
        inits += [numpy_helper.from_array(packed, f"b{i}"),
                  numpy_helper.from_array(rng.uniform(0.001, 0.01, k).astype(np.float32), f"s{i}"),
                  numpy_helper.from_array(zero[:, 0], f"z{i}")]  # one byte a column
        out = "y" if i == n - 1 else f"h{i + 1}"
        nodes.append(helper.make_node("MatMulNBits", ["x" if i == 0 else f"h{i}", f"b{i}", f"s{i}", f"z{i}"],
                                      [out], name=f"mnb{i}", domain="com.microsoft", K=k, N=k, bits=4,
                                      block_size=k))
    _save(nodes, inits, [1, k], [1, k], 21, path, ms=True)


def build_blocked(path: str, n: int) -> None:
    """n // 2 pairs of a blocked int4 DequantizeLinear (blocks of 32 along K) and a MatMul, opset 21."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    k, nodes, inits = NBITS_K, [], []
    for i in range(n // 2):
        codes = rng.integers(-8, 8, (k, k))
        inits += [helper.make_tensor(f"w{i}", TensorProto.INT4, [k, k], codes.flatten().tolist()),
                  numpy_helper.from_array(rng.uniform(0.001, 0.01, (1, k)).astype(np.float32), f"s{i}")]
        out = "y" if i == n // 2 - 1 else f"h{i + 1}"
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}"], [f"wf{i}"], name=f"dq{i}", axis=0,
                                   block_size=k),
                  helper.make_node("MatMul", ["x" if i == 0 else f"h{i}", f"wf{i}"], [out], name=f"mm{i}")]
    _save(nodes, inits, [1, k], [1, k], 21, path)


MODELS = {"qop": (build, ["--to-format", "qdq", "--tolerance", "5"]),
          "qdq": (build_qdq, ["--to-format", "qoperator", "--tolerance", "5"]),
          "nbits": (build_nbits, ["--to-format", "qdq"]),
          "blocked": (build_blocked, ["--to-format", "qoperator"])}


def timed(args: list[str], tree: str | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one qlin process (``tree``: the folder whose qlin_cli it runs;
    None: the one this Python imports)."""
    env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qlin_cli", *args], check=False, capture_output=True, env=env,
                   cwd=None if tree is None else tree)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    rounds = int(os.environ.get("QLIN_BENCH_ROUNDS", "3"))
    sizes = [int(s) for s in os.environ.get("QLIN_BENCH_SIZES", "300,3000").split(",")]
    names = os.environ.get("QLIN_BENCH_MODELS", ",".join(MODELS)).split(",")
    trees = [None] + ([os.path.abspath(os.environ["QLIN_BENCH_AGAINST"])]
                      if os.environ.get("QLIN_BENCH_AGAINST") else [])
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            for name in names:
                make, flags = MODELS[name]
                path = os.path.join(tmp, f"{name}{n}.onnx")
                make(path, n)
                times: dict = {tree: ([], []) for tree in trees}
                for _ in range(rounds):  # interleaved
                    for tree in trees:
                        times[tree][0].append(timed(["check", "--no-cache", path], tree))
                        times[tree][1].append(timed(["convert", path, *flags, "--dry-run"], tree))
                cpu = {tree: _report(n, name, flags, rounds, *times[tree], tree) for tree in trees}
                if len(trees) > 1:
                    print(f"{'':17s}convert CPU of this tree against [{trees[1]}]'s: "
                          f"{cpu[None] / cpu[trees[1]]:.3f}x", flush=True)


def _report(n: int, name: str, flags: list, rounds: int, check: list, convert: list, tree) -> float:
    """Print the medians and ratios of one tree; its convert's median CPU seconds."""
    c, c_cpu = (statistics.median(x[i] for x in check) for i in (0, 1))
    v, v_cpu = (statistics.median(x[i] for x in convert) for i in (0, 1))
    print(f"{n:5d} nodes {name:8s} {' '.join(flags[:2])}: check {c:.2f} s, convert {v:.2f} s "
          f"(median of {rounds}): {v / c:.1f}x; CPU {c_cpu:.2f} s and {v_cpu:.2f} s: "
          f"{v_cpu / c_cpu:.2f}x" + (f"  [{tree}]" if tree else ""), flush=True)
    return v_cpu


if __name__ == "__main__":
    main()
