"""CPU kernels of the statistical reductions: prod, nansum, all, any, count_nonzero, var,
std, var_mean, std_mean.

As in PyTorch: integral and bool inputs reduce to int64 in prod and nansum (``dtype=``
casts the input first), float16 accumulates in float32 and rounds once, all/any give
bool (uint8 for a uint8 input), and var/std accumulate in double and give the real
dtype of their input.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .numpy_kernels import _dims, cast
from .numpy_kernels import sum as _sum
from .user_warnings import warn_user

__all__ = [
    "all_any",
    "count_nonzero",
    "nansum",
    "prod",
    "var_mean_correction",
]

_INT64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_HALF = np.dtype(np.float16)
_UINT8 = np.dtype(np.uint8)


def prod(a: np.ndarray, dim: Optional[int], keepdim: bool, dtype) -> np.ndarray:
    """prod over every element (dim None) or along ``dim``: int64 for integral and bool
    inputs unless ``dtype`` names the result type (the input is cast to it first)."""
    if dtype is not None:
        out = dtype.np
    else:
        out = a.dtype if a.dtype.kind in "fc" else _INT64
    x = cast(a, out)
    axis = None if dim is None else _dims([dim], a.ndim)
    if out is _HALF:  # float16 multiplies in float32 and rounds once
        return np.multiply.reduce(x, axis, _F32, None, keepdim).astype(_HALF)
    return np.asarray(np.multiply.reduce(x, axis, out, None, keepdim))


def nansum(a: np.ndarray, dim, keepdim: bool, dtype) -> np.ndarray:
    """sum with NaN counted as zero."""
    if a.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), a.dtype.type(0), a)
    return np.asarray(_sum(a, dim, keepdim, dtype))


def all_any(a: np.ndarray, dim, keepdim: bool, every: bool) -> np.ndarray:
    """all (``every``) or any over every element (None), one dim (an int) or a list of
    dims ([] reduces nothing: each element's truth). bool, uint8 for a uint8 input."""
    out = _UINT8 if a.dtype is _UINT8 or a.dtype == _UINT8 else np.dtype(np.bool_)
    if dim is None:
        axis = None
    elif isinstance(dim, int):
        axis = _dims([dim], a.ndim)
    elif len(dim) == 0:
        return (a != 0).astype(out)
    else:
        axis = _dims(dim, a.ndim)
    reduce = np.logical_and.reduce if every else np.logical_or.reduce
    result = reduce(a != 0, axis=axis, keepdims=keepdim)
    if axis is None and keepdim:
        result = np.reshape(result, (1,) * a.ndim)
    return np.asarray(result).astype(out, copy=False)


def count_nonzero(a: np.ndarray, dim) -> np.ndarray:
    """The number of nonzero elements over ``dim`` (None or []: every dim), as int64."""
    if isinstance(dim, int):
        dim = [dim]
    axis = None if dim is None or len(dim) == 0 else _dims(dim, a.ndim)
    return np.asarray(np.count_nonzero(a, axis=axis)).astype(_INT64, copy=False)


def _reduced_count(shape: Sequence[int], axis) -> int:
    if axis is None:
        return math.prod(shape)
    return math.prod(shape[d] for d in axis)


def var_mean_correction(
    a: np.ndarray, dim, correction, keepdim: bool, name: str, take_root: bool, with_mean: bool
):
    """var or std (``take_root``) over ``dim`` (None or []: every dim) with ``correction``
    (None: 1), and the mean beside it for var_mean/std_mean. Computed in double and given
    in the input's real dtype (the mean in the input's dtype)."""
    if a.dtype.kind not in "fc":
        which = name if with_mean else "std and var"
        raise RuntimeError(f"{which} only support floating point and complex dtypes")
    axis = None if dim is None or len(dim) == 0 else _dims(dim, a.ndim)
    count = _reduced_count(a.shape, axis)
    c = 1.0 if correction is None else float(correction)
    wide = np.complex128 if a.dtype.kind == "c" else _F64
    x = a.astype(wide)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.add.reduce(x, axis, None, None, True) / count
    deviation = x - mean
    squares = (deviation * deviation.conj()).real if a.dtype.kind == "c" else deviation**2
    total = np.add.reduce(squares, axis, None, None, keepdim)
    dof = max(0.0, count - c)
    if dof <= 0:
        warn_user(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel)."
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.true_divide(total, dof)
        if count == 0:
            result = np.full(np.shape(result), np.nan)
    if take_root:
        result = np.sqrt(result)
    real = np.empty(0, a.dtype).real.dtype
    result = np.asarray(result).astype(real)
    if not with_mean:
        return result
    if not keepdim:
        mean = np.squeeze(mean, axis) if axis is not None else mean.reshape(())
    return result, np.asarray(mean).astype(a.dtype)
