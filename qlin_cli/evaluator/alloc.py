"""Output arrays for large results, with a small arena like a runtime's.

glibc serves an allocation of 32 MiB or more with a fresh mmap every time, and the
kernel zeroes every page of it as the workers first write it: for a 16M-element
int16 output that is a third of the evaluation. For those sizes qlin maps the
memory itself (asking for transparent huge pages) and keeps the last few
mappings: once no array uses a mapping any more, the next output of the same
size reuses it, already faulted in, as onnxruntime's arena does. Smaller arrays
come from numpy as usual (glibc reuses freed heap memory for them).

At most ``KEEP`` mappings and ``KEEP_BYTES`` bytes are ever tracked (a mapping
made while the pool is full of mappings in use is not tracked and goes with its
last array); ``release()`` drops the tracked ones no array uses.
"""

from __future__ import annotations

import mmap
import sys
import threading

import numpy as np

LARGE = 32 * 2**20  # glibc's largest dynamic mmap threshold on 64-bit systems
KEEP = 4
KEEP_BYTES = 1 << 30
_HUGE = getattr(mmap, "MADV_HUGEPAGE", None) if sys.platform.startswith("linux") else None
_LINUX = sys.platform.startswith("linux")

_pool: list[mmap.mmap] = []
_lock = threading.Lock()


def _unused(i: int) -> bool:
    """No array uses _pool[i]. Every array on a mapping holds a buffer exported
    from it, and mmap refuses to resize while any export exists; resizing to the
    same size is otherwise a no-op. (Reference counts would be a weaker test:
    they are not exact on every Python.)"""
    m = _pool[i]
    try:
        m.resize(len(m))
    except BufferError:
        return False
    except (OSError, ValueError, SystemError):
        return False  # cannot tell: treat it as in use
    return True


def _keep(m: mmap.mmap) -> None:
    """Track a new mapping if there is room; an untracked one is simply unmapped
    when its last array goes, so the pool never holds more than KEEP_BYTES."""
    with _lock:
        while len(_pool) >= KEEP or sum(len(p) for p in _pool) + len(m) > KEEP_BYTES:
            free = [i for i in range(len(_pool)) if _unused(i)]
            if not free:
                return
            del _pool[free[0]]
        _pool.append(m)


def release() -> None:
    """Forget every kept mapping that no array uses (its memory goes back to the OS)."""
    with _lock:
        for i in reversed(range(len(_pool))):
            if _unused(i):
                del _pool[i]


def empty(shape, dtype) -> np.ndarray:
    """An uninitialised array, like np.empty."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if not _LINUX or nbytes < LARGE:
        return np.empty(shape, dtype)
    with _lock:  # the array is made under the lock, so no two callers get one mapping
        for i in range(len(_pool)):
            if len(_pool[i]) == nbytes and _unused(i):
                return np.frombuffer(_pool[i], dtype).reshape(shape)
    try:
        m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if _HUGE is not None:
            m.madvise(_HUGE)
    except (OSError, ValueError):
        return np.empty(shape, dtype)
    out = np.frombuffer(m, dtype).reshape(shape)
    _keep(m)
    return out
