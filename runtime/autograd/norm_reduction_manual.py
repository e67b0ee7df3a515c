"""Formula helpers of renorm (PyTorch's renorm_backward and renorm_jvp), re-exported by
functions_manual. Written with opgrad ops so that each is differentiable itself. As in
PyTorch, the backward takes the slice norms in the CPU accumulate type (double for float)
and the tangent in the forward's (float for half, else the input's)."""

from __future__ import annotations

from .. import dtypes
from ..generated import ops as aten
from ..numpy_kernels import wrap_dim
from .norm_manual import linalg_vector_norm_backward, linalg_vector_norm_jvp

__all__ = ["dist_other_backward", "renorm_backward", "renorm_jvp"]


def dist_other_backward(grad, difference, p, result):
    """``-norm_backward(grad, self - other, p, result)``: for p 0 the gradient is undefined
    and PyTorch's negation of it fails, in its words."""
    gradient = linalg_vector_norm_backward(grad, difference, p, result, None, False)
    if gradient is None:
        raise RuntimeError(
            "Expected a proper Tensor but got None (or an undefined Tensor in C++) for "
            "argument #0 'self'"
        )
    return -gradient


def _reduced_dims(self, dim: int) -> list:
    ndim = self.dim()
    dim = wrap_dim(dim, ndim)
    return [d for d in range(ndim) if d != dim]


def _slice_norms(self, p, reduced: list, accumulate):
    """The p-norm of each slice, kept as ones over the reduced dims, in ``accumulate``."""
    if accumulate is self.dtype:
        return aten.linalg_vector_norm(self, p, reduced, True)
    return aten.linalg_vector_norm(self, p, reduced, True, dtype=accumulate)


def _cpu_accumulate(dtype):
    """PyTorch's accumulate type on the CPU: double for float, float for half."""
    return dtypes.float64 if dtype is dtypes.float32 else _low_precision_widened(dtype)


def _low_precision_widened(dtype):
    return dtypes.float32 if dtype.is_floating_point and dtype.itemsize < 4 else dtype


def renorm_backward(grad, self, p, dim: int, maxnorm):
    reduced = _reduced_dims(self, dim)
    norm = _slice_norms(self, p, reduced, _cpu_accumulate(self.dtype))
    grad_output = aten.sum_dim_IntList(self * grad, reduced, True, dtype=norm.dtype)
    nb = linalg_vector_norm_backward(grad_output, self, p, norm, reduced, True)
    invnorm = (norm + 1e-7).reciprocal()
    grad_norm = float(maxnorm) * invnorm * (grad - invnorm * nb)
    return aten.where_self(norm > float(maxnorm), grad_norm.to(grad.dtype), grad)


def renorm_jvp(self_p, self_t, p, dim: int, maxnorm):
    reduced = _reduced_dims(self_p, dim)
    # as the forward: half in float, float and double as they are
    norm = _slice_norms(self_p, p, reduced, _low_precision_widened(self_p.dtype))
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * float(maxnorm)
    tangent = linalg_vector_norm_jvp(self_p, self_t, p, norm, reduced, True)
    return aten.where_self(
        norm > float(maxnorm), factor * (self_t - self_p * invnorm * tangent), self_t
    )
