"""Whole-model blocks each release failed to compile, measured on a named CPU
(qlin_cli/targets/data/<runtime>_blocks.json.gz; QT211).

A node's probes (probe_store.py) are small models of one kind: one shape per key. A runtime
can still fail a model whose every node kind runs in the probes, for a shape the probe did
not have: openvino 2026.4.1 on an Intel Xeon with AVX-512 compiles a 2-bit MatMulNBits
with blocks of 32 over K = 64 or 96 and fails it over K = 32, 128, 256 ("could not create a
primitive descriptor for the inner product forward propagation primitive"); its probe has
K = 128, N = 16 and was measured on CPUs where it ran and where it failed. So
tools/blocks_openvino.py ``--write`` compiles the models onnxruntime's quantizers write
(fixtures/corpus.py: QDQ, QOperator, dynamic, n-bits; a conv net, an MLP-like model, an
attention block, an LSTM) in each release, cuts each model that fails down to the smallest
run of its nodes that fails with the model's own error (one node, else two ...: the block),
compiles every block found in every release, and writes here, per block and CPU, the
releases where it failed with the runtime's error. A block is named by ``block_key``: its
node's probe key and the shape the key leaves out (integer attributes, the shapes of every
input after the first), so qlin recognises it in any model, whatever its names. A block of
more than one node is named by its nodes' names joined by " -> " and stored as measured,
but QT211 recognises one-node blocks only: every block found so far is one node.

    {"format": 1, "runtime": "openvino", "device": "CPU",
     "releases": {                                 one line per release measured
       "2026.4.1": {"hosts": {"Intel(R) Xeon(R) Processor (avx2, ...)":
                              {"models": 75, "fail": 10, "source": "python tools/..."}}},
       ...},
     "blocks": {                                   per block, ranges as probe_store's
       "com.microsoft:MatMulNBits-1(...) ... | K=128 N=64 ... | [64,4,8] [64,4] [64,1]": [
         {"since": "2024.0.0", "hosts": {"Intel(R) Xeon(R) ...": "load: ..."}},
         {"since": "2024.5.0", "hosts": {"Intel(R) Xeon(R) ...": "runs"}},
         ...]},
     "found": {"<block key>": ["transformer_nbits2_asym_b32_op21"]}}   the models it came from

A range holds from its ``since`` release to the release before the next range's; a CPU a
release was not measured on is not in its range, and nothing is said of it.
"""

from __future__ import annotations

from functools import cache

from . import data_files, probe_keys

FORMAT = 1
RUNS = "runs"  # a block's outcome where the release compiled it (openvino), or loaded and ran it
DOES = {"openvino": "compile", "onnxruntime": "load and run"}  # what was measured


def file_name(runtime: str) -> str:
    return data_files.file_name(runtime, "blocks")


@cache
def _data(runtime: str) -> dict:
    return data_files.read(file_name(runtime)) or {}


def releases(runtime: str) -> tuple[str, ...]:
    return tuple(_data(runtime).get("releases", ()))


def _shape(shape) -> str:
    if shape is None:
        return "?"
    return "[" + ",".join(str(d) if isinstance(d, int) else "?" for d in shape) + "]"


def block_key(facts, node_key: probe_keys.Key | None) -> str | None:
    """A one-node block's name: the probe key, the node's integer attributes the key does not
    name, and the shapes of its inputs after the first (weights, scales, zero points: "-"
    where absent); None without a probe key."""
    if node_key is None:
        return None
    named = set(node_key.details)  # (probe_keys.Key's fields: its text is never read back)
    attrs = " ".join(f"{k}={v}" for k, v in sorted(facts.attrs.items()) if f"{k}={v}" not in named)
    shapes = " ".join(_shape(facts.in_shape(i)) if facts.present_at(i) else "-"
                      for i in range(1, len(facts.in_typed)))
    return f"{node_key} | {attrs} | {shapes}"


@cache
def failing_heads(runtime: str, version: str) -> frozenset[str]:
    """The probe keys of the blocks ``version`` failed on some CPU (a node of any other key
    holds none of them: its block key is not worked out)."""
    return frozenset(key.split(" | ")[0] for key in _data(runtime).get("blocks", {})
                     if failures(runtime, version, key)[0])


