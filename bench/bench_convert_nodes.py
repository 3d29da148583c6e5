"""Benchmark `qlin convert` on a 3,000-node model: time with the proof against
--no-verify, side by side in one process, and peak memory against the file size
for a model whose weights are inline.

The model is a chain of 1,000 blocks DequantizeLinear(weight) -> MatMul ->
QuantizeLinear -> DequantizeLinear (per-channel int8 weights, per-tensor uint8
activations), at ai.onnx 13: 4,000 nodes, about 3,000 of them Q/DQ. Three
conversions:

* 13 -> 21: every node is valid as it is (Q/DQ kept, MatMul type-only): nothing
  to prove, so the proof should cost nothing;
* 13 -> 10 of a per-tensor copy: MatMul and the Q/DQ nodes change version, all kept;
* 13 -> com.microsoft: every Q/DQ node changes domain and is proven.

Peak memory (VmHWM of a child process) is compared with the model file's size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BLOCKS = 1000
WIDTH = 64


def build(path: str, per_channel: bool = True, width: int = WIDTH) -> None:
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    for b in range(BLOCKS):
        w = f"w{b}"
        inits.append(numpy_helper.from_array(rng.integers(-127, 127, (width, width)).astype(np.int8), w))
        ws = rng.uniform(0.001, 0.01, width if per_channel else ()).astype(np.float32)
        inits.append(numpy_helper.from_array(ws, f"{w}_s"))
        inits.append(numpy_helper.from_array(np.zeros(ws.shape, np.int8), f"{w}_z"))
        inits.append(numpy_helper.from_array(np.float32(0.05), f"a{b}_s"))
        inits.append(numpy_helper.from_array(np.uint8(128), f"a{b}_z"))
        extra = {"axis": 1} if per_channel else {}
        nodes += [
            helper.make_node("DequantizeLinear", [w, f"{w}_s", f"{w}_z"], [f"{w}_f"], name=f"dqw{b}",
                             **extra),
            helper.make_node("MatMul", [x, f"{w}_f"], [f"m{b}"], name=f"mm{b}"),
            helper.make_node("QuantizeLinear", [f"m{b}", f"a{b}_s", f"a{b}_z"], [f"q{b}"], name=f"q{b}"),
            helper.make_node("DequantizeLinear", [f"q{b}", f"a{b}_s", f"a{b}_z"], [f"d{b}"], name=f"dq{b}"),
        ]
        x = f"d{b}"
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def timed(path: str, *args: str) -> float:
    from click.testing import CliRunner

    from qlin_cli.cli import main

    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        r = CliRunner().invoke(main, ["convert", path, "--dry-run", *args])
        best = min(best, time.perf_counter() - t)
        assert r.exit_code == 0, r.output
    return best


CHILD = r"""
import sys
from click.testing import CliRunner
from qlin_cli.cli import main
cmd = sys.argv[1]
args = [cmd, sys.argv[2]] + (["--to-opset", "21", "--dry-run"] if cmd == "convert" else [])
r = CliRunner().invoke(main, args)
assert r.exit_code in (0, 1), r.output
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024)
"""


def peak(cmd: str, path: str) -> int:
    out = subprocess.run([sys.executable, "-c", CHILD, cmd, path], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return int(out.stdout.split()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        chan, tens = os.path.join(tmp, "chain.onnx"), os.path.join(tmp, "tensor.onnx")
        build(chan)
        build(tens, per_channel=False)
        rows = []
        for label, path, args in (
                ("13 -> 21 (all kept)", chan, ["--to-opset", "21"]),
                ("13 -> 10, per-tensor (all kept)", tens, ["--to-opset", "10"]),
                ("13 -> com.microsoft (all proven)", chan, ["--to-domain", "com.microsoft"])):
            with_proof = timed(path, *args)
            without = timed(path, *args, "--no-verify")
            rows.append({"case": label, "proof_s": round(with_proof, 2), "no_verify_s": round(without, 2),
                         "ratio": round(with_proof / without, 2)})
        big = os.path.join(tmp, "big.onnx")
        build(big, width=256)
        size = os.path.getsize(big)
        for cmd in ("check", "convert"):
            rows.append({"case": f"peak memory, {cmd}, inline weights", "file_mib": round(size / 2**20, 1),
                         "peak_mib": round(peak(cmd, big) / 2**20, 1),
                         "peak_over_file": round(peak(cmd, big) / size, 2)})
        for r in rows:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
