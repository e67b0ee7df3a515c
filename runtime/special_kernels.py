"""Kernels of torch.special's own ops (derivatives.yaml's "torch.special" section).

scipy.special (imported on first use) computes the scaled error and Bessel functions and the
normal distribution's functions. The orthogonal polynomials follow the recurrences torch's
CPU kernels run, vectorised over the elements (one numpy step per degree), with torch's
special cases: a negative degree gives 0, the degree is truncated to an integer, and for a
high degree inside (-1, 1) the Chebyshev kinds use their trigonometric closed forms.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .unary_math_kernels import _in_dtype, _special, _work

__all__ = [
    "special_airy_ai",
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_entr",
    "special_erfcx",
    "special_i0e",
    "special_i1e",
    "special_log_ndtr",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_ndtri",
    "special_polynomial",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0",
]


def _refuse_half(a: np.ndarray, name: str) -> None:
    """PyTorch's CPU kernels of most of these have no float16 loop."""
    if a.dtype == np.float16:
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )


def _scipy_unary(torch_name: str, scipy_name: str, half: bool = False):
    def kernel(self: np.ndarray) -> np.ndarray:
        if not half:
            _refuse_half(self, torch_name)
        with np.errstate(all="ignore"):
            return _in_dtype(getattr(_special(), scipy_name)(_work(self)), self)

    kernel.__name__ = f"special_{torch_name}"
    return kernel


special_erfcx = _scipy_unary("erfcx", "erfcx")
special_i0e = _scipy_unary("i0e", "i0e", half=True)
special_i1e = _scipy_unary("i1e", "i1e", half=True)
special_log_ndtr = _scipy_unary("log_ndtr", "log_ndtr")
special_ndtri = _scipy_unary("ndtri", "ndtri")
special_bessel_j0 = _scipy_unary("bessel_j0", "j0")
special_bessel_j1 = _scipy_unary("bessel_j1", "j1")
special_bessel_y0 = _scipy_unary("bessel_y0", "y0")
special_bessel_y1 = _scipy_unary("bessel_y1", "y1")
special_modified_bessel_i0 = _scipy_unary("modified_bessel_i0", "i0")
special_modified_bessel_i1 = _scipy_unary("modified_bessel_i1", "i1")
special_modified_bessel_k0 = _scipy_unary("modified_bessel_k0", "k0")
special_modified_bessel_k1 = _scipy_unary("modified_bessel_k1", "k1")
special_scaled_modified_bessel_k0 = _scipy_unary("scaled_modified_bessel_k0", "k0e")
special_scaled_modified_bessel_k1 = _scipy_unary("scaled_modified_bessel_k1", "k1e")


def special_entr(self: np.ndarray) -> np.ndarray:
    """-x log x: 0 at 0, -inf below 0 (torch's definition; scipy's entr agrees)."""
    return _in_dtype(_special().entr(_work(self)), self)


def special_airy_ai(self: np.ndarray) -> np.ndarray:
    _refuse_half(self, "airy_ai")
    with np.errstate(all="ignore"):
        return _in_dtype(_special().airy(_work(self))[0], self)


def special_spherical_bessel_j0(self: np.ndarray) -> np.ndarray:
    """sin(x) / x, 1 at 0 and 0 at +-inf."""
    _refuse_half(self, "spherical_bessel_j0")
    x = _work(self)
    with np.errstate(all="ignore"):
        value = np.sin(x) / x
    value = np.where(x == 0, 1, np.where(np.isinf(x), 0, value))
    return _in_dtype(value, self)


# ---- orthogonal polynomials --------------------------------------------------------------


def _recurrence(x, n, first, step):
    """p_n(x) by a three-term recurrence p_{k+1} = step(k, p_k, p_{k-1}) from p_0 = 1 and
    p_1 = first, each element stopping at its own degree (n >= 2 there)."""
    top = int(n.max()) if n.size else 0
    previous, current = np.ones_like(x), first
    result = np.where(n == 1, first, 1).astype(x.dtype)
    for k in range(1, top):
        previous, current = current, step(k, current, previous)
        result = np.where(n == k + 1, current, result)
    return result


