"""Numpy scalars read as the Python numbers PyTorch's argument parser makes of them.

A numpy scalar given for a number (a Scalar argument, or a Tensor argument of the
arithmetic ops that take numbers) keeps no dtype in PyTorch: it is read as a Python
number, so ``int8_tensor * np.float16(1.5)`` promotes as ``int8_tensor * 1.5`` does:

- a numpy integer is an int (a ``np.uint64`` beyond int64 is refused);
- ``np.complex128``, a subclass of complex, is a complex;
- every other numpy scalar (floats of any width, ``np.bool_``, ``np.complex64``) is read
  as a float, ``np.complex64`` by its real part (numpy warns that it drops the imaginary
  part).

``opgrad.ops.aten`` calls read their Scalar arguments as TorchScript does instead: only
``np.float64``, a subclass of float, is a number there (``is_aten_number``).
"""

from __future__ import annotations

from typing import Union

import numpy as np

_INT64_MAX = 2**63 - 1


def python_number(value: np.generic) -> Union[int, float, complex]:
    """The Python number PyTorch reads from the numpy scalar ``value``."""
    if isinstance(value, np.integer):
        number = int(value)
        if number > _INT64_MAX:  # read as a C long long, which has no room for it
            raise TypeError("an integer is required")
        return number
    if isinstance(value, complex):
        return complex(value)
    return float(value)


def is_aten_number(value) -> bool:
    """Whether an ``opgrad.ops.aten`` call takes ``value`` for a Scalar argument (numpy
    scalars other than ``np.float64`` are refused there)."""
    return not isinstance(value, np.generic) or isinstance(value, float)
