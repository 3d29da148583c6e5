"""What a check naming openvino no longer reads when the target is made: the release's opset
and IR limits are worked out when first asked (``OpenVinoCpu.max_opset``)."""

from __future__ import annotations

from qlin_cli.targets import openvino, probe_keys, probe_table


def test_limits_are_read_when_asked():
    table = probe_table.load("openvino", openvino.TARGET.table.version)
    fresh = probe_table.ProbeTable({"runtime": table.runtime, "version": table.version,
                                    "source": table.source, "probes": table.probes, "hosts": table.hosts,
                                    "keys": table._entries})
    target = openvino.OpenVinoCpu(fresh)
    assert fresh._limits == {}  # making the target read no limit
    assert target.max_opset == fresh._highest(probe_keys.opset_key, probe_keys.PROBED_OPSETS)
    assert target.max_ir == fresh._highest(probe_keys.ir_key, probe_keys.PROBED_IR)
    assert (target.max_opset, target.max_ir) == (openvino.TARGET.max_opset, openvino.TARGET.max_ir)

