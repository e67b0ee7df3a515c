"""CPU kernels of the upsampling ops (nearest, nearest-exact, linear, bicubic over the last
1-3 dimensions) and their backward ops (``k.<fn>`` in derivatives.yaml).

Resampling is separable: per spatial axis, each output position reads a few input
positions (its taps) with one weight each. The forward gathers the taps of the last axis
first and works outwards, as PyTorch's CPU kernel nests its sums; the backward scatters
(adds) the gradient back tap by tap, one axis at a time. No loop runs over pixels.

The taps follow PyTorch's index arithmetic to the rounding: the scale is the user's
scale factor when given (``1 / scale``), else ``in / out``; source indices are computed
in the compute type (float32 for float16 inputs); ``floorf`` rounds through float32 even
for float64; and where PyTorch's CPU build fuses ``a * b + c`` into one rounding (its
AVX2 kernels: the forward ops and the linear backward), the same is done here.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from . import dtypes
from .kernel_support import fused_multiply_add as _fused
from .kernel_support import in_layout_of, opmath, opmath_dtype, shape_text

__all__ = [
    "upsample_check",
    "upsample",
    "upsample_backward_check",
    "upsample_backward",
]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U8 = np.dtype(np.uint8)
_DIM_LETTERS = {1: "W", 2: "HW", 3: "DHW"}

#: the name PyTorch's dtype refusal prints for each forward op
_FORWARD_KERNEL_NAME = {
    ("nearest", 1): "compute_indices_weights_nearest",
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest", 3): "compute_indices_weights_nearest",
    ("linear", 1): "compute_indices_weights_linear",
    ("linear", 2): "upsample_bilinear2d_channels_last",
    ("linear", 3): "compute_indices_weights_linear",
    ("cubic", 2): "compute_indices_weights_cubic",
}


# ---- checks ---------------------------------------------------------------------------------


def _sizes_text(sizes, nd: int) -> str:
    return ", ".join(f"{letter}: {s}" for letter, s in zip(_DIM_LETTERS[nd], sizes))


def _common_check(input_size: Sequence[int], output_size: Sequence[int], nd: int) -> None:
    """PyTorch's upsample_Nd_common_check: lengths, then positive sizes."""
    if len(output_size) != nd:
        raise RuntimeError(
            f"It is expected output_size equals to {nd}, but got size {len(output_size)}"
        )
    if len(input_size) != nd + 2:
        raise RuntimeError(
            f"It is expected input_size equals to {nd + 2}, but got size {len(input_size)}"
        )
    spatial = list(input_size[2:])
    if any(s <= 0 for s in spatial) or any(s <= 0 for s in output_size):
        joint = " and output" if nd == 1 else " output"
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({_sizes_text(spatial, nd)}){joint} ({_sizes_text(output_size, nd)})"
        )


def _mode_family(mode: str) -> str:
    return "nearest" if mode.startswith("nearest") else mode


def upsample_check(self, output_size, nd: int, mode: str) -> None:
    """The forward ops' refusals, in PyTorch's order and words."""
    x = self._data
    _common_check(x.shape, output_size, nd)
    if x.size == 0 and any(s == 0 for s in x.shape[1:]):
        raise RuntimeError(
            f"Non-empty {nd + 2}D data tensor expected but got a tensor with sizes "
            f"{shape_text(x.shape)}"
        )
    family = _mode_family(mode)
    if x.dtype.kind == "f" or (x.dtype == _U8 and (family == "nearest" or nd == 2)):
        return  # uint8 bilinear and bicubic: separable_resample_kernels' fixed point
    name = _FORWARD_KERNEL_NAME[(family, nd)]
    raise NotImplementedError(
        f"\"{name}\" not implemented for '{dtypes.scalar_type_name(x.dtype)}'"
    )


def upsample_backward_check(grad_output, output_size, input_size, nd: int, name: str) -> None:
    g = grad_output._data
    _common_check(input_size, output_size, nd)
    expected = (input_size[0], input_size[1]) + tuple(output_size)
    if nd == 1:  # PyTorch's check_dim_size, dimension by dimension
        for dim, size in enumerate(expected):
            if g.ndim != 3 or g.shape[dim] != size:
                got = g.shape[dim] if dim < g.ndim else "?"
                raise RuntimeError(
                    f"Expected a tensor of dimension 3 and tensor.size[{dim}] == {size} but got: "
                    f"dimension {g.ndim} and tensor.size[{dim}] = {got}"
                )
    else:
        if g.ndim != nd + 2:
            raise RuntimeError(
                f"Expected grad_output to be a tensor of dimension {nd + 2} but got: "
                f"dimension {g.ndim}"
            )
        for dim, size in enumerate(expected):
            if g.shape[dim] != size:
                raise RuntimeError(
                    "Expected grad_output to have the same shape as output; "
                    f"output.size({dim}) = {size} but got grad_output.size({dim}) = {g.shape[dim]}"
                )
    if g.dtype.kind != "f":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{dtypes.scalar_type_name(g.dtype)}'"
        )


