"""``opgrad.finfo`` and ``opgrad.iinfo``: the numerical limits of a floating or integral
dtype, as torch reports them (numpy's finfo and iinfo supply the numbers)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes

__all__ = ["finfo", "iinfo"]


def _checked_dtype(function: str, type) -> "dtypes.dtype":
    if not isinstance(type, dtypes.dtype):
        raise TypeError(
            f"{function}(): argument 'type' (position 1) must be opgrad.dtype, "
            f"not {type.__class__.__name__}"
        )
    return type


def _short(value: float) -> str:
    """A limit as torch prints it: C's %g, six significant digits."""
    return f"{value:g}"


class finfo:
    """The limits of a floating dtype (the default dtype when none is given)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: Optional["dtypes.dtype"] = None) -> None:
        type = dtypes.get_default_dtype() if type is None else _checked_dtype("finfo", type)
        if not type.is_floating_point:
            raise TypeError(
                "opgrad.finfo() requires a floating point input type. Use opgrad.iinfo to "
                "handle 'opgrad.finfo'"
            )
        info = np.finfo(type.np)
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0**-info.precision  # torch: a power of ten, not numpy's rounding
        self.dtype = type.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
            f"max={_short(self.max)}, eps={_short(self.eps)}, "
            f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
            f"dtype={self.dtype})"
        )

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None


class iinfo:
    """The limits of an integral dtype."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: "dtypes.dtype") -> None:
        type = _checked_dtype("iinfo", type)
        if type is dtypes.bool_:
            raise TypeError("opgrad.bool is not supported by opgrad.iinfo")
        if type.category != 1:
            raise TypeError(
                "opgrad.iinfo() requires an integer input type. Use opgrad.finfo to handle "
                "'opgrad.iinfo'"
            )
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        # torch prints the limits through C's %g, as floats
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None
