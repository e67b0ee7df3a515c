"""numpy kernels of the masked, take/put and scatter-into ops (``k.<fn>`` in derivatives.yaml):
masked_select, masked_scatter, nonzero, take, put, the *_scatter ops, searchsorted and
bucketize.

Each kernel checks what PyTorch's CPU kernel checks, in PyTorch's order and words, before it
computes anything, and computes with whole-array numpy calls (boolean indexing, argwhere,
flat fancy indexing, ``ufunc.at`` for accumulating writes).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from . import dtypes
from .kernel_support import shape_text

# numpy_kernels re-exports this module at its end, so these names exist by then
from .numpy_kernels import as_strided, broadcast_error, diagonal, select
from .numpy_kernels import slice as slice_view

__all__ = [
    "masked_select",
    "masked_select_out_check",
    "masked_scatter",
    "masked_scatter_inplace_check",
    "masked_scatter_backward",
    "nonzero",
    "nonzero_out_check",
    "nonzero_static",
    "take",
    "take_out_check",
    "put",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "as_strided_scatter",
    "as_strided_scatter_check",
]

_BOOL = np.dtype(np.bool_)
_INT64 = np.dtype(np.int64)


def _name(dtype) -> str:
    return dtypes.scalar_type_name(dtype)


def _broadcast_with_mask(self: np.ndarray, mask: np.ndarray):
    """self and mask broadcast together (PyTorch names the mask first when they clash)."""
    try:
        return np.broadcast_arrays(self, mask)
    except ValueError:
        raise RuntimeError(broadcast_error(mask.shape, self.shape)) from None


def _expand_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` expanded to ``shape`` (PyTorch's expand of an internal tensor, in its words)."""
    if a.ndim > len(shape):
        raise RuntimeError(
            f"expand(CPU{_name(a.dtype)}Type{{{shape_text(a.shape)}}}, size={shape_text(shape)}): "
            f"the number of sizes provided ({len(shape)}) must be greater or equal to the number "
            f"of dimensions in the tensor ({a.ndim})"
        )
    lead = len(shape) - a.ndim
    for i, own in enumerate(a.shape):
        if own != 1 and own != shape[lead + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[lead + i]}) must match the existing "
                f"size ({own}) at non-singleton dimension {lead + i}.  Target sizes: "
                f"{shape_text(shape)}.  Tensor sizes: {shape_text(a.shape)}"
            )
    return np.broadcast_to(a, shape)


def _flat_out_of_range(index: np.ndarray, numel: int) -> Optional[int]:
    """The first flat index outside ``[-numel, numel)``, or None."""
    bad = (index < -numel) | (index >= numel)
    if not bad.any():
        return None
    return int(index.reshape(-1)[np.argmax(bad.reshape(-1))])


# ---- masked_select, masked_scatter -------------------------------------------------------------


def masked_select(self, mask):
    """The elements of self (broadcast with mask) where mask is true, as a 1-d array in
    row-major order."""
    if mask.dtype != _BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    values, mask = _broadcast_with_mask(self, mask)
    return values[mask]


def masked_select_out_check(self, target) -> None:
    if target._data.dtype != self._data.dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")


def _masked_scatter_checks(self, mask, source) -> None:
    if source.dtype != self.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_name(self.dtype)} and {_name(source.dtype)}"
        )
    if mask.dtype != _BOOL:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_name(mask.dtype)}"
        )


def masked_scatter_inplace_check(self, mask, source) -> None:
    """masked_scatter_'s checks before the shared kernel: self keeps its shape, so mask must
    expand to it (PyTorch checks the dtypes first)."""
    if source._data.dtype != self._data.dtype:
        _masked_scatter_checks(self._data, mask._data, source._data)
    _expand_to(mask._data, self._data.shape)


def masked_scatter(self, mask, source):
    """self (broadcast with mask) with the places where mask is true taking source's leading
    elements in row-major order."""
    values, mask = _broadcast_with_mask(self, mask)
    _masked_scatter_checks(self, mask, source)
    count = int(np.count_nonzero(mask))
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = values.copy()
    out[mask] = source.reshape(-1)[:count]
    return out


def masked_scatter_backward(grad_output, mask, sizes: Sequence[int]):
    """source's gradient: grad_output's masked elements, padded with zeros to source's
    element count and shaped as source."""
    selected = masked_select(grad_output, mask)
    numel = int(np.prod(sizes, dtype=np.int64))
    if numel > selected.size:
        selected = np.concatenate([selected, np.zeros(numel - selected.size, selected.dtype)])
    if selected.size != numel:
        raise RuntimeError(
            f"shape '{shape_text(sizes)}' is invalid for input of size {selected.size}"
        )
    return selected.reshape(tuple(sizes))


# ---- nonzero -----------------------------------------------------------------------------------


