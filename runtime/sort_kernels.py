"""CPU kernels of sorting and order statistics: sort, topk, kthvalue, median, nanmedian,
mode, and the unique family.

Every order here is numpy's stable argsort along the dim, with NaN as the largest value
(PyTorch's comparators). A descending order keeps ties in their input order, as PyTorch's
stable sort does: it is the stable ascending order of the reversed slice, reversed.
PyTorch's unstable CPU sort (std::sort) agrees with this on slices of up to 16 elements;
on longer ones it may order ties differently, and its topk, kthvalue and median may
return another of several tied indices: opgrad's pick is always the stable one.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from . import dtypes
from .numpy_kernels import wrap_dim

__all__ = [
    "kthvalue",
    "median_all",
    "median_dim",
    "mode",
    "sort",
    "topk",
]

_INT64 = np.dtype(np.int64)


def _type_name(a: np.ndarray) -> str:
    return dtypes.scalar_type_name(a.dtype)


def _sortable(a: np.ndarray) -> np.ndarray:
    """``a`` as numpy can argsort it (ml_dtypes' bfloat16 through float32, exactly)."""
    return a.astype(np.float32) if a.dtype.kind == "V" or a.dtype.name == "bfloat16" else a


def stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The int64 positions that sort ``a`` along ``axis``, ties in input order, NaN last
    (first when descending)."""
    keys = _sortable(a)
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    last = a.shape[axis] - 1
    flipped = np.flip(keys, axis)
    return last - np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis)


def sort(
    a: np.ndarray, stable: Optional[bool], dim: int, descending: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """sort / sort.stable: (values, int64 indices) along ``dim``."""
    if a.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    axis = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    order = stable_order(a, axis, descending)
    return np.take_along_axis(a, order, axis), order.astype(_INT64, copy=False)


def topk(
    a: np.ndarray, k: int, dim: int, largest: bool, sorted: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """topk: the k largest (smallest) values along ``dim`` and their indices, in order."""
    if a.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if a.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = wrap_dim(dim, a.ndim)
    size = a.shape[axis] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    order = stable_order(a, axis, largest)
    picked = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(a, picked, axis), picked.astype(_INT64, copy=False)


def _refuse(a: np.ndarray, name: str) -> None:
    """PyTorch's refusal of bool and complex inputs, named for its kernel ("median_cpu")."""
    if a.dtype.kind in "bc":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(a)}'")


def _reduced_axis(a: np.ndarray, dim: int, name: str) -> int:
    axis = wrap_dim(dim, a.ndim)
    if a.ndim and a.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    return axis


def _pick(
    a: np.ndarray, order: np.ndarray, position: np.ndarray, axis: int, keepdim: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """The values and indices at ``position`` (keepdim-shaped) of ``order`` along ``axis``."""
    indices = np.take_along_axis(order, position, axis)
    values = np.take_along_axis(a, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return values, indices.astype(_INT64, copy=False)


def kthvalue(a: np.ndarray, k: int, dim: int, keepdim: bool) -> Tuple[np.ndarray, np.ndarray]:
    """kthvalue: the k-th smallest value along ``dim`` (NaN the largest) and its index."""
    _refuse(a, "kthvalue")
    axis = _reduced_axis(a, dim, "kthvalue")
    size = a.shape[axis] if a.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    order = np.take(stable_order(a, axis, False), [k - 1], axis=axis)
    values = np.take_along_axis(a, order, axis)
    if not keepdim:
        order, values = order.squeeze(axis), values.squeeze(axis)
    return values, order.astype(_INT64, copy=False)


def median_all(a: np.ndarray, ignore_nan: bool) -> np.ndarray:
    """median() / nanmedian(): the lower median of every element (NaN for an empty input,
    or for median when a NaN is present)."""
    _refuse(a, "median")
    flat = np.sort(_sortable(a).reshape(-1), kind="stable")
    if flat.size == 0:
        return np.asarray(np.nan, a.dtype)
    if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
        return np.asarray(flat[(flat.size - 1) // 2], a.dtype)
    count = flat.size - int(np.isnan(flat).sum()) if ignore_nan else flat.size
    if not ignore_nan and np.isnan(flat[-1]):
        return np.asarray(np.nan, a.dtype)
    return np.asarray(flat[max(count - 1, 0) // 2], a.dtype)


def median_dim(
    a: np.ndarray, dim: int, keepdim: bool, ignore_nan: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """median.dim / nanmedian.dim: the lower median along ``dim`` and its index. median
    gives a slice's first NaN when it has one; nanmedian the median of its other values."""
    # PyTorch names both ops median in their refusals
    if a.dtype.kind in "bc":
        raise NotImplementedError(f"\"median_out\" not implemented for '{_type_name(a)}'")
    axis = _reduced_axis(a, dim, "median")
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    order = stable_order(a, axis, False)
    size = a.shape[axis]
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        nans = np.isnan(_sortable(a)).sum(axis=axis, keepdims=True)
        if ignore_nan:
            position = np.maximum(size - nans - 1, 0) // 2
        else:
            # the first NaN of a slice sits right after its size - nans numbers
            position = np.where(nans > 0, size - nans, (size - 1) // 2)
    else:
        position = np.full(order.shape[:axis] + (1,) + order.shape[axis + 1 :], (size - 1) // 2)
    return _pick(a, order, position, axis, keepdim)


def mode(a: np.ndarray, dim: int, keepdim: bool) -> Tuple[np.ndarray, np.ndarray]:
    """mode: the most frequent value along ``dim`` (the smallest of equally frequent ones;
    NaN equals nothing) and the index of its last occurrence."""
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"mode_cpu\" not implemented for '{_type_name(a)}'")
    axis = _reduced_axis(a, dim, "mode")
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    moved = np.moveaxis(a, axis, -1)
    order = stable_order(moved, -1, False)
    values = _sortable(np.take_along_axis(moved, order, -1))
    size = values.shape[-1]
    # a run of equal sorted values ends where the next one differs (or at the slice's end)
    ends = np.ones(values.shape, bool)
    ends[..., :-1] = values[..., 1:] != values[..., :-1]
    position = np.broadcast_to(np.arange(size), values.shape)
    last_end = np.maximum.accumulate(np.where(ends, position, -1), axis=-1)
    previous_end = np.concatenate(
        [np.full(values.shape[:-1] + (1,), -1), last_end[..., :-1]], axis=-1
    )
    run_length = np.where(ends, position - previous_end, 0)
    best = np.argmax(run_length, axis=-1)[..., None]  # the first longest run: smallest value
    indices = np.take_along_axis(order, best, -1)
    result_values = np.take_along_axis(moved, indices, -1)
    indices = np.moveaxis(indices, -1, axis)
    result_values = np.moveaxis(result_values, -1, axis)
    if not keepdim:
        indices, result_values = indices.squeeze(axis), result_values.squeeze(axis)
    return np.array(result_values, order="C"), np.array(indices, _INT64, order="C")
