"""CompositeImplicitAutograd ops of the cumulative family: diff (narrowed differences, or
logical_xor for bool, after prepend/append are concatenated), as PyTorch composes it, so its
nodes are SubBackward0 over SliceBackward0 (CatBackward0 with prepend/append)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .cpu_support import write_out
from .generated import ops as aten
from .numpy_kernels import wrap_dim

__all__ = ["diff", "diff_out"]


def _check_same_dtype(out, self) -> None:
    if out.dtype is not self.dtype:
        raise RuntimeError(
            f"expected scalar_type {dtypes.scalar_type_name(self._data.dtype)} but found "
            f"{dtypes.scalar_type_name(out._data.dtype)}"
        )


def _diff_check_compatible_shape(self, other, dim: int) -> None:
    if other is None:
        return
    if other.dim() != self.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    wrapped = wrap_dim(dim, self.dim())
    for i in range(other.dim()):
        if i != wrapped and other.shape[i] != self.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = {self.shape[i]}, "
                f"but got tensor.size({i}) = {other.shape[i]}"
            )


def _diff_check(self, n: int, dim: int, prepend, append) -> None:
    if self.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    _diff_check_compatible_shape(self, prepend, dim)
    _diff_check_compatible_shape(self, append, dim)
    wrap_dim(dim, self.dim())


def _with_ends(self, prepend, append, dim: int):
    if prepend is None and append is None:
        return self
    parts = [t for t in (prepend, self, append) if t is not None]
    return aten.cat(parts, dim)


def _difference(a, dim: int, length: int):
    # PyTorch evaluates the right operand's narrow first: a dispatch mode sees it so
    later = aten.narrow(a, dim, 0, length)
    return later, aten.narrow(a, dim, 1, length)


def _diff_steps(self, n: int, dim: int):
    """``self`` differenced ``n`` times along ``dim`` (n at most the dim's size)."""
    length = self.shape[wrap_dim(dim, self.dim())] - 1
    result = self
    is_bool = self.dtype is dtypes.bool_
    for _ in range(n):  # n is the order of the difference, a small count
        earlier, later = _difference(result, dim, length)
        result = aten.logical_xor(later, earlier) if is_bool else aten.sub_Tensor(later, earlier)
        length -= 1
    return result


def diff(self, n: int, dim: int, prepend, append):
    _diff_check(self, n, dim, prepend, append)
    if n == 0:
        return aten.copy_(aten.zeros_like(self), self)
    a = _with_ends(self, prepend, append, dim)
    return _diff_steps(a, min(n, a.shape[wrap_dim(dim, a.dim())]), dim)


def diff_out(self, n: int, dim: int, prepend, append, out):
    _diff_check(self, n, dim, prepend, append)
    if n == 0:
        _check_same_dtype(out, self)
        if out.shape != self.shape:  # resized (with PyTorch's warning) before the copy
            write_out(out, np.empty(self.shape, out._data.dtype))
        return aten.copy_(out, self)
    a = _with_ends(self, prepend, append, dim)
    n = min(n, a.shape[wrap_dim(dim, a.dim())])
    length = a.shape[wrap_dim(dim, a.dim())] - n
    previous = _diff_steps(a, n - 1, dim) if n > 1 else a
    earlier, later = _difference(previous, dim, length)
    if a.dtype is dtypes.bool_:
        return aten.logical_xor_out(later, earlier, out=out)
    return aten.sub_out(later, earlier, out=out)
