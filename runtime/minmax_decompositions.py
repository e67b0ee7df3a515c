"""CompositeImplicitAutograd ops of the max/min family: binary max and min are maximum
and minimum (torch.max(a, b) records MaximumBackward0, as in PyTorch)."""

from __future__ import annotations

from .generated import ops as aten

__all__ = ["max_other", "max_out", "min_other", "min_out"]


def max_other(self, other):
    return aten.maximum(self, other)


def max_out(self, other, out):
    return aten.maximum_out(self, other, out=out)


def min_other(self, other):
    return aten.minimum(self, other)


def min_out(self, other, out):
    return aten.minimum_out(self, other, out=out)
