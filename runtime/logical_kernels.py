"""CPU kernels of the predicates and the bitwise ops: isinf, isposinf, isneginf, signbit,
isin, allclose, equal, fmax, fmin, bitwise and/or/xor/not and the shifts.

Operands arrive cast to the op's result type. The bitwise ops exist for integer and bool
types only (PyTorch's dispatch refuses the rest by its kernel's name), and the shifts
give PyTorch's answers where C's shift is undefined: a shift by a negative amount or by
the width of the type or more gives 0 to the left, and the sign to the right.
"""

from __future__ import annotations

import numpy as np

from . import dtypes

__all__ = [
    "allclose",
    "bitwise",
    "bitwise_not",
    "closeness_check",
    "equal",
    "isin",
    "isin_check",
    "isinf",
    "isneginf",
    "isposinf",
    "shift_left",
    "shift_right",
    "signbit",
]

_BOOL = np.dtype(np.bool_)


def _not_implemented(kernel: str, a: np.ndarray) -> NotImplementedError:
    name = dtypes.scalar_type_name(a.dtype)
    return NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _floating(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc"


def _none_of(a: np.ndarray) -> np.ndarray:
    return np.zeros(a.shape, _BOOL)


def isinf(a: np.ndarray) -> np.ndarray:
    return np.isinf(a) if _floating(a) else _none_of(a)


def isposinf(a: np.ndarray) -> np.ndarray:
    return np.isposinf(a) if a.dtype.kind == "f" else _none_of(a)


def isneginf(a: np.ndarray) -> np.ndarray:
    return np.isneginf(a) if a.dtype.kind == "f" else _none_of(a)


def signbit(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.signbit(a)
    return a < 0 if a.dtype.kind == "i" else _none_of(a)


def isin_check(*operands) -> None:
    """isin's refusal of bool tensors, before the operands meet in their common type."""
    for a in operands:
        if hasattr(a, "_data") and a._data.dtype == _BOOL:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")


def isin(elements, test_elements, invert: bool) -> np.ndarray:
    """``elements`` found among ``test_elements`` (both already of their common type; NaN
    is found nowhere)."""
    return np.isin(elements, test_elements, invert=invert)


def closeness_check(self, other, rtol: float, atol: float) -> None:
    """isclose's and allclose's refusals, on the tensors as given (no promotion)."""
    if self._data.dtype != other._data.dtype:
        a, b = (dtypes.scalar_type_name(t._data.dtype) for t in (self, other))
        raise RuntimeError(f"{a} did not match {b}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")


def allclose(a, b, rtol: float, atol: float, equal_nan: bool) -> bool:
    """Every element of ``a`` within ``atol + rtol * |b|`` of ``b`` (isclose's rule)."""
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan and _floating(a):
            close |= np.isnan(a) & np.isnan(b)
        if _floating(a) and (rtol or atol):
            error = np.abs(a - b)
            close |= np.isfinite(error) & (error <= atol + np.abs(rtol * b))
    return bool(close.all())


def equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same sizes and equal values (NaN equals nothing); no broadcasting."""
    return a.shape == b.shape and bool((a == b).all())


def bitwise(op, a: np.ndarray, b, kernel: str) -> np.ndarray:
    """``op`` (np.bitwise_and, ...) on integer or bool operands."""
    if _floating(a):
        raise _not_implemented(kernel, a)
    return op(a, b)


def bitwise_not(a: np.ndarray) -> np.ndarray:
    if _floating(a):
        raise _not_implemented("bitwise_not_cpu", a)
    return np.invert(a)


def _shift_amounts(a: np.ndarray, b, kernel: str):
    """The shift amounts that C defines (0 where it does not) and where they hold."""
    if _floating(a) or a.dtype == _BOOL:
        raise _not_implemented(kernel, a)
    b = np.asarray(b, a.dtype)
    defined = (b >= 0) & (b < a.dtype.itemsize * 8)
    return np.where(defined, b, 0).astype(a.dtype), defined


def shift_left(a: np.ndarray, b) -> np.ndarray:
    amounts, defined = _shift_amounts(a, b, "lshift_cpu")
    # shifted as unsigned, so bits leave at the top as PyTorch's kernel lets them
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    shifted = np.left_shift(a.view(unsigned), amounts.view(unsigned)).view(a.dtype)
    return np.where(defined, shifted, 0).astype(a.dtype)


def shift_right(a: np.ndarray, b) -> np.ndarray:
    amounts, defined = _shift_amounts(a, b, "rshift_cpu")
    beyond = np.right_shift(a, a.dtype.itemsize * 8 - 1) if a.dtype.kind == "i" else 0
    return np.where(defined, np.right_shift(a, amounts), beyond).astype(a.dtype)