# ---- index arithmetic -------------------------------------------------------------------------


def _floorf(real: np.ndarray) -> np.ndarray:
    """C's ``floorf``: the value rounded to float32 first, whatever its type."""
    return np.floor(real.astype(_F32)).astype(np.int64)


def _compute_scale(in_size: int, out_size: int, scale: Optional[float], ct) -> np.generic:
    """PyTorch's compute_scales_value: the user's scale when given, else in / out."""
    if scale is not None and scale > 0:
        return ct.type(1.0 / scale)
    return ct.type(in_size) / ct.type(out_size)


def _area_scale(in_size, out_size, align_corners: bool, scale, ct) -> np.generic:
    if align_corners:
        return ct.type(in_size - 1) / ct.type(out_size - 1) if out_size > 1 else ct.type(0)
    return _compute_scale(in_size, out_size, scale, ct)


def _area_source_index(scale, out_size, align_corners, cubic, ct, fused) -> np.ndarray:
    """Each output position's real-valued source position (area_pixel_compute_source_index)."""
    i = np.arange(out_size, dtype=ct)
    if align_corners:
        return scale * i
    half = i + ct.type(0.5)
    real = _fused(half, scale, -0.5, ct) if fused else half * scale - ct.type(0.5)
    if not cubic:
        real = np.where(real < 0, ct.type(0), real)
    return real


def _guard(real: np.ndarray, in_size: int, ct) -> Tuple[np.ndarray, np.ndarray]:
    """(index, lambda): the floor clamped to the last position, the fraction to [0, 1]."""
    index = np.minimum(_floorf(real), in_size - 1)
    lam = np.clip(real - index.astype(ct), ct.type(0), ct.type(1))
    return index, lam