def failures(runtime: str, version: str, key: str) -> tuple[list[tuple[str, str]], list[str]]:
    """([(CPU, error)] where ``version`` failed the block ``key``, [CPUs where it ran]), of the
    range in force at that release; ([], []) where the block or the release was not measured."""
    data = _data(runtime)
    order = list(data.get("releases", ()))
    ranges = data.get("blocks", {}).get(key)
    if version not in order or not ranges:
        return [], []
    at = order.index(version)
    now = None
    for r in ranges:
        if order.index(r["since"]) > at:
            break
        now = r
    hosts = {} if now is None else now["hosts"]
    measured = data["releases"][version]["hosts"]
    failed = [(cpu, said) for cpu, said in hosts.items() if said != RUNS and cpu in measured]
    ran = [cpu for cpu, said in hosts.items() if said == RUNS and cpu in measured]
    return failed, ran


def findings(target, runtime: str, version: str, site) -> list:
    """QT211 of ``target`` (judging ``runtime`` ``version``) on the node ``site``: where a block
    like the node's failed in that release on a CPU it was measured on, naming each CPU and
    error, and the CPUs it ran on; [] elsewhere."""
    if site.node_key not in failing_heads(runtime, version):
        return []
    key = block_key(site.facts, site.node_key)
    failed, ran = failures(runtime, version, key)
    if not failed:
        return []
    said = "; ".join(f"on {cpu}: {error}" for cpu, error in failed)
    fact = f"{runtime} {version} failed to {DOES[runtime]} this block when measured ({said})"
    if ran:
        fact += f"; it ran on {', '.join(ran)}"
    models = found_in(runtime, key)
    if models:
        fact += f" (cut from {models[0]}, tools/blocks_{runtime}.py)"
    later = _ran_in(runtime, key)
    fix = ("test on the deployment CPU (`qlin check --confirm` where the release is installed)"
           + (f"; {runtime} {later} ran it there" if later else ""))
    return [target.finding("QT211", fact, fix=fix)]


def _ran_in(runtime: str, key: str) -> str | None:
    """The newest release measured that ran the block on every CPU it was measured on."""
    for v in reversed(releases(runtime)):
        failed, ran = failures(runtime, v, key)
        if ran and not failed:
            return v
    return None


def found_in(runtime: str, key: str) -> list[str]:
    """The models the block was cut from."""
    return list(_data(runtime).get("found", {}).get(key, ()))


def fold(runtime: str, releases_: dict, outcomes: dict, found: dict, order_key) -> dict:
    """The file of ``releases_`` ({release: {"hosts": {cpu: ...}}}) and ``outcomes``
    ({block: {release: {cpu: "runs" | error}}}): per block, a range where its outcomes change."""
    order = sorted(releases_, key=order_key)
    blocks = {}
    for key in sorted(outcomes):
        ranges, last = [], None
        for v in order:
            hosts = dict(sorted(outcomes[key].get(v, {}).items()))
            if hosts != last:
                ranges.append({"since": v, "hosts": hosts})
                last = hosts
        blocks[key] = ranges
    return {"format": FORMAT, "runtime": runtime, "device": "CPU",
            "releases": {v: releases_[v] for v in order}, "blocks": blocks,
            "found": {k: sorted(found[k]) for k in sorted(found)}}


def unfold(data: dict) -> tuple[dict, dict, dict]:
    """(releases, {block: {release: {cpu: outcome}}}, found) of a file: ``fold``'s input."""
    order = list(data.get("releases", ()))
    outcomes: dict = {}
    for key, ranges in data.get("blocks", {}).items():
        per = outcomes.setdefault(key, {})
        for i, r in enumerate(ranges):
            end = order.index(ranges[i + 1]["since"]) if i + 1 < len(ranges) else len(order)
            for v in order[order.index(r["since"]):end]:
                per[v] = dict(r["hosts"])
    return dict(data.get("releases", {})), outcomes, {k: list(v) for k, v in data.get("found", {}).items()}


def dumps(data: dict) -> str:
    """The file's text: one line per release and per range (as probe_store writes its own)."""
    from .probe_store import ranged_text

    return ranged_text(data, "blocks", "found")
