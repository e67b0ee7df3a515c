"""CPU kernels of PyTorch's separable resampling path (``k.<fn>`` in derivatives.yaml): the
antialiased ops ``_upsample_{bilinear,bicubic,lanczos}2d_aa`` with their backward ops, and
uint8 bilinear / bicubic resampling with or without antialias.

One spatial axis at a time (the width first, then the height; an axis whose size does
not change is left alone), each output position reads a contiguous run of input positions
``xmin .. xmin + xsize - 1`` with one weight per tap. With antialias, the filter (triangle,
Keys cubic with a = -0.5, Lanczos-3) is stretched by the downscale factor, so every input
position under the output pixel contributes, and the weights are normalised to sum to 1.

Floating inputs compute the weights and the sums in their own dtype, tap by tap in
PyTorch's order. uint8 inputs compute the weights in float64, turn them into int16
fixed-point numbers (as many fraction bits as the largest weight allows), sum the products
as integers with a rounding half, shift the fraction away and clamp to 0..255 after each
axis, as PyTorch's CPU kernel does: the results are bit for bit PyTorch's.

The loops below run over the taps of one output position (a small number fixed by the
filter and the scale), never over pixels.
"""

from __future__ import annotations

from typing import Callable, Sequence, Tuple

import numpy as np

from . import dtypes
from .kernel_support import fused_multiply_add as _fused
from .kernel_support import in_layout_of, shape_text
from .memory_formats import contiguous_format, suggest_memory_format
from .resample_kernels import _area_scale, _area_source_index, _common_check, _guard
from .resample_kernels import upsample_backward_check

__all__ = [
    "upsample_aa",
    "upsample_aa_check",
    "upsample_aa_backward",
    "upsample_aa_backward_check",
    "upsample_separable_uint8",
]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U8 = np.dtype(np.uint8)
#: the dtypes PyTorch's separable kernel computes (others are only copied)
_COMPUTED = (_F32, _F64, _U8)

#: the filters' widths in input positions at scale 1 (PyTorch's interp_size)
_INTERP_SIZE = {"linear": 2, "cubic": 4, "lanczos": 6}


# ---- the filters ------------------------------------------------------------------------------


def _triangle(x: np.ndarray, ct) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1, (1.0 - x.astype(_F64)).astype(ct), ct.type(0))


def _keys_cubic(a: float, fused: bool) -> Callable:
    """The cubic-convolution kernel with parameter ``a`` (-0.5 with antialias, as Pillow;
    -0.75 without, as OpenCV)."""

    def cubic(x: np.ndarray, ct) -> np.ndarray:
        A = ct.type(a)

        def fma(p, q, r):
            return _fused(p, q, r, ct) if fused else p * q + r

        # PyTorch's build fuses every multiply-add of the two polynomials
        x = np.abs(x)
        near = fma(fma(A + 2, x, -(A + 3)) * x, x, ct.type(1))  # |x| < 1
        far = fma(fma(fma(A, x, -5 * A), x, 8 * A), x, -4 * A)  # 1 <= |x| < 2
        return np.where(x < 1, near, np.where(x < 2, far, ct.type(0))).astype(ct)

    return cubic


def _sinc(x: np.ndarray, ct) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        px = x * ct.type(np.pi)
        return np.where(x == 0, ct.type(1), np.sin(px) / px).astype(ct)


def _lanczos3(x: np.ndarray, ct) -> np.ndarray:
    x = np.abs(x)
    third = (x.astype(_F64) / 3.0).astype(ct)
    return np.where(x < 3, _sinc(x, ct) * _sinc(third, ct), ct.type(0)).astype(ct)


def _aa_filter(mode: str, fused: bool) -> Callable:
    if mode == "linear":
        return _triangle
    if mode == "cubic":
        return _keys_cubic(-0.5, fused)
    return _lanczos3


# ---- per-axis taps ----------------------------------------------------------------------------

