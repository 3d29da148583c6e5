"""QT206 probe-varies-by-cpu. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


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
