"""numpy kernels of the gather, scatter and index_* ops (``k.<fn>`` in derivatives.yaml).

Each kernel checks what PyTorch's CPU kernel checks, in PyTorch's order and words, before it
computes anything, and computes with whole-array numpy calls: take_along_axis and fancy
indexing for reads, fancy assignment (the last write wins, as in PyTorch's CPU loop) and
``ufunc.at`` (unbuffered, so duplicate indices accumulate) for writes.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes
from .kernel_support import shape_text

# numpy_kernels re-exports this module at its end, so these names exist by then
from .numpy_kernels import _cast_number, cast, wrap_dim
from .scalar_fit import check_fits
from .user_warnings import warn_user

__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_select",
    "index_add",
    "index_reduce",
    "index_copy",
    "index_fill",
    "unique",
    "remainder",
]

_INT32_OR_64 = (np.dtype(np.int32), np.dtype(np.int64))
_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _sizes(a: np.ndarray) -> tuple:
    """PyTorch's sizes for the scatter/gather checks: a 0-dim tensor counts as one of size 1."""
    return a.shape if a.ndim else (1,)


def _first_out_of_range(index: np.ndarray, size: int, allow_negative: bool = False):
    """The first index (row-major order) outside ``[0, size)`` (``[-size, size)`` when
    negatives wrap), or None."""
    low = -size if allow_negative else 0
    if index.size == 0 or (index.min() >= low and index.max() < size):
        return None
    bad = (index < low) | (index >= size)
    return int(index.reshape(-1)[np.argmax(bad.reshape(-1))])


def _check_bounds(index: np.ndarray, dim: int, size: int, prefix: str = "", error=RuntimeError):
    value = _first_out_of_range(index, size)
    if value is not None:
        raise error(f"{prefix}index {value} is out of bounds for dimension {dim} with size {size}")


def _leading(a: np.ndarray, shape: tuple, dim: Optional[int]) -> np.ndarray:
    """The corner of ``a`` that spans ``shape`` (all of ``dim``'s length when given)."""
    return a[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(shape))]


# ---- gather -----------------------------------------------------------------------------------


def gather(self, dim: int, index, sparse_grad: bool = False):
    """``out[i][j] = self[index[i][j]][j]`` (for dim 0): index's shape, self's dtype."""
    dim = wrap_dim(dim, self.ndim)
    if index.size == 0:  # PyTorch checks nothing more then, not even the index's dtype
        return np.empty(index.shape, self.dtype)
    if index.dtype not in _INT32_OR_64:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    self_sizes, index_sizes = _sizes(self), _sizes(index)
    if len(index_sizes) != len(self_sizes):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (n, m) in enumerate(zip(index_sizes, self_sizes)):
        if d != dim and n > m:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {shape_text(index.shape)} "
                f"to be no larger than self {shape_text(self.shape)} apart from dimension {dim}"
            )
    _check_bounds(index, dim, self_sizes[dim])
    source = np.ascontiguousarray(_leading(self.reshape(self_sizes), index_sizes, dim))
    positions = index.reshape(index_sizes).astype(np.intp, copy=False)
    flat = _flat_positions(source.shape, positions, dim)
    return source.reshape(-1).take(flat).reshape(index.shape)  # a fresh row-major result


# ---- scatter, scatter_add, scatter_reduce -----------------------------------------------------


def _scatter_checks(self, dim: int, index, src) -> int:
    """PyTorch's checks of the scatter family; ``src`` is None for a value. Returns the
    wrapped dim."""
    if src is not None and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim = wrap_dim(dim, self.ndim)
    if index.size == 0:  # PyTorch checks nothing more then, not even the index's dtype
        return dim
    if index.dtype not in _INT32_OR_64:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    self_sizes, index_sizes = _sizes(self), _sizes(index)
    if len(index_sizes) != len(self_sizes):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None:
        src_sizes = _sizes(src)
        if len(index_sizes) != len(src_sizes):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d, n in enumerate(index_sizes):
        too_big = d != dim and n > self_sizes[d]
        if src is not None:
            too_big = too_big or n > src_sizes[d]
        if too_big:
            message = (
                f"Expected index {shape_text(index.shape)} to be no larger than self "
                f"{shape_text(self.shape)} apart from dimension {dim}"
            )
            if src is not None:
                message += f" and to be no larger size than src {shape_text(src.shape)}"
            raise RuntimeError(message)
    _check_bounds(index, dim, self_sizes[dim])
    return dim