#: an axis's taps: first input position per output (int64), how many taps each output reads
#: and their weights (outputs x max taps, zero past each output's count)
Taps = Tuple[np.ndarray, np.ndarray, np.ndarray]


def _aa_taps(
    mode: str, in_size: int, out_size: int, scale, align_corners: bool, ct, backward: bool
) -> Taps:
    """The antialias filter's taps for one axis, computed in ``ct`` with PyTorch's roundings
    (double intermediates where its C++ mixes in double literals)."""
    interp_size = _INTERP_SIZE[mode]
    s = _area_scale(in_size, out_size, align_corners, scale, ct)
    support = ct.type(interp_size * 0.5 * float(s)) if s >= 1 else ct.type(interp_size * 0.5)
    # the forward takes ceil of the support as it is, the backward through float32 (ceilf)
    ceil = np.ceil(np.float32(support)) if backward else np.ceil(support)
    max_taps = int(ceil) * 2 + 1
    center = (float(s) * (np.arange(out_size, dtype=_F64) + 0.5)).astype(ct)
    invscale = ct.type(1.0 / float(s)) if s >= 1 else ct.type(1)
    xmin = np.maximum(np.trunc((center - support).astype(_F64) + 0.5).astype(np.int64), 0)
    xmax = np.trunc((center + support).astype(_F64) + 0.5).astype(np.int64)
    xsize = np.clip(np.minimum(xmax, in_size) - xmin, 0, max_taps)
    j = np.arange(max_taps)
    offset = ((j[None, :] + xmin[:, None]).astype(ct) - center[:, None]).astype(_F64) + 0.5
    w = _aa_filter(mode, fused=True)((offset * float(invscale)).astype(ct), ct)
    inside = j[None, :] < xsize[:, None]
    w = np.where(inside, w, ct.type(0))
    total = w[:, 0].copy()
    for k in range(1, max_taps):  # PyTorch's running sum, tap by tap
        total = total + w[:, k]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where((total != 0)[:, None] & inside, w / total[:, None], w).astype(ct)
    return xmin, xsize, w


def _interp_taps(mode: str, in_size: int, out_size: int, scale, align_corners: bool):
    """Without antialias (uint8 only): the float path's taps in float64, with the taps that
    fall outside the input folded onto the border positions, and PyTorch's running
    maximum of the partial sums (it sizes the fixed-point weights)."""
    interp_size = _INTERP_SIZE[mode]
    cubic = mode == "cubic"
    s = _area_scale(in_size, out_size, align_corners, scale, _F64)
    real = _area_source_index(s, out_size, align_corners, cubic, _F64, fused=True)
    index, lam = _guard(real, in_size, _F64)
    support = interp_size // 2
    lo = index - support + 1
    xmin = np.maximum(lo, 0)
    xsize = np.clip(np.minimum(index + support + 1, in_size) - xmin, 0, interp_size)
    filt = _triangle if not cubic else _keys_cubic(-0.75, fused=True)
    w = np.zeros((out_size, interp_size), _F64)
    running_max = np.zeros(out_size, _F64)
    slot = np.zeros(out_size, np.int64)
    rows = np.arange(out_size)
    for j in range(interp_size):
        tap = filt(np.float64(j + 1 - support) - lam, _F64)
        position = lo + j
        slot = np.where(position <= 0, 0, np.where(position >= in_size - 1, xsize - 1, slot))
        w[rows, slot] += tap
        running_max = np.maximum(running_max, w[rows, slot])
        slot = slot + 1
    return xmin, xsize, w, running_max


# ---- applying one axis -------------------------------------------------------------------------


