"""openvino at each measured version (qlin_cli/targets/probe_table.py, data written by
tools/gen_target_data.py from each release run on the probe models of tools/probe_models.py):
the data agrees with the openvino installed here, QOperator nodes openvino cannot compile are
refused, older versions are judged by their own probes, ranges and the feature matrix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from qlin_cli.cli import main
from qlin_cli.model.analysis import analyze
from qlin_cli.targets import predict, probe_keys, probe_table, registry, versions

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "fixtures")]

import family_builders as fb  # noqa: E402

ov = pytest.importorskip("openvino")


def _errors(model, target: str) -> list:
    return [f for f in predict.findings(model, "", [target]) if f.severity == "error"]


def test_every_minor_version_from_2024_0_is_measured():
    have = versions.known("openvino")
    minors = {".".join(v.split(".")[:2]) for v in have}
    assert {"2024.0", "2024.6", "2025.0", "2025.4", "2026.0", "2026.4"} <= minors, have
    assert registry.get("openvino").versions == (probe_table.default_version("openvino"),)


@pytest.mark.remeasure
def test_the_data_matches_the_openvino_installed_here(tmp_path):
    """The generator's measurement, repeated in this process on the first probe of each key
    (keys whose probes all ran must run; keys all of whose probes failed must fail)."""
    from probe_helpers import remeasure

    installed = probe_table.installed_version("openvino")
    if installed not in probe_table.available_versions("openvino"):
        pytest.skip(f"openvino {installed} is not among the measured versions")
    remeasure("openvino", probe_table.load("openvino", installed), tmp_path)


def test_per_channel_qlinear_ops_and_vendor_qoperators_are_refused():
    """openvino 2026.4 reads a per-channel QLinearConv / QLinearMatMul scale along the wrong
    axis and has no rule for com.microsoft QLinearConv (measured by the probes; these models
    were 'runs' before the probes)."""
    conv = _errors(fb.qlinear_conv(), "openvino")
    assert [f.code for f in conv] == ["QT205"] and "dequantization scale elements" in conv[0].message
    matmul = _errors(fb.qlinear_matmul(b_scale=np.full(3, 0.01, np.float32)), "openvino")
    assert [f.code for f in matmul] == ["QT205"]
    assert _errors(fb.qlinear_conv(w_scale=np.float32(0.1), w_zp=np.int64(0)), "openvino") == []
    assert _errors(fb.qlinear_conv(domain="com.microsoft"), "openvino")[0].code == "QT205"
    assert _errors(fb.qlinear_conv(), "onnxruntime") == []  # onnxruntime runs it


def _refused_early_runs_late() -> tuple[str, str, str]:
    """A probe key every probe of which failed in the oldest measured version and ran in
    the newest: (key, the oldest version, the first version that runs it)."""
    have = versions.known("openvino")
    old, new = probe_table.load("openvino", have[0]), probe_table.load("openvino", have[-1])
    for key, outcome in sorted(old.keys().items()):
        later = new.outcome(key)
        if outcome.refused and later is not None and later.fails == 0 and "MatMulNBits-1(float," in key:
            first = next(v for v in have if probe_table.load("openvino", v).outcome(key).fails == 0)
            return key, have[0], first
    pytest.fail("no family probe was refused by the oldest version and run by the newest")


def test_an_older_version_is_judged_by_its_own_probes_and_names_the_version_that_runs_it():
    import re

    key, oldest, first = _refused_early_runs_late()
    block = int(re.search(r"block_size=(\d+)", key).group(1))
    bits = re.search(r" bits=(\d+)", key)
    k, n = max(128, 2 * block), 16  # the probe's shape (tools/probe_models.py)
    model = fb.matmul_nbits(k=k, n=n, block=block, bits=int(bits.group(1)) if bits else 4,
                            zero_points=key.count(",") == 3,
                            scales_shape=None if "scales rank=2" in key else (n * k // block,))
    a = analyze(model, "")
    (body, index, _), = a.nodes()
    assert probe_keys.node_key(a.any_facts(body, index)) == key
    old = _errors(model, f"openvino@{oldest}")
    assert [f.code for f in old] == ["QT205"]
    assert f"openvino {'.'.join(first.split('.')[:2])} and newer run it" in old[0].message
    assert _errors(model, f"openvino@{first}") == []
    span = _errors(model, f"openvino>={oldest}")
    assert len(span) == 1 and f"openvino {oldest}" in span[0].message


def test_versions_matrix_for_openvino_as_text_and_json():
    result = CliRunner().invoke(main, ["targets", "--versions", "openvino", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["versions"]
    assert [r["version"] for r in rows] == versions.known("openvino")
    nbits = ["com.microsoft.MatMulNBits" in r["families"] for r in rows]
    assert nbits[-1] and not nbits[0]  # measured: not in 2024.0, present now
    text = CliRunner().invoke(main, ["targets", "--versions", "openvino"])
    assert text.exit_code == 0 and "com.microsoft.MatMulNBits" in text.output


def test_sources_name_the_data_file_of_the_version_judged():
    t = registry.get("openvino@2025.0")
    assert any("openvino_probes.json.gz, release 2025.0" in s.where for s in t.sources)


def _matrix_case(**fields):
    import test_targets_matrix as tm

    return tm.build(tm.Case(**fields))[0]


def test_an_older_release_keeps_the_sixteen_bit_pair_at_the_boundary():
    """2026.4 strips a 16-bit Q -> DQ pair and fails between graph input and output (QT308);
    2024.0 ran the boundary-pair probes, so the rule does not apply to it."""
    model = _matrix_case(kind="qdq", domain="", opset=21, float_type="float", scale_type="float",
                         q_type="int16")
    assert [f.code for f in _errors(model, "openvino")] == ["QT308"]
    assert _errors(model, "openvino@2024.0") == []


def test_a_kind_that_fails_in_an_older_release_is_refused_there():
    """Blocked QuantizeLinear-23 along axis 1: every probe of the kind failed in 2024.0."""
    model = _matrix_case(kind="q", domain="", opset=23, float_type="float", scale_type="float",
                         q_type="uint8", gran="block", axis=1, block=4)
    old = _errors(model, "openvino@2024.0")
    assert [f.code for f in old] == ["QT205"]
    assert "every probe of this kind failed in openvino 2024.0.0" in old[0].message
    assert _errors(model, "openvino") == []


def test_a_kind_some_probes_of_failed_is_judged_by_the_release_s_own_failure():
    """A release that failed some probes of a kind refuses a node of it (QT205, with the
    counts) unless its failure is one a rule decides from the node's own values (a block
    size that does not divide: QT302 says it for the nodes it concerns); no other
    release's outcome is read (the split counts used to be compared with 2026.4.1's)."""
    from qlin_cli.targets import openvino

    model = _matrix_case(kind="q", domain="", opset=21, float_type="float", scale_type="float",
                         q_type="int8", gran="tensor", axis=None, block=0)
    a = analyze(model, "")
    key = probe_keys.node_key(a.facts(a.bodies[0], 0))
    newest = probe_table.load("openvino", probe_table.available_versions("openvino")[-1])
    assert newest.outcome(key).fails == 0

    def release(entry):
        keys = {k: {"runs": o.runs, "fails": o.fails, "error": o.error} for k, o in newest.keys().items()}
        keys[key] = entry
        return openvino.OpenVinoCpu(probe_table.ProbeTable(
            {"runtime": "openvino", "version": "2024.9.0", "source": "", "probes": 1, "keys": keys}))

    found = predict.findings(model, "", [release({"runs": 1, "fails": 2, "error": "load: no kernel"})])
    assert [f.code for f in found] == ["QT205"] and "2 of 3 probes" in found[0].message
    assert found[0].severity == "error" and "2024.9.0" in found[0].message
    divided = "load: The input data axis size: 8 must be divisible by the block size: 3"
    assert openvino.explained(divided) == "QT302"
    assert predict.findings(model, "", [release({"runs": 1, "fails": 2, "error": divided})]) == []
    assert predict.findings(model, "", [release({"runs": 1, "fails": 0})]) == []


def test_a_versioned_target_asks_each_newer_release_a_bounded_number_of_times(monkeypatch):
    """Naming the release that runs a node asks each newer release's own checks, not their
    versioned wrappers (which would ask the releases after them again: 2**n calls)."""
    import onnx

    from qlin_cli.targets import openvino as ov_profile

    calls = []
    own = ov_profile.OpenVinoCpu.node_findings

    def counted(self, site):
        calls.append(self.table.version)
        return own(self, site)

    monkeypatch.setattr(ov_profile.OpenVinoCpu, "node_findings", counted)
    model = onnx.load(ROOT / "fixtures" / "models" / "clean" / "quark_int16.onnx")
    found = _errors(model, "openvino@2024.0")
    assert [f.code for f in found] == ["QT104"]  # com.amd.quark: no release has a rule for it
    # the check and the convert plan each ask the node a few times: linear in the releases
    # (35 calls for 17 releases), where the wrappers asking each other made 2**17
    assert len(calls) <= 4 * len(versions.known("openvino")) * len(model.graph.node)


def test_merging_a_cpu_keeps_each_cpus_outcome_where_they_differ():
    import gen_target_data as gen

    old = {"hosts": ["cpu A"], "probes": 5, "keys": {"same": {"runs": 1, "fails": 0},
                                                     "stale": {"runs": 1, "fails": 0},
                                        "differs": {"runs": 1, "fails": 0},
                                        "mixed": {"runs": 2, "fails": 1, "error": "e"}}}
    new = {"hosts": ["cpu B"], "probes": 5, "keys": {"same": {"runs": 1, "fails": 0},
                                        "differs": {"runs": 0, "fails": 1, "error": "load: no kernel"},
                                        "mixed": {"runs": 1, "fails": 2, "error": "e"},
                                        "new": {"runs": 1, "fails": 0}}}
    merged = gen.merge(old, new, "cpu B")
    assert merged["hosts"] == ["cpu A", "cpu B"]
    assert merged["keys"]["same"] == {"runs": 1, "fails": 0}
    assert merged["keys"]["mixed"] == {"runs": 2, "fails": 1, "error": "e"}  # the same on both
    assert merged["keys"]["differs"] == {"runs": 1, "fails": 1, "error": "load: no kernel", "hosts": {
        "cpu A": {"runs": 1, "fails": 0}, "cpu B": {"runs": 0, "fails": 1, "error": "load: no kernel"}}}
    assert merged["keys"]["new"] == {"runs": 1, "fails": 0}
    assert "stale" not in merged["keys"]  # no probe of today has that key
    # a key split into more specific ones since: its old counts held probes it no longer names
    before = {"hosts": ["cpu A"], "probes": 2, "keys": {"k": {"runs": 1, "fails": 1, "error": "e"}}}
    today = {"hosts": ["cpu B"], "probes": 2,
             "keys": {"k": {"runs": 1, "fails": 0}, "k bits=8": {"runs": 0, "fails": 1}}}
    split = gen.merge(before, today, "cpu B")
    assert split["keys"]["k"] == {"runs": 1, "fails": 0}
    # a new chain through the node ("k -> Transpose-21 -> MatMul-13") is no more specific sibling
    chain = "k -> Transpose-21 -> MatMul-13"
    ran = {"runs": 1, "fails": 0}
    chained = {"hosts": ["cpu B"], "probes": 2, "keys": {"k": dict(ran), chain: dict(ran)}}
    kept = gen.merge({"hosts": ["cpu A"], "probes": 1, "keys": {"k": {"runs": 0, "fails": 1, "error": "e"}}},
                     chained, "cpu B")
    assert kept["keys"]["k"]["hosts"] == {"cpu A": {"runs": 0, "fails": 1, "error": "e"},
                                          "cpu B": {"runs": 1, "fails": 0}}
    table = probe_table.ProbeTable({"runtime": "openvino", "version": "9", "source": "", "probes": 3,
                                    **merged})
    assert table.outcome("differs").varies_by_cpu and not table.outcome("differs").refused
    assert table.outcome("differs").hosts == (("cpu A", "ok"), ("cpu B", "1 of 1 failed: load: no kernel"))
    assert not table.outcome("mixed").varies_by_cpu
    again = gen.merge(merged, new, "cpu B")  # measuring the same CPU again changes nothing
    assert again == merged


def test_measuring_some_probes_again_replaces_their_keys_only():
    """``--only division``: the keys of that prefix are today's, every other key stays as
    measured, and the probe count is made up again."""
    import gen_target_data as gen

    old = {"hosts": ["cpu A"], "probes": 6, "keys": {
        "a": {"runs": 3, "fails": 0}, "division k": {"runs": 2, "fails": 0},
        "division gone": {"runs": 0, "fails": 1, "error": "load: x"}}}
    new = {"probes": 2, "keys": {"division k": {"runs": 0, "fails": 2, "error": "differs: divides in float"}}}
    out = gen._replaced(old, new, "division")
    assert out["keys"] == {"a": {"runs": 3, "fails": 0}, "division k": new["keys"]["division k"]}
    assert out["probes"] == 6 - 3 + 2 and out["hosts"] == ["cpu A"]


def test_only_refuses_a_release_not_measured_and_a_prefix_no_probe_has(tmp_path, monkeypatch, capsys):
    """``--only`` replaces keys of a measured release: an unmeasured one is refused before
    anything is installed, and a prefix that names no probe writes nothing."""
    import gen_target_data as gen

    assert gen.measure("onnxruntime", "1.17.3", False, only=("division",)) == 2
    assert "was not measured" in capsys.readouterr().err
    monkeypatch.setattr(gen, "run_probes", lambda *a: ({}, {}))
    monkeypatch.setattr(gen, "write_tables", lambda *a: pytest.fail("nothing is written"))
    assert gen._probe_data("onnxruntime", "1.31.1", None, tmp_path, False, only=("divison",)) == 2
    assert "no probe key starts with 'divison'" in capsys.readouterr().err


def test_a_kind_that_runs_on_some_cpus_only_is_a_warning():
    from qlin_cli.targets import openvino

    model = fb.qlinear_conv(w_scale=np.float32(0.1), w_zp=np.int64(0))  # runs in the committed data
    a = analyze(model, "")
    body = a.bodies[0]
    key = probe_keys.node_key(a.facts(body, 0))
    newest = probe_table.available_versions("openvino")[-1]
    table = probe_table.load("openvino", newest)
    data = {"runtime": "openvino", "version": newest, "source": "", "probes": 1,
            "hosts": ["cpu A", "cpu B"],
            "keys": {k: {"runs": o.runs, "fails": o.fails, "error": o.error}
                     for k, o in table.keys().items()}}
    assert key in data["keys"]
    data["keys"][key] = {"runs": 1, "fails": 1, "error": "load: No suitable implementations", "hosts": {
        "cpu A": {"runs": 1, "fails": 0},
        "cpu B": {"runs": 0, "fails": 1, "error": "load: No suitable implementations"}}}
    target = openvino.OpenVinoCpu(probe_table.ProbeTable(data))
    found = predict.findings(model, "", [target])
    assert [f.code for f in found] == ["QT206"], found
    assert found[0].severity == "warning" and "cpu B: 1 of 1 failed" in found[0].message


# ---- kinds the quantizer outputs showed the probes lacked ------------------------------------
def _ov_runs(model, feeds) -> bool:
    """Whether the openvino installed here compiles and runs ``model`` (tools/probe_runner.py)."""
    import tempfile

    import onnx
    import probe_runner

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/m.onnx"
        onnx.save(model, path)
        types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
        return probe_runner.run_openvino(path, feeds, types) == "ok"


def _codes(model, target: str) -> list[str]:
    return [f.code for f in predict.findings(model, "", [target])]


def test_reduce_ops_reading_axes_from_an_input_are_judged_by_their_probe():
    """openvino 2024.0 ignores ReduceMean-18's axes input (onnxruntime's mixed QDQ models failed
    there with no Q/DQ to blame); 2024.6 and the release installed here run it."""
    import onnx
    import probe_models
    from onnx import helper

    model = probe_models._reduce("ReduceMean")
    old = _errors(model, "openvino@2024.0")
    assert [f.code for f in old] == ["QT205"] and "ReduceMean-18 with axes as an input" in old[0].message
    assert "opset 17" in old[0].message and old[0].where == "model"
    assert _errors(model, "openvino@2024.6") == [] and _errors(model, "openvino") == []
    assert _ov_runs(model, {"x": np.ones((1, 8, 4, 4), np.float32)})
    # at opset 17 the axes are an attribute: no probe describes the node
    attr = helper.make_node("ReduceMean", ["x"], ["r"], axes=[2, 3])
    graph = model.graph
    old17 = helper.make_model(helper.make_graph([attr, graph.node[1]], "g", graph.input, graph.output,
                                                [graph.initializer[1]]),
                              opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(old17, full_check=True)
    assert _errors(old17, "openvino@2024.0") == []


def test_qlinear_add_after_a_quantize_with_a_scalar_operand_is_judged_by_its_probe():
    """openvino 2025.3 and 2025.4 die (SIGSEGV) compiling x -> QuantizeLinear -> QLinearAdd with
    a scalar B (onnxruntime's QOperator transformer: its layer norm's epsilon), and run the
    QLinearAdd alone; 2026.1 and the release here run both."""
    import probe_models

    scalar = probe_models._binary_after_q("QLinearAdd", "uint8", True)
    full = probe_models._binary_after_q("QLinearAdd", "uint8", False)
    for v in ("2025.3", "2025.4"):
        found = _errors(scalar, f"openvino@{v}")
        assert [f.code for f in found] == ["QT205"], found
        assert "QuantizeLinear -> QLinearAdd" in found[0].message and "crash" in found[0].message
        assert _errors(full, f"openvino@{v}") == []
    assert _errors(scalar, "openvino@2026.1") == [] and _errors(scalar, "onnxruntime") == []
    feeds = {"x": np.ones((2, 4), np.float32)}
    assert _ov_runs(scalar, feeds) == (_errors(scalar, "openvino") == [])


def test_matmul_nbits_scales_as_the_quantizer_writes_them_are_judged_by_their_probe():
    """onnxruntime's MatMulNBits quantizer writes scales [N, blocks]; openvino 2024.6 and 2025.0
    convert that only when K equals N ("Argument shapes are inconsistent"), and the form of
    onnxruntime's operator document, [N * blocks], always."""
    ranked = fb.matmul_nbits(k=128, n=16, block=32, zero_points=False)
    flat = fb.matmul_nbits(k=128, n=16, block=32, zero_points=False, scales_shape=(16 * 4,))
    for v in ("2024.6", "2025.0"):
        found = _errors(ranked, f"openvino@{v}")
        assert [f.code for f in found] == ["QT205"] and "Argument shapes are inconsistent" in found[0].message
        assert _errors(flat, f"openvino@{v}") == []
    feeds = {"A": np.ones((1, 128), np.float32)}
    for model in (ranked, flat):
        assert _ov_runs(model, feeds) == (_errors(model, "openvino") == [])


