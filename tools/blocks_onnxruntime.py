"""Whole models against each onnxruntime release: does `qlin check --target onnxruntime@V`
find an error exactly where release V fails to load or run the model?

    python tools/blocks_onnxruntime.py VERSION=VENV/bin/python [...]
    python tools/blocks_onnxruntime.py --write VERSION=VENV/bin/python [...]   # and record the blocks

tools/blocks_openvino.py for onnxruntime: the same 75 quantizer outputs of fixtures/corpus.py,
each loaded on the CPU provider with default options and run once on zeros in each release
(tools/probe_runner.py's child, which imports only onnxruntime and numpy); with ``--write``
the failures no qlin error explains are cut to their blocks (tools/block_cut.py) and the
blocks' outcomes in every release go to qlin_cli/targets/data/onnxruntime_blocks.json.gz.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blocks_openvino  # noqa: E402

if __name__ == "__main__":
    sys.exit(blocks_openvino.main("onnxruntime", __doc__))