def _flat_positions(shape: tuple, index: np.ndarray, dim: int) -> np.ndarray:
    """For each element of ``index`` (row-major), the flat position in a row-major array of
    ``shape`` of the element at the same position except along ``dim``, where it takes the
    index's value. ``ufunc.at`` and assignment with one flat key take numpy's fast path,
    several times faster than with a tuple of broadcast keys."""
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]
    flat = index * strides[dim] if strides[dim] != 1 else index
    for d, n in enumerate(index.shape):
        if d != dim and n > 1:
            step = np.arange(0, n * strides[d], strides[d], dtype=np.intp)
            step = step.reshape((n,) + (1,) * (index.ndim - d - 1))
            if flat is index:  # the first sum is a new array, which the next ones update
                flat = flat + step
            else:
                flat += step
    return flat.reshape(-1)


def _scatter_parts(self, dim: int, index, src):
    """self's values as a fresh flat array, the flat positions each index element writes and
    src's matching part, flat in the same order."""
    out = self.reshape(_sizes(self)).copy()
    index = index.reshape(_sizes(index)).astype(np.intp, copy=False)
    key = _flat_positions(out.shape, index, dim)
    if src is not None:
        src = _leading(src.reshape(_sizes(src)), index.shape, None).reshape(-1)
    return out.reshape(-1), key, src


_SCATTER_UFUNCS = {"add": np.add, "multiply": np.multiply}


def scatter(self, dim: int, index, src, reduce: Optional[str] = None):
    """scatter's four overloads: ``src`` is an array (src) or a number (value), ``reduce``
    None (the last write wins), 'add' or 'multiply'."""
    is_value = not isinstance(src, np.ndarray)
    dim = _scatter_checks(self, dim, index, None if is_value else src)
    if reduce is not None and reduce not in _SCATTER_UFUNCS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if is_value:
        check_fits(src, self.dtype)
        value = _cast_number(src, self.dtype)
        src = None
    if index.size == 0:
        return self.copy()
    out, key, src = _scatter_parts(self, dim, index, src)
    values = value if is_value else src
    if reduce is None:
        out[key] = values
    else:
        _SCATTER_UFUNCS[reduce].at(out, key, values)
    return out.reshape(self.shape)


def scatter_add(self, dim: int, index, src):
    """Each src element added into the place its index names (duplicates accumulate)."""
    dim = _scatter_checks(self, dim, index, src)
    if index.size == 0:
        return self.copy()
    out, key, src = _scatter_parts(self, dim, index, src)
    np.add.at(out, key, src)
    return out.reshape(self.shape)


# PyTorch accepts 'max' and 'min' as the amax and amin reductions
_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin"}
_REDUCTIONS.update(max="amax", min="amin")
_REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply}


def _lowest(dtype: np.dtype):
    if dtype.kind == "f":
        return -np.inf
    return False if dtype == _BOOL else np.iinfo(dtype).min


def _highest(dtype: np.dtype):
    if dtype.kind == "f":
        return np.inf
    return True if dtype == _BOOL else np.iinfo(dtype).max


def scatter_reduce(self, dim: int, index, src, reduce: str, include_self: bool = True):
    """scatter_reduce.two: each place an index names becomes the reduction of the src values
    scattered there (and its own value when ``include_self``); integer means floor."""
    dim = _scatter_checks(self, dim, index, src)
    op = _REDUCTIONS.get(reduce)
    if op is None:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if op == "mean" and self.dtype == _BOOL:
        raise NotImplementedError(
            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
        )
    if index.size == 0:
        return self.copy()
    out, key, src = _scatter_parts(self, dim, index, src)
    if not include_self:  # the places written start from the reduction's identity
        identity = {"sum": 0, "mean": 0, "prod": 1}.get(op)
        if identity is None:
            identity = _lowest(self.dtype) if op == "amax" else _highest(self.dtype)
        out[key] = identity
    if op in _REDUCE_UFUNCS:
        _REDUCE_UFUNCS[op].at(out, key, src)
    else:
        # NaN wins, as PyTorch's max/min reductions propagate it
        (np.maximum if op == "amax" else np.minimum).at(out, key, src)
    if op == "mean":
        counts = np.full(out.shape, 1 if include_self else 0, np.int64)
        np.add.at(counts, key, 1)
        counts[counts == 0] = 1
        if out.dtype.kind in "iu":
            out = np.floor_divide(out, counts.astype(out.dtype))
        else:
            out = (out / counts).astype(out.dtype)
    return out.reshape(self.shape)


