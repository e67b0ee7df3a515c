"""Kernels of the unary math ops of issue 15 (derivatives.yaml's "unary math" section).

numpy computes the elementary functions; scipy.special (imported on first use) the error
functions, gamma family and Bessel functions. Where torch's CPU kernel has its own
algorithm whose results a library would not reproduce (trigamma, the reflection of
digamma, polygamma's zeta formula), the kernel follows torch's formula, vectorised.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes

__all__ = [
    "deg2rad",
    "deg2rad_check",
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "frac",
    "frexp",
    "frexp_check",
    "frexp_out_check",
    "i0",
    "lgamma",
    "logit",
    "logit_backward",
    "mvlgamma",
    "mvlgamma_check",
    "mvlgamma_out_check",
    "nan_to_num",
    "nan_to_num_out_check",
    "polygamma",
    "polygamma_check",
    "positive_check",
    "rad2deg",
    "sinc",
    "special_i1",
    "trunc",
]

#: torch's M_PI_180 and M_180_PI (deg2rad and rad2deg multiply by them)
M_PI_180 = 0.017453292519943295769236907684886127134428718885417
M_180_PI = 57.295779513082320876798154814105170332405472466564
_FLOAT32 = np.dtype(np.float32)


def _special():
    import scipy.special

    return scipy.special


def _in_dtype(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(like.dtype, copy=False)


def _work(x: np.ndarray) -> np.ndarray:
    """float16 is computed in float32 (torch's CPU opmath type), then rounded back."""
    return x.astype(_FLOAT32) if x.dtype.itemsize < 4 else x


def _type_name(dtype) -> str:
    return dtypes.scalar_type_name(dtype)


# ---- rounding -------------------------------------------------------------------------


def trunc(self: np.ndarray) -> np.ndarray:
    """Toward zero; integers come back unchanged, bool is refused (as floor)."""
    if self.dtype.kind == "b":
        raise NotImplementedError("\"trunc_vml_cpu\" not implemented for 'Bool'")
    if self.dtype.kind in "iu":
        return self.copy()
    return np.trunc(self)


def frac(self: np.ndarray) -> np.ndarray:
    """x - trunc(x); integers and bool refused by the kernel (after out='s dtype check)."""
    if self.dtype.kind not in "fc":
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_type_name(self.dtype)}'")
    return self - np.trunc(self)


# ---- degrees and radians ------------------------------------------------------------------


def deg2rad_check(self, name: str = "deg2rad") -> None:
    if self._data.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")


def _scaled(self: np.ndarray, factor: float) -> np.ndarray:
    # torch multiplies by a wrapped double: read in the op's type (float for float16)
    work = _work(self)
    return _in_dtype(work * work.dtype.type(factor), self)


def deg2rad(self: np.ndarray) -> np.ndarray:
    return _scaled(self, M_PI_180)


def rad2deg(self: np.ndarray) -> np.ndarray:
    return _scaled(self, M_180_PI)


# ---- error functions ------------------------------------------------------------------------


def erf(self: np.ndarray) -> np.ndarray:
    return _in_dtype(_special().erf(_work(self)), self)


def erfc(self: np.ndarray) -> np.ndarray:
    return _in_dtype(_special().erfc(_work(self)), self)


def erfinv(self: np.ndarray) -> np.ndarray:
    """scipy's erfinv, keeping the sign of a zero as torch's rational approximation does."""
    work = _work(self)
    value = _special().erfinv(work)
    return _in_dtype(np.where(work == 0, work, value), self)


# ---- gamma family ----------------------------------------------------------------------------


