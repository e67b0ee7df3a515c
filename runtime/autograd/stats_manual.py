"""Formula helpers of the statistical reductions (prod, nansum, var, std, var_mean,
std_mean), re-exported by functions_manual.

The rules are PyTorch's FunctionsManual ones, written with opgrad ops so that each is
differentiable itself. One difference in how, not in what: PyTorch's zero-safe product
gradient multiplies an exclusive cumprod from each side, and opgrad has no cumprod; here
the product of the other elements of a slice is built from the product of its nonzero
elements and its zeros (see ``_prod_safe_zeros_backward``), which gives torch's values and
torch's first derivatives of them (the second derivative of prod).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from ..generated import ops as aten
from ..numpy_kernels import wrap_dim
from .grad_mode import is_grad_enabled

__all__ = [
    "nansum_backward",
    "nansum_jvp",
    "prod_backward",
    "prod_jvp",
    "std_backward",
    "std_jvp",
    "std_mean_backward",
    "var_backward",
    "var_jvp",
    "var_mean_backward",
]


# ---- prod ------------------------------------------------------------------------------


def _has_zero(t) -> bool:
    # a data-dependent branch, as PyTorch's (it reads (input == 0).nonzero())
    return bool((t._data == 0).any())


def _prod_safe_zeros_backward(grad, input, dim: int):
    """``grad`` (keepdim-shaped along ``dim``) times the product of the other elements of
    each slice along ``dim``, safe where the input has zeros.

    With P the product of a slice's nonzero elements and Z the sum of its zero elements
    (0, but with a derivative of 1 towards each zero), the product of the others is
    P / x at a nonzero x of a slice without zeros, P / x * Z with one zero, and 0 with
    more; at a zero it is P with one zero in the slice, P * (Z - x) with two, and 0 with
    more: torch's values, and exact first derivatives."""
    if input.numel() == 0:
        return aten.expand_as(grad, input)
    if input.shape[dim] == 1:
        return grad
    zero = aten.eq_Scalar(input, 0)
    count = aten.sum_dim_IntList(zero, [dim], True)
    nonzero = aten.masked_fill_Scalar(input, zero, 1)
    product = aten.prod_dim_int(nonzero, dim, True)
    zeros_sum = aten.sum_dim_IntList(aten.where_ScalarOther(zero, input, 0.0), [dim], True)
    no_zero, one_zero = aten.eq_Scalar(count, 0), aten.eq_Scalar(count, 1)
    two_zeros = aten.eq_Scalar(count, 2)
    at_nonzero = aten.mul_Tensor(
        aten.div_Tensor(product, nonzero),
        aten.add_Tensor(no_zero, aten.mul_Tensor(one_zero, zeros_sum)),
    )
    at_zero = aten.mul_Tensor(
        product,
        aten.add_Tensor(one_zero, aten.mul_Tensor(two_zeros, aten.sub_Tensor(zeros_sum, input))),
    )
    return aten.mul_Tensor(grad, aten.where_self(zero, at_zero, at_nonzero))


def prod_backward(grad, input, result, dim: Optional[int] = None, keepdim: bool = False):
    """The gradient of ``prod(input)`` (dim None) or ``prod(input, dim, keepdim)``."""
    if input.dim() == 0:
        return grad
    if dim is None:
        if not _has_zero(input):
            return aten.mul_Tensor(grad, aten.div_Tensor(result, input))
        if not is_grad_enabled() and int((input._data == 0).sum()) > 1:
            return aten.zeros_like(input)
        flat = aten.reshape(input, [-1])
        return aten.view(_prod_safe_zeros_backward(grad, flat, 0), list(input.shape))
    d = wrap_dim(dim, input.dim())
    if not keepdim:
        grad, result = aten.unsqueeze(grad, d), aten.unsqueeze(result, d)
    if not _has_zero(input):
        return aten.mul_Tensor(grad, aten.div_Tensor(result, input))
    return _prod_safe_zeros_backward(grad, input, d)


