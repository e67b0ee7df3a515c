"""Kernels of dist and renorm: p-norms of a difference and of slices, on numpy arrays.
The norms are linalg_vector_norm's kernel (computed in double, rounded to the result type)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .norm_kernels import linalg_vector_norm
from .numpy_kernels import broadcast_error, wrap_dim

__all__ = ["dist", "renorm"]


def dist(self, other, p):
    """``norm(self - other, p)`` over every element, the inputs already of one type."""
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{dtypes.scalar_type_name(self.dtype)} instead."
        )
    try:
        difference = np.subtract(self, other)
    except ValueError:
        raise RuntimeError(broadcast_error(self.shape, other.shape)) from None
    return linalg_vector_norm(difference, p, None, False, None)


def renorm(self, p, dim: int, maxnorm):
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled to norm ``maxnorm``
    (by ``maxnorm / (norm + 1e-7)``); half precision scales in float, as PyTorch."""
    if float(p) <= 0.0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if float(maxnorm) < 0.0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if self.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    dim = wrap_dim(dim, self.ndim)
    reduced = [d for d in range(self.ndim) if d != dim]
    low_precision = self.dtype.kind == "f" and self.dtype.itemsize < 4
    norm = linalg_vector_norm(self, p, reduced, True, dtypes.float32 if low_precision else None)
    maxnorm = norm.dtype.type(float(maxnorm))
    factor = np.where(norm > maxnorm, maxnorm / (norm + norm.dtype.type(1e-7)), 1).astype(
        norm.dtype
    )
    return (self * factor).astype(self.dtype)
