"""Backward helpers of the masked and take/put ops, re-exported by functions_manual
(PyTorch's FunctionsManual and its CompositeImplicit backward ops)."""

from __future__ import annotations

import numpy as np

from ..generated import ops as aten

__all__ = [
    "masked_select_backward",
    "masked_scatter_backward_symint",
    "take_backward",
    "as_strided_scatter_backward",
]


def masked_select_backward(grad, self, mask):
    """The selected gradient scattered back into zeros of self broadcast with mask (the
    engine sums it down to self's shape)."""
    shape = list(np.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    zeros = aten.zeros_like(aten.expand(self, shape))
    return aten.masked_scatter(zeros, mask, grad)


def take_backward(grad, self, index):
    """Each gradient element added back into the flat position it was taken from."""
    return aten.put(aten.zeros_like(self), index, grad, True)


def masked_scatter_backward_symint(grad, mask, sizes):
    """masked_scatter_backward (an op of its own, reachable as opgrad.ops.aten only)."""
    return aten.masked_scatter_backward(grad, mask, list(sizes))


def as_strided_scatter_backward(grad, input_geometry, src_geometry, size, stride, storage_offset):
    """torch's formula for self: grad's as_strided slice copied into zeros laid out as the
    input (only contiguous inputs take part in autograd)."""
    grad = grad.contiguous()
    grad_slice = aten.as_strided(grad, list(size), list(stride), storage_offset)
    sizes, strides, _ = input_geometry
    result = aten.as_strided(aten.new_zeros(grad, list(sizes)), list(sizes), list(strides))
    result_slice = aten.as_strided(result, list(size), list(stride), storage_offset)
    aten.copy_(result_slice, grad_slice)
    return result