def _gather(x: np.ndarray, axis: int, xmin: np.ndarray, j: int) -> np.ndarray:
    """The ``j``-th tap of every output along ``axis`` (clamped inside the input; the
    callers mask the taps past each output's count)."""
    index = np.minimum(xmin + j, x.shape[axis] - 1)
    return np.take(x, index, axis=axis)


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _apply_float(x: np.ndarray, axis: int, taps: Taps, ct) -> np.ndarray:
    """``out[i] = x[xmin] * w0 + x[xmin + 1] * w1 + ...`` over each output's own taps, in
    PyTorch's order (the first product, then each other one fused into the sum)."""
    xmin, xsize, w = taps
    acc = _gather(x, axis, xmin, 0) * _along(w[:, 0], axis, x.ndim)
    for j in range(1, w.shape[1]):
        inside = _along(xsize > j, axis, x.ndim)
        if not inside.any():
            break
        term = _fused(_gather(x, axis, xmin, j), _along(w[:, j], axis, x.ndim), acc, ct)
        acc = np.where(inside, term, acc)
    return acc.astype(ct, copy=False)


def _fixed_point(w: np.ndarray, w_max: float) -> Tuple[np.ndarray, int]:
    """float64 weights as int16 fixed-point numbers: the most fraction bits (up to 22) that
    keep twice the largest weight below 2 ** 15, each weight rounded half away from zero."""
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = w * float(1 << precision)
    rounded = np.where(v < 0, np.trunc(-0.5 + v), np.trunc(0.5 + v)).astype(np.int64)
    return rounded, precision


def _apply_uint8(x: np.ndarray, axis: int, xmin, xsize, w, w_max: float) -> np.ndarray:
    weights, precision = _fixed_point(w, w_max)
    acc = np.full((), 1 << (precision - 1), np.int64)
    for j in range(w.shape[1]):
        inside = _along(xsize > j, axis, x.ndim)
        term = _gather(x, axis, xmin, j).astype(np.int64) * _along(weights[:, j], axis, x.ndim)
        acc = acc + np.where(inside, term, 0)
    return np.clip(acc >> precision, 0, 255).astype(_U8)


# ---- the ops ----------------------------------------------------------------------------------


def _axes(x: np.ndarray, output_size: Sequence[int]):
    """The axes to resample, the width first, skipping those whose size does not change."""
    return [ax for ax in (3, 2) if x.shape[ax] != output_size[ax - 2]]


def upsample_aa_check(self, output_size) -> None:
    """The antialiased forward ops' refusals: the shared size checks, then any dtype but
    float32, float64 and uint8 once an axis must change (an unchanged input is copied)."""
    x = self._data
    _common_check(x.shape, output_size, 2)
    if x.size == 0 and any(s == 0 for s in x.shape[1:]):
        raise RuntimeError(
            f"Non-empty 4D data tensor expected but got a tensor with sizes {shape_text(x.shape)}"
        )
    if x.dtype in _COMPUTED or tuple(x.shape[2:]) == tuple(output_size):
        return
    raise NotImplementedError(
        '"compute_index_ranges_weights" not implemented for '
        f"'{dtypes.scalar_type_name(x.dtype)}'"
    )


