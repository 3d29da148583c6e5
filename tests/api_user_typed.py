"""A user's code on every public name of `import qlin`, for `mypy --strict` (tests/test_api_types.py):
what the API promises its callers' type checker. Never run; only type-checked."""

from __future__ import annotations

from typing import Any, assert_type

import onnx

import qlin


def run(path: str, model: onnx.ModelProto) -> int:
    result: qlin.FileResult = qlin.check(path, targets=["onnxruntime"], select="QL4")
    assert_type(qlin.check_paths(["models"], targets="openvino", confirm=True), list[qlin.FileResult])
    findings: list[qlin.Finding] = result.findings
    for f in findings:
        print(f.code, f.severity, f.graph, f.node, f.detail, f.fix)
    results: list[qlin.FileResult] = qlin.check_paths(["models"], extend_exclude=["legacy"])
    files: list[str] = qlin.discover(["."], extend_exclude=["legacy"])
    more: list[qlin.Finding] = qlin.check_model(model, select=["QL4"])
    cfg = qlin.Config()
    one: qlin.FileResult = qlin.check_file_with(path, cfg)
    try:
        converted = qlin.convert(path, to_opset=21)
    except qlin.ConversionStopped as e:
        codes: list[str] = [f.code for f in e.findings]
        print(e.reason, codes)
        return 1
    except qlin.QlinError as e:
        print(e.path, e.reason)
        return 2
    assert_type(result, qlin.FileResult)  # not Any: mypy holds each to its declared type
    assert_type(converted.refused, list[qlin.Finding])
    assert_type(converted.model, onnx.ModelProto | None)
    assert_type(qlin.inspect(path), dict[str, Any])
    refused: list[qlin.Finding] = converted.refused
    out: onnx.ModelProto | None = converted.model
    for entry in converted.entries:
        print(entry.node, entry.graph, entry.op_type, entry.action)
    scheme: dict[str, object] = qlin.inspect(path)
    rows: list[dict[str, object]] = qlin.targets()
    version: str = qlin.__version__
    print(len(results), len(files), len(more), one.path, refused, out, scheme, rows, version)
    return 0