def _cubic_coefficients(t: np.ndarray, ct, fused: bool) -> List[np.ndarray]:
    """The four cubic-convolution weights (A = -0.75) for fractions ``t``."""
    a = ct.type(-0.75)

    def fma(x, y, z):
        return _fused(x, y, z, ct) if fused else x * y + z

    # PyTorch's AVX2 build fuses all but the last step of each polynomial
    def near(x):  # |x| <= 1: ((A + 2) x - (A + 3)) x^2 + 1
        return fma(a + 2, x, -(a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A
        return fma(fma(a, x, -5 * a), x, 8 * a) * x - 4 * a

    one = ct.type(1)
    return [far(t + one), near(t), near(one - t), far(one - t + one)]


def _nearest_index_forward(in_size, out_size, scale, exact: bool, ct) -> np.ndarray:
    s = _compute_scale(in_size, out_size, scale, ct)
    if exact:
        real = _area_source_index(s, out_size, False, False, ct, fused=True)
        index = _floorf(real.astype(_F64) + 0.5)
    else:
        index = _floorf(s * np.arange(out_size, dtype=ct))
    return np.minimum(index, in_size - 1)


def _nearest_index_backward(in_size, out_size, scale, exact: bool) -> np.ndarray:
    """PyTorch's nearest_idx / nearest_exact_idx (its backward kernel's: float arithmetic,
    and exact copies for equal and doubled sizes), which can differ from the forward's."""
    o = np.arange(out_size)
    if not exact and out_size == in_size:
        return o
    if not exact and out_size == 2 * in_size:
        return o >> 1
    s = _compute_scale(in_size, out_size, scale, _F32)
    if exact:
        index = _floorf((o + 0.5) * np.float64(s))
    else:
        index = _floorf(o.astype(_F32) * s)
    return np.minimum(index, in_size - 1)


Taps = List[Tuple[np.ndarray, Optional[np.ndarray]]]


def _taps(mode, in_size, out_size, scale, align_corners, ct, wt, backward: bool, nd: int) -> Taps:
    """The (indices, weights) pairs one axis reads; nearest taps have no weight."""
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        if backward or nd == 2:  # PyTorch's 2-d forward kernel indexes as its backward
            return [(_nearest_index_backward(in_size, out_size, scale, exact), None)]
        return [(_nearest_index_forward(in_size, out_size, scale, exact, ct), None)]
    s = _area_scale(in_size, out_size, align_corners, scale, ct)
    if mode == "linear":
        if out_size == in_size:
            i = np.arange(out_size)
            return [(i, np.ones(out_size, ct)), (i, np.zeros(out_size, ct))]
        real = _area_source_index(s, out_size, align_corners, False, ct, fused=True)
        index0, lam1 = _guard(real, in_size, ct)
        index1 = index0 + (index0 < in_size - 1)
        lam1 = lam1.astype(wt)  # the forward stores its weights in the input's dtype
        lam0 = (ct.type(1) - lam1.astype(ct)).astype(wt)
        return [(index0, lam0.astype(ct)), (index1, lam1.astype(ct))]
    # bicubic: PyTorch's backward (a plain C++ file) computes without fused multiply-adds
    fused = not backward
    real = _area_source_index(s, out_size, align_corners, True, ct, fused=fused)
    index, lam = _guard(real, in_size, ct)
    coefficients = _cubic_coefficients(lam, ct, fused)
    if not backward:
        coefficients = [c.astype(wt).astype(ct) for c in coefficients]
    return [(np.clip(index + j - 1, 0, in_size - 1), coefficients[j]) for j in range(4)]


def _weighted_sum(terms, ct) -> np.ndarray:
    """``t0 * w0 + t1 * w1 + ...`` rounded as PyTorch's AVX2 kernel rounds it: the second
    product first, then each other product fused into the sum."""
    (t0, w0), (t1, w1) = terms[0], terms[1]
    acc = _fused(t0, w0, t1 * w1, ct)
    for t, w in terms[2:]:
        acc = _fused(t, w, acc, ct)
    return acc


def _shape_along(w: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return w.reshape(shape)


# ---- the ops ----------------------------------------------------------------------------------


def upsample(self, output_size, scales, mode: str, align_corners: bool = False):
    """``self`` resampled to ``output_size`` over its last ``len(output_size)`` dims."""
    nd = len(output_size)
    if self.shape[0] == 0:
        return in_layout_of(np.empty(self.shape[:2] + tuple(output_size), self.dtype), self)
    if self.dtype == _U8 and mode in ("linear", "cubic"):  # 2-d only (upsample_check)
        from .separable_resample_kernels import upsample_separable_uint8

        return upsample_separable_uint8(self, output_size, scales, mode, align_corners, False)
    ct = opmath_dtype(self.dtype) if self.dtype.kind == "f" else _F32
    x = opmath(self) if mode.startswith("nearest") else opmath(self).astype(ct, copy=False)
    for k in reversed(range(nd)):  # the last axis first: PyTorch's innermost sum
        axis = x.ndim - nd + k
        taps = _taps(
            mode,
            self.shape[axis],
            output_size[k],
            scales[k],
            align_corners,
            ct,
            self.dtype,
            backward=False,
            nd=nd,
        )
        if taps[0][1] is None:
            x = np.take(x, taps[0][0], axis=axis)
            continue
        terms = [(np.take(x, i, axis=axis), _shape_along(w, axis, x.ndim)) for i, w in taps]
        x = _weighted_sum(terms, ct)
    return in_layout_of(np.ascontiguousarray(x.astype(self.dtype, copy=False)), self)


def upsample_backward(grad_output, output_size, input_size, scales, mode, align_corners=False):
    """The gradient of ``upsample``: each output's gradient added, times its weight, onto
    the input positions it read."""
    nd = len(output_size)
    ct = opmath_dtype(grad_output.dtype)
    g = opmath(grad_output)
    for k in range(nd):
        axis = g.ndim - nd + k
        in_size = input_size[2 + k]
        taps = _taps(
            mode, in_size, output_size[k], scales[k], align_corners, ct, ct, backward=True, nd=nd
        )
        moved = np.moveaxis(g, axis, 0)
        acc = np.zeros((in_size,) + moved.shape[1:], ct)
        for index, w in taps:
            contribution = moved if w is None else moved * w.reshape((-1,) + (1,) * (g.ndim - 1))
            np.add.at(acc, index, contribution)
        g = np.moveaxis(acc, 0, axis)
    result = np.ascontiguousarray(g.astype(grad_output.dtype, copy=False))
    # PyTorch's bicubic and 3-d nearest backward kernels allocate contiguous; the others keep
    # grad_output's memory format
    if mode == "cubic" or (nd == 3 and mode.startswith("nearest")):
        return result
    return in_layout_of(result, grad_output)
