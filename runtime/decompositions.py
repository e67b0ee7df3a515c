"""CompositeImplicitAutograd ops: implemented with other ops, no node of their own.

derivatives.yaml names these functions in ``composite:`` entries. Autograd
records the ops they call, so ``matmul`` of two matrices ends in MmBackward0.
"""

from __future__ import annotations

from typing import Sequence

from . import numpy_kernels as k
from .generated import ops as aten


def reshape(self, shape: Sequence[int]):
    """A view when the memory layout allows it, else a copy (clone + _unsafe_view)."""
    if k.can_view(self._data, shape):
        return aten.view(self, shape)
    return aten._unsafe_view(aten.clone(self), shape)


def flatten(self, start_dim: int = 0, end_dim: int = -1):
    ndim = self._data.ndim
    if ndim == 0:
        return aten.reshape(self, (1,))
    start = k._wrap_dim(start_dim, ndim)
    end = k._wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = self._data.shape
    inner = 1
    for s in shape[start : end + 1]:
        inner *= s
    return aten.reshape(self, shape[:start] + (inner,) + shape[end + 1 :])


def expand_as(self, other):
    return aten.expand(self, other._data.shape)


def narrow(self, dim: int, start: int, length: int):
    size = self._data.shape[k._wrap_dim(dim, self._data.ndim)]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return aten.slice_Tensor(self, dim, start, start + length, 1)


def square(self):
    return aten.pow_Tensor_Scalar(self, 2)


def matmul(self, other):
    """PyTorch's matmul: dot, mv, mm, folding into mm, or batched bmm."""
    dim1, dim2 = self._data.ndim, other._data.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D"
        )
    if dim1 == 1 and dim2 == 1:
        return aten.dot(self, other)
    if dim1 == 2 and dim2 == 1:
        return aten.mv(self, other)
    if dim1 == 1 and dim2 == 2:
        return aten.squeeze__dim(aten.mm(aten.unsqueeze(self, 0), other), 0)
    if dim1 == 2 and dim2 == 2:
        return aten.mm(self, other)
    if dim1 >= 3 and dim2 <= 2:
        # Fold the batch dims of self into its rows: one mm, then restore them.
        shape = self._data.shape
        folded = aten.reshape(self, (-1, shape[-1]))
        if dim2 == 1:
            out = aten.mv(folded, other)
            return aten._unsafe_view(out, shape[:-1])
        out = aten.mm(folded, other)
        return aten._unsafe_view(out, shape[:-1] + (other._data.shape[-1],))
    return _batched_matmul(self, other)


def _batched_matmul(self, other):
    import numpy as np

    dim1, dim2 = self._data.ndim, other._data.ndim
    a = aten.unsqueeze(self, 0) if dim1 == 1 else self
    b = aten.unsqueeze(other, -1) if dim2 == 1 else other
    n, m1 = a._data.shape[-2:]
    m2, p = b._data.shape[-2:]
    if m1 != m2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{int(np.prod(a._data.shape[:-2]))}, {m1}] but got: "
            f"[{int(np.prod(b._data.shape[:-2]))}, {m2}]."
        )
    batch = tuple(np.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2]))
    count = int(np.prod(batch)) if batch else 1
    a3 = aten.reshape(aten.expand(a, batch + (n, m1)), (count, n, m1))
    b3 = aten.reshape(aten.expand(b, batch + (m2, p)), (count, m2, p))
    out = aten.view(aten.bmm(a3, b3), batch + (n, p))
    if dim1 == 1:
        out = aten.squeeze_dim(out, -2)
    if dim2 == 1:
        out = aten.squeeze_dim(out, -1)
    return out
