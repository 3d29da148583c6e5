"""Write a converted model safely, keeping external data external.

* Model and data are written to files with no name (Linux ``O_TMPFILE``) in the
  target folder, flushed to disk, then given a temporary name and renamed into
  place (``os.replace``): a reader never sees half a file, and a process killed
  at any point before the rename leaves nothing behind (the kernel frees the
  unnamed file). Where ``O_TMPFILE`` is missing, named temporary files
  ``.qlin-*.tmp`` are used and removed on any error or exception.
* External tensors are copied, byte range by byte range in fixed-size chunks,
  into a NEW data file beside the output (``<output name>.data``). Weights never
  sit in memory whole; holes and all-zero chunks are skipped with a seek, so
  sparse inputs stay sparse and cost no reads.
* An output path that is a symbolic link is refused, and so is an output that
  is the input itself unless ``in_place`` is set; an output (or its data file)
  that is one of the input's data files is refused, except in place.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile

import onnx
from google.protobuf.message import EncodeError

from ..errors import QlinError
from ..model.safety import all_tensors
from ..model.tensors import UnsafeData, check_external, is_external

CHUNK = 8 * 2**20
ALIGN = 4096
SEEK_DATA = getattr(os, "SEEK_DATA", None)


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
    """Copy ``length`` bytes at ``offset`` of ``src`` to ``dst``'s position; holes stay holes."""
    fd = src.fileno()
    if os.fstat(fd).st_size < offset + length:
        raise OSError("external data file ended early")
    pos, end = offset, offset + length
    while pos < end:
        if SEEK_DATA is not None:
            try:
                data = os.lseek(fd, pos, SEEK_DATA)
            except OSError:  # ENXIO: a hole up to the end of the file
                data = end
            if data > pos:
                skip = min(data, end) - pos
                dst.seek(skip, os.SEEK_CUR)
                pos += skip
                continue
        src.seek(pos)
        chunk = src.read(min(CHUNK, end - pos))
        if not chunk:
            raise OSError("external data file ended early")
        if chunk.count(0) == len(chunk):
            dst.seek(len(chunk), os.SEEK_CUR)
        else:
            dst.write(chunk)
        pos += len(chunk)


def _link_unnamed(fd: int, folder: str, suffix: str) -> str:
    """Give the unnamed file ``fd`` a fresh hidden name in ``folder``; returns the name.

    linkat() with AT_SYMLINK_FOLLOW on /proc/self/fd/N (os.link only uses linkat,
    not link(), when a dir_fd is given: link() would try to link the /proc entry).
    """
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while True:
            name = f".qlin-{secrets.token_hex(6)}{suffix}"
            try:
                os.link(f"/proc/self/fd/{fd}", name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd,
                        follow_symlinks=True)
                return os.path.join(folder, name)
            except FileExistsError:
                continue
    finally:
        os.close(dir_fd)


_UNNAMED_OK: dict[str, bool] = {}


def _unnamed_file(folder: str) -> int:
    """An O_TMPFILE in ``folder`` that can later be linked, or -1 where the system cannot."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or _UNNAMED_OK.get(folder) is False:
        return -1
    try:
        fd = os.open(folder, flag | os.O_RDWR, 0o666)
    except OSError:  # EOPNOTSUPP on some file systems, EISDIR on old kernels
        _UNNAMED_OK[folder] = False
        return -1
    if folder not in _UNNAMED_OK:  # can it be named? (needs /proc); a file links once only
        try:
            os.unlink(_link_unnamed(fd, folder, ".probe.tmp"))
            _UNNAMED_OK[folder] = True
        except OSError:
            _UNNAMED_OK[folder] = False
        os.close(fd)
        return _unnamed_file(folder)
    return fd


class _Output:
    """A file being written in ``folder``: unnamed (O_TMPFILE) when the system allows,
    else a named ``.qlin-*.tmp``; ``publish`` renames it to its final path."""

    def __init__(self, folder: str, suffix: str):
        self.folder, self.suffix = folder, suffix
        self.name: str | None = None  # a temporary name, while one exists
        fd = _unnamed_file(folder)
        if fd < 0:
            fd, self.name = tempfile.mkstemp(dir=folder, prefix=".qlin-", suffix=suffix)
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(self.name, 0o666 & ~mask)
        self.file = os.fdopen(fd, "w+b")

    def finish(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())

    def publish(self, final: str) -> None:
        if self.name is None:  # the unnamed file gets a temporary name, then is renamed
            self.name = _link_unnamed(self.file.fileno(), self.folder, self.suffix)
        self.file.close()
        os.replace(self.name, final)
        self.name = None

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        if self.name is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.name)
            self.name = None


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:160] if lines else type(e).__name__


def _serialize(model: onnx.ModelProto, out_path: str) -> bytes:
    try:
        return model.SerializeToString()
    except (EncodeError, ValueError) as e:
        raise QlinError(
            out_path,
            f"the converted model cannot be serialized ({_first_line(e)}); "
            "protobuf limits one message to 2 GiB: keep the weights as external data",
        ) from None


def write_model(model: onnx.ModelProto, src_dir: str, out_path: str, *, source: str | None = None,
                in_place: bool = False) -> str | None:
    """Write ``model``; returns the data file's path when there is external data.

    ``source`` is the input model file: neither it nor any of its data files may
    be replaced by the output or the output's data file unless ``in_place``.
    """
    out_dir = os.path.dirname(os.path.abspath(out_path))
    data_name = os.path.basename(out_path) + ".data"
    data_path = os.path.join(out_dir, data_name)
    external = [t for t in all_tensors(model) if is_external(t)]
    ranges = []
    for t in external:
        try:
            ranges.append(check_external(t, src_dir))
        except UnsafeData as e:
            raise QlinError(source or src_dir, f"tensor {t.name!r}: {e}") from None
    if not in_place:
        for path in {r[0] for r in ranges}:
            if _same(path, out_path):
                raise QlinError(out_path, "output is a data file of the input model; refusing to replace it")
            if external and _same(path, data_path):
                raise QlinError(
                    data_path,
                    "the output's data file is the input model's data file; writing would replace the "
                    "input's weights (choose another -o)",
                )
        if external and source is not None and _same(source, data_path):
            raise QlinError(data_path, "the output's data file is the input model; refusing to replace it")
    if external and os.path.islink(data_path):
        raise QlinError(data_path, "data file path is a symbolic link; refusing to write through it")
    outputs: list[_Output] = []
    try:
        if external:
            data = _Output(out_dir, ".data.tmp")
            outputs.append(data)
            dst = data.file
            placed: dict[tuple[str, int, int], int] = {}
            pos = 0
            for t, key in zip(external, ranges, strict=True):
                path, offset, length = key
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
            data.finish()
        blob = _serialize(model, out_path)
        proto = _Output(out_dir, ".onnx.tmp")
        outputs.append(proto)
        proto.file.write(blob)
        del blob
        proto.finish()
        if external:
            outputs[0].publish(data_path)
        proto.publish(out_path)
        _sync_folder(out_dir)
        return data_path if external else None
    except OSError as e:
        raise QlinError(out_path, f"cannot write: {e.strerror or e}") from None
    finally:
        for o in outputs:
            o.discard()


def _sync_folder(folder: str) -> None:
    """Make the renames durable (best effort: not every system can fsync a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
