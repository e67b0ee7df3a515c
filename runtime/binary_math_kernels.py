"""Kernels of the binary math ops of issue 15 (derivatives.yaml's "binary math" section).

Every kernel gets its operands already promoted to the result type (a Scalar operand stays
a Python number); float16 is computed in float32 and rounded once, as torch's CPU kernels
do. scipy.special (imported on first use) computes the incomplete gamma functions and
Hurwitz's zeta.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .kernel_support import opmath

__all__ = [
    "addcdiv",
    "addcdiv_check",
    "addcmul",
    "atan2",
    "copysign",
    "float_kernel",
    "fmod",
    "floor_divide",
    "heaviside",
    "heaviside_check",
    "heaviside_out_check",
    "half_floor_divide",
    "ldexp_out_check",
    "hypot",
    "igamma",
    "igammac",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "nextafter",
    "remainder",
    "special_xlog1py",
    "special_zeta",
    "xlogy_values",
]

_HALF = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _special():
    import scipy.special

    return scipy.special


def _not_implemented(kernel: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dtype)}'"
    )


def _dtype(a, b) -> np.dtype:
    return a.dtype if isinstance(a, np.ndarray) else np.asarray(b).dtype


def _work(x, dtype: np.dtype):
    """An operand in the compute type of ``dtype`` (float32 for float16)."""
    work = _F32 if dtype == _HALF else dtype
    return np.asarray(x).astype(work, copy=False) if isinstance(x, np.ndarray) else work.type(x)


def float_kernel(fn, a, b, kernel: str = "", kinds: str = "f"):
    """``fn(a, b)`` in the operands' (promoted) type's compute type, rounded once to it;
    a dtype outside ``kinds`` refused in torch's dispatch words for ``kernel``."""
    dtype = _dtype(a, b)
    if dtype.kind not in kinds:
        raise _not_implemented(kernel, dtype)
    with np.errstate(all="ignore"):
        out = fn(_work(a, dtype), _work(b, dtype))
    return np.asarray(out).astype(dtype, copy=False)


def atan2(a, b):
    return float_kernel(np.arctan2, a, b)


def hypot(a, b):
    return float_kernel(np.hypot, a, b, "hypot_cpu")


def logaddexp(a, b):
    return float_kernel(np.logaddexp, a, b, "logaddexp_cpu")


def logaddexp2(a, b):
    return float_kernel(np.logaddexp2, a, b, "logaddexp2_cpu")


def copysign(a, b):
    return float_kernel(np.copysign, a, b)


def nextafter(a, b):
    """nextafter in the operands' own type (float16 steps by a float16 ulp)."""
    dtype = _dtype(a, b)
    if dtype.kind != "f":
        raise _not_implemented("nextafter_cpu", dtype)
    return np.asarray(np.nextafter(np.asarray(a, dtype), np.asarray(b, dtype)))


def ldexp(a, b):
    return float_kernel(lambda x, e: x * np.exp2(e), a, b)


def heaviside_check(self, values) -> None:
    if self._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if self._data.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")


def heaviside_out_check(self, target) -> None:
    if target._data.dtype != self._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def ldexp_out_check(self, other, target) -> None:
    """ldexp's refusal of an integral or bool tensor to write into, in its own words."""
    from .dtypes import scalar_type_name

    if target._data.dtype.kind != "f":
        raise RuntimeError(
            f"ldexp can't be cast to the desired output type "
            f"{scalar_type_name(target._data.dtype)}"
        )


def heaviside(a, b):
    """0 below zero, 1 above, ``values`` at zero (NaN stays NaN)."""
    dtype = _dtype(a, b)
    return np.asarray(np.where(a == 0, b, (a > 0).astype(dtype))).astype(dtype, copy=False)


def _integral_divisor(dtype: np.dtype, kernel: str, b):
    if dtype.kind == "b":
        raise _not_implemented(kernel, dtype)
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _as_operand(x, dtype: np.dtype):
    if isinstance(x, np.ndarray):
        return x
    from .numpy_kernels import scalar_as

    return np.asarray(scalar_as(x, dtype)).astype(dtype)


def fmod(a, b):
    """C's fmod: the remainder has the dividend's sign; integers refuse a zero divisor."""
    dtype = _dtype(a, b)
    if dtype.kind in "biu":
        _integral_divisor(dtype, "fmod_cpu", b)
        return np.asarray(np.fmod(_as_operand(a, dtype), _as_operand(b, dtype)))
    return float_kernel(np.fmod, a, b)


