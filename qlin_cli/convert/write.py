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
* Where the model keeps weights in external data, the tensors the conversion wrote
  (``new``: initializers of at least ``NEW_EXTERNAL`` bytes, onnx.save's default threshold)
  go into that data file too, after the copied ones: a MatMulNBits model of external weights
  converted to its QDQ form keeps its new codes out of the model file, which protobuf limits
  to 2 GiB. On an error they are put back in the model.
* An output path that is a symbolic link is refused, and so is an output that
  is the input itself unless ``in_place`` is set; an output (or its data file)
  that is one of the input's data files is refused, except in place. An output
  (or data file) that exists must be a regular file: a device, FIFO or socket
  is never replaced.
* Writers do not mix: the renames that publish the data file and the model
  happen under an exclusive ``flock`` of the output folder, after checking the
  targets again, so two runs writing one output leave one run's model with
  that same run's data file. Only the short publishing step is serialized.
* A replaced file keeps its permission bits (and, where the system allows, its
  owner and group); a new data file beside an existing model takes the model's.
* SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` (qlin_cli/signals.py):
  the ``finally`` below removes every temporary file; creating a named
  temporary file and the publishing renames are ``critical`` (a signal is held
  until they are done), so no name is ever left behind.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time

import onnx
from google.protobuf.message import EncodeError

from .. import signals
from ..errors import QlinError
from ..model.header import serialized
from ..model.safety import all_tensors
from ..model.tensors import UnsafeData, check_external, is_external

CHUNK = 8 * 2**20
ALIGN = 4096
NEW_EXTERNAL = 1024  # a new tensor of this many bytes or more goes to the data file (onnx.save's threshold)
SEEK_DATA = getattr(os, "SEEK_DATA", None)
LOCK_WAIT = 120.0  # seconds to wait for another writer of the same folder


class SourceError(Exception):
    """An external data file of the input could not be read while copying it."""

    def __init__(self, path: str, reason: str):
        super().__init__(reason)
        self.path, self.reason = path, reason


def _not_regular(path: str) -> str | None:
    """Why ``path`` must not be replaced (a symbolic link, a folder, a device ...), or None
    when it is absent or a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot inspect it: {e.strerror or e}"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link; refusing to write through it"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a device, FIFO or socket); refusing to replace it"
    return None


def check_target(out_path: str, input_path: str, in_place: bool) -> None:
    if os.path.islink(out_path):
        raise QlinError(out_path, "output path is a symbolic link; refusing to write through it")
    if os.path.isdir(out_path):
        raise QlinError(out_path, "output path is a directory")
    problem = _not_regular(out_path)
    if problem is not None:
        raise QlinError(out_path, f"output path {problem}")
    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise QlinError(out_path, "the output's folder does not exist")
    if os.path.exists(out_path) and os.path.samefile(out_path, input_path) and not in_place:
        raise QlinError(out_path, "output is the input model; pass --in-place to overwrite it")


def _copy_range(src, dst, offset: int, length: int) -> None:
    """Copy ``length`` bytes at ``offset`` of ``src`` to ``dst``'s position; holes stay holes."""
    fd = src.fileno()
    if os.fstat(fd).st_size < offset + length:
        raise SourceError(src.name, "the file ended early")
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
        try:
            src.seek(pos)
            chunk = src.read(min(CHUNK, end - pos))
        except OSError as e:
            raise SourceError(src.name, e.strerror or str(e)) from None
        if not chunk:
            raise SourceError(src.name, "the file ended early")
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
    import secrets  # (here: hmac and hashlib are 4 ms of a process that writes nothing)

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
            with signals.critical():
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

    def __init__(self, folder: str, suffix: str, outputs: list):
        self.folder, self.suffix = folder, suffix
        self.name: str | None = None  # a temporary name, while one exists
        with signals.critical():  # a name is never created without being remembered
            fd = _unnamed_file(folder)
            if fd < 0:
                fd, self.name = tempfile.mkstemp(dir=folder, prefix=".qlin-", suffix=suffix)
            self.file = os.fdopen(fd, "w+b")
            outputs.append(self)
        if self.name is not None:
            os.chmod(self.name, 0o666 & ~_umask())

    def keep_mode_of(self, st: os.stat_result | None) -> None:
        """Give the new file the permission bits, and where allowed the owner and
        group, of the file it replaces (``st``; None: keep the defaults)."""
        if st is None:
            return
        fd = self.file.fileno()
        if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except OSError:  # only root may give a file away; a group of ours is allowed
                with contextlib.suppress(OSError):
                    os.fchown(fd, -1, st.st_gid)
        os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o777)

    def finish(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())

    def publish(self, final: str) -> None:
        """Rename into place; call inside ``signals.critical()``."""
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _regular_stat(path: str) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


@contextlib.contextmanager
def _folder_lock(folder: str):
    """An exclusive flock on ``folder`` while the outputs are published: another qlin
    writing into the same folder waits (up to LOCK_WAIT seconds). A folder that
    cannot be opened, or a file system without flock, is written unlocked."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise QlinError(folder, f"another process has been writing into this folder for "
                                            f"{LOCK_WAIT:.0f} s; try again") from None
                time.sleep(0.02)
            except OSError:  # ENOLCK, EINVAL: no locks on this file system
                break
        yield
    finally:
        os.close(fd)  # releases the lock


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:160] if lines else type(e).__name__


def _serialize(model: onnx.ModelProto, out_path: str, graph_from: onnx.ModelProto | None = None) -> bytes:
    try:
        return model.SerializeToString() if graph_from is None else serialized(model, graph_from)
    except (EncodeError, ValueError) as e:
        raise QlinError(
            out_path,
            f"the converted model cannot be serialized ({_first_line(e)}); "
            "protobuf limits one message to 2 GiB: keep the weights as external data",
        ) from None


def write_model(model: onnx.ModelProto, src_dir: str, out_path: str, *, source: str | None = None,
                in_place: bool = False, graph_from: onnx.ModelProto | None = None,
                new: set | None = None, source_data: set | None = None) -> str | None:
    """Write ``model``; returns the data file's path when there is external data.

    ``source`` is the input model file: neither it nor any of its data files may
    be replaced by the output or the output's data file unless ``in_place``.
    ``graph_from``: ``model`` is a header whose graph is this model's (convert/state.py
    ``Result.graph_from``); its external tensors are written pointing at the written data
    file, as those of a copy would be, and get their own places back after, even on an error.
    ``new``: the names of the initializers the conversion wrote (``Result.added``), where the
    source keeps weights in the data files ``source_data`` (which the output's data file may
    not replace either).
    """
    out_dir = os.path.dirname(os.path.abspath(out_path))
    data_name = os.path.basename(out_path) + ".data"
    data_path = os.path.join(out_dir, data_name)
    external = [t for t in all_tensors(model if graph_from is None else graph_from) if is_external(t)]
    ranges = _ranges(external, src_dir, source)
    fresh = _large_new(model, new) if new and graph_from is None else []
    files = ranges + [(path, 0, 0) for path in source_data or ()]
    _refuse_overwrites(files, out_path, data_path, source, bool(external or fresh), in_place)
    outputs: list[_Output] = []
    # (a graph shared with the source: _copy_external's new places are the written file's only)
    places = [[(e.key, e.value) for e in t.external_data] for t in external] if graph_from is not None else []
    moved: list = []  # the new tensors put in the data file: (tensor, its bytes) until published
    done = False
    try:
        data = _Output(out_dir, ".data.tmp", outputs) if external or fresh else None
        if data is not None:
            _copy_external(external, ranges, data.file, data_name)
            _store_new(fresh, data.file, data_name, moved)
        _finish(model, graph_from, out_path, data, data_path, outputs)
        done = True
        moved.clear()  # (the tensors now read from the written data file, as the copied ones)
        return data_path if data is not None else None
    except SourceError as e:
        shown = os.path.relpath(e.path, src_dir) if os.path.isabs(e.path) else e.path
        raise QlinError(source or e.path, f"cannot read external data file {shown!r}: {e.reason}") from None
    except OSError as e:
        raise QlinError(out_path, f"cannot write: {e.strerror or e}") from None
    finally:
        for t, kept in zip(external, places, strict=False):
            del t.external_data[:]
            for k, v in kept:
                t.external_data.add(key=k, value=v)
        if not done:
            _put_back(moved)
        with signals.critical():
            for o in outputs:
                o.discard()


def _ranges(external: list, src_dir: str, source: str | None) -> list:
    """(file, offset, length) of each external tensor, each checked (model/tensors.py)."""
    ranges = []
    for t in external:
        try:
            ranges.append(check_external(t, src_dir))
        except UnsafeData as e:
            raise QlinError(source or src_dir, f"tensor {t.name!r}: {e}") from None
    return ranges


def _finish(model: onnx.ModelProto, graph_from, out_path: str, data, data_path: str, outputs: list) -> None:
    """Write the model file beside the data file ``data`` (None: none), both made durable, and
    publish them."""
    out_dir = os.path.dirname(data_path)
    blob = _serialize(model, out_path, graph_from)
    proto = _Output(out_dir, ".onnx.tmp", outputs)
    proto.file.write(blob)
    del blob
    model_st = _regular_stat(out_path)
    proto.keep_mode_of(model_st)
    if data is not None:
        data.keep_mode_of(_regular_stat(data_path) or model_st)
        data.finish()
    proto.finish()
    _publish(out_dir, [(data, data_path)] if data is not None else [], (proto, out_path))


def _refuse_overwrites(ranges, out_path: str, data_path: str, source: str | None, external: bool,
                       in_place: bool) -> None:
    """Raise QlinError when the output or its data file would replace the input model, one
    of its data files, or anything but a regular file."""
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
    if external and _not_regular(data_path) is not None:
        raise QlinError(data_path, f"data file path {_not_regular(data_path)}")


def _copy_external(external, ranges, dst, data_name: str) -> None:
    """Copy each external tensor's bytes into ``dst`` (once per distinct source range,
    aligned) and point the tensor at its new place in ``data_name``."""
    placed: dict[tuple[str, int, int], int] = {}
    pos = 0
    for t, key in zip(external, ranges, strict=True):
        path, offset, length = key
        if key not in placed:
            pos = -(-pos // ALIGN) * ALIGN
            dst.seek(pos)
            try:
                src = open(path, "rb")
            except OSError as e:
                raise SourceError(path, e.strerror or str(e)) from None
            with src:
                _copy_range(src, dst, offset, length)
            placed[key] = pos
            pos += length
        _point(t, data_name, placed[key], length)
    dst.truncate(pos)


def _point(t: onnx.TensorProto, data_name: str, offset: int, length: int) -> None:
    """Point ``t`` at ``length`` bytes at ``offset`` of ``data_name`` (its other external_data
    entries kept)."""
    info = {e.key: e.value for e in t.external_data}
    info.update(location=data_name, offset=str(offset), length=str(length))
    del t.external_data[:]
    for k, v in info.items():
        t.external_data.add(key=k, value=v)


def _large_new(model: onnx.ModelProto, new: set) -> list:
    """The initializers named in ``new`` (a graph's, inline) of at least ``NEW_EXTERNAL`` bytes
    of raw data."""
    from ..model.walk import graph_paths

    return [t for _, graph in graph_paths(model) for t in graph.initializer
            if t.name in new and t.data_location != onnx.TensorProto.EXTERNAL
            and t.HasField("raw_data") and len(t.raw_data) >= NEW_EXTERNAL]


def _store_new(tensors: list, dst, data_name: str, moved: list) -> None:
    """Put each of ``tensors``' raw data into ``dst`` (after what is there, aligned) and point
    the tensor there; each goes into ``moved`` with its bytes as soon as it points there
    (``_put_back`` undoes it from them: the bytes are held here instead of in the tensor, so
    memory holds them once, and nothing is read back from a file that may have failed)."""
    pos = dst.seek(0, os.SEEK_END)
    for t in tensors:
        raw = t.raw_data
        pos = -(-pos // ALIGN) * ALIGN
        dst.seek(pos)
        dst.write(raw)
        moved.append((t, raw))
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        _point(t, data_name, pos, len(raw))
        pos += len(raw)


def _put_back(moved: list) -> None:
    """The tensors ``_store_new`` moved, inline again with their bytes."""
    for t, raw in moved:
        del t.external_data[:]
        t.ClearField("data_location")  # (as the tensor was made: the field unset)
        t.raw_data = raw
    moved.clear()


def _publish(out_dir: str, data: list, proto: tuple) -> None:
    """Move the finished temporary files to their names (the data file first), under the
    folder lock and without being cut short by a signal."""
    with _folder_lock(out_dir), signals.critical():
        for _, target in [*data, proto]:
            problem = _not_regular(target)  # again: it may have changed while we wrote
            if problem is not None:
                raise QlinError(target, f"output path {problem}")
        for output, target in [*data, proto]:
            output.publish(target)
        _sync_folder(out_dir)


def _sync_folder(folder: str) -> None:
    """Make the renames durable (best effort: not every system can fsync a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
