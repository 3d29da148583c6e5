"""Benchmark `qlin convert` on models with gigabytes of external weights.

The weights are sparse files (os.truncate), so the benchmark needs little disk.
Each conversion runs in its own process, which reports its wall time and peak
RSS; a 1 GiB and a 4 GiB model show that memory does not grow with the weights.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench-out", "convert")
TENSORS = 4

CHILD = r"""
import json, sys, time
from click.testing import CliRunner
from qlin_cli.cli import main
def peak_rss_mib():  # this process's own high-water mark; ru_maxrss would include the parent's
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024
t = time.perf_counter()
r = CliRunner().invoke(main, ["convert", sys.argv[1], "--to-opset", "13", "-o", sys.argv[2]])
dt = time.perf_counter() - t
assert r.exit_code == 0, r.output
print(json.dumps({"seconds": dt, "peak_rss_mib": peak_rss_mib()}))
"""


def build(folder: str, total_bytes: int) -> str:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    os.makedirs(folder, exist_ok=True)
    data = os.path.join(folder, "weights.bin")
    each = total_bytes // TENSORS
    with open(data, "wb"):
        pass
    os.truncate(data, each * TENSORS)  # sparse: no blocks written
    inits, nodes, outs = [], [], []
    for i in range(TENSORS):
        w = TensorProto(name=f"w{i}", data_type=TensorProto.INT8, dims=[each])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(i * each)), ("length", str(each))):
            w.external_data.add(key=k, value=v)
        inits += [w, numpy_helper.from_array(np.float32(0.01 * (i + 1)), f"s{i}"),
                  numpy_helper.from_array(np.int8(i), f"z{i}")]
        nodes.append(helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}", f"z{i}"], [f"y{i}"],
                                      name=f"dq{i}", output_dtype=TensorProto.FLOAT))
        nodes.append(helper.make_node("QuantizeLinear", [f"y{i}", f"s{i}"], [f"q{i}"], name=f"q{i}",
                                      output_dtype=TensorProto.INT8))
        outs.append(helper.make_tensor_value_info(f"q{i}", TensorProto.INT8, [each]))
    graph = helper.make_graph(nodes, "big", [], outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 11
    path = os.path.join(folder, "big.onnx")
    onnx.save(model, path)
    return path


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    rows = []
    for gib in (1, 4):
        folder = os.path.join(OUT, f"{gib}g")
        src = build(folder, gib * 2**30)
        dst = os.path.join(folder, "converted.onnx")
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD, src, dst], capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr)
            return 1
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        size = os.path.getsize(dst + ".data")
        rows.append((gib, got["seconds"], time.perf_counter() - t, got["peak_rss_mib"], size))
    print(f"{'weights':>8} {'convert s':>10} {'process s':>10} {'peak RSS MiB':>13} {'data out':>12}")
    for gib, sec, wall, rss, size in rows:
        print(f"{gib:>6} G {sec:>10.2f} {wall:>10.2f} {rss:>13.1f} {size / 2**30:>10.2f} G")
    growth = rows[1][3] - rows[0][3]
    print(f"peak RSS growth from 1 GiB to 4 GiB of weights: {growth:+.1f} MiB")
    shutil.rmtree(OUT, ignore_errors=True)
    if growth > 64:
        print("FAIL: memory grows with the weights")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
