"""Formula helpers of the unary math ops of issue 15 (derivatives.yaml's "unary math"
section), written with aten ops in the order PyTorch's FunctionsManual and generated
formulas call them, so a dispatch mode sees the same backward. C++'s ``tensor + 1.0`` is
add.Scalar and ``2.0 * tensor`` mul.Scalar; ``1.0 - tensor`` is empty_like, fill_ and
sub_, as PyTorch's operator does."""

from __future__ import annotations

import math

from ..generated import ops as aten
from .functions_manual import _dtype_of

__all__ = [
    "M_LN2",
    "acos_backward",
    "acosh_backward",
    "asin_backward",
    "asinh_backward",
    "atan_backward",
    "atanh_backward",
    "deg2rad_backward",
    "erf_backward",
    "erfc_backward",
    "erfinv_backward",
    "exp2_backward",
    "expm1_backward",
    "i1_backward",
    "infinitely_differentiable_logit_backward",
    "log10_backward",
    "logit_backward",
    "log2_backward",
    "mvlgamma_backward",
    "nan_to_num_backward",
    "rad2deg_backward",
    "scalar_minus",
    "i1",
    "sinc_backward",
    "tan_backward",
]

M_LN2 = math.log(2.0)
M_PI_180 = 0.017453292519943295769236907684886127134428718885417
M_180_PI = 57.295779513082320876798154814105170332405472466564
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


def scalar_minus(scalar, t):
    """C++'s ``scalar - tensor``: a tensor filled with the scalar, less ``t`` in place."""
    filled = aten.fill__Scalar(aten.empty_like(t), scalar)
    return aten.sub__Tensor(filled, t)


def acos_backward(grad, self):
    root = aten.rsqrt(aten.add_Scalar(aten.mul_Tensor(aten.neg(self), self), 1))
    return aten.mul_Tensor(grad, aten.neg(root))


def asin_backward(grad, self):
    root = aten.rsqrt(aten.add_Scalar(aten.mul_Tensor(aten.neg(self), self), 1))
    return aten.mul_Tensor(grad, root)


def atan_backward(grad, self):
    return aten.div_Tensor(grad, aten.add_Scalar(aten.mul_Tensor(self, self), 1))


def acosh_backward(grad, self):
    return aten.mul_Tensor(grad, aten.rsqrt(aten.sub_Scalar(aten.mul_Tensor(self, self), 1)))


def asinh_backward(grad, self):
    root = aten.rsqrt(aten.add_Scalar(aten.pow_Tensor_Scalar(self, 2), 1))
    return aten.mul_Tensor(grad, root)


def atanh_backward(grad, self):
    # grad * 1 / (1 - self.pow(2))
    denominator = scalar_minus(1, aten.pow_Tensor_Scalar(self, 2))
    return aten.div_Tensor(aten.mul_Scalar(grad, 1), denominator)


def tan_backward(grad, result):
    return aten.mul_Tensor(grad, aten.add_Scalar(aten.pow_Tensor_Scalar(result, 2), 1))


def _gaussian(self):
    return aten.exp(aten.neg(aten.pow_Tensor_Scalar(self, 2)))


def erf_backward(grad, self):
    return aten.mul_Tensor(aten.mul_Scalar(_gaussian(self), _TWO_OVER_SQRT_PI), grad)


def erfc_backward(grad, self):
    return aten.mul_Tensor(aten.mul_Scalar(_gaussian(self), -_TWO_OVER_SQRT_PI), grad)


def erfinv_backward(grad, self):
    spread = aten.exp(aten.pow_Tensor_Scalar(aten.erfinv(self), 2))
    return aten.mul_Tensor(aten.mul_Scalar(spread, _HALF_SQRT_PI), grad)


def exp2_backward(grad, result):
    return aten.mul_Scalar(aten.mul_Tensor(grad, result), M_LN2)


def expm1_backward(grad, result):
    return aten.mul_Tensor(grad, aten.add_Scalar(result, 1))


def log2_backward(grad, self):
    return aten.div_Tensor(grad, aten.mul_Scalar(self, 0.6931471805599453))


def log10_backward(grad, self):
    return aten.div_Tensor(grad, aten.mul_Scalar(self, 2.3025850929940456))


def deg2rad_backward(grad):
    return aten.mul_Scalar(grad, M_PI_180)


def rad2deg_backward(grad):
    return aten.mul_Scalar(grad, M_180_PI)


def sinc_backward(grad, self):
    self_pi = aten.mul_Scalar(self, math.pi)
    self_squared_pi = aten.mul_Scalar(aten.mul_Tensor(self, self), math.pi)
    sin = aten.sin(self_pi)
    numerator = aten.sub_Tensor(aten.mul_Tensor(self_pi, aten.cos(self_pi)), sin)
    out = aten.mul_Tensor(grad, aten.div_Tensor(numerator, self_squared_pi))
    zero = aten.scalar_tensor(0.0, dtype=_dtype_of(grad))
    return aten.where_self(aten.eq_Scalar(self_squared_pi, 0.0), zero, out)


def i1_backward(grad, self, result):
    """d i1 / dx = i0(x) - i1(x) / x, and 0.5 at (about) zero."""
    import numpy as np

    eps = float(np.finfo(self._data.dtype).eps)
    dtype = _dtype_of(self)
    not_tiny = aten.gt_Scalar(aten.abs(self), eps)
    safe_self = aten.where_self(not_tiny, self, aten.scalar_tensor(eps, dtype=dtype))
    scaled = aten.mul_Tensor(result, aten.reciprocal(safe_self))
    gradx = aten.sub_Tensor(aten.i0(safe_self), scaled)
    half = aten.scalar_tensor(0.5, dtype=dtype)
    return aten.mul_Tensor(grad, aten.where_self(not_tiny, gradx, half))


def infinitely_differentiable_logit_backward(grad, self, eps):
    dtype = _dtype_of(self)
    if eps is not None:
        lo, hi = eps, 1.0 - eps
        fill = aten.zeros([], dtype=dtype)
    else:
        lo, hi = 0.0, 1.0
        fill = aten.fill__Scalar(aten.empty_memory_format([], dtype=dtype), math.nan)
    value = aten.div_Tensor(grad, aten.mul_Tensor(self, scalar_minus(1.0, self)))
    below_hi = aten.le_Scalar(self, hi)
    inside = aten.logical_and(aten.ge_Scalar(self, lo), below_hi)
    return aten.where_self(inside, value, fill)


def mvlgamma_backward(grad, self, p: int):
    args = aten.arange_start_step(-p / 2.0 + 0.5, 0.5, 0.5, dtype=_dtype_of(self))
    args = aten.add_Tensor(args, aten.unsqueeze(self, -1))
    return aten.mul_Tensor(grad, aten.sum_dim_IntList(aten.digamma_(args), [-1]))


def nan_to_num_backward(grad, self):
    return aten.mul_Tensor(grad, aten.isfinite(self))


def i1(self):
    """``at::special_i1``: the op has no function in opgrad's namespace (torch.special.i1)."""
    return aten.special_i1(self)


def logit_backward(grad, self, eps):
    """``at::logit_backward`` (no function in torch's namespace either)."""
    return aten.logit_backward(grad, self, eps)
