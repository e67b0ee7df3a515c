"""Formula helpers of the binary math ops of issue 15 (derivatives.yaml's "binary math"
section), written with aten ops in the order PyTorch's FunctionsManual and generated
formulas call them."""

from __future__ import annotations

from ..generated import ops as aten
from .unary_math_manual import scalar_minus

__all__ = [
    "addcdiv_tensor1_backward",
    "addcdiv_tensor2_backward",
    "igamma_other_backward",
    "lerp_end_backward",
    "lerp_self_backward",
    "logaddexp_backward",
    "logaddexp2_backward",
    "mul_by_scalar",
    "rounded_division_other_backward",
    "scalar_div",
    "special_xlog1py_other_backward",
    "atan2_backward",
    "copysign_tensor_self_backward",
    "special_xlog1py_other_scalar_backward",
    "special_xlog1py_self_backward",
    "special_zeta_other_backward",
    "xlogy_other_backward",
    "xlogy_scalar_other_backward",
    "xlogy_self_backward",
]


def atan2_backward(grad, self, other, output_mask):
    """Both gradients of atan2 over one reciprocal of ``self² + other²`` (0 where that
    is 0)."""
    if grad is None:
        return None, None
    denominator = aten.add_Tensor(aten.mul_Tensor(self, self), aten.mul_Tensor(other, other))
    recip = aten.masked_fill_Scalar(aten.reciprocal(denominator), aten.eq_Scalar(denominator, 0), 0)
    return (
        aten.mul_Tensor(aten.mul_Tensor(grad, other), recip) if output_mask[0] else None,
        aten.mul_Tensor(aten.mul_Tensor(grad, aten.neg(self)), recip) if output_mask[1] else None,
    )


def copysign_tensor_self_backward(grad, self, result):
    """``grad * result / self``, 0 where self is 0."""
    ratio = aten.div_Tensor(result, self)
    aten.masked_fill__Scalar(ratio, aten.eq_Scalar(self, 0), 0)
    return aten.mul_Tensor(grad, ratio)


def special_xlog1py_self_backward(grad, self, other):
    """``xlog1py(grad, other)``, 0 where self is 0 and other <= -1."""
    value = aten.special_xlog1py(grad, other)
    below = aten.le_Scalar(other, -1.0)
    mask = aten.bitwise_and_Tensor(aten.eq_Scalar(self, 0.0), below)
    return aten.masked_fill_Scalar(value, mask, 0.0)


def special_xlog1py_other_scalar_backward(grad, self, other):
    """The other_scalar overload's: ``xlog1py(grad, other)`` (0 where self is 0 unless
    other > -1)."""
    value = aten.special_xlog1py_other_scalar(grad, other)
    if float(other) > -1.0:
        return value
    return aten.masked_fill_Scalar(value, aten.eq_Scalar(self, 0.0), 0.0)


def special_zeta_other_backward(grad, self, other):
    """``grad * -self * zeta(self + 1, other)``."""
    if not hasattr(self, "_data"):
        shifted = aten.special_zeta_self_scalar(float(self) + 1.0, other)
        return aten.mul_Tensor(aten.mul_Scalar(grad, -self), shifted)
    shifted = aten.special_zeta(aten.add_Scalar(self, 1.0), other)
    return aten.mul_Tensor(aten.mul_Tensor(grad, aten.neg(self)), shifted)


def scalar_div(scalar, t):
    """C++'s ``scalar / tensor``: a tensor filled with the scalar, divided in place."""
    return aten.div__Tensor(aten.fill__Scalar(aten.empty_like(t), scalar), t)


def mul_by_scalar(grad, t, value):
    """``grad * (t * value)`` with a Scalar value (mul.Scalar, then mul.Tensor)."""
    return aten.mul_Tensor(grad, aten.mul_Scalar(t, value))


def addcdiv_tensor1_backward(grad, tensor2, value):
    """``grad * (value / tensor2)``."""
    return aten.mul_Tensor(grad, scalar_div(value, tensor2))


