"""linalg_svd, linalg_svdvals and svd as PyTorch composes them over _linalg_svd (the op with
the kernel and the LinalgSvdBackward0 node), so a dispatch mode sees torch's calls."""

from __future__ import annotations

from ._tls import state as _tls
from .dispatch_keys import PYTHON
from .generated import ops as aten

__all__ = ["linalg_svd", "linalg_svdvals", "svd"]


def _may_need_derivatives(A) -> bool:
    """PyTorch's _may_require_fw_or_bw_grad: svdvals then computes U and Vh too, which its
    derivatives need (and which a dispatch mode or a subclass may be watching for)."""
    return (
        (_tls.grad_enabled and A.requires_grad)
        or _tls.fw_active
        or bool(_tls.mode_stack)
        or bool(A._keys & PYTHON)
    )


def linalg_svd(A, full_matrices=True, driver=None):
    return aten._linalg_svd(A, full_matrices, True, driver=driver)


def linalg_svdvals(A, driver=None):
    return aten._linalg_svd(A, False, _may_need_derivatives(A), driver=driver)[1]


def svd(self, some=True, compute_uv=True):
    """The old torch.svd: V rather than Vh, and with compute_uv=False zeros for U and V (of
    the full shapes unless ``some``)."""
    if self.dim() < 2:
        raise RuntimeError(
            "linalg.svd: input should have at least 2 dimensions, but has "
            f"{self.dim()} dimensions instead"
        )
    if compute_uv:
        U, S, Vh = aten._linalg_svd(self, not some, True)
    else:
        S = linalg_svdvals(self)
        *batch, m, n = self.shape
        U = aten.zeros([*batch, m, m], dtype=self.dtype)
        Vh = aten.zeros([*batch, n, n], dtype=self.dtype)
    return U, S, aten.transpose_int(Vh, -2, -1)
