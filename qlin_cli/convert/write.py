"""Write a converted model safely, keeping external data external.

* The model goes to a temporary file in the target folder and is renamed into
  place (``os.replace``), so a reader never sees half a model.
* External tensors are copied, byte range by byte range in fixed-size chunks,
  into a NEW data file beside the output (``<output name>.data``), also written
  under a temporary name first. Weights never sit in memory whole; all-zero
  chunks are skipped with a seek, so sparse inputs stay sparse.
* An output path that is a symbolic link is refused, and so is an output that
  is the input itself unless ``in_place`` is set.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

import onnx

from ..errors import QlinError
from ..model.safety import all_tensors
from ..model.tensors import UnsafeData, check_external, is_external

CHUNK = 8 * 2**20
ALIGN = 4096


def check_target(out_path: str, input_path: str, in_place: bool) -> None:
    if os.path.islink(out_path):
        raise QlinError(out_path, "output path is a symbolic link; refusing to write through it")
    if os.path.isdir(out_path):
        raise QlinError(out_path, "output path is a directory")
    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise QlinError(out_path, "the output's folder does not exist")
    if os.path.exists(out_path) and os.path.samefile(out_path, input_path) and not in_place:
        raise QlinError(out_path, "output is the input model; pass --in-place to overwrite it")


def _copy_range(src, dst, offset: int, length: int) -> None:
    src.seek(offset)
    left = length
    while left > 0:
        chunk = src.read(min(CHUNK, left))
        if not chunk:
            raise OSError("external data file ended early")
        if chunk.count(0) == len(chunk):
            dst.seek(len(chunk), os.SEEK_CUR)
        else:
            dst.write(chunk)
        left -= len(chunk)


def write_model(model: onnx.ModelProto, src_dir: str, out_path: str) -> str | None:
    """Write ``model``; returns the data file's path when there is external data."""
    out_dir = os.path.dirname(os.path.abspath(out_path))
    data_name = os.path.basename(out_path) + ".data"
    data_path = os.path.join(out_dir, data_name)
    external = [t for t in all_tensors(model) if is_external(t)]
    temps: list[str] = []
    try:
        if external:
            if os.path.islink(data_path):
                raise QlinError(data_path, "data file path is a symbolic link; refusing to write")
            fd, data_tmp = tempfile.mkstemp(dir=out_dir, prefix=".qlin-", suffix=".data.tmp")
            temps.append(data_tmp)
            placed: dict[tuple[str, int, int], int] = {}
            with os.fdopen(fd, "wb") as dst:
                pos = 0
                for t in external:
                    try:
                        path, offset, length = check_external(t, src_dir)
                    except UnsafeData as e:
                        raise QlinError(src_dir, f"tensor {t.name!r}: {e}") from None
                    key = (path, offset, length)
                    if key not in placed:
                        pos = -(-pos // ALIGN) * ALIGN
                        dst.seek(pos)
                        with open(path, "rb") as src:
                            _copy_range(src, dst, offset, length)
                        placed[key] = pos
                        pos += length
                    info = {e.key: e.value for e in t.external_data}
                    info.update(location=data_name, offset=str(placed[key]), length=str(length))
                    del t.external_data[:]
                    for k, v in info.items():
                        t.external_data.add(key=k, value=v)
                dst.truncate(pos)
                dst.flush()
                os.fsync(dst.fileno())
        fd, model_tmp = tempfile.mkstemp(dir=out_dir, prefix=".qlin-", suffix=".onnx.tmp")
        temps.append(model_tmp)
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        for tmp in temps:
            os.chmod(tmp, 0o666 & ~mask)
        if external:
            os.replace(temps[0], data_path)
        os.replace(model_tmp, out_path)
        temps.clear()
        return data_path if external else None
    except OSError as e:
        raise QlinError(out_path, f"cannot write: {e.strerror or e}") from None
    finally:
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
