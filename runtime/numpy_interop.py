"""The numpy arrays ``from_numpy``, ``as_tensor`` and ``tensor`` take, checked as PyTorch
checks them: a dtype opgrad holds, strides in whole elements and never negative, native
byte order; a read-only array warns once and is then written through, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .numpy_kernels import memory_owner
from .user_warnings import warn_user

_NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program."
)
_warned_not_writable = False


def checked_array(array: np.ndarray, warn_if_not_writable: bool) -> np.ndarray:
    """``array`` as a tensor's memory, after PyTorch's checks in its order: the not-writable
    warning (once per program), the dtype (TypeError), then the strides and the byte order
    (ValueError). The result shares ``array``'s memory and is writable where PyTorch's
    tensor would be."""
    global _warned_not_writable
    read_only = not array.flags.writeable
    if read_only and warn_if_not_writable and not _warned_not_writable:
        _warned_not_writable = True
        warn_user(_NOT_WRITABLE)
    dtype = dtypes.from_numpy_dtype(array.dtype)
    item = array.itemsize
    strides = array.strides
    for stride in strides:
        if stride % item:
            raise ValueError(
                "given numpy array strides not a multiple of the element byte size. Copy the "
                "numpy array to reallocate the memory."
            )
    for stride in strides:
        if stride < 0:
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with "
                "negative strides are not currently supported. (You can probably work around "
                "this by making a copy of your array  with array.copy().) "
            )
    if not array.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported."
        )
    if array.dtype is not dtype.np:
        array = array.view(dtype.np)  # the canonical descriptor, same memory
    return _writable(array) if read_only else array


class _WritableMemory:
    """A read-only array's memory offered to numpy as writable (numpy refuses to lift the
    flag itself); it keeps the array, and so the memory, alive."""

    __slots__ = ("__array_interface__", "_array")

    def __init__(self, array: np.ndarray) -> None:
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface
        self._array = array


def _writable(array: np.ndarray) -> np.ndarray:
    """A read-only array as PyTorch's tensor of it behaves: it shares the memory and writes
    reach the array (whose flag stays as it was).

    Two exceptions: an array with stride-0 dims stays read-only, since opgrad refuses
    writes to it as PyTorch does to a tensor whose elements share memory; memory that
    cannot be written at all (an immutable ``bytes``, a read-only mmap) is copied, where
    PyTorch would crash or corrupt it; the copy reads the same values, as nothing can
    change them."""
    if any(s == 0 and n > 1 for s, n in zip(array.strides, array.shape)):
        return array
    if not _memory_is_writable(array):
        return np.array(array, copy=True, order="K")
    return np.asarray(_WritableMemory(array))


def _memory_is_writable(array: np.ndarray) -> bool:
    """Whether the memory under ``array`` may be written (whatever numpy's flag says)."""
    holder = memory_owner(array).base
    if holder is None:
        return True  # numpy allocated it
    try:
        return not memoryview(holder).readonly
    except TypeError:
        return False  # no buffer to ask: assume it is not ours to write
