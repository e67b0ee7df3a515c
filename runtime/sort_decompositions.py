"""CompositeImplicitAutograd ops of the sorting family: argsort is sort's indices and msort
its values along dim 0, as in PyTorch (their gradients flow through SortBackward0/1)."""

from __future__ import annotations

from . import dtypes
from .generated import ops as aten

__all__ = ["argsort", "argsort_stable", "argsort_stable_out", "msort", "msort_out"]


def argsort(self, dim=-1, descending=False):
    return aten.sort(self, dim, descending)[1]


def argsort_stable(self, stable, dim=-1, descending=False):
    return aten.sort_stable(self, stable=stable, dim=dim, descending=descending)[1]


def argsort_stable_out(self, stable, dim, descending, out):
    values = aten.empty_memory_format([0], dtype=self.dtype)
    aten.sort_values_stable(
        self, stable=stable, dim=dim, descending=descending, values=values, indices=out
    )
    return out


def msort(self):
    return aten.sort(self, 0)[0]


def msort_out(self, out):
    indices = aten.empty_memory_format([0], dtype=dtypes.int64)
    aten.sort_values(self, 0, values=out, indices=indices)
    return out
