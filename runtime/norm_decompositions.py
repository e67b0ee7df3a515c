"""CompositeImplicitAutograd ops of the linear and normalisation family (linear, layer_norm,
batch_norm, instance_norm, group_norm, rms_norm, bilinear, the dropouts): each calls the ops
PyTorch 2.13's CPU composite calls, in its order, so the recorded graph is torch's.
"""

from __future__ import annotations

import math

from .autograd.forward_grad import fw_grad
from .generated import ops as aten
from .tensor import TENSOR_CLASSES

__all__ = ["linear", "layer_norm"]


def linear(input, weight, bias=None):
    """addmm for a matrix with a bias; the flattened addmm for a contiguous input with a
    vector bias; otherwise matmul, plus the bias in place."""
    x = input._data
    if x.ndim == 2 and bias is not None:
        return aten.addmm(bias, input, aten.t(weight))
    if bias is not None and x.flags.c_contiguous and (x.ndim == 3 or bias._data.ndim == 1):
        return _flatten_nd_linear(input, weight, bias)
    output = aten.matmul(input, aten.t(weight))
    if bias is not None:
        if bias.__class__ not in TENSOR_CLASSES or fw_grad(bias) is not None:
            return aten.add_Tensor(output, bias)  # out of place, as torch for these
        output = aten.add__Tensor(output, bias)
    return output


def _flatten_nd_linear(input, weight, bias):
    sizes = input._data.shape
    flat = aten.reshape(input, (math.prod(sizes[:-1]), sizes[-1]))
    result = aten.addmm(bias, flat, aten.t(weight))
    return aten.view(result, sizes[:-1] + (result._data.shape[1],))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return aten.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]
