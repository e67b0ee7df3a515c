"""Small helpers every kernel module shares.

It imports nothing from the kernel modules, so ``numpy_kernels`` and the modules it
re-exports (losses, norms, convolutions, ...) can all use it without an import cycle.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .memory_formats import contiguous_format, suggest_memory_format

_HALF = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def shape_text(shape) -> str:
    """``[2, 3]``: how PyTorch's messages print a size."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def opmath(a: np.ndarray) -> np.ndarray:
    """``a`` in its compute type: float16 is computed in float32 and rounded once at the
    end, as PyTorch's CPU kernels do; every other dtype computes in itself."""
    return a.astype(_F32) if a.dtype is _HALF else a


def opmath_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype ``opmath`` computes ``dtype`` in."""
    return _F32 if dtype == _HALF else dtype


def fused_multiply_add(a, b, c, ct: np.dtype) -> np.ndarray:
    """``a * b + c`` rounded once to ``ct`` (a fused multiply-add, as PyTorch's CPU build
    contracts such expressions): float32 through float64, float64 through the platform's
    long double."""
    wide = np.float64 if ct == _F32 else np.longdouble
    return (np.asarray(a, wide) * wide(b) + wide(c)).astype(ct)


def refuse_non_float(a: np.ndarray, kernel: str) -> None:
    """PyTorch's dispatch-macro refusal for a kernel defined on floating types only."""
    if a.dtype.kind != "f":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )


def per_channel(v: np.ndarray, ndim: int) -> np.ndarray:
    """A per-channel vector shaped to broadcast over dim 1 of an ``ndim``-d ``(N, C, ...)``
    array."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def in_layout_of(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``result`` (row-major, ``like``'s rank) laid out channels-last when ``like``'s
    strides suggest that format, as PyTorch allocates the outputs of the ops that keep
    their input's suggested memory format (max pooling, upsampling)."""
    nd = like.ndim
    if nd not in (4, 5):
        return result
    strides = tuple(st // like.itemsize for st in like.strides)
    if suggest_memory_format(like.shape, strides) is contiguous_format:
        return result
    order = (0,) + tuple(range(2, nd)) + (1,)
    back = (0, nd - 1) + tuple(range(1, nd - 1))
    # a fresh buffer, not ascontiguousarray: numpy keeps any strides of size-1 dims when
    # the transpose already counts as contiguous, where PyTorch's layout fixes them
    permuted = result.transpose(order)
    laid_out = np.empty(permuted.shape, result.dtype)
    laid_out[...] = permuted
    return laid_out.transpose(back)