# ---- index_select, index_add, index_copy, index_fill ------------------------------------------


def _along_dim(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def index_select(self, dim: int, index):
    """The slices of ``self`` along ``dim`` that ``index`` (a vector or a scalar) names."""
    if index.dtype not in _INT32_OR_64:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = wrap_dim(dim, self.ndim)
    flat = index.reshape(-1)
    if self.ndim == 0:
        if flat.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {flat.size} value(s)"
            )
        if flat[0] != 0:
            raise IndexError("index out of range in self")
        return self.copy()
    if _first_out_of_range(flat, self.shape[dim]) is not None:
        raise IndexError("index out of range in self")
    return np.take(self, flat.astype(np.intp), axis=dim)


def _source_sizes(source) -> tuple:
    return source.shape if source.ndim else (1,)


def _index_func_checks(name: str, self, dim: int, index, source) -> int:
    """index_add's and index_reduce's checks of their arguments, in PyTorch's order and
    words (``name``: the op whose words they are); the wrapped dim."""
    dim = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with "
            f"type: {dtypes.scalar_type_name(index.dtype)} and size: {shape_text(index.shape)}"
        )
    if index.dtype not in _INT32_OR_64:
        raise RuntimeError(
            f"{name}(): Expected dtype int32/int64 for index but got: "
            f"{dtypes.scalar_type_name(index.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"{name}(): self ({dtypes.scalar_type_name(self.dtype)}) and source "
            f"({dtypes.scalar_type_name(source.dtype)}) must have the same scalar type"
        )
    source_sizes = _source_sizes(source)
    if dim >= len(source_sizes) or index.size != source_sizes[dim]:
        along = source_sizes[dim] if dim < len(source_sizes) else 1
        raise RuntimeError(
            f"{name}(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim): ({along}), for dim: {dim}"
        )
    self_sizes = _sizes(self)
    if (
        (source.ndim == 0 and self.ndim != 0)
        or len(self_sizes) != len(source_sizes)
        or any(a != b for d, (a, b) in enumerate(zip(self_sizes, source_sizes)) if d != dim)
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {shape_text(self.shape)} source.shape = "
            f"{shape_text(source.shape)}"
        )
    return dim


def index_add(self, dim: int, index, source, alpha=1):
    """``self`` with ``alpha * source[i]`` added into slice ``index[i]`` along ``dim``."""
    dim = _index_func_checks("index_add_", self, dim, index, source)
    self_sizes, source_sizes = _sizes(self), _source_sizes(source)
    flat = index.reshape(-1)
    _check_bounds(flat, dim, self_sizes[dim])
    out = self.reshape(self_sizes).copy()
    source = source.reshape(source_sizes)
    if self.dtype != _BOOL and not (alpha.__class__ is int and alpha == 1):
        check_fits(alpha, self.dtype)
        source = source * _cast_number(alpha, self.dtype)
    np.add.at(out, _along_dim(dim, flat.astype(np.intp)), source)
    return out.reshape(self.shape)


_INDEX_REDUCE_IDENTITY = {"prod": 1, "mean": 0}
_index_reduce_warned = []


