"""Formula helpers of the cumulative ops (cumsum, cumprod, cummax, cummin, logcumsumexp,
trace), re-exported by functions_manual.

The rules are PyTorch's FunctionsManual ones, written with opgrad ops so that each is
differentiable itself; the aten calls are the ones a dispatch mode sees PyTorch make.
cumprod's gradient is exact at zeros: without zeros it is a reversed cumulative sum over the
input, with zeros and no graph to build it takes the masked O(n) path, and when the gradient
is itself differentiated (create_graph) the O(n^2) sum of omitted products, as PyTorch.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import dtypes
from ..generated import ops as aten
from ..numpy_kernels import wrap_dim
from .grad_mode import is_grad_enabled

__all__ = [
    "cummaxmin_backward",
    "cumprod_backward",
    "cumprod_jvp",
    "cumsum_backward",
    "logcumsumexp_backward",
    "logcumsumexp_jvp",
    "trace_backward",
]


def _reversed_cumsum(w, dim: int):
    return aten.flip(aten.cumsum(aten.flip(w, [dim]), dim), [dim])


def cumsum_backward(grad, dim: int):
    """The gradient of ``cumsum(self, dim)``: the sums of ``grad`` from each place to the end."""
    if grad.numel() <= 1 or grad.shape[wrap_dim(dim, grad.dim())] == 1:
        return grad
    return _reversed_cumsum(grad, dim)


# ---- cumprod ---------------------------------------------------------------------------


def cumprod_backward(grad, input, dim: int, output):
    """The gradient of ``output = cumprod(input, dim)``, exact where ``input`` has zeros."""
    if input.numel() <= 1:
        return grad
    dim = wrap_dim(dim, input.dim())
    if input.shape[dim] == 1:
        return grad
    w = aten.mul_Tensor(output, grad)
    is_zero = aten.eq_Scalar(input, 0)
    # a data-dependent branch, as PyTorch's
    if not bool(is_zero._data.any()):
        return aten.div_Tensor(_reversed_cumsum(w, dim), input)
    if not is_grad_enabled():
        return _cumprod_backward_with_zeros(grad, input, dim, output, w, is_zero)
    return _cumprod_backward_differentiable(grad, input, dim)


def _cumprod_backward_with_zeros(grad, input, dim: int, output, w, is_zero):
    """O(n): before a slice's first zero z1 the nonzero rule; at z1 the product of the
    elements before it times the sum of grad times the products after it up to the second
    zero; after z1 nothing."""
    grad_input = aten.zeros(list(input.shape), dtype=grad.dtype)
    zeros_so_far = aten.cumsum(is_zero, dim)
    before_first = aten.eq_Scalar(zeros_so_far, 0)
    masked_w = aten.masked_fill_Scalar(w, aten.bitwise_not(before_first), 0.0)
    grad_input = aten.where_self(
        before_first, aten.div_Tensor(_reversed_cumsum(masked_w, dim), input), grad_input
    )
    from_first = aten.eq_Scalar(zeros_so_far, 1)
    first_zero_index = aten.max_dim(from_first, dim, True)[1]
    first_zero = aten.logical_and_(
        aten.scatter__value(aten.zeros_like(from_first), dim, first_zero_index, 1), from_first
    )
    between = aten.bitwise_and__Tensor(from_first, aten.bitwise_not(first_zero))
    products = aten.cumprod(aten.masked_fill_Scalar(input, aten.bitwise_not(between), 1.0), dim)
    kept_grad = aten.masked_fill_Scalar(grad, aten.ne_Scalar(zeros_so_far, 1), 0.0)
    previous = aten.relu_(aten.sub_Scalar(first_zero_index, 1))
    prefix = aten.masked_fill__Scalar(
        aten.gather(output, dim, previous), aten.eq_Scalar(first_zero_index, 0), 1.0
    )
    at_first = aten.mul_Tensor(
        aten.sum_dim_IntList(aten.mul_Tensor(products, kept_grad), [dim], True), prefix
    )
    return aten.where_self(first_zero, at_first, grad_input)


def _cumprod_backward_differentiable(grad, input, dim: int):
    """O(n^2), differentiable at zeros: the gradient at k sums grad[j] times the product of
    input[:j+1] without input[k], for j >= k."""
    size = input.shape[dim]
    ones_size = list(input.shape)
    ones_size[dim] = 1
    ones = aten.expand(aten.ones([1], dtype=grad.dtype), ones_size)
    slices = []
    for k in range(size):  # one step per position along dim, as PyTorch's formula
        if k == 0:
            omitted = aten.cat([ones, aten.cumprod(aten.slice_Tensor(input, dim, k + 1), dim)], dim)
        elif k == size - 1:
            omitted = aten.prod_dim_int(aten.slice_Tensor(input, dim, 0, k), dim, True)
        else:
            until_k = aten.prod_dim_int(aten.slice_Tensor(input, dim, 0, k), dim, True)
            from_k = aten.cumprod(aten.slice_Tensor(input, dim, k + 1), dim)
            omitted = aten.mul_Tensor(aten.expand(until_k, list(from_k.shape)), from_k)
            omitted = aten.cat([until_k, omitted], dim)
        picked = aten.mul_Tensor(aten.slice_Tensor(grad, dim, k), omitted)
        slices.append(aten.sum_dim_IntList(picked, [dim]))
    return aten.stack(slices, dim)


def cumprod_jvp(self_t, self_p, result, dim: int, dtype=None):
    """cumprod's tangent: result times the running sum of self_t / self_p, and after a
    slice's first zero the cumulative product with that zero's tangent in its place."""
    gradient = aten.mul_Tensor(aten.cumsum(aten.div_Tensor(self_t, self_p), dim), result)
    if self_p.dim() == 0:
        gradient = aten.masked_fill__Tensor(gradient, aten.eq_Scalar(self_p, 0), self_t)
    else:
        zeros = aten.eq_Scalar(self_p, 0)
        first_zero = aten.logical_and(zeros, aten.eq_Scalar(aten.cumsum(zeros, dim), 1))
        after_zero = aten.cumprod(aten.where_self(first_zero, self_t, self_p), dim)
        from_first = aten.cumsum(first_zero, dim).to(dtypes.bool_)
        gradient = aten.where_self(from_first, after_zero, gradient)
    target = dtype if dtype is not None else self_p.dtype
    return gradient.to(target)


# ---- cummax, cummin, logcumsumexp, trace -----------------------------------------------


def cummaxmin_backward(grad, input, indices, dim: int):
    """cummax/cummin: each place's gradient summed into the index it reported."""
    if input.numel() == 0:
        return input
    result = aten.zeros(list(input.shape), dtype=input.dtype)
    return aten.scatter_add(result, dim, indices, grad)