def prod_jvp(self_p, self_t, result, dim: Optional[int] = None, keepdim: bool = False):
    """prod's tangent: the gradient for a gradient of ones, times the tangent, summed."""
    ones = aten.expand_as(aten.ones_like(result), result)
    scale = prod_backward(ones, self_p.to(result.dtype), result, dim, keepdim)
    picked = aten.mul_Tensor(scale, self_t)
    if dim is None:
        return aten.sum(picked)
    return aten.sum_dim_IntList(picked, [dim], keepdim)


# ---- nansum ----------------------------------------------------------------------------


def nansum_backward(grad, self, dim, keepdim: bool):
    from .functions_manual import sum_backward

    # self == self is False exactly at NaN
    return aten.mul_Tensor(
        sum_backward(grad, list(self.shape), dim, keepdim), aten.eq_Tensor(self, self)
    )


def nansum_jvp(self_p, self_t, dim, keepdim: bool, dtype):
    kept = aten.where_ScalarSelf(aten.isnan(self_p), 0, self_t)
    return aten.sum_dim_IntList(kept, dim, keepdim, dtype=dtype)


# ---- var and std -----------------------------------------------------------------------


def _safe_size(sizes: Sequence[int], dim: Sequence[int]) -> int:
    if len(sizes) == 0:
        return 1
    return math.prod(sizes[wrap_dim(d, len(sizes))] for d in dim)


def var_backward(grad, self, dim, correction, keepdim: bool):
    """The gradient of ``var(self, dim, correction=correction, keepdim)``."""
    from .functions_manual import _unsqueeze_multiple

    c = 1.0 if correction is None else float(correction)
    if self.dim() == 0 or dim is None:
        dof = self.numel() - c
        if dof <= 0:
            # 2 / 0 is infinite: NaN where self is its mean (inf * 0), inf elsewhere
            at_mean = aten.eq_Tensor(self, aten.mean(self))
            return aten.mul_Tensor(grad, aten.where_Scalar(at_mean, math.nan, math.inf))
        centred = aten.sub_Tensor(self, aten.mean(self))
        return aten.mul_Tensor(aten.mul_Scalar(grad, 2.0 / dof), centred)
    if not keepdim and self.dim() > 1:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
    dof = _safe_size(list(self.shape), dim) - c
    centred = aten.sub_Tensor(self, aten.mean_dim(self, dim, True))
    return aten.mul_Tensor(aten.mul_Scalar(grad, 2.0 / dof if dof else math.inf), centred)


def var_jvp(self_p, self_t, dim, correction, keepdim: bool):
    # pointwise (the variance's gradient for the tangent) + sum
    pointwise = var_backward(self_t, self_p, dim, correction, True)
    return aten.sum_dim_IntList(pointwise, dim if dim is not None else [], keepdim)


def std_backward(result, grad, self, dim, correction, keepdim: bool):
    grad_var = aten.div_Tensor(grad, aten.mul_Scalar(result, 2))
    grad_var = aten.masked_fill_Scalar(grad_var, aten.eq_Scalar(result, 0), 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def std_jvp(self_p, self_t, result, dim, correction, keepdim: bool):
    scaled = aten.div_Tensor(
        var_jvp(self_p, self_t, dim, correction, keepdim), aten.mul_Scalar(result, 2.0)
    )
    return aten.masked_fill_Scalar(scaled, aten.eq_Scalar(result, 0), 0)


def _with_mean_gradient(gself, gmean, self, dim, keepdim: bool):
    if gmean is None:
        return gself
    from .functions_manual import mean_backward

    dims = dim if dim is not None else []
    aux = mean_backward(gmean, list(self.shape), dims, self.numel(), keepdim)
    return aux if gself is None else aten.add_Tensor(gself, aux)


def var_mean_backward(gvar, gmean, self, dim, correction, keepdim: bool):
    gself = None if gvar is None else var_backward(gvar, self, dim, correction, keepdim)
    return _with_mean_gradient(gself, gmean, self, dim, keepdim)


def std_mean_backward(gstd, gmean, self, std, dim, correction, keepdim: bool):
    gself = None if gstd is None else std_backward(std, gstd, self, dim, correction, keepdim)
    return _with_mean_gradient(gself, gmean, self, dim, keepdim)
