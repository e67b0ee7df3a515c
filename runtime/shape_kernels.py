"""CPU kernels of the shape ops with derivatives of their own: flip, roll, rot90, tril,
triu, diag_embed, block_diag, squeeze over several dims, narrow_copy, and division with a
rounding mode.

Results are fresh arrays laid out as PyTorch lays them out: flip keeps its input's order
of strides (TensorIterator's rule), rot90 by an odd number of quarter turns is the
transpose of a flipped copy (as PyTorch builds it), and the rest are row-major.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from . import dtypes
from .numpy_kernels import diagonal, wrap_dim

__all__ = [
    "block_diag",
    "diag_embed",
    "div_rounding",
    "div_rounding_check",
    "flip",
    "narrow_copy",
    "narrow_copy_out_check",
    "roll",
    "rot90",
    "squeeze_dims",
    "triangle",
]


def _unique_dims(dims: Sequence[int], ndim: int) -> list:
    wrapped = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return wrapped


def flip(a: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    axes = _unique_dims(dims, a.ndim)
    if a.ndim == 0:
        return a.copy()
    return np.flip(a, axes).copy(order="K")


def roll(a: np.ndarray, shifts: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        # no dims: the flattened tensor rolls, and takes back its shape
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    axes = [wrap_dim(d, a.ndim) for d in dims]
    return np.ascontiguousarray(np.roll(a, shifts, axes) if a.ndim else a.copy())


def rot90(a: np.ndarray, k: int, dims: Sequence[int]) -> np.ndarray:
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == a.ndim:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    d0, d1 = wrap_dim(d0, a.ndim), wrap_dim(d1, a.ndim)
    turns = k % 4
    if turns == 1:
        return np.swapaxes(np.flip(a, d1).copy(order="K"), d0, d1)
    if turns == 2:
        return np.flip(a, (d0, d1)).copy(order="K")
    if turns == 3:
        return np.swapaxes(np.flip(a, d0).copy(order="K"), d0, d1)
    return np.ascontiguousarray(a)


def triangle(a: np.ndarray, diagonal: int, lower: bool) -> np.ndarray:
    """tril (``lower``) or triu of the last two dims: the other entries become zero."""
    if a.ndim < 2:
        name = "tril" if lower else "triu"
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = a.shape[-2:]
    keep = (
        np.tri(rows, cols, diagonal, dtype=bool)
        if lower
        else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    )
    return np.where(keep, a, np.zeros((), a.dtype))


def diag_embed(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """Each vector along a's last dim on the diagonal ``offset`` of new dims dim1, dim2."""
    ndim = a.ndim + 1
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = a.shape[-1] + abs(offset)
    batch = iter(a.shape[:-1])
    shape = [n if i in (d1, d2) else next(batch) for i in range(ndim)]
    out = np.zeros(shape, a.dtype)
    diagonal(out, offset, d1, d2)[...] = a
    return out


def block_diag(tensors: Sequence[np.ndarray]) -> np.ndarray:
    """The inputs (0-d as 1x1, 1-d as one row) along the diagonal of a zero matrix of their
    common type."""
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {t.ndim} dimensions"
            )
    blocks = [t.reshape((1,) * (2 - t.ndim) + t.shape) for t in tensors]
    dtype = np.result_type(*blocks) if blocks else dtypes.get_default_dtype().np
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = np.zeros((rows if blocks else 1, cols), dtype)
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b
        r += b.shape[0]
        c += b.shape[1]
    return out


def squeeze_dims(a: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A view without those of ``dims`` that have size 1 (the others stay)."""
    if a.ndim == 0:
        for d in dims:
            wrap_dim(d, 0)
        return a.view()
    axes = tuple(d for d in _unique_dims(dims, a.ndim) if a.shape[d] == 1)
    return np.squeeze(a, axes) if axes else a.view()


def narrow_copy(a: np.ndarray, dim: int, start: int, length: int) -> np.ndarray:
    """``length`` elements from ``start`` (negative: from the end) along ``dim``, copied;
    narrow's checks, but a dim past the last one fails in PyTorch's words for narrow_copy."""
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= a.ndim:
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
            "(Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)"
        )
    d = wrap_dim(dim, a.ndim)
    size = a.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return np.array(a[(slice(None),) * d + (slice(start, start + length),)], order="C")


def narrow_copy_out_check(a, out) -> None:
    if a.dtype != out.dtype:
        raise RuntimeError(
            "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this "
            "error message be improved?  If so, please report an enhancement request to "
            "PyTorch.)"
        )


_ROUNDING_MODES = (None, "trunc", "floor")


def div_rounding_check(rounding_mode: Optional[str]) -> None:
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )


def div_rounding(a: np.ndarray, b, rounding_mode: Optional[str]) -> np.ndarray:
    """Division rounded as ``rounding_mode`` says, on operands of the result type: floor as
    Python's ``//`` (floats too), trunc toward zero; integers refuse a zero divisor."""
    if rounding_mode is None:
        return np.true_divide(a, b)
    if a.dtype.kind == "b":
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    if a.dtype.kind in "iu":
        if np.any(np.asarray(b) == 0):
            raise RuntimeError("ZeroDivisionError")
        quotient = np.floor_divide(a, b)
        if rounding_mode == "trunc":
            inexact = (np.remainder(a, b) != 0) & ((a < 0) != (np.asarray(b) < 0))
            quotient = quotient + inexact.astype(a.dtype)
        return quotient
    with np.errstate(divide="ignore", invalid="ignore"):
        if rounding_mode == "floor":
            if a.dtype == np.float16:  # torch rounds every step to float16
                from .binary_math_kernels import half_floor_divide

                return half_floor_divide(a, b)
            return np.floor_divide(a, b)
        return np.trunc(np.true_divide(a, b))
