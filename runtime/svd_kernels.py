"""The CPU kernel of the singular value decomposition (``_linalg_svd``), on numpy's LAPACK.

As PyTorch's: U and Vh come in LAPACK's column-major layout (each matrix of a batch
Fortran-ordered), S is row-major and real; with ``compute_uv=False`` U and Vh are empty;
``full_matrices`` pads an empty side with the identity. Singular vectors are unique only up
to sign, and the sign LAPACK picks depends on the LAPACK build: opgrad's U and Vh may
differ from torch's by the sign of matching columns of U and rows of Vh.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes

__all__ = ["LinAlgError", "linalg_svd"]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (PyTorch's torch.linalg.LinAlgError)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"  # PyTorch's class name


def _column_major(a: np.ndarray) -> np.ndarray:
    """``a`` with each matrix laid out column by column (strides (1, rows) per matrix)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


def _svd_checks(A: np.ndarray, driver: Optional[str]) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    kind = A.dtype.kind
    if kind not in "fcV":
        raise RuntimeError(
            "linalg.svd: Expected a floating point or complex tensor as input. Got "
            f"{dtypes.scalar_type_name(A.dtype)}"
        )
    if kind == "V" or A.dtype.itemsize == 2:
        raise NotImplementedError(
            f"\"linalg_svd_cpu\" not implemented for '{dtypes.scalar_type_name(A.dtype)}'"
        )
    if kind == "c":
        raise NotImplementedError("opgrad: linalg.svd of complex matrices is not supported yet")
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
            "with cuSOLVER backend."
        )


def linalg_svd(A: np.ndarray, full_matrices: bool, compute_uv: bool, driver: Optional[str]):
    """(U, S, Vh) with ``A = U @ diag(S) @ Vh`` and S in descending order."""
    _svd_checks(A, driver)
    *batch, m, n = A.shape
    k = min(m, n)
    if not np.isfinite(A).all():
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix contained "
            "non-finite values."
        )
    if A.size == 0:
        S = np.zeros((*batch, k), A.dtype)
        if not compute_uv:
            return np.empty(0, A.dtype), S, np.empty(0, A.dtype)
        rows, cols = (m, n) if full_matrices else (k, k)
        U = np.broadcast_to(np.eye(m, rows, dtype=A.dtype), (*batch, m, rows))
        Vh = np.broadcast_to(np.eye(cols, n, dtype=A.dtype), (*batch, cols, n))
        return _column_major(U), S, _column_major(Vh)
    if not compute_uv:
        S = np.linalg.svd(A, compute_uv=False)
        return np.empty(0, A.dtype), np.ascontiguousarray(S), np.empty(0, A.dtype)
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return _column_major(U), np.ascontiguousarray(S), _column_major(Vh)