def test_a_quantize_to_a_type_openvino_lacks_that_a_release_still_runs_is_a_warning_there():
    """QuantizeLinear(output_dtype=float8e4m3fnuz, saturate=0): 2025.3 to 2026.3 load it and
    write uint8 (QT410, a warning); 2026.4 refuses it (QT204)."""
    model = _matrix_case(kind="q", domain="", opset=21, float_type="float", scale_type="float",
                         q_type="float8e4m3fnuz", gran="tensor", axis=None, block=0, zp="none",
                         attrs=(("saturate", 0),))
    for v in ("2025.3", "2026.3"):
        found = predict.findings(model, "", [f"openvino@{v}"])
        assert [(f.code, f.severity) for f in found] == [("QT410", "warning")], found
    assert _codes(model, "openvino@2026.4") == ["QT204"]
    old = _errors(model, "openvino@2025.0")  # the releases that run it, not "and newer"
    assert [f.code for f in old] == ["QT204"] and "(openvino 2025.3 to 2026.3 run it)" in old[0].message
    with_saturation = _matrix_case(kind="q", domain="", opset=21, float_type="float", scale_type="float",
                                   q_type="float8e4m3fnuz", gran="tensor", axis=None, block=0, zp="none")
    # measured since the spec's type space is probed in every release: 2026.1 runs it too
    assert _codes(with_saturation, "openvino@2026.1") == ["QT410"]


