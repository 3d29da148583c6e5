"""The large-output arena reuses a mapping only once no array uses it."""

from __future__ import annotations

import numpy as np

from qlin_cli.evaluator import alloc

N = alloc.LARGE // 2 + 8  # int16 elements: just over the large-allocation size


def _base_mapping(a):
    """The mmap an array's memory comes from (through views and numpy's memoryview)."""
    while isinstance(a, (np.ndarray, memoryview)):
        a = a.base if isinstance(a, np.ndarray) else a.obj
    return a


def test_large_outputs_reuse_a_free_mapping_and_never_a_used_one():
    alloc.release()
    a = alloc.empty((N,), np.int16)
    a[:] = 7
    view = a[10:20]
    first = id(_base_mapping(a))  # an id: holding the mapping itself would keep it in use
    del a
    b = alloc.empty((N,), np.int16)  # the view still uses the first mapping
    assert id(_base_mapping(b)) != first
    b[:] = 1
    assert (view == 7).all()
    del view
    c = alloc.empty((N,), np.int16)  # now the first mapping is free again
    assert id(_base_mapping(c)) == first
    del b, c
    alloc.release()
    assert alloc._pool == []


def test_small_outputs_are_plain_numpy_arrays():
    a = alloc.empty((1000,), np.float32)
    assert a.base is None and a.shape == (1000,)


def test_pool_is_bounded():
    alloc.release()
    held = [alloc.empty((N,), np.int16) for _ in range(alloc.KEEP + 2)]
    assert len(alloc._pool) == alloc.KEEP  # the last two are not tracked
    del held
    again = [alloc.empty((N,), np.int16) for _ in range(alloc.KEEP)]
    assert len(alloc._pool) == alloc.KEEP  # all reused, nothing new mapped
    del again
    alloc.release()
    assert alloc._pool == []
