"""`qlin convert`: move Q/DQ models between ai.onnx opsets and vendor domains.

Pieces, in the order a conversion uses them: ``sites`` finds every node with its
scope; ``qnode`` reads a Q/DQ node into plain facts; ``retarget`` rewrites those
facts for one target schema or refuses; ``adapters`` chains ai.onnx version
steps; ``domains`` crosses domains; ``other_ops`` hands every other op to
onnx.version_converter; ``lower`` rewrites what no target op can express into
primitive ops; ``verify`` proves each rewrite bit for bit; ``write`` writes the
result safely; ``run`` ties them together; ``command`` is the CLI.
"""