def test_matmul_nbits_zero_points_of_one_block_are_judged_apart():
    """openvino 2025.1 and 2025.2 read 4-bit MatMulNBits zero points unpacked ([N * blocks]
    codes): packed ones fail with several blocks ("Requested output shape [16,2,1] is
    incompatible") and match with one block over K (onnxruntime's quantizer at K 64, blocks
    of 128); 2025.3 runs both."""
    one = fb.matmul_nbits(k=128, n=16, block=128)
    two = fb.matmul_nbits(k=256, n=16, block=128)
    for v in ("2025.1", "2025.2"):
        assert _errors(one, f"openvino@{v}") == []
        assert [f.code for f in _errors(two, f"openvino@{v}")] == ["QT205"]
    assert _errors(two, "openvino@2025.3") == []


def _unversioned(chain_key: str) -> tuple[str, str, str, str]:
    """A chain key's text without the version of its middle op (the scan's own reading)."""
    head, op, tail = chain_key.split(" -> ")
    name, _, rest = op.partition("-")
    return head, name, rest.partition(" ")[2], tail


def _typed(text: str):
    """The typed key (probe_keys.Key / ChainKey) of a key's text: the test's own reading."""
    if text.count(" -> ") == 2:
        dq, op, tail = text.split(" -> ")
        name, _, rest = op.partition("-")
        since, _, details = rest.partition(" ")
        return probe_keys.ChainKey(dq, name, int(since), details, tail)
    head, sep, tail = text.rpartition(") ")
    return probe_keys.Key(head + ")", tuple(tail.split(" "))) if sep else probe_keys.Key(text)


