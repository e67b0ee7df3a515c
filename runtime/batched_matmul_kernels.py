"""CPU kernel of baddbmm: ``beta * self + alpha * (batch1 @ batch2)`` over a batch.

Checks come in PyTorch's order: self's broadcast to the result, self's dtype against
batch1's, the batches' ranks and sizes (baddbmm_check, before anything is written), then
the kernel's own refusals (bool, batch2's dtype, numbers that do not fit).
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .norm_kernels import _integral_scalar
from .scalar_fit import check_fits

__all__ = ["baddbmm", "baddbmm_check"]

_F32 = np.dtype(np.float32)

#: below this many multiply-adds per matrix, PyTorch's CPU kernel sums each dot product
#: in order, one term after another (larger products go to BLAS, as numpy's matmul does)
_SMALL = 400


def _summed_in_order(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """``b1 @ b2`` with each dot product summed term by term, as PyTorch's small kernel
    does, so the float results agree to the last bit (the loop is over fewer than
    ``_SMALL`` terms)."""
    acc = np.zeros((b1.shape[0], b1.shape[1], b2.shape[2]), dtype=np.result_type(b1, b2))
    for k in range(b1.shape[2]):
        acc += b1[:, :, k, None] * b2[:, None, k, :]
    return acc


def _size(a: np.ndarray, dim: int) -> int:
    """``a.size(dim)`` as PyTorch reads it: a 0-dim tensor has no dim 0."""
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim >= a.ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-a.ndim}, {a.ndim - 1}], "
            f"but got {dim})"
        )
    return a.shape[dim]


def baddbmm_check(self, batch1, batch2) -> None:
    s, b1, b2 = self._data, batch1._data, batch2._data
    from .numpy_kernels import expand  # imported here: numpy_kernels imports this module

    expand(s, (_size(b1, 0), _size(b1, 1), _size(b2, 2)))
    if s.dtype != b1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {dtypes.cpp_type_name(s.dtype)}, "
            f"batch1: {dtypes.cpp_type_name(b1.dtype)}, batch2: {dtypes.cpp_type_name(b2.dtype)}"
        )
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b2.shape[0] != b1.shape[0] or b2.shape[1] != b1.shape[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}]."
        )


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """float16 and bfloat16 multiply and accumulate in float32, rounded once at the end."""
    return _F32 if dtype.kind == "V" or (dtype.kind == "f" and dtype.itemsize == 2) else dtype


def _kernel_scalar(value, dtype: np.dtype):
    """``value`` as the kernel reads it: truncated for integer dtypes, checked against the
    compute type otherwise."""
    if dtype.kind in "iu":
        return _integral_scalar(value, dtype)
    check_fits(value, _compute_dtype(dtype))
    return value


def baddbmm(self, batch1, batch2, beta, alpha):
    """On arrays baddbmm_check has passed; beta 0 ignores self (NaN and inf included)."""
    dtype = batch1.dtype
    if dtype == np.bool_:
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    if batch2.dtype != dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type_name(dtype)} but found "
            f"{dtypes.scalar_type_name(batch2.dtype)}"
        )
    beta, alpha = _kernel_scalar(beta, dtype), _kernel_scalar(alpha, dtype)
    wide = _compute_dtype(dtype)
    b1, b2 = batch1.astype(wide, copy=False), batch2.astype(wide, copy=False)
    if b1.shape[2] * b1.shape[1] * b2.shape[2] < _SMALL:
        product = _summed_in_order(b1, b2)
    else:
        product = np.matmul(b1, b2)
    if alpha != 1:
        product = alpha * product
    if beta != 0:
        base = self.astype(wide, copy=False)
        product = (base if beta == 1 else base * beta) + product
    target = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    return np.broadcast_to(product, target).astype(dtype, copy=True)
