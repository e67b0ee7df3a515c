"""CPU kernels of the max/min reductions: max, min (whole tensor and along a dim), amax,
amin, aminmax, argmax, argmin.

As in PyTorch, NaN counts as the largest and the smallest value (a reduction over a NaN
gives NaN, and its index), and ties go to the first index. numpy's argmax/argmin and
max/min behave so already; the kernels add PyTorch's refusals (empty reductions, complex
and bool inputs) and its result shapes (``keepdim``, 0-dim inputs).
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from . import dtypes
from .numpy_kernels import wrap_dim

__all__ = [
    "amax",
    "amin",
    "aminmax",
    "arg_extremum",
    "extremum_all",
    "extremum_dim",
]

_INT64 = np.dtype(np.int64)


def _type_name(a: np.ndarray) -> str:
    return dtypes.scalar_type_name(a.dtype)


def _no_identity(name: str) -> str:
    return (
        f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
        "reduction dim with the 'dim' argument."
    )


def _empty_dim(name: str, dim: int) -> IndexError:
    return IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def extremum_all(a: np.ndarray, largest: bool) -> np.ndarray:
    """max() / min(): the largest (smallest) element as a 0-dim array of a's dtype."""
    name = "max" if largest else "min"
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"{name}_all\" not implemented for '{_type_name(a)}'")
    if a.size == 0:
        raise RuntimeError(_no_identity(name))
    return np.asarray(a.max() if largest else a.min())


def _reduced_dim(a: np.ndarray, dim: int, name: str) -> int:
    """The numpy axis of a reduction along ``dim`` (-1 for a 0-dim input)."""
    d = wrap_dim(dim, a.ndim)
    if a.ndim and a.shape[d] == 0:
        raise _empty_dim(name, d)
    return d if a.ndim else -1


def _arg(a: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    # numpy's argmax/argmin pick the first NaN, else the first of tied extrema: PyTorch's rule
    return np.argmax(a, axis=axis) if largest else np.argmin(a, axis=axis)


def extremum_dim(
    a: np.ndarray, dim: int, keepdim: bool, largest: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """max.dim / min.dim: (values, int64 indices) along ``dim``."""
    name = "max" if largest else "min"
    if a.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    axis = _reduced_dim(a, dim, name)
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    indices = np.expand_dims(_arg(a, axis, largest), axis)
    values = np.take_along_axis(a, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return values, indices.astype(_INT64, copy=False)


def _reduced_dims(a: np.ndarray, dim: Sequence[int], name: str) -> Optional[tuple]:
    """The numpy axes of amax/amin over ``dim`` ([] is every dim): None for all of them."""
    if len(dim) == 0:
        if a.size == 0:
            raise RuntimeError(_no_identity(name))
        return None
    axes = tuple(wrap_dim(d, a.ndim) for d in dim)
    if len(set(axes)) != len(axes):
        repeated = next(d for i, d in enumerate(axes) if d in axes[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    if a.ndim == 0:
        return ()
    for given, axis in zip(dim, axes):
        if a.shape[axis] == 0:
            raise _empty_dim(name, given)
    return axes


def amax(a: np.ndarray, dim: Sequence[int], keepdim: bool) -> np.ndarray:
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"max_values_cpu\" not implemented for '{_type_name(a)}'")
    return np.asarray(np.amax(a, axis=_reduced_dims(a, dim, "amax"), keepdims=keepdim))


def amin(a: np.ndarray, dim: Sequence[int], keepdim: bool) -> np.ndarray:
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"min_values_cpu\" not implemented for '{_type_name(a)}'")
    return np.asarray(np.amin(a, axis=_reduced_dims(a, dim, "amin"), keepdims=keepdim))


def aminmax(a: np.ndarray, dim: Optional[int], keepdim: bool) -> Tuple[np.ndarray, np.ndarray]:
    """aminmax: (min, max) over every element (dim None) or along ``dim``."""
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_type_name(a)}'")
    if dim is None:
        if a.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                "has no identity."
            )
        axis = None
    else:
        d = wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        axis = d if a.ndim else None
    low = np.amin(a, axis=axis, keepdims=keepdim)
    high = np.amax(a, axis=axis, keepdims=keepdim)
    return np.asarray(low), np.asarray(high)


def arg_extremum(a: np.ndarray, dim: Optional[int], keepdim: bool, largest: bool) -> np.ndarray:
    """argmax / argmin: int64 indices along ``dim``, or into the flattened tensor (None)."""
    name = "argmax" if largest else "argmin"
    if a.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if a.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if a.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        index = _arg(a.reshape(-1), 0, largest)
        shape = (1,) * a.ndim if keepdim else ()
        return np.full(shape, index, _INT64)
    axis = _reduced_dim(a, dim, name)
    if a.ndim == 0:
        return np.zeros((), _INT64)
    indices = _arg(a, axis, largest)
    if keepdim:
        indices = np.expand_dims(indices, axis)
    return indices.astype(_INT64, copy=False)