def addcdiv_tensor2_backward(grad, tensor1, tensor2, value):
    """``-grad * (value * tensor1 / (tensor2 * tensor2))``, C++ evaluating right to left."""
    square = aten.mul_Tensor(tensor2, tensor2)
    ratio = aten.div_Tensor(aten.mul_Scalar(tensor1, value), square)
    return aten.mul_Tensor(aten.neg(grad), ratio)


def rounded_division_other_backward(grad, self, other, rounding_mode):
    """fmod's and remainder's ``-grad * self.div(other, rounding_mode)``."""
    quotient = aten.div_Tensor_mode(self, other, rounding_mode=rounding_mode)
    return aten.mul_Tensor(aten.neg(grad), quotient)


def logaddexp_backward(grad, self, other):
    """``grad / (1 + exp(other - self))``."""
    return aten.div_Tensor(grad, aten.add_Scalar(aten.exp(aten.sub_Tensor(other, self)), 1))


def logaddexp2_backward(grad, self, other):
    """``grad / (1 + pow(2, other - self))``."""
    return aten.div_Tensor(
        grad, aten.add_Scalar(aten.pow_Scalar(2, aten.sub_Tensor(other, self)), 1)
    )


def igamma_other_backward(grad, self, other, sign):
    """``±grad * exp((self - 1) * log(other) - other - lgamma(self))``, C++ evaluating the
    operands right to left."""
    lg = aten.lgamma(self)
    log_other = aten.log(other)
    exponent = aten.sub_Tensor(aten.mul_Tensor(aten.sub_Scalar(self, 1), log_other), other)
    value = aten.exp(aten.sub_Tensor(exponent, lg))
    return aten.mul_Tensor(grad if sign > 0 else aten.neg(grad), value)


def special_xlog1py_other_backward(grad, self, other):
    """``grad * self / (other + 1)`` (self a tensor or a Scalar)."""
    shifted = aten.add_Scalar(other, 1)
    if hasattr(self, "_data"):
        return aten.div_Tensor(aten.mul_Tensor(grad, self), shifted)
    return aten.div_Tensor(aten.mul_Scalar(grad, self), shifted)


def lerp_self_backward(grad, weight):
    """lerp's ``grad * (1 - weight)``: a Scalar weight is read as a double (mul.Scalar); a
    tensor one is subtracted from a filled tensor, as C++'s ``1 - tensor``."""
    if hasattr(weight, "_data"):
        return aten.mul_Tensor(grad, scalar_minus(1, weight))
    return aten.mul_Scalar(grad, 1 - float(weight))


def lerp_end_backward(grad, weight):
    """lerp.Scalar's ``grad * weight`` (mul.Scalar)."""
    return aten.mul_Scalar(grad, weight)


def xlogy_self_backward(grad, self, other):
    """``xlogy(grad, other)``, 0 where self is 0 and other <= 0."""
    value = aten.xlogy_Tensor(grad, other)
    below = aten.le_Scalar(other, 0.0)
    mask = aten.bitwise_and_Tensor(aten.eq_Scalar(self, 0.0), below)
    return aten.masked_fill_Scalar(value, mask, 0.0)


def xlogy_other_backward(grad, self, other):
    """``grad * self / other`` (self a tensor or a Scalar)."""
    if hasattr(self, "_data"):
        return aten.div_Tensor(aten.mul_Tensor(grad, self), other)
    return aten.div_Tensor(aten.mul_Scalar(grad, self), other)


def xlogy_scalar_other_backward(grad, self, other):
    """The Scalar_Other overload's: ``xlogy(grad, other)`` (0 where self is 0 unless
    other > 0)."""
    value = aten.xlogy_Scalar_Other(grad, other)
    if float(other) > 0.0:
        return value
    return aten.masked_fill_Scalar(value, aten.eq_Scalar(self, 0.0), 0.0)
