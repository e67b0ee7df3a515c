"""CPU kernels of histc and bincount (the quantile/cov/histogram family; quantile,
nanquantile, cov and corrcoef are composites in quantile_decompositions.py).

histc bins as PyTorch's linear histogram without local search: an element's bin is
``int((x - lo) * bins / (hi - lo))`` computed in the input's type, the last edge belongs to the last bin, and elements outside
``[lo, hi]`` (and NaN) are dropped. bincount accumulates weights one by one in the result's
type (``np.add.at``), as PyTorch's loop does.
"""

from __future__ import annotations

import numpy as np

from . import dtypes

__all__ = [
    "bincount",
    "histc",
    "histc_check",
    "histc_out_check",
    "lerp",
    "lerp_check",
    "round_decimals",
    "rounded",
]

_INT64 = np.dtype(np.int64)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


def histc_check(self, bins) -> None:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def histc_out_check(self, target) -> None:
    if target._data.dtype != self._data.dtype:
        raise RuntimeError(
            "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
            f"input {dtypes.cpp_type_name(self._data.dtype)} and hist "
            f"{dtypes.cpp_type_name(target._data.dtype)}"
        )


def _edge_text(value: float, from_data: bool, size: int) -> str:
    # PyTorch prints the edges with C++'s default stream format (%g); a NaN its vectorised
    # aminmax finds among several elements carries the sign bit
    if value != value:
        return "-nan" if from_data and size > 1 else "nan"
    return f"{value:g}"


def _outer_edges(a: np.ndarray, lo, hi):
    lo, hi = float(lo), float(hi)
    from_data = False
    if lo == hi and a.size:
        if a.dtype.kind == "c":
            raise NotImplementedError(
                f"\"aminmax_cpu\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
            )
        lo, hi = float(a.min()), float(a.max())
        from_data = True
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(
            f"torch.histc: range of [{_edge_text(lo, from_data, a.size)}, "
            f"{_edge_text(hi, from_data, a.size)}] is not finite"
        )
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


def histc(self: np.ndarray, bins: int, min, max) -> np.ndarray:
    lo, hi = _outer_edges(self, min, max)
    kind = self.dtype.kind
    if kind == "b":
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if kind != "f":
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{dtypes.scalar_type_name(self.dtype)}'"
        )
    # the edges and every step of the arithmetic in the input's type (float16's operators
    # round each step to float16, as c10::Half's do)
    work = self.dtype.type
    left, right = work(lo), work(hi)
    x = self.reshape(-1)
    x = x[(x >= left) & (x <= right)]
    with np.errstate(over="ignore"):
        pos = ((x - left) * work(bins) / (right - left)).astype(_INT64)
    pos[pos == bins] = bins - 1
    return np.bincount(pos, minlength=bins).astype(self.dtype)


def bincount(self: np.ndarray, weights, minlength: int) -> np.ndarray:
    if self.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{dtypes.scalar_type_name(self.dtype)}'"
        )
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if self.ndim == 1 and self.size == 0:
        return np.zeros(minlength, _INT64)
    if self.ndim != 1 or self.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != self.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    nbins = max(int(self.max()) + 1, minlength)
    if weights is None:
        return np.bincount(self.astype(np.intp, copy=False), minlength=nbins).astype(_INT64)
    # float weights sum in float, all others (ints, bool, half) in double
    kind = _FLOAT32 if weights.dtype == _FLOAT32 else _FLOAT64
    out = np.zeros(nbins, kind)
    np.add.at(out, self.astype(np.intp, copy=False), weights.astype(kind, copy=False))
    return out


# ---- floor, ceil, round and lerp ---------------------------------------------------------

_ROUNDERS = {"floor": np.floor, "ceil": np.ceil, "round": np.rint}


def rounded(self: np.ndarray, how: str) -> np.ndarray:
    """floor, ceil or round (halves to even): integers come back unchanged, bool is refused."""
    if self.dtype.kind == "b":
        raise NotImplementedError(f"\"{how}_vml_cpu\" not implemented for 'Bool'")
    if self.dtype.kind in "iu":
        return self.copy()
    return _ROUNDERS[how](self)


def round_decimals(self: np.ndarray, decimals: int) -> np.ndarray:
    """PyTorch's rounding to ``decimals`` places: ``rint(x * 10**d) / 10**d`` for d > 0,
    else ``rint(x / 10**-d) * 10**-d``, the power in the input's type (float for float16)."""
    if self.dtype.kind not in "fc":
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"  # PyTorch's two loops
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(self.dtype)}'"
        )
    work = self.dtype if self.dtype.itemsize >= 4 else _FLOAT32
    x = self.astype(work, copy=False)
    if decimals > 0:
        power = work.type(10.0**decimals)
        return (np.rint(x * power) / power).astype(self.dtype, copy=False)
    power = work.type(10.0 ** (-decimals))
    return (np.rint(x / power) * power).astype(self.dtype, copy=False)


def lerp_check(self, end, weight) -> None:
    """lerp's refusals: end (and a weight of one dimension or more) in self's dtype."""
    expected = self._data.dtype
    if end._data.dtype != expected:
        raise RuntimeError(
            f"expected dtype {dtypes.cpp_type_name(expected)} for `end` but got dtype "
            f"{dtypes.cpp_type_name(end._data.dtype)}"
        )
    if hasattr(weight, "_data") and weight._data.ndim and weight._data.dtype != expected:
        raise RuntimeError(
            f"expected dtype {dtypes.cpp_type_name(expected)} for `weight` but got dtype "
            f"{dtypes.cpp_type_name(weight._data.dtype)}"
        )


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` in float64 rounded once (as a fused multiply-add): the product's
    rounding error (Dekker's split) and the sum's (Knuth's two-sum) are added back."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        split = 134217729.0  # 2**27 + 1
        ta, tb = split * a, split * b
        a_hi, b_hi = ta - (ta - a), tb - (tb - b)
        a_lo, b_lo = a - a_hi, b - b_hi
        product_error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
        s = p + c
        back = s - p
        sum_error = (p - (s - back)) + (c - back)
        fused = s + (sum_error + product_error)
        # where the splitting overflowed (huge operands), the plain result
        return np.where(np.isfinite(fused), fused, s)


def lerp(self: np.ndarray, end: np.ndarray, weight) -> np.ndarray:
    """PyTorch's two-sided lerp as its CPU kernels compute it: one fused multiply-add,
    ``fma(w, end - self, self)`` for ``|w| < 0.5``, else ``fma(w - 1, end - self, end)``,
    in the input's opmath type (float for float16)."""
    dtype = self.dtype
    if dtype.kind not in "fc":
        kernel = "lerp_kernel_tensor" if isinstance(weight, np.ndarray) else "lerp_kernel_scalar"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dtype)}'"
        )
    work = dtype if dtype.itemsize >= 4 else _FLOAT32
    a = self.astype(work, copy=False)
    b = end.astype(work, copy=False)
    w = np.asarray(weight).astype(work, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = b - a
        small = np.abs(w) < 0.5
        coeff = np.where(small, w, w - work.type(1))
        base = np.where(small, a, b)
        if work == _FLOAT64:
            result = _fma64(coeff, diff, base)
        else:
            # a float product is exact in double: one rounding of the sum, then to float
            result = coeff.astype(_FLOAT64) * diff.astype(_FLOAT64) + base.astype(_FLOAT64)
    return np.asarray(result).astype(dtype, copy=False)