def _reversed_logcumsumexp(x, dim: int):
    return aten.flip(aten.logcumsumexp(aten.flip(x, [dim]), dim), [dim])


def logcumsumexp_backward(grad, self, result, dim: int):
    """The gradient of logcumsumexp, kept in log space: the positive and the negative parts
    of ``grad`` each go through a reversed logcumsumexp."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    lowest = float(np.finfo(grad._data.dtype).min)
    grad_min = aten.scalar_tensor(lowest, dtype=grad.dtype)
    log_abs_grad = aten.log(aten.abs(grad))
    log_positive = aten.where_self(aten.gt_Scalar(grad, 0), log_abs_grad, grad_min)
    log_negative = aten.where_self(aten.lt_Scalar(grad, 0), log_abs_grad, grad_min)
    positive = aten.exp(
        aten.add_Tensor(_reversed_logcumsumexp(aten.sub_Tensor(log_positive, result), dim), self)
    )
    negative = aten.exp(
        aten.add_Tensor(_reversed_logcumsumexp(aten.sub_Tensor(log_negative, result), dim), self)
    )
    return aten.sub_Tensor(positive, negative)


def logcumsumexp_jvp(self_p, self_t, dim: int):
    """logcumsumexp's tangent: the softmax-weighted running sum of the tangents."""
    shifted = aten.exp(aten.sub_Tensor(self_p, aten.max_dim(self_p, dim, True)[0]))
    cumsumexp_p = aten.cumsum(shifted, dim)
    cumsumexp_t = aten.cumsum(aten.mul_Tensor(shifted, self_t), dim)
    return aten.div__Tensor(cumsumexp_t, aten.add__Scalar(cumsumexp_p, 1e-13))


def trace_backward(grad, sizes: Sequence[int]):
    """trace: ``grad`` on the main diagonal of zeros of ``sizes``."""
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    rows, cols = sizes
    flat = aten.zeros([rows * cols], dtype=grad.dtype)
    diagonal = aten.arange_start_step(0, min(rows, cols) * (cols + 1), cols + 1, dtype=dtypes.int64)
    return aten.view(aten.index_fill_int_Tensor(flat, 0, diagonal, grad), [rows, cols])
