"""Hardening: external data that escapes the model's folder, or lies about itself, is refused
(exit 2, one line naming the model and the problem) before anything reads it."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from hardening_helpers import (  # noqa: F401
    assert_bad_input,
    assert_both_refuse,
    assert_external_refused,
    assert_reported,
    cli,
    dq_graph,
    external_dq_model,
    external_tensor,
    guard,
    listing,
    model_of,
    save_raw,
)
from onnx import TensorProto, helper, numpy_helper

SECRET = b"SECRET-" * 64  # 448 bytes a model must never get qlin to copy


def _outside(tmp_path):
    """tmp_path/outside.bin and tmp_path/outdir/w.bin: files the model was not given."""
    p = tmp_path / "outside.bin"
    p.write_bytes(SECRET)
    d = tmp_path / "outdir"
    d.mkdir()
    (d / "w.bin").write_bytes(SECRET)
    return p


def _escape(case, tmp_path, folder):
    """Set up the escape ``case`` inside ``folder``; returns (location, words of the message)."""
    outside = _outside(tmp_path)
    if case == "dotdot":
        return "../outside.bin", ["escapes"]
    if case == "sub-dotdot":
        (folder / "sub").mkdir()
        return "sub/../../outside.bin", ["escapes"]
    if case == "deep-dotdot":
        return "a/b/../../../outside.bin", ["escapes"]
    if case == "dotdot-only":
        return "..", ["escapes"]
    if case == "absolute":
        return str(outside), ["absolute"]
    if case == "absolute-etc":
        return "/etc/passwd", ["absolute"]
    if case == "windows-drive":
        return "C:\\outside.bin", ["absolute"]
    if case == "windows-unc":
        return "\\\\server\\share\\outside.bin", ["absolute"]
    if case == "symlinked-file":
        (folder / "w.bin").symlink_to(outside)
        return "w.bin", ["symbolic link"]
    if case == "symlinked-file-relative":
        (folder / "w.bin").symlink_to("../outside.bin")
        return "w.bin", ["symbolic link"]
    if case == "symlinked-folder":
        (folder / "sub").symlink_to(tmp_path / "outdir")
        return "sub/w.bin", ["symbolic link"]
    if case == "hard-linked":
        os.link(outside, folder / "w.bin")
        return "w.bin", ["hard-linked"]
    if case == "directory":
        (folder / "sub").mkdir()
        return "sub", ["not a regular file"]
    if case == "fifo":
        os.mkfifo(folder / "w.bin")
        return "w.bin", ["not a regular file"]
    if case == "nul":
        return "w.bin\x00../../outside.bin", ["NUL"]
    if case == "empty":
        return "", ["no location"]
    raise AssertionError(case)


ESCAPES = ["dotdot", "sub-dotdot", "deep-dotdot", "dotdot-only", "absolute", "absolute-etc",
           "windows-drive", "windows-unc", "symlinked-file", "symlinked-file-relative",
           "symlinked-folder", "hard-linked", "directory", "fifo", "nul", "empty"]


def _place(where: str, tensor: TensorProto) -> onnx.ModelProto:
    """A model carrying ``tensor`` (an int8 [16] external tensor) in place ``where``."""
    dims = list(tensor.dims)
    if where == "initializer":
        return model_of(dq_graph(tensor, dims))
    y = helper.make_tensor_value_info("y", TensorProto.INT8, dims)
    if where == "constant":
        node = helper.make_node("Constant", [], ["y"], value=tensor)
        return model_of(helper.make_graph([node], "g", [], [y]))
    if where == "subgraph":
        inner = helper.make_graph([helper.make_node("Identity", [tensor.name], ["y"])], "then", [], [y],
                                  initializer=[tensor])
        other = numpy_helper.from_array(np.zeros(16, np.int8), "e")
        orelse = helper.make_graph([helper.make_node("Identity", ["e"], ["y"])], "else", [], [y],
                                   initializer=[other])
        node = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=orelse)
        c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        return model_of(helper.make_graph([node], "g", [c], [y]))
    if where == "function":
        body = [helper.make_node("Constant", [], ["out"], value=tensor)]
        fn = helper.make_function("local", "F", [], ["out"], body, [helper.make_opsetid("", 21)])
        model = model_of(helper.make_graph([helper.make_node("F", [], ["y"], domain="local")], "g", [], [y]),
                         functions=[fn])
        model.opset_import.append(helper.make_opsetid("local", 1))
        return model
    if where == "sparse":
        idx = numpy_helper.from_array(np.arange(16, dtype=np.int64), "idx")
        sp = helper.make_sparse_tensor(tensor, idx, [32])
        y32 = helper.make_tensor_value_info("y", TensorProto.INT8, [32])
        g = helper.make_graph([helper.make_node("Identity", [tensor.name], ["y"])], "g", [], [y32],
                              sparse_initializer=[sp])
        return model_of(g)
    raise AssertionError(where)


PLACES = ["initializer", "constant", "subgraph", "function", "sparse"]


def _build(tmp_path, case, where="initializer"):
    folder = tmp_path / "model"
    folder.mkdir()
    location, words = _escape(case, tmp_path, folder)
    t = external_tensor("w", [16], location, 0, 16)
    path = save_raw(_place(where, t), folder / "m.onnx")
    return path, words


def _watch(guard, tmp_path):  # noqa: F811
    guard.watch(tmp_path / "outside.bin", tmp_path / "outdir", tmp_path / "model" / "m.onnx")


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("case", ESCAPES)
def test_check_refuses_escaping_data(case, where, tmp_path, guard):  # noqa: F811
    path, words = _build(tmp_path, case, where)
    _watch(guard, tmp_path)
    assert_reported(cli("check", path), path, "QL008", *words)


@pytest.mark.parametrize("where", ["initializer", "function"])
@pytest.mark.parametrize("case", ESCAPES)
def test_convert_refuses_escaping_data(case, where, tmp_path, guard):  # noqa: F811
    path, words = _build(tmp_path, case, where)
    _watch(guard, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    assert_bad_input(cli("convert", path, "--to-opset", 23, "-o", out / "o.onnx"), path, *words)
    assert listing(out) == []


def test_inside_references_are_accepted(tmp_path, guard):  # noqa: F811
    """The safe forms still work: a plain name, ./name, sub/name, sub/../name."""
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    data = bytes(range(1, 17))
    (folder / "w.bin").write_bytes(data)
    (folder / "sub" / "w.bin").write_bytes(data)
    for i, loc in enumerate(["w.bin", "./w.bin", "sub/w.bin", "sub/../w.bin", "sub//w.bin"]):
        path = save_raw(model_of(dq_graph(external_tensor("w", [16], loc, 0, 16), [16])),
                        folder / f"m{i}.onnx")
        guard.watch(folder)
        r = cli("check", path)
        assert r.exit_code == 0, (loc, r.stdout, r.stderr)
        out = tmp_path / f"o{i}.onnx"
        r = cli("convert", path, "--to-opset", 23, "-o", out)
        assert r.exit_code == 0, (loc, r.stdout, r.stderr)
        assert (tmp_path / f"o{i}.onnx.data").read_bytes()[:16] == data


LIES = {
    # name: (dims, offset, length, data file bytes or None for no file, words)
    "length-beyond-file": ([16], 0, 10**15, 16, ["length", "past the end"]),
    "length-just-beyond": ([16], 0, 17, 16, ["length", "past the end"]),
    "offset-beyond-file": ([16], 10**12, 16, 16, ["offset", "past the end"]),
    "negative-offset": ([16], -5, 16, 16, ["offset", "negative"]),
    "negative-length": ([16], 0, -1, 16, ["length", "negative"]),
    "offset-not-a-number": ([16], "0x10", 16, 16, ["offset", "not a number"]),
    "dims-beyond-data": ([2**40], 0, None, 16, ["needs", "bytes"]),
    "dims-beyond-length": ([32], 0, 16, 64, ["needs 32 bytes"]),
    "dims-overflow-int64": ([2**62, 2**62], 0, None, 16, ["needs", "bytes"]),
    "negative-dims": ([-16], 0, 16, 16, ["negative dimension"]),
    "missing-data-file": ([16], 0, 16, None, ["does not exist"]),
}


@pytest.mark.parametrize("lie", list(LIES))
def test_lying_external_data_is_refused(lie, tmp_path, guard):  # noqa: F811
    dims, offset, length, size, words = LIES[lie]
    folder = tmp_path / "model"
    path = external_dq_model(folder, "w.bin", dims=dims, offset=offset, length=length,
                             data=bytes(range(1, 17)) * (size // 16) if size else b"")
    if size is None:
        os.unlink(folder / "w.bin")
    guard.watch(folder)
    out = tmp_path / "out"
    out.mkdir()
    assert_external_refused(path, *words, out=out / "o.onnx")
    assert listing(out) == []


def test_string_tensor_as_external_data_is_refused(tmp_path, guard):  # noqa: F811
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "w.bin").write_bytes(b"x" * 64)
    t = external_tensor("w", [4], "w.bin", 0, 64, data_type=TensorProto.STRING)
    node = helper.make_node("Identity", ["w"], ["y"])
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.STRING, [4])],
                          initializer=[t])
    path = save_raw(model_of(g), folder / "m.onnx")
    guard.watch(folder)
    assert_reported(cli("check", path), path, "QL008", "type")


def test_scale_read_from_external_data_that_lies(tmp_path, guard):  # noqa: F811
    """The rules read scales and zero points; an external scale that lies is refused too."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "s.bin").write_bytes(np.float32(0.5).tobytes())
    s = external_tensor("s", [2**30], "s.bin", 0, None, data_type=TensorProto.FLOAT)
    w = numpy_helper.from_array(np.arange(16, dtype=np.int8), "w")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])],
                          initializer=[w, s])
    path = save_raw(model_of(g), folder / "m.onnx")
    guard.watch(folder)
    assert_external_refused(path, "needs")


def test_inline_tensor_that_lies_about_its_size(tmp_path, guard):  # noqa: F811
    """Inline raw_data shorter than its dims: checked (the value is unreadable), never a crash."""
    folder = tmp_path / "model"
    folder.mkdir()
    s = TensorProto(name="s", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\x00\x00")
    z = TensorProto(name="z", data_type=TensorProto.INT8, dims=[2**40], raw_data=b"\x00")
    w = numpy_helper.from_array(np.arange(16, dtype=np.int8).reshape(4, 4), "w")
    node = helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq", axis=0)
    g = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
                          initializer=[w, s, z])
    path = save_raw(model_of(g), folder / "m.onnx")
    guard.watch(folder)
    r = cli("check", path)
    assert r.exit_code in (0, 1, 2) and (r.exception is None or isinstance(r.exception, SystemExit))
    r = cli("convert", path, "--to-opset", 23, "-o", tmp_path / "o.onnx")
    assert r.exit_code in (1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    if r.exit_code == 2:
        assert_bad_input(r, path)
