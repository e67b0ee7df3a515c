"""CompositeImplicitAutograd ops of the predicates: isfinite, isreal and isclose are other
ops (a dispatch mode sees abs, ne, eq, mul for isfinite, as in PyTorch), and the bitwise
operators ``__and__``, ``__or__``, ``__xor__`` and their in-place forms are the bitwise
ops."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from . import numpy_kernels as k
from .generated import ops as aten

__all__ = [
    "and_scalar",
    "and_tensor",
    "iand_scalar",
    "iand_tensor",
    "ior_scalar",
    "ior_tensor",
    "isclose",
    "isfinite",
    "isreal",
    "ixor_scalar",
    "ixor_tensor",
    "or_scalar",
    "or_tensor",
    "xor_scalar",
    "xor_tensor",
]


def _all_true(self):
    return aten.ones_like(self, dtype=dtypes.bool)


def isfinite(self):
    if self._data.dtype.kind not in "fc":
        return _all_true(self)
    bounded = aten.ne_Scalar(aten.abs(self), math.inf)
    return aten.mul_Tensor(aten.eq_Tensor(self, self), bounded)


def isreal(self):
    # every dtype opgrad has is real (a complex one would compare its imaginary part to 0)
    return _all_true(self)


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    k.closeness_check(self, other, rtol, atol)
    close = aten.eq_Tensor(self, other)
    if equal_nan and self._data.dtype.kind in "fc":
        close = aten.bitwise_or__Tensor(
            close, aten.bitwise_and_Tensor(aten.isnan(self), aten.isnan(other))
        )
    if rtol == 0 and atol == 0:
        return close
    # the errors are computed in floating point: bool operands and an integral `other`
    # are converted to the default dtype first, as in PyTorch
    if self._data.dtype.kind == "b":
        self = aten._to_copy(self, dtype=dtypes.get_default_dtype())
    if other._data.dtype.kind not in "fc":
        other = aten._to_copy(other, dtype=dtypes.get_default_dtype())
    with np.errstate(invalid="ignore"):  # inf * 0 and inf - inf: NaN, not close, silently
        allowed = aten.add_Scalar(aten.abs(aten.mul_Scalar(other, rtol)), atol)
        actual = aten.abs(aten.sub_Tensor(self, other))
    within = aten.bitwise_and__Tensor(isfinite(actual), aten.le_Tensor(actual, allowed))
    return aten.bitwise_or__Tensor(close, within)


def and_tensor(self, other):
    return aten.bitwise_and_Tensor(self, other)


def and_scalar(self, other):
    return aten.bitwise_and_Scalar(self, other)


def iand_tensor(self, other):
    return aten.bitwise_and__Tensor(self, other)


def iand_scalar(self, other):
    return aten.bitwise_and__Scalar(self, other)


def or_tensor(self, other):
    return aten.bitwise_or_Tensor(self, other)


def or_scalar(self, other):
    return aten.bitwise_or_Scalar(self, other)


def ior_tensor(self, other):
    return aten.bitwise_or__Tensor(self, other)


def ior_scalar(self, other):
    return aten.bitwise_or__Scalar(self, other)


def xor_tensor(self, other):
    return aten.bitwise_xor_Tensor(self, other)


def xor_scalar(self, other):
    return aten.bitwise_xor_Scalar(self, other)


def ixor_tensor(self, other):
    return aten.bitwise_xor__Tensor(self, other)


def ixor_scalar(self, other):
    return aten.bitwise_xor__Scalar(self, other)
