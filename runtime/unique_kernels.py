"""numpy kernels of the unique family (``k.<fn>`` in derivatives.yaml): _unique2 (what
torch.unique reaches without dim), unique_dim, unique_consecutive and unique_dim_consecutive.

Every kernel returns (values, inverse, counts) as PyTorch's: inverse and counts are int64;
an inverse or count torch's kernel does not compute is an empty vector. Equal values are found
by sorting (stable, NaN the largest) and comparing neighbours with ``!=``, so each NaN is a
value of its own, as in PyTorch; -0.0 and 0.0 are one value (the first in sorted order).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes

# numpy_kernels re-exports this module at its end, so this name exists by then
from .numpy_kernels import wrap_dim

__all__ = ["unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive"]

_INT64 = np.dtype(np.int64)


def _empty_long():
    return np.empty((0,), _INT64)


def _refuse_complex(a: np.ndarray, name: str) -> None:
    if a.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )


def _groups(new: np.ndarray, n: int):
    """From the flags marking where a new value starts (in some order of n elements): each
    element's group number and each group's size."""
    group = np.cumsum(new, dtype=_INT64) - 1
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n)).astype(_INT64)
    return group, counts


def _starts(keys: np.ndarray) -> np.ndarray:
    """Flags: True where a row (or element) of ``keys`` differs from the one before it (the
    first always). NaN differs from everything, itself included."""
    new = np.ones(keys.shape[0], np.bool_)
    if keys.shape[0] > 1:
        differs = keys[1:] != keys[:-1]
        new[1:] = differs.reshape(differs.shape[0], -1).any(axis=1)
    return new


def unique2(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False):
    """_unique2: the distinct values in ascending order (also for ``sorted=False``, whose
    order PyTorch leaves unspecified; its CPU kernel sorts too), each element's place among
    them (shaped as self) and each value's count."""
    _refuse_complex(self, "unique")
    flat = self.reshape(-1)
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    new = _starts(ordered)
    values = ordered[new]
    if not (return_inverse or return_counts):
        return values, _empty_long(), _empty_long()
    group, counts = _groups(new, flat.size)
    inverse = _empty_long()
    if return_inverse:
        inverse = np.empty(flat.size, _INT64)
        inverse[order] = group
        inverse = inverse.reshape(self.shape)
    return values, inverse, counts if return_counts else _empty_long()


def _dim_rows(self, dim: int, name: str):
    """``self`` with ``dim`` first and the rest flattened into rows, after PyTorch's checks;
    None (with the wrapped dim) when ``self`` is empty along ``dim``."""
    _refuse_complex(self, name)
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, self.ndim)
    if self.size == 0:
        if self.shape.count(0) != 1:
            raise RuntimeError(
                "Number of zero sized dimensions is more than one, so unique cannot be applied "
            )
        if self.shape[dim] != 0:
            raise RuntimeError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
        return dim, None
    moved = np.moveaxis(self, dim, 0)
    return dim, moved.reshape(moved.shape[0], -1)


def _rows_back(rows: np.ndarray, self, dim: int) -> np.ndarray:
    moved_shape = (rows.shape[0],) + self.shape[:dim] + self.shape[dim + 1 :]
    return np.moveaxis(rows.reshape(moved_shape), 0, dim)


def unique_dim(self, dim: int, sorted: bool = True, return_inverse=False, return_counts=False):
    """unique_dim: the distinct slices along ``dim`` in lexicographic order (always sorted,
    as PyTorch's), each slice's place among them and each one's count (both computed always,
    as PyTorch's kernel does). Slices holding NaN are distinct and sort as if NaN were the
    largest value (PyTorch's order for them is its sort's accident)."""
    dim, rows = _dim_rows(self, dim, "unique_dim")
    if rows is None:
        return self.copy(), _empty_long(), _empty_long()
    # lexsort's last key is its primary one: the first column
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    ordered = rows[order]
    new = _starts(ordered)
    group, counts = _groups(new, rows.shape[0])
    inverse = np.empty(rows.shape[0], _INT64)
    inverse[order] = group
    return _rows_back(ordered[new], self, dim), inverse, counts


def unique_dim_consecutive(self, dim: int, return_inverse=False, return_counts=False):
    """unique_dim_consecutive: runs of equal slices along ``dim`` kept once; the inverse and
    counts are computed always, as PyTorch's kernel does."""
    dim, rows = _dim_rows(self, dim, "unique_dim_consecutive")
    if rows is None:
        return self.copy(), _empty_long(), _empty_long()
    new = _starts(rows)
    group, counts = _groups(new, rows.shape[0])
    return _rows_back(rows[new], self, dim), group, counts


def unique_consecutive(
    self, return_inverse: bool = False, return_counts: bool = False, dim: Optional[int] = None
):
    """unique_consecutive: runs of equal elements (of the flattened tensor, or of slices
    along ``dim``) kept once, each element's run number (shaped as self) and each run's
    length."""
    if dim is not None:
        return unique_dim_consecutive(self, dim, return_inverse, return_counts)
    _refuse_complex(self, "unique")
    flat = self.reshape(-1)
    new = _starts(flat)
    group, counts = _groups(new, flat.size)
    inverse = group.reshape(self.shape) if return_inverse else _empty_long()
    return flat[new].copy(), inverse, counts if return_counts else _empty_long()