def _scanned_chain(table, key: str):
    """ProbeTable.chain's fallback by a scan of every chain key (what its index must give)."""
    mine = _unversioned(key)
    alike = [o for k, o in _chains_of(table).get(mine, ()) if k != key]
    return probe_table._summed(alike) if alike else None


def _chains_of(table) -> dict:
    """(key, outcome) of every chain key of the table, in sorted order, grouped by the key's
    unversioned text (the test's one pass over every key, kept on the table)."""
    found = getattr(table, "_test_chains", None)
    if found is None:
        found = {}
        for k, o in sorted(table.keys().items()):
            if k.count(" -> ") == 2:
                found.setdefault(_unversioned(k), []).append((k, o))
        table._test_chains = found
    return found


def _sorted_keys(table) -> tuple[list, list]:
    """The table's keys sorted, with each key's place in the file's order (listed once)."""
    found = getattr(table, "_test_sorted", None)
    if found is None:
        order = {k: i for i, k in enumerate(table.keys())}
        texts = sorted(order)
        found = table._test_sorted = (texts, [order[k] for k in texts])
    return found


def _scanned_outcome(table, key: str):
    """ProbeTable.outcome's fallback: the keys the longest coarser prefix covers, in the
    file's order (each prefix's keys found by bisection on the sorted keys, not a scan)."""
    import bisect

    keys = table.keys()
    texts, places = _sorted_keys(table)
    head, sep, tail = key.rpartition(") ")
    words = tail.split(" ") if sep else []
    for n in range(len(words) - 1, 0, -1):
        prefix = f"{head}{sep}{' '.join(words[:n])}"
        lo = bisect.bisect_left(texts, prefix)
        hi = bisect.bisect_left(texts, prefix + "\U0010ffff", lo)
        covered = sorted((places[i], texts[i]) for i in range(lo, hi)
                         if texts[i] == prefix or texts[i].startswith(prefix + " "))
        if covered:
            return probe_table._summed([keys[k] for _, k in covered])
    return None


