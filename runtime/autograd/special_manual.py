"""Formula helpers of torch.special's own ops (derivatives.yaml's "torch.special" section)
and of sgn, written with aten ops in the order PyTorch's formulas call them, so a dispatch
mode sees the same backward."""

from __future__ import annotations

import math

import numpy as np

from ..generated import ops as aten
from .functions_manual import _dtype_of

__all__ = [
    "sgn_backward",
    "special_entr_backward",
    "special_erfcx_backward",
    "special_i0e_backward",
    "special_i1e_backward",
    "special_log_ndtr_backward",
    "special_ndtri_backward",
]

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def sgn_backward(self, grad, result):
    """Zero for real inputs, made as PyTorch makes it: an efficient zero tensor."""
    return aten._efficientzerotensor(list(result.shape), dtype=_dtype_of(result))


def special_entr_backward(grad, self):
    """-(1 + log x) * grad."""
    return aten.mul_Tensor(grad, aten.neg(aten.add_Scalar(aten.log(self), 1)))


def special_erfcx_backward(grad, self, result):
    """(2 x erfcx(x) - 2 / sqrt(pi)) * grad."""
    scaled = aten.mul_Tensor(aten.mul_Scalar(self, 2.0), result)
    return aten.mul_Tensor(aten.sub_Scalar(scaled, _TWO_OVER_SQRT_PI), grad)


def special_i0e_backward(grad, self, result):
    """(i1e(x) - sgn(x) i0e(x)) * grad."""
    signed = aten.mul_Tensor(aten.sgn(self), result)
    return aten.mul_Tensor(grad, aten.sub_Tensor(aten.special_i1e(self), signed))


def special_i1e_backward(grad, self, result):
    """i0e(x) - i1e(x) (sgn(x) + 1 / x), and 0.5 at (about) zero, where 1 / x overflows."""
    eps = float(np.finfo(self._data.dtype).eps)
    dtype = _dtype_of(self)
    not_tiny = aten.gt_Scalar(aten.abs(self), eps)
    safe_self = aten.where_self(not_tiny, self, aten.scalar_tensor(eps, dtype=dtype))
    inverse = aten.reciprocal(safe_self)
    scaled = aten.mul_Tensor(result, aten.add_Tensor(aten.sgn(safe_self), inverse))
    gradx = aten.sub_Tensor(aten.special_i0e(safe_self), scaled)
    half = aten.scalar_tensor(0.5, dtype=dtype)
    return aten.mul_Tensor(grad, aten.where_self(not_tiny, gradx, half))


def special_log_ndtr_backward(grad, self, result):
    """grad / sqrt(2 pi) * exp(-(log_ndtr(x) + x^2 / 2))."""
    density = aten.exp(
        aten.neg(aten.add_Tensor(result, aten.div_Scalar(aten.pow_Tensor_Scalar(self, 2), 2)))
    )
    return aten.mul_Tensor(aten.div_Scalar(grad, _SQRT_2PI), density)


def special_ndtri_backward(grad, result):
    """grad * sqrt(2 pi) * exp(ndtri(x)^2 / 2)."""
    spread = aten.exp(aten.div_Scalar(aten.pow_Tensor_Scalar(result, 2), 2))
    return aten.mul_Tensor(aten.mul_Scalar(grad, _SQRT_2PI), spread)