def nonzero(self):
    """The indices of the nonzero elements, one row each in row-major order (int64), laid out
    column-major as PyTorch's (argwhere's layout)."""
    return np.argwhere(self).astype(_INT64, copy=False)


def nonzero_out_check(target, name: str = "nonzero") -> None:
    if target._data.dtype != _INT64:
        raise RuntimeError(
            f"{name}: Expected out tensor to have scalar type Long but got scalar type"
            f"{_name(target._data.dtype)}"
        )


def nonzero_static(self, size: int, fill_value: int = -1):
    """nonzero's first ``size`` rows, padded with rows of ``fill_value`` when fewer."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(self)[:size]
    if found.shape[0] == size:
        return np.ascontiguousarray(found)  # row-major, unlike nonzero's column-major result
    padding = np.full((size - found.shape[0], found.shape[1]), fill_value, _INT64)
    return np.concatenate([found, padding])


# ---- take, put ---------------------------------------------------------------------------------


def take(self, index):
    """self's elements at the flat (row-major) positions index names, shaped as index;
    negative positions count from the end."""
    if index.dtype != _INT64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {_name(index.dtype)}"
        )
    if self.size == 0 and index.size:
        raise IndexError("take(): tried to take from an empty tensor")
    bad = _flat_out_of_range(index, self.size)
    if bad is not None:
        raise IndexError(
            f"out of range: tried to access index {bad} on a tensor of {self.size} elements."
        )
    out = self.reshape(-1)[index]
    return out if out.flags.c_contiguous else out.copy()  # row-major whatever index's layout


def take_out_check(self, target) -> None:
    if target._data.dtype != self._data.dtype:
        raise RuntimeError(
            "take(): self and out expected to have the same dtype, but got self.dtype = "
            f"{_name(self._data.dtype)} and out.dtype = {_name(target._data.dtype)}"
        )


def put(self, index, source, accumulate: bool = False):
    """self with source's elements written to the flat positions index names (added there
    when ``accumulate``: duplicates add up; else the last write wins)."""
    if index.dtype != _INT64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {_name(index.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_name(self.dtype)} and source.dtype = {_name(source.dtype)}"
        )
    if index.size != source.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.size}, index.numel() = {index.size}"
        )
    if self.size == 0 and index.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    bad = _flat_out_of_range(index, self.size)
    if bad is not None:
        raise IndexError(
            f"out of range: tried to access index {bad} on a tensor of {self.size} elements."
        )
    out = self.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index.reshape(-1), source.reshape(-1))
    else:
        flat[index.reshape(-1)] = source.reshape(-1)
    return out


# ---- select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter -----------------------


def _scatter_into(out: np.ndarray, view: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Write src (cast to out's dtype) into ``view``, a view of the fresh copy ``out``."""
    if view.shape != src.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{shape_text(src.shape)}, slice size = {shape_text(view.shape)}"
        )
    view[...] = src
    return out


def _copy(self: np.ndarray) -> np.ndarray:
    """A fresh copy with self's very strides, gaps included (PyTorch's clone_preserve_strides);
    a self whose elements overlap (an expanded one) is copied densely."""
    if not self.size or any(st <= 0 for st, n in zip(self.strides, self.shape) if n > 1):
        return np.array(self, copy=True, order="K")
    item = self.itemsize
    extent = 1 + sum((n - 1) * abs(st) // item for n, st in zip(self.shape, self.strides))
    if extent == self.size:  # dense: numpy keeps the order of its strides
        return np.array(self, copy=True, order="K")
    out = np.lib.stride_tricks.as_strided(
        np.empty(extent, self.dtype), self.shape, self.strides, writeable=True
    )
    out[...] = self
    return out


def select_scatter(self, src, dim: int, index: int):
    """self with its ``select(dim, index)`` slice replaced by src."""
    out = _copy(self)
    return _scatter_into(out, select(out, dim, index), src)


def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1):
    """self with its ``slice(dim, start, end, step)`` replaced by src."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    out = _copy(self)
    return _scatter_into(out, slice_view(out, dim, start, end, step), src)


def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """self with its ``diagonal(offset, dim1, dim2)`` replaced by src."""
    out = _copy(self)
    return _scatter_into(out, diagonal(out, offset, dim1, dim2), src)


def as_strided_scatter_check(self) -> None:
    if self.requires_grad and not self._data.flags.c_contiguous:
        raise RuntimeError(
            "!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED: "
            "as_strided_scatter is currently only supported for contiguous inputs"
        )


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """self's copy with the elements ``as_strided(size, stride, storage_offset)`` of the
    copy's memory addresses replaced by src."""
    out = _copy(self)
    return _scatter_into(out, as_strided(out, size, stride, storage_offset), src)
