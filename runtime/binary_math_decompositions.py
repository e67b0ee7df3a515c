"""Composites of the binary math ops of issue 15, CompositeImplicitAutograd in PyTorch (no
node of their own): arctan2 (atan2's alias), true_divide (div's) and float_power (pow in
double, or complex double)."""

from __future__ import annotations

from . import dtypes
from .generated import ops as aten

__all__ = [
    "arctan2",
    "arctan2_",
    "arctan2_out",
    "float_power_Scalar",
    "float_power_Scalar_out",
    "float_power_Tensor_Scalar",
    "float_power_Tensor_Scalar_out",
    "float_power_Tensor_Tensor",
    "float_power_Tensor_Tensor_out",
    "float_power__Scalar",
    "float_power__Tensor",
    "true_divide_Scalar",
    "true_divide_Tensor",
    "true_divide__Scalar",
    "true_divide__Tensor",
    "true_divide_out",
]


def arctan2(self, other):
    return aten.atan2(self, other)


def arctan2_(self, other):
    return aten.atan2_(self, other)


def arctan2_out(self, other, out):
    return aten.atan2_out(self, other, out=out)


def true_divide_Tensor(self, other):
    return aten.div_Tensor(self, other)


def true_divide__Tensor(self, other):
    return aten.div__Tensor(self, other)


def true_divide_out(self, other, out):
    return aten.div_out(self, other, out=out)


def true_divide_Scalar(self, other):
    return aten.div_Scalar(self, other)


def true_divide__Scalar(self, other):
    return aten.div__Scalar(self, other)


# ---- float_power ---------------------------------------------------------------------------


def _float_power_dtype(a, b):
    """double (opgrad has no complex dtypes, for which torch computes in complex double)"""
    return dtypes.float64


def _scalar_value(x, dtype):
    return float(x)


def _check_result(target, dtype, what: str) -> None:
    if target.dtype != dtype:
        raise RuntimeError(
            f"the {what} given to float_power{'_' if what == 'base' else ''} has dtype "
            f"{target.dtype.scalar_type_name} but the operation's result requires "
            f"dtype {dtype.scalar_type_name}"
        )


def float_power_Tensor_Tensor(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    return aten.pow_Tensor_Tensor(self.to(dtype), exponent.to(dtype))


def float_power_Tensor_Tensor_out(self, exponent, out):
    dtype = _float_power_dtype(self, exponent)
    _check_result(out, dtype, "output")
    return aten.pow_Tensor_Tensor_out(self.to(dtype), exponent.to(dtype), out=out)


def float_power_Tensor_Scalar(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    return aten.pow_Tensor_Scalar(self.to(dtype), _scalar_value(exponent, dtype))


def float_power_Tensor_Scalar_out(self, exponent, out):
    dtype = _float_power_dtype(self, exponent)
    _check_result(out, dtype, "output")
    return aten.pow_Tensor_Scalar_out(self.to(dtype), _scalar_value(exponent, dtype), out=out)


def float_power_Scalar(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    return aten.pow_Scalar(_scalar_value(self, dtype), exponent.to(dtype))


def float_power_Scalar_out(self, exponent, out):
    dtype = _float_power_dtype(self, exponent)
    _check_result(out, dtype, "output")
    return aten.pow_Scalar_out(_scalar_value(self, dtype), exponent.to(dtype), out=out)


def float_power__Tensor(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    _check_result(self, dtype, "base")
    return aten.pow__Tensor(self, exponent.to(dtype))


def float_power__Scalar(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    _check_result(self, dtype, "base")
    return aten.pow__Scalar(self, _scalar_value(exponent, dtype))
