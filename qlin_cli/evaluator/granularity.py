"""Per-tensor, per-axis and blocked granularity without a full-size scale.

``Layout`` checks the shapes of x and the scale against the spec and cuts x
(and the output, which has x's shape) into one or two views whose scale-shaped
parameters broadcast against them:

* per-tensor: x flattened; parameters are 0-d.
* per-axis: x as ``(outer, D, inner)`` (``(outer, D)`` when the axis is last);
  parameters as ``(1, D, 1)`` / ``(1, D)``.
* blocked with block size B on an axis of length D: the first ``D // B * B``
  entries as ``(outer, D // B, B, inner)`` (merged to ``(outer * D // B, B,
  inner)`` when B divides D) with parameters ``(outer, D // B, 1, inner)``; a
  remainder block as ``(outer, D % B, inner)`` with parameters ``(outer, 1,
  inner)``.

Nothing is copied: every view shares memory with x or the output.
"""

from __future__ import annotations

import math

import numpy as np

from qlin_cli.schema import BLOCKED, PER_AXIS, PER_TENSOR, semantics

from .errors import EvaluationError


class Layout:
    def __init__(self, x_shape: tuple[int, ...], scale_shape: tuple[int, ...],
                 axis: int | None, block_size: int, granularities=None,
                 zero_point_shape: tuple[int, ...] | None = None) -> None:
        x_shape = tuple(int(d) for d in x_shape)
        scale_shape = tuple(int(d) for d in scale_shape)
        self.x_shape = x_shape
        self.scale_shape = scale_shape
        if zero_point_shape is not None and tuple(zero_point_shape) != scale_shape:
            if not (math.prod(zero_point_shape) == 1 == math.prod(scale_shape)
                    and len(zero_point_shape) <= 1 and len(scale_shape) <= 1):
                raise EvaluationError(
                    f"zero point shape {tuple(zero_point_shape)} differs from scale shape "
                    f"{scale_shape}; the spec requires the same shape")
        if block_size is None:
            block_size = 0
        if block_size < 0:
            raise EvaluationError(f"block_size must be positive, got {block_size}")
        rank = len(x_shape)
        self.axis = None
        self.block = 0
        if not block_size and (len(scale_shape) == 0 or semantics.is_one_element(scale_shape)):
            # a scalar, or a one-element 1-D scale: per-tensor, as schema.semantics
            # decides for check and convert too (block_size > 0 is always blocked)
            self.kind = PER_TENSOR
        else:
            if axis is None:
                raise EvaluationError(
                    f"scale of shape {scale_shape} needs an axis (per-axis or blocked), "
                    "but the node has none: absent axis means per-tensor here")
            if rank == 0:
                raise EvaluationError("a scalar x takes only a scalar scale")
            if not -rank <= axis < rank:
                raise EvaluationError(f"axis {axis} is out of range for x of rank {rank}")
            self.axis = axis % rank
            d = x_shape[self.axis]
            if block_size == 0:
                if len(scale_shape) != 1:
                    raise EvaluationError(
                        f"scale of rank {len(scale_shape)} needs block_size > 0 (blocked "
                        "quantization); per-axis scales are 1-D")
                if scale_shape[0] != d:
                    raise EvaluationError(
                        f"per-axis scale has {scale_shape[0]} entries but x has {d} along "
                        f"axis {self.axis}")
                self.kind = PER_AXIS
            else:
                if len(scale_shape) != rank:
                    raise EvaluationError(
                        f"blocked scale must have the rank of x ({rank}), got shape "
                        f"{scale_shape}")
                want = semantics.blocked_scale_shape(x_shape, self.axis, block_size)
                if scale_shape != want:
                    raise EvaluationError(
                        f"blocked scale shape {scale_shape} does not fit x shape {x_shape} "
                        f"with axis {self.axis} and block_size {block_size}: expected {want}")
                self.kind = BLOCKED
                self.block = block_size
        if granularities is not None and self.kind not in granularities:
            raise EvaluationError(f"{self.kind} quantization is not allowed by this op version")

    # -- views ---------------------------------------------------------------
    def _dims(self):
        ax = self.axis
        outer = math.prod(self.x_shape[:ax])
        d = self.x_shape[ax]
        inner = math.prod(self.x_shape[ax + 1:])
        return outer, d, inner

    def split(self, a: np.ndarray) -> list[np.ndarray]:
        """Views of an x-shaped C-contiguous array, one per part."""
        if self.kind == PER_TENSOR:
            return [a.reshape(-1)]
        outer, d, inner = self._dims()
        if self.kind == PER_AXIS:
            return [a.reshape(outer, d) if inner == 1 else a.reshape(outer, d, inner)]
        b = self.block
        full, rem = divmod(d, b)
        a3 = a.reshape(outer, d, inner)
        parts = []
        if full and not rem:
            parts.append(a3.reshape(outer * full, b, inner))
        elif full:
            parts.append(a3[:, :full * b, :].reshape(outer, full, b, inner))
        if rem:
            parts.append(a3[:, full * b:, :])
        return parts

    def split_param(self, p: np.ndarray) -> list[np.ndarray]:
        """Views of a scale-shaped array that broadcast against ``split`` parts.

        A 0-d array (a parameter that is the same everywhere) broadcasts as is.
        """
        if self.kind == PER_TENSOR or p.ndim == 0:
            n = 1
            if self.kind == BLOCKED:
                full, rem = divmod(self._dims()[1], self.block)
                n = (1 if full else 0) + (1 if rem else 0)
            return [p.reshape(())] * n
        outer, d, inner = self._dims()
        if self.kind == PER_AXIS:
            return [p.reshape(1, d) if inner == 1 else p.reshape(1, d, 1)]
        b = self.block
        full, rem = divmod(d, b)
        nb = full + (1 if rem else 0)
        p3 = p.reshape(outer, nb, inner)
        parts = []
        if full and not rem:
            parts.append(p3.reshape(outer * full, 1, inner))
        elif full:
            parts.append(p3[:, :full, None, :])
        if rem:
            parts.append(p3[:, full:, :])
        return parts

    def jobs(self, x: np.ndarray, out: np.ndarray, *params: np.ndarray) -> list[tuple]:
        xs = self.split(x)
        os_ = self.split(out)
        ps = [self.split_param(p) for p in params]
        return [(xs[i], os_[i], *(p[i] for p in ps)) for i in range(len(xs))]

    def expand(self, p: np.ndarray) -> np.ndarray:
        """A scale-shaped array broadcast to full x shape (small inputs and tests only)."""
        if self.kind == PER_TENSOR:
            return np.broadcast_to(p.reshape(()), self.x_shape)
        if self.kind == PER_AXIS:
            shape = [1] * len(self.x_shape)
            shape[self.axis] = -1
            return np.broadcast_to(p.reshape(shape), self.x_shape)
        r = np.repeat(p, self.block, axis=self.axis)
        return r.take(range(self.x_shape[self.axis]), axis=self.axis)
