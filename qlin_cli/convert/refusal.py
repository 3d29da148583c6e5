"""Why a step, a node or a conversion cannot be done: one record wherever convert refuses."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Refusal:
    """A refused rewrite: ``reason`` says why, ``ways_out`` the commands or options that get
    past it (shown after the reason)."""

    reason: str
    ways_out: tuple[str, ...] = ()


class UseFallback(Refusal):
    """An adapter's answer "not exactly by hand": let onnx.version_converter try, with a proof."""


__all__ = ["Refusal", "UseFallback"]