def index_reduce(self, dim: int, index, source, reduce: str, include_self: bool = True):
    """``self`` with slice ``index[i]`` along ``dim`` reduced (prod, mean, amax, amin) with
    ``source``'s slice ``i``, and with its own value unless ``include_self`` is False; slices
    no index names keep their values. Integer means floor; NaN wins amax and amin."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    dim = _index_func_checks("index_reduce_", self, dim, index, source)
    self_sizes, source_sizes = _sizes(self), _source_sizes(source)
    flat = index.reshape(-1)
    if _first_out_of_range(flat, self_sizes[dim]) is not None:
        raise IndexError("index out of range in self")
    if not _index_reduce_warned:  # once per process, as PyTorch's TORCH_WARN_ONCE
        _index_reduce_warned.append(True)
        warn_user("index_reduce() is in beta and the API may change at any time.")
    if self.dtype == _BOOL:
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    out = self.reshape(self_sizes).copy()
    key = _along_dim(dim, flat.astype(np.intp))
    source = source.reshape(source_sizes)
    if not include_self:  # the slices written start from the reduction's identity
        identity = _INDEX_REDUCE_IDENTITY.get(reduce)
        if identity is None:
            identity = _lowest(self.dtype) if reduce == "amax" else _highest(self.dtype)
        out[key] = identity
    if reduce == "prod":
        np.multiply.at(out, key, source)
    elif reduce == "mean":
        np.add.at(out, key, source)
        counts = np.full(self_sizes[dim], 1 if include_self else 0, np.int64)
        np.add.at(counts, flat, 1)
        counts[counts == 0] = 1
        counts = counts.reshape((-1,) + (1,) * (len(self_sizes) - dim - 1))
        if out.dtype.kind in "iu":
            out = np.floor_divide(out, counts.astype(out.dtype))
        else:
            out = (out / counts).astype(out.dtype)
    else:
        # NaN wins, as PyTorch's max/min reductions propagate it
        (np.maximum if reduce == "amax" else np.minimum).at(out, key, source)
    return out.reshape(self.shape)


def index_copy(self, dim: int, index, source):
    """``self`` with slice ``index[i]`` along ``dim`` replaced by ``source``'s slice ``i``
    (the last one wins where indices repeat)."""
    dim = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.ndim == 0 and index.size != 1:
        raise IndexError(
            f"index_copy_(): When source is scalar, index should have one element (got {index.size})"
        )
    if self.ndim and source.ndim and self.ndim != source.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.ndim}), destination dimensionality "
            f"({self.ndim})"
        )
    if index.dtype != _INT64:
        raise RuntimeError(
            "index_copy_(): Expected a long tensor for index, but got "
            f"{dtypes.scalar_type_name(index.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{dtypes.scalar_type_name(self.dtype)} and (source) "
            f"{dtypes.scalar_type_name(source.dtype)}"
        )
    self_slice = self.shape[:dim] + self.shape[dim + 1 :]
    source_slice = source.shape[:dim] + source.shape[dim + 1 :]
    if self.ndim and source.ndim and self_slice != source_slice:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, self_slice))} at dimension {dim} and source slice "
            f"shape: {' '.join(map(str, source_slice))} at dimension 0."
        )
    source_along = source.shape[dim] if source.ndim > dim else 1
    if source.ndim and index.size != source_along:
        raise IndexError(
            f"index_copy_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim) ({source_along})"
        )
    flat = index.reshape(-1)
    _check_bounds(flat, dim, _sizes(self)[dim], "index_copy_(): ", IndexError)
    out = self.reshape(_sizes(self)).copy()
    values = source.reshape(_sizes(out)[:dim] + (flat.size,) + _sizes(out)[dim + 1 :])
    out[_along_dim(dim, flat)] = values
    return out.reshape(self.shape)


def index_fill(self, dim: int, index, value):
    """``self`` with slice ``index[i]`` along ``dim`` set to ``value`` (a number or a 0-dim
    array); negative indices count from the end."""
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = value.item()
    dim = wrap_dim(dim, self.ndim)
    if index.dtype != _INT64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    check_fits(value, self.dtype)
    size = _sizes(self)[dim]
    flat = index.reshape(-1)
    bad = _first_out_of_range(flat, size, allow_negative=True)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    out = self.reshape(_sizes(self)).copy()
    out[_along_dim(dim, flat)] = _cast_number(value, self.dtype)
    return out.reshape(self.shape)


def unique(self, sorted: bool = True, return_inverse: bool = False):
    """_unique: the distinct values (in ascending order, also for ``sorted=False``, whose
    order PyTorch leaves unspecified) and, when asked, each element's place among them."""
    values, inverse = np.unique(self, return_inverse=True)
    if not return_inverse:
        return values, np.empty((0,), np.int64)
    return values, inverse.reshape(self.shape).astype(np.int64)


def remainder(self, other):
    """remainder.Scalar: the remainder with the divisor's sign (Python's %), as PyTorch."""
    if self.dtype.kind in "iub" and other == 0:
        raise RuntimeError("ZeroDivisionError")
    return np.remainder(self, other)
