"""CPU kernels of the cumulative ops: cumsum, cumprod, cummax, cummin, logcumsumexp, trace
(their backward formulas reverse with flip, a shape op).

As in PyTorch's CPU kernels, a running sum or product accumulates in a wider type and rounds
each output once: float32 in float64, float16 and bfloat16 in float32, complex64 in
complex128; integral and bool inputs give int64 unless ``dtype=`` names the result type (the
input is cast to it first). cummax/cummin return, among tied extrema, the latest index (each
new element equal to the running extremum takes over), and a NaN, once met, stays the value
with the index of the latest NaN.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from . import dtypes
from .numpy_kernels import cast, wrap_dim

__all__ = [
    "cumprod",
    "cumsum",
    "cumulative_extremum",
    "logcumsumexp",
    "trace",
]

_INT64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_C128 = np.dtype(np.complex128)


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The type a running sum or product of ``dtype`` accumulates in (PyTorch's CPU
    acc_type)."""
    if dtype.kind in "fV":  # bfloat16 is kind "V"
        return _F64 if dtype.itemsize >= 4 else _F32
    if dtype.kind == "c":
        return _C128
    return _INT64


def _result_type(a: np.ndarray, dtype, target) -> np.dtype:
    """``dtype``, else the written tensor's (in-place and out=; ``dtype`` must match it),
    else a's own (int64 for integral and bool inputs)."""
    if target is None:
        if dtype is not None:
            return dtype.np
        return a.dtype if a.dtype.kind in "fcV" else _INT64
    written = target._data.dtype
    if dtype is not None and dtype.np != written:
        if target._data is a:  # in place
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {dtypes.cpp_type_name(a.dtype)} and "
                f"output tensor dtype {dtypes.cpp_type_name(dtype.np)} should match"
            )
        raise RuntimeError(
            f"Expected out tensor to have dtype {dtypes.cpp_type_name(dtype.np)}, but got "
            f"{dtypes.cpp_type_name(written)} instead"
        )
    return written


def _scan(ufunc, a: np.ndarray, dim: int, dtype, target) -> np.ndarray:
    """``ufunc.accumulate`` of ``a`` along ``dim``, in ``_result_type``."""
    axis = wrap_dim(dim, a.ndim)
    out = _result_type(a, dtype, target)
    x = cast(a, out)
    if a.ndim == 0 or a.size == 0:
        return x.copy() if x is a else x
    if not x.flags.c_contiguous:  # a row-major result, as PyTorch's scans give
        x = np.ascontiguousarray(x)
    acc = _accumulator(out)
    if acc == out:
        return ufunc.accumulate(x, axis=axis, dtype=acc)
    return ufunc.accumulate(x.astype(acc), axis=axis).astype(out)


def cumsum(a: np.ndarray, dim: int, dtype, target=None) -> np.ndarray:
    return _scan(np.add, a, dim, dtype, target)


def cumprod(a: np.ndarray, dim: int, dtype, target=None) -> np.ndarray:
    return _scan(np.multiply, a, dim, dtype, target)


def logcumsumexp(a: np.ndarray, dim: int) -> np.ndarray:
    """``log(cumsum(exp(a)))`` along ``dim``, without overflow: numpy's logaddexp
    accumulated in the wider type. Complex inputs shift by each slice's largest real part."""
    if a.dtype.kind not in "fcV":
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )
    axis = wrap_dim(dim, a.ndim)
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    x = a.astype(_accumulator(a.dtype), order="C")  # a row-major result, as PyTorch's
    if a.dtype.kind != "c":
        return np.logaddexp.accumulate(x, axis=axis).astype(a.dtype)
    shift = np.max(x.real, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.log(np.cumsum(np.exp(x - shift), axis=axis)) + shift
    return result.astype(a.dtype)


def cumulative_extremum(
    a: np.ndarray, dim: int, largest: bool, name: str
) -> Tuple[np.ndarray, np.ndarray]:
    """cummax (``largest``) / cummin: (values, int64 indices) along ``dim``."""
    if a.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )
    axis = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return a.copy(), np.zeros((), _INT64)
    if a.size == 0:
        return a.copy(), np.zeros(a.shape, _INT64)
    if not a.flags.c_contiguous:  # row-major results, as PyTorch's
        a = np.ascontiguousarray(a)
    running = (np.maximum if largest else np.minimum).accumulate(a, axis=axis)
    # each element equal to the running extremum (or a NaN) takes the index over
    takes_over = a == running
    if a.dtype.kind not in "biu":  # floating (bfloat16 is kind "V")
        takes_over |= np.isnan(a)
    positions = np.arange(a.shape[axis], dtype=_INT64).reshape((-1,) + (1,) * (a.ndim - 1 - axis))
    indices = np.maximum.accumulate(np.where(takes_over, positions, 0), axis=axis)
    # the values read at the indices keep the element's own sign of zero, as PyTorch's do
    return np.take_along_axis(a, indices, axis), indices


def trace(a: np.ndarray) -> np.ndarray:
    """The sum of the main diagonal of a matrix: int64 for integral inputs."""
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    out = a.dtype if a.dtype.kind in "fc" else _INT64
    diagonal = np.diagonal(a)
    if out.kind == "f" and out.itemsize < 4:
        return np.asarray(np.add.reduce(diagonal, dtype=_F32)).astype(out)
    return np.asarray(np.add.reduce(diagonal, dtype=out))
