"""Backward helpers of the padding ops, re-exported by functions_manual."""

from __future__ import annotations

from typing import Sequence

from ..generated import ops as aten

__all__ = ["constant_pad_nd_backward"]


def constant_pad_nd_backward(grad, pad: Sequence[int]):
    """The padded region cropped away: the same op with every pad negated."""
    return aten.constant_pad_nd(grad, tuple(-p for p in pad), 0)
