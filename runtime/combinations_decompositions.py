"""combinations, written with other ops as PyTorch writes it (CompositeImplicitAutograd), so a
dispatch mode sees the same calls and the graph has the same nodes: r copies of the input
spread over an r-dimensional grid (meshgrid), a mask of the grid's strictly increasing (or,
with replacement, non-decreasing) index tuples built the same way from arange, and each grid's
masked elements stacked as columns."""

from __future__ import annotations

from . import dtypes
from .generated import ops as aten
from .kernel_support import shape_text
from .shape_decompositions import meshgrid_indexing

__all__ = ["combinations"]


def _index_tuples_mask(n: int, r: int, with_replacement: bool):
    """True where the grid's index tuple (i0, i1, ...) has i0 < i1 < ... (<= with
    replacement)."""
    grids = meshgrid_indexing([aten.arange(n, dtype=dtypes.int64)] * r, "ij")
    mask = aten.full(list(grids[0].shape), True, dtype=dtypes.bool)
    compare = aten.le_Tensor if with_replacement else aten.lt_Tensor
    for first, second in zip(grids, grids[1:]):
        aten.mul__Tensor(mask, compare(first, second))
    return mask


def combinations(self, r: int = 2, with_replacement: bool = False):
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {shape_text(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return aten.empty_memory_format([0], dtype=self.dtype)
    grids = meshgrid_indexing([self] * r, "ij")
    mask = _index_tuples_mask(self.shape[0], r, with_replacement)
    return aten.stack([aten.masked_select(g, mask) for g in grids], 1)