def lgamma(self: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: +inf at the poles and at -inf, as std::lgamma."""
    work = _work(self)
    out = _special().gammaln(work)
    out = np.where(np.isneginf(work), np.inf, out)
    return _in_dtype(out, self)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (
    8.33333333333333333333e-2,
    -2.10927960927960927961e-2,
    7.57575757575757575758e-3,
    -4.16666666666666666667e-3,
    3.96825396825396825397e-3,
    -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """torch's calc_digamma for x > 0: recurrence up to 10, then the asymptotic series."""
    t = x.dtype.type
    result = np.zeros_like(x)
    x = x.copy()
    for _ in range(10):
        small = x < 10
        if not small.any():
            break
        result = np.where(small, result - 1 / np.where(small, x, t(1)), result)
        x = np.where(small, x + 1, x)
    with np.errstate(over="ignore", divide="ignore"):
        z = 1 / (x * x)
        poly = np.zeros_like(x)
        for a in _DIGAMMA_A:
            poly = poly * z + t(a)
        y = np.where(x < 1.0e17, z * poly, t(0))
        tail = result + np.log(x) - (t(0.5) / x) - y
    return np.where(x == 10, result + t(_PSI_10), tail)


def digamma(self: np.ndarray) -> np.ndarray:
    """torch's calc_digamma: -inf at +0 (+inf at -0), NaN at the negative integers, the
    reflection formula below zero."""
    x = _work(self)
    t = x.dtype.type
    with np.errstate(all="ignore"):
        negative = x < 0
        reflected = np.where(negative, 1 - x, x)
        value = _digamma_positive(np.where(np.isnan(reflected) | (reflected <= 0), t(1), reflected))
        value = np.where(np.isnan(reflected), np.nan, value)
        frac_part = x - np.trunc(x)
        value = np.where(negative, value - t(math.pi) / np.tan(t(math.pi) * frac_part), value)
        value = np.where(negative & (x == np.trunc(x)), np.nan, value)
        value = np.where(x == 0, np.copysign(t(np.inf), -x), value)
        value = np.where(np.isposinf(x), np.inf, value)
        value = np.where(np.isneginf(x), np.nan, value)
    return _in_dtype(value, self)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """torch's calc_trigamma, in x's type."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        low = x < 0.5
        sin_pi_x = np.sin(t(math.pi) * x)
        result = np.where(low, -(t(math.pi) * t(math.pi)) / (sin_pi_x * sin_pi_x), t(0))
        x = np.where(low, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        series = (
            1 + 1 / (2 * x) + ixx * (t(1.0 / 6) - ixx * (t(1.0 / 30) - ixx * t(1.0 / 42)))
        ) / x
        result = result + series
    return np.where(low, -result, result)


def polygamma_check(n: int) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n: int, self: np.ndarray) -> np.ndarray:
    """digamma (n = 0), torch's trigamma (n = 1), else torch's
    (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x)."""
    if n == 0:
        return digamma(self)
    x = _work(self)
    if n == 1:
        return _in_dtype(_trigamma(x), self)
    sign = 1.0 if n % 2 else -1.0
    factor = x.dtype.type(sign * math.exp(math.lgamma(n + 1.0)))
    with np.errstate(all="ignore"):
        zeta = _in_dtype(_special().zeta(float(n + 1), x), x)
        # torch's zeta(n + 1, inf) is NaN
        return _in_dtype(np.where(np.isposinf(x), x.dtype.type(np.nan), factor * zeta), self)


def mvlgamma_check(self, p: int) -> None:
    if self._data.dtype.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def mvlgamma_out_check(self, target) -> None:
    """mvlgamma_ and mvlgamma.out copy the result into the tensor written, if it can be cast;
    torch's message names self's type, then the result's."""
    given = self._data.dtype
    computed = given if given.kind in "fc" else dtypes.get_default_dtype().np
    written = target._data.dtype
    if computed != written and (
        (computed.kind == "f" and written.kind != "f") or (written.kind == "b")
    ):
        raise RuntimeError(
            f"mvlgamma: result type {_type_name(given)} can't be cast to the desired output "
            f"type {_type_name(computed)}"
        )


def mvlgamma(self: np.ndarray, p: int) -> np.ndarray:
    """sum_j lgamma(x - j/2) for j < p, plus p(p-1)/4 log(pi), in x's type."""
    args = np.arange(-p * 0.5 + 0.5, 0.5, 0.5).astype(self.dtype)
    terms = lgamma(args + self[..., None])
    total = terms.sum(-1)
    return _in_dtype(total + total.dtype.type(p * (p - 1) * math.log(math.pi) / 4.0), self)


# ---- Bessel, sinc ---------------------------------------------------------------------------


def i0(self: np.ndarray) -> np.ndarray:
    return _in_dtype(_special().i0(_work(self)), self)


def special_i1(self: np.ndarray) -> np.ndarray:
    return _in_dtype(_special().i1(_work(self)), self)


def sinc(self: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0, in x's type (float for float16, rounded once)."""
    x = _work(self)
    t = x.dtype.type
    with np.errstate(all="ignore"):
        product = t(math.pi) * x
        value = np.sin(product) / product
    return np.where(x == 0, t(1), value).astype(self.dtype, copy=False)


# ---- logit ----------------------------------------------------------------------------------


def logit(self: np.ndarray, eps) -> np.ndarray:
    x = self
    t = x.dtype.type
    if eps is not None and eps >= 0:
        lo = t(eps)
        x = np.clip(x, lo, t(1) - lo)
    with np.errstate(all="ignore"):
        return np.log(x / (t(1) - x)).astype(self.dtype, copy=False)


def logit_backward(grad_output: np.ndarray, self: np.ndarray, eps) -> np.ndarray:
    """dy / (x (1 - x)) inside [eps, 1 - eps] (0 outside), or inside [0, 1] (NaN outside)
    without eps."""
    t = self.dtype.type
    with np.errstate(all="ignore"):
        value = grad_output / (self * (t(1) - self))
        if eps is None or eps < 0:
            return np.where((self < 0) | (self > 1), t(np.nan), value).astype(self.dtype)
        lo = t(eps)
        hi = t(1) - lo
        return np.where((self < lo) | (self > hi), t(0), value).astype(self.dtype)


# ---- nan_to_num, frexp, positive -------------------------------------------------------------


def nan_to_num(self: np.ndarray, nan, posinf, neginf) -> np.ndarray:
    if self.dtype.kind not in "fc":
        return self.copy()
    info = np.finfo(self.dtype)
    t = self.dtype.type
    with np.errstate(over="ignore"):
        nan_v = t(0 if nan is None else nan)
        pos_v = info.max if posinf is None else t(posinf)
        neg_v = info.min if neginf is None else t(neginf)
    out = np.where(np.isnan(self), nan_v, self)
    out = np.where(np.isposinf(self), pos_v, out)
    return np.where(np.isneginf(self), neg_v, out).astype(self.dtype, copy=False)


def nan_to_num_out_check(self, out) -> None:
    if out._data.dtype != self._data.dtype:
        raise RuntimeError(
            f"nan_to_num: dtype of out: {_type_name(out._data.dtype)} should be same as "
            f"input: {_type_name(self._data.dtype)}"
        )


def frexp_check(self) -> None:
    if self._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


def frexp_out_check(self, mantissa, exponent) -> None:
    frexp_check(self)
    if mantissa._data.dtype != self._data.dtype:
        raise RuntimeError(
            "torch.frexp() expects mantissa to have dtype "
            f"{dtypes.cpp_type_name(self._data.dtype)} but got "
            f"{dtypes.cpp_type_name(mantissa._data.dtype)}"
        )
    if exponent._data.dtype != np.dtype(np.int32):
        raise RuntimeError(
            "torch.frexp() expects exponent to have int dtype but got "
            f"{dtypes.cpp_type_name(exponent._data.dtype)}"
        )


def frexp(self: np.ndarray):
    mantissa, exponent = np.frexp(self)
    return mantissa.astype(self.dtype, copy=False), exponent.astype(np.int32, copy=False)


def positive_check(self) -> None:
    if self._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