@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino"])
def test_the_fallbacks_for_unprobed_keys_answer_as_a_scan_of_every_key(runtime):
    """chain() indexes the chains by their shape and outcome() keeps each answer: both give
    what a scan of every key gives, first call and again."""
    import re

    version = probe_table.releases.measured(runtime)[-1]
    table = probe_table.load(runtime, version)
    chains = [k for k in table.keys() if k.count(" -> ") == 2][::25]
    assert len(chains) >= 20
    for key in chains:
        other = _typed(re.sub(r"-> ([A-Za-z]+)-\d+", r"-> \1-999", key, count=1))  # a version nobody probed
        assert table.exact(other) is None and str(other.versioned(_typed(key).since)) == key
        assert table.chain(other) == _scanned_chain(table, other) == table.chain(other), other
        assert table.chain(other.versioned(_typed(key).since)) == table.exact(key)
    nodes = [k for k in table.keys() if ") " in k and " -> " not in k][::40]
    for key in nodes:
        finer = _typed(key + " unprobed-detail")
        assert table.outcome(finer) == _scanned_outcome(table, finer) == table.outcome(finer), finer
        assert table.outcome(str(finer)) is None  # a key's text alone has no coarser keys
        assert table.outcome(finer) == _scanned_outcome(table, finer)  # and leaves the typed answer
