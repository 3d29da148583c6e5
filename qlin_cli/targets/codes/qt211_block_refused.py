"""QT211 block-refused. Reported by targets/openvino.py and targets/onnxruntime.py from the
blocks measured per release and CPU (targets/block_store.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class BlockRefused(Code):
    """
    ## What it checks
    That the runtime version judged compiled the block the node is, where a block like it
    was measured: a model written by onnxruntime's quantizers (fixtures/corpus.py) that the
    release failed to compile (openvino) or to load and run once (onnxruntime), and that no
    other finding explains, was cut down to the smallest run of its nodes failing with the
    model's own error, and that block was run so in every release on the CPU named
    (tools/blocks_openvino.py and tools/blocks_onnxruntime.py ``--write``;
    qlin_cli/targets/data/<runtime>_blocks.json.gz). A
    node matches a block by its probe key and the shape the key leaves out: its integer
    attributes and the shapes of its weights, scales and zero points. Only a node with no
    other error gets it, and only for a release measured on a CPU where the block failed.

    ## Why is this bad?
    The release fails `compile_model` on the model, though the node's kind ran in the
    probes: a probe has one shape per kind, and the CPU plugin picks its kernel by the shape
    and the CPU's instructions. Measured on an Intel Xeon with AVX-512 (VNNI, BF16): openvino
    2026.4.1 fails the 2-bit MatMulNBits with zero points and blocks of 32 over K = 128
    that onnxruntime's n-bits quantizer writes for the attention block's down projection
    ("could not create a primitive descriptor for the inner product forward propagation
    primitive"), where the same op over K = 64 compiles; 2026.1.0 and 2026.2.1 compile it
    (2026.3.1 fails it too, where qlin already reports QT205 from its probes). An error, as
    every measured refusal is (QT205): the release failed the very block, on a CPU the
    message names; on other CPUs it may run (the model compiled on an AMD EPYC).

    ## Example
    ```
    MatMulNBits(x: float [1, 8, 128], B: uint8 [64, 4, 8], scales [64, 4], zero_points [64, 1])
        K=128 N=64 bits=2 block_size=32       # openvino 2026.4.1, Intel Xeon (avx512_vnni)
    ```

    ## Fix
    Write the node another way the release compiles (4-bit weights, or blocks of 16 for
    2-bit ones, measured), use a release that compiled the block (the message says when one
    did), or test on the deployment CPU: `qlin check --confirm` where the release is
    installed there.
    """

    code = "QT211"
    name = "block-refused"
    summary = "The runtime version failed to compile or run a block like this node's on a measured CPU."