def _float_remainder(x, y):
    mod = np.fmod(x, y)
    fix = (mod != 0) & ((y < 0) != (mod < 0))
    return np.where(fix, mod + y, mod)


def remainder(a, b):
    """Python's %: the remainder has the divisor's sign (torch's formula for floats, so
    a zero remainder keeps fmod's sign); integers refuse a zero divisor."""
    dtype = _dtype(a, b)
    if dtype.kind in "biu":
        _integral_divisor(dtype, "remainder_cpu", b)
        return np.asarray(np.remainder(_as_operand(a, dtype), _as_operand(b, dtype)))
    return float_kernel(_float_remainder, a, b)


def floor_divide(a, b):
    """div(a, b, rounding_mode='floor')."""
    from .shape_kernels import div_rounding

    dtype = _dtype(a, b)
    if dtype.kind == "b":
        raise _not_implemented("div_floor_cpu", dtype)
    return np.asarray(div_rounding(_as_operand(a, dtype), _as_operand(b, dtype), "floor"))


def addcdiv_check(self, tensor1, tensor2) -> None:
    if tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )


def _value(value, dtype: np.dtype):
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    return value


def addcmul(self, tensor1, tensor2, value):
    """``self + value * tensor1 * tensor2``, in that order."""
    dtype = self.dtype
    if dtype.kind == "b":
        raise _not_implemented("addcmul_cpu_out", dtype)
    w = _work(self, dtype)
    v = _work(_value(value, dtype), dtype) if dtype.kind != "c" else value
    with np.errstate(all="ignore"):
        out = w + v * _work(tensor1, dtype) * _work(tensor2, dtype)
    return np.asarray(out).astype(dtype, copy=False)


def addcdiv(self, tensor1, tensor2, value):
    """``self + value * tensor1 / tensor2``, in that order."""
    dtype = self.dtype
    w = _work(self, dtype)
    v = _work(value, dtype) if dtype.kind != "c" else value
    with np.errstate(all="ignore"):
        out = w + v * _work(tensor1, dtype) / _work(tensor2, dtype)
    return np.asarray(out).astype(dtype, copy=False)


def igamma(a, b):
    return float_kernel(lambda x, y: _special().gammainc(x, y), a, b, "igamma_cpu")


def igammac(a, b):
    return float_kernel(lambda x, y: _special().gammaincc(x, y), a, b, "igammac_cpu")


def _x_times(log, x, y, dtype):
    """``x * log(y)``, 0 where x is 0 (unless y is NaN); for float16 the logarithm is
    rounded to float16 before the product, as torch's kernel computes it."""
    logged = log(y)
    if dtype == _HALF:
        logged = logged.astype(_HALF).astype(_F32)
    return np.where((x == 0) & ~np.isnan(y), 0, x * logged)


def special_xlog1py(a, b):
    dtype = _dtype(a, b)
    return float_kernel(lambda x, y: _x_times(np.log1p, x, y, dtype), a, b, "xlog1py_cpu")


def special_zeta(a, b):
    if _dtype(a, b) == _HALF:
        raise _not_implemented("zeta_cpu", _HALF)
    return float_kernel(lambda x, q: _special().zeta(x, q), a, b, "zeta_cpu")


def half_floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Floor division of float16 operands as torch's CPU kernel computes it: Python's
    algorithm (fmod, then (a - mod) / b, corrected), every step rounded to float16."""
    a, b = np.asarray(a, _HALF), np.asarray(b, _HALF)
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - _HALF.type(1), div)
        floordiv = np.floor(div)
        floordiv = np.where(div - floordiv > _HALF.type(0.5), floordiv + _HALF.type(1), floordiv)
        floordiv = np.where(div != 0, floordiv, np.copysign(_HALF.type(0), a / b))
        return np.asarray(np.where(b == 0, a / b, floordiv), _HALF)


def xlogy_values(a, b):
    """xlogy (also with a Python number for one operand: its Scalar_Self, Scalar_Other
    overloads)."""
    dtype = _dtype(a, b)
    return float_kernel(lambda x, y: _x_times(np.log, x, y, dtype), a, b)
