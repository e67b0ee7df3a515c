"""Backward helpers of the masked and take/put ops, re-exported by functions_manual
(PyTorch's FunctionsManual and its CompositeImplicit backward ops)."""

from __future__ import annotations

import numpy as np

from ..generated import ops as aten

__all__ = ["masked_select_backward", "masked_scatter_backward_symint", "take_backward"]


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