def _chebyshev(kind: str, x, n):
    x2 = x + x
    first = {"t": x, "u": x2, "v": x2 - 1, "w": x2 + 1}[kind]
    value = _recurrence(x, n, first, lambda k, q, p: x2 * q - p)
    inside = (np.abs(x) < 1) & (n > (6 if kind == "t" else 8))
    if inside.any():
        theta = np.arccos(np.where(inside, x, 0))
        if kind == "t":
            closed = np.cos(n * theta)
        elif kind == "u":
            s = np.sin(theta)
            closed = np.where(
                s != 0, np.sin((n + 1) * theta) / s, (n + 1) * np.cos((n + 1) * theta) / x
            )
        elif kind == "v":
            closed = np.cos((n + 0.5) * theta) / np.cos(theta / 2)
        else:
            closed = np.sin((n + 0.5) * theta) / np.sin(theta / 2)
        value = np.where(inside, closed, value)
    # at x = +-1 the closed values, exactly
    even = n % 2 == 0
    at_one = {"t": 1, "u": n + 1, "v": 1, "w": 2 * n + 1}[kind]
    at_minus_one = {
        "t": np.where(even, 1, -1),
        "u": np.where(even, n + 1, -(n + 1)),
        "v": np.where(even, 2 * n + 1, -(2 * n + 1)),
        "w": np.where(even, 1, -1),
    }[kind]
    value = np.where(x == 1, at_one, np.where(x == -1, at_minus_one, value))
    return value


def _hermite_h(x, n):
    x2 = x + x
    return _recurrence(x, n, x2, lambda k, q, p: x2 * q - (2 * k) * p)


def _hermite_he(x, n):
    return _recurrence(x, n, x, lambda k, q, p: x * q - k * p)


def _laguerre(x, n):
    one_minus_x = 1 - x
    value = _recurrence(
        x, n, one_minus_x, lambda k, q, p: ((2 * k + one_minus_x) * q - k * p) / (k + 1)
    )
    return np.where(x == 0, 1, value)


def _legendre(x, n):
    value = _recurrence(x, n, x, lambda k, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))
    even = n % 2 == 0
    return np.where(x == 1, 1, np.where(x == -1, np.where(even, 1, -1), value))


_POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda x, n: _chebyshev("t", x, n),
    "chebyshev_polynomial_u": lambda x, n: _chebyshev("u", x, n),
    "chebyshev_polynomial_v": lambda x, n: _chebyshev("v", x, n),
    "chebyshev_polynomial_w": lambda x, n: _chebyshev("w", x, n),
    "shifted_chebyshev_polynomial_t": lambda x, n: _chebyshev("t", x + x - 1, n),
    "shifted_chebyshev_polynomial_u": lambda x, n: _chebyshev("u", x + x - 1, n),
    "shifted_chebyshev_polynomial_v": lambda x, n: _chebyshev("v", x + x - 1, n),
    "shifted_chebyshev_polynomial_w": lambda x, n: _chebyshev("w", x + x - 1, n),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


def special_polynomial(name: str, x, n) -> np.ndarray:
    """torch.special.<name>(x, n), the tensor(s) among x and n promoted to the result's
    floating type, a number standing for the other: the degree is n truncated to an integer,
    and a negative degree gives 0."""
    dtype = (x if isinstance(x, np.ndarray) else n).dtype
    _refuse_half(np.empty(0, dtype), name)
    x, n = np.broadcast_arrays(np.asarray(x), np.asarray(n))
    work = _work(x.astype(dtype, copy=False))
    with np.errstate(all="ignore"):
        degree = np.trunc(n).astype(np.int64)  # NaN degrees are caught by the where below
        value = _POLYNOMIALS[name](work, np.maximum(degree, 0))
        value = np.where(degree < 0, 0, value)
    return np.asarray(value).astype(dtype, copy=False)
