"""Whether a number fits a dtype, as PyTorch's checked conversions decide.

PyTorch refuses a Python number that a tensor of the target dtype cannot hold
(``fill_``, ``full``, ``masked_fill``, ``clamp``'s bounds, ``x[i] = v``,
``tensor(data, dtype=...)``) instead of storing garbage:

- bool holds anything (non-zero is True);
- an integer dtype refuses NaN, +-inf and values beyond its range; a float is
  compared with the range in double precision, so ``2.0**63`` still passes for
  int64, as in PyTorch; unsigned dtypes take a negative integer down to
  ``-max`` (it wraps, two's complement);
- a float dtype keeps NaN and +-inf, and refuses finite values beyond its
  largest finite value (``1e40`` into float32, ``70000`` into float16);
- a complex number fits a real dtype only when its imaginary part is zero.

Everything here is generic over numpy dtypes, so new dtypes need only a name.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

# The C++ type PyTorch's Scalar conversion names in its message, by numpy dtype name.
_CPP_NAMES = {
    "int64": "int64_t",
    "int32": "int",
    "int16": "int16_t",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
}

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_limits_cache: dict = {}


def _limits(dtype: np.dtype) -> tuple:
    """(lowest, largest) finite value of ``dtype``: exact ints for integer dtypes, floats for
    float dtypes."""
    found = _limits_cache.get(dtype)
    if found is None:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            found = (int(info.min), int(info.max))
        else:
            try:
                info = np.finfo(dtype)
            except ValueError:  # bfloat16 and other ml_dtypes types
                import ml_dtypes

                info = ml_dtypes.finfo(dtype)
            found = (float(info.min), float(info.max))
        _limits_cache[dtype] = found
    return found


def check_scalar_range(value) -> None:
    """A Python int a PyTorch Scalar can hold: int64 or uint64 (its OverflowError texts)."""
    if value.__class__ is int and not _INT64_MIN <= value <= _UINT64_MAX:
        if value > 0:
            raise OverflowError("int too big to convert")
        raise OverflowError("can't convert negative int to unsigned")


def fits(value, dtype: np.dtype) -> bool:
    """Whether the number ``value`` converts to ``dtype`` without overflow (module doc)."""
    kind = dtype.kind
    cls = value.__class__
    if kind in "bc" or cls is bool or cls is np.bool_:
        return True
    if cls is not int and cls is not float:  # numpy scalars, complex numbers
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            if value.imag:
                return False
            value = value.real
        value = int(value) if isinstance(value, numbers.Integral) else float(value)
        cls = value.__class__
    low, high = _limits(dtype)
    if cls is int:
        if kind == "u" and value < 0:
            return -value <= high  # wraps, as C++ unsigned arithmetic does
        return low <= value <= high
    if low <= value <= high:
        return True
    return kind == "f" and (value != value or math.isinf(value))  # NaN and inf stay floats


def overflow_error(dtype: np.dtype, name: str = "") -> RuntimeError:
    type_name = name or _CPP_NAMES.get(dtype.name, dtype.name)
    return RuntimeError(f"value cannot be converted to type {type_name} without overflow")


def check_fits(value, dtype: np.dtype) -> None:
    """PyTorch's RuntimeError for a number that ``dtype`` cannot hold. A float value for a
    float64 result (the common case) returns at once."""
    cls = value.__class__
    if dtype.kind == "f" and dtype.itemsize >= 4:  # float32/float64: the common case
        if cls is float:
            if dtype.itemsize == 8 or -_FLOAT32_MAX <= value <= _FLOAT32_MAX:
                return
        elif cls is int and _INT64_MIN <= value <= _UINT64_MAX:
            return  # every Scalar int fits (rounded) in float32 and float64
    if cls is int and not _INT64_MIN <= value <= _UINT64_MAX:
        check_scalar_range(value)
    if not fits(value, dtype):
        raise overflow_error(dtype)


def check_array_fits(values: np.ndarray, dtype: np.dtype) -> None:
    """``tensor(data, dtype=...)``'s check of its elements (``values`` read from the data in
    a wide dtype) against an integer ``dtype``: the same rule as ``fits``, vectorized, and
    its message names the dtype as ``int64``, not ``int64_t``. Values read as float16 or
    float32 come from numpy scalars of those types, which PyTorch refuses as integers
    (check_integer_data has the element-wise rule)."""
    if dtype.kind not in "iu" or values.dtype.kind not in "iuf" or values.size == 0:
        return
    if values.dtype.kind == "f" and values.dtype.itemsize < 8:
        raise TypeError(f"'numpy.{values.dtype.name}' object cannot be interpreted as an integer")
    low, high = _limits(dtype)
    if values.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = bool(np.all((values >= low) & (values <= high)))  # NaN compares False
    else:
        smallest = -high if dtype.kind == "u" else low
        ok = bool(values.min() >= smallest and values.max() <= high)
    if not ok:
        raise overflow_error(dtype, dtype.name)


def check_integer_data(data) -> None:
    """PyTorch's errors for Python data an integer tensor cannot be made of, each element
    read as C++ reads a ``long long`` from Python: an int beyond int64 overflows (its
    ValueError), a float (``np.float64`` too) is truncated, anything else goes through
    ``__index__`` (numpy ``float16``/``float32`` and ``bool`` scalars, complex numbers and
    float tensors are refused with Python's own TypeError)."""
    if isinstance(data, (list, tuple)):
        for item in data:
            check_integer_data(item)
    elif data.__class__ is int:
        if not _INT64_MIN <= data <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
    elif not isinstance(data, float):
        operator.index(data)
