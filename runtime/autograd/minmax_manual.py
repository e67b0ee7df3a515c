"""Formula helpers of the max/min reductions, re-exported by functions_manual.

The gradient rules are PyTorch's: a whole-tensor max/min spreads the gradient evenly
over the tied extrema (NaN counting as equal to NaN), amax/amin/aminmax spread it evenly
among the ties of each reduced slice, and max/min along a dim send it to the index they
returned (as do kthvalue, median, mode, sort and topk). Each helper is written with opgrad
ops, so it is differentiable itself.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..generated import ops as aten

__all__ = [
    "amaxamin_jvp",
    "aminmax_backward",
    "aminmax_jvp",
    "evenly_distribute_backward",
    "evenly_read_jvp",
    "gather_with_keepdimed_indices",
    "restore_reduced_dims",
    "scale_grad_by_count",
    "value_selecting_reduction_backward",
]


def evenly_distribute_backward(grad, input, value):
    """max()/min(): ``grad`` shared evenly by the elements equal to the result (the NaNs
    when the result is NaN)."""
    both_nan = aten.logical_and(aten.isnan(input), aten.isnan(value))
    mask = aten.logical_or_(aten.eq_Tensor(input, value), both_nan)
    return aten.mul_Tensor(mask, aten.div_Tensor(grad, aten.sum(mask)))


def evenly_read_jvp(fw_grad, input, value):
    """max()/min()'s tangent: the mean of the tangents of the elements equal to the result."""
    mask = aten.eq_Tensor(input, value)
    count = aten.sum(mask)
    return aten.sum(aten.mul_Tensor(mask, aten.div_Tensor(fw_grad, count)))


def restore_reduced_dims(output, dims: Sequence[int], keepdim: bool):
    """``output`` of a reduction over ``dims`` reshaped to keep them (as size 1)."""
    if keepdim:
        return output
    total = output.dim() + len(dims)
    shape = [0] * total
    for d in dims:
        shape[d + total if d < 0 else d] = 1
    sizes = iter(output.shape)
    shape = [1 if s == 1 else next(sizes) for s in shape]
    return aten.reshape(output, shape)


def scale_grad_by_count(grad, mask, dims: Sequence[int]):
    """``grad`` shared evenly by the True entries of ``mask`` in each slice over ``dims``."""
    return aten.mul_Tensor(aten.div_Tensor(grad, aten.sum_dim_IntList(mask, dims, True)), mask)


def amaxamin_jvp(x, dx, result, dim: Sequence[int], keepdim: bool):
    """amax/amin's tangent: per slice, the mean of the tangents at the tied extrema."""
    mask = aten.eq_Tensor(x, restore_reduced_dims(result, dim, keepdim))
    picked = aten.sum_dim_IntList(aten.where_ScalarOther(mask, dx, 0.0), dim, keepdim)
    return aten.div_Tensor(picked, aten.sum_dim_IntList(mask, dim, keepdim))


def _aminmax_dims(self, dim: Optional[int]) -> list:
    return [dim] if dim is not None else list(range(self.dim()))


def aminmax_backward(self, dim: Optional[int], keepdim: bool, grad_min, grad_max, min, max):
    """aminmax: each defined gradient shared evenly by the ties of its extremum."""
    dims = _aminmax_dims(self, dim)
    total = None
    for grad, extremum in ((grad_min, min), (grad_max, max)):
        if grad is None:
            continue
        mask = aten.eq_Tensor(self, restore_reduced_dims(extremum, dims, keepdim))
        part = scale_grad_by_count(restore_reduced_dims(grad, dims, keepdim), mask, dims)
        total = part if total is None else aten.add_Tensor(total, part)
    return total


def aminmax_jvp(self_p, self_t, result, dim: Optional[int], keepdim: bool):
    return amaxamin_jvp(self_p, self_t, result, _aminmax_dims(self_p, dim), keepdim)


def value_selecting_reduction_backward(grad, dim: int, indices, sizes: Sequence[int], keepdim):
    """max/min/kthvalue/median/mode along ``dim`` (``indices`` without it unless keepdim),
    sort and topk (keepdim True: ``indices`` as long as ``grad``): ``grad`` scattered to the
    returned indices of zeros of ``sizes`` (new_zeros and scatter, the calls a dispatch mode
    sees PyTorch make)."""
    if not keepdim and len(sizes) != 0:
        grad, indices = aten.unsqueeze(grad, dim), aten.unsqueeze(indices, dim)
    return aten.scatter_src(aten.new_zeros(grad, sizes), dim, indices, grad)


def gather_with_keepdimed_indices(input, dim: int, indices, keepdim: bool):
    """The elements of ``input`` at ``indices`` along ``dim`` (the tangent of the
    value-selecting reductions)."""
    if not keepdim:
        indices = aten.unsqueeze(indices, dim)
    out = aten.gather(input, dim, indices)
    return out if keepdim else aten.squeeze_dim(out, dim)