def _channels_last(x: np.ndarray) -> bool:
    strides = tuple(st // x.itemsize for st in x.strides)
    return suggest_memory_format(x.shape, strides) is not contiguous_format


def _rows_repeat_first(x: np.ndarray, output_size, last_pass_is_generic: bool) -> bool:
    """Whether PyTorch's height pass writes output row 0 into every row.

    Its generic height loop reads the taps of the first output of each inner run, assuming
    that run goes along the width (or the channels); when the output is one pixel wide
    and the innermost dimension of its layout is the height (a contiguous output, or a
    single channel), every row of an image gets row 0's value. PyTorch 2.13 computes so;
    opgrad gives the same numbers."""
    if not last_pass_is_generic or output_size[1] != 1 or output_size[0] == 1:
        return False
    return x.shape[2] != output_size[0] and (x.shape[1] == 1 or not _channels_last(x))


def _resample(x: np.ndarray, output_size, apply_axis) -> np.ndarray:
    """The passes over the axes that change (width, then height), or a copy of ``x``."""
    y = x
    for axis in _axes(x, output_size):
        y = apply_axis(y, axis)
    return np.array(x, copy=True) if y is x else y


def upsample_aa(self, output_size, scales, mode: str, align_corners: bool = False):
    """``self`` resampled to ``output_size`` with the antialias filter of ``mode``
    (``'linear'``, ``'cubic'`` or ``'lanczos'``)."""
    x = self
    if x.shape[0] == 0:
        return in_layout_of(np.empty(x.shape[:2] + tuple(output_size), x.dtype), x)
    if x.dtype == _U8:
        return upsample_separable_uint8(x, output_size, scales, mode, align_corners, True)
    ct = x.dtype

    def apply_axis(y, axis):
        size = (x.shape[axis], output_size[axis - 2], scales[axis - 2])
        return _apply_float(y, axis, _aa_taps(mode, *size, align_corners, ct, False), ct)

    y = _resample(x, output_size, apply_axis)
    if _rows_repeat_first(x, output_size, True):
        y = np.broadcast_to(y[:, :, :1], y.shape)
    return in_layout_of(np.ascontiguousarray(y), x)


def upsample_separable_uint8(
    x: np.ndarray, output_size, scales, mode: str, align_corners: bool, antialias: bool
) -> np.ndarray:
    """uint8 resampling as PyTorch's fixed-point kernel computes it, bit for bit."""

    def apply_axis(y, axis):
        in_size, out_size, scale = x.shape[axis], output_size[axis - 2], scales[axis - 2]
        if antialias:
            xmin, xsize, w = _aa_taps(mode, in_size, out_size, scale, align_corners, _F64, False)
            w_max = float(np.max(w, initial=0.0))
        else:
            xmin, xsize, w, running_max = _interp_taps(
                mode, in_size, out_size, scale, align_corners
            )
            w_max = float(np.max(running_max, initial=0.0))
        return _apply_uint8(y, axis, xmin, xsize, w, w_max)

    if x.shape[0] == 0:
        return in_layout_of(np.empty(x.shape[:2] + tuple(output_size), x.dtype), x)
    y = _resample(x, output_size, apply_axis)
    # images of up to 4 channels take PyTorch's vectorised uint8 kernel, which has no quirk
    if _rows_repeat_first(x, output_size, x.shape[1] > 4):
        y = np.broadcast_to(y[:, :, :1], y.shape)
    return in_layout_of(np.ascontiguousarray(y), x)


def upsample_aa_backward_check(grad_output, output_size, input_size, name: str) -> None:
    """The backward ops' refusals: shapes as the other upsampling backwards, then any dtype
    but float32 and float64."""
    upsample_backward_check(grad_output, output_size, input_size, 2, name)
    if grad_output._data.dtype not in (_F32, _F64):
        raise NotImplementedError(
            f'"{name}" not implemented for ' f"'{dtypes.scalar_type_name(grad_output._data.dtype)}'"
        )


def upsample_aa_backward(
    grad_output, output_size, input_size, scales, mode: str, align_corners: bool = False
):
    """The gradient of ``upsample_aa``: each output's gradient spread back over the taps it
    read, with their weights. PyTorch's backward kernel applies both axes even where a size
    does not change (the forward copies such an axis), and so does this."""
    g = grad_output
    ct = g.dtype
    matrices = []
    for axis in (2, 3):
        in_size, out_size = input_size[axis], output_size[axis - 2]
        xmin, xsize, w = _aa_taps(
            mode, in_size, out_size, scales[axis - 2], align_corners, ct, True
        )
        dense = np.zeros((out_size, in_size + w.shape[1]), ct)
        rows = np.arange(out_size)[:, None]
        dense[rows, xmin[:, None] + np.arange(w.shape[1])[None, :]] = w
        matrices.append(dense[:, :in_size])
    wy, wx = matrices
    result = np.einsum("nchw,hH,wW->ncHW", g, wy, wx, optimize=True).astype(ct, copy=False)
    result = np.ascontiguousarray(result)
    # PyTorch's bilinear backward keeps grad_output's memory format; bicubic's and
    # lanczos's allocate contiguous
    return in_layout_of(result, g) if mode == "linear" else result
