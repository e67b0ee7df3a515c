"""CPU kernels of the convolutions (``convolution``, ``convolution_backward``) and of
``im2col``/``col2im``, for any number of spatial dimensions.

A convolution is one im2col copy (a strided window view of the padded input, laid out as
``(groups, C/groups * K, N * L)``) and one batched BLAS matmul over the groups. Its
gradient with respect to the input is the matmul the other way round followed by col2im:
a scatter-add over the kernel's few positions (never over pixels). A transposed
convolution is the input gradient of the convolution it transposes, and the other way
round, so both run on the same three pieces.

Kernels take numpy arrays and compute float16/bfloat16 in float32, as PyTorch's CPU
kernels accumulate. Shape errors carry PyTorch's messages and are raised before any work.
"""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import dtypes
from .kernel_support import opmath_dtype, per_channel, shape_text

__all__ = [
    "convolution_check",
    "convolution",
    "convolution_backward",
]


def _legacy(a) -> str:
    return dtypes.legacy_tensor_type(a.dtype).replace("opgrad.", "torch.")


# ---- checks ---------------------------------------------------------------------------------


def _expand_param(values, name: str, dim: int) -> Tuple[int, ...]:
    values = tuple(values)
    if len(values) == 1:
        return values * dim
    if len(values) != dim:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dim} values to match "
            f"the convolution dimensions, but got {name}={shape_text(values)}"
        )
    return values


def convolution_check(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
) -> None:
    """convolution's refusals, in PyTorch's order (``_convolution``, ``check_shape_forward``)."""
    x, w = input._data, weight._data
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = w.ndim - 2
    stride, padding, dilation, output_padding = _params(
        w, stride, padding, dilation, output_padding
    )
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    ws = w.shape
    if x.ndim != w.ndim:
        raise RuntimeError(
            f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
            f"{shape_text(ws)}, but got {x.ndim}-dimensional input of size "
            f"{shape_text(x.shape)} instead"
        )
    if ws[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {shape_text(ws)} instead"
        )
    if ws[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{shape_text(ws)}] instead"
        )
    b = bias._data if bias is not None else None
    if not transposed:
        if x.shape[1] != ws[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {shape_text(ws)}, expected "
                f"input{shape_text(x.shape)} to have {ws[1] * groups} channels, but got "
                f"{x.shape[1]} channels instead"
            )
        if b is not None and (b.ndim != 1 or b.shape[0] != ws[0]):
            raise RuntimeError(
                f"Given weight of size {shape_text(ws)}, expected bias to be 1-dimensional "
                f"with {ws[0]} elements, but got bias of size {shape_text(b.shape)} instead"
            )
        padded = [x.shape[i + 2] + 2 * padding[i] for i in range(dim)]
        kernel = [dilation[i] * (ws[i + 2] - 1) + 1 for i in range(dim)]
        if any(p < k for p, k in zip(padded, kernel)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                "than actual input size"
            )
    else:
        if x.shape[1] != ws[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {shape_text(ws)}, expected "
                f"input{shape_text(x.shape)} to have {ws[0]} channels, but got {x.shape[1]} "
                "channels instead"
            )
        if b is not None and (b.ndim != 1 or b.shape[0] != ws[1] * groups):
            raise RuntimeError(
                f"Given transposed=1, weight of size {shape_text(ws)}, expected bias to be "
                f"1-dimensional with {ws[1] * groups} elements, but got bias of size "
                f"{shape_text(b.shape)} instead"
            )
    for what, t in (("weight", w), ("bias", b)):
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(
                f"Input type ({_legacy(x)}) and {what} type ({_legacy(t)}) should be the same "
                f"or input should be a MKLDNN tensor and {what} is a dense tensor"
            )
    if x.dtype == np.bool_:
        name = "slow_conv2d_cpu" if dim <= 2 else "slow_conv3d_cpu"
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    if transposed:
        for i in range(dim):
            if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
                axes = ("depth", "height", "width")[3 - max(dim, 2) :] if dim <= 3 else ()
                got = " ".join(f"output_padding_{a}: {p}" for a, p in zip(axes, output_padding))
                s = " ".join(f"stride_{a}: {p}" for a, p in zip(axes, stride))
                d = " ".join(f"dilation_{a}: {p}" for a, p in zip(axes, dilation))
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    f"{got} {s} {d}"
                )


# ---- the three pieces ------------------------------------------------------------------------


def _windows(x, kernel, stride, padding, dilation, out_shape=None):
    """The strided view ``(N, C, *out, *kernel)`` of ``x`` zero-padded by ``padding``."""
    nd = len(kernel)
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    if out_shape is None:
        out_shape = [(x.shape[2 + i] - span[i]) // stride[i] + 1 for i in range(nd)]
    index = (
        (slice(None), slice(None))
        + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_shape, stride))
        + tuple(slice(None, None, d) for d in dilation)
    )
    return view[index]


def _im2col(x, kernel, stride, padding, dilation, groups, out_shape=None):
    """``x``'s windows as a contiguous ``(groups, C/groups * K, N * L)`` array, and the
    output's spatial shape."""
    nd = len(kernel)
    view = _windows(x, kernel, stride, padding, dilation, out_shape)
    out_shape = view.shape[2 : 2 + nd]
    n, c = x.shape[:2]
    # (C, *K, N, *out): one copy, already in the matmul's layout
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    cols = np.ascontiguousarray(view.transpose(order))
    return (
        cols.reshape(groups, c // groups * math.prod(kernel), n * math.prod(out_shape)),
        out_shape,
    )


def _col2im(cols, channels, n, kernel, out_shape, size, stride, padding, dilation):
    """Sum ``cols`` (``(C * K, N * L)``) back onto an ``(N, C, *size)`` image: the adjoint
    of ``_im2col``. One strided add per kernel position."""
    cols = cols.reshape((channels,) + tuple(kernel) + (n,) + tuple(out_shape))
    padded = tuple(s + 2 * p for s, p in zip(size, padding))
    image = np.zeros((channels, n) + padded, cols.dtype)
    for position in np.ndindex(*kernel):
        target = tuple(
            slice(k * d, k * d + (o - 1) * s + 1, s)
            for k, d, o, s in zip(position, dilation, out_shape, stride)
        )
        image[(slice(None), slice(None)) + target] += cols[(slice(None),) + position]
    crop = tuple(slice(p, p + s) for p, s in zip(padding, size))
    # always a copy: a view of the canvas would start at an offset
    return np.array(image[(slice(None), slice(None)) + crop].swapaxes(0, 1), order="C")


def _from_groups(y, n: int, out_shape) -> np.ndarray:
    """``(G, Og, N * L)`` -> a contiguous ``(N, G * Og, *out)``."""
    g, og = y.shape[:2]
    y = y.reshape((g * og, n) + tuple(out_shape)).swapaxes(0, 1)
    return np.ascontiguousarray(y)


def _to_groups(y, groups: int) -> np.ndarray:
    """``(N, C, *S)`` -> a contiguous ``(G, C/G, N * L)``."""
    n, c = y.shape[:2]
    return np.ascontiguousarray(y.reshape(n, c, -1).swapaxes(0, 1)).reshape(groups, c // groups, -1)


def _conv(x, w, stride, padding, dilation, groups, out_shape=None):
    """A plain convolution of ``x`` ``(N, C, *S)`` with ``w`` ``(O, C/G, *K)``."""
    kernel = w.shape[2:]
    cols, out_shape = _im2col(x, kernel, stride, padding, dilation, groups, out_shape)
    w_rows = w.reshape(groups, w.shape[0] // groups, -1)
    return _from_groups(np.matmul(w_rows, cols), x.shape[0], out_shape)


def _conv_input_grad(gy, w, size, stride, padding, dilation, groups):
    """The gradient of ``_conv`` with respect to its ``(N, C, *size)`` input."""
    n, kernel = gy.shape[0], w.shape[2:]
    w_rows = w.reshape(groups, w.shape[0] // groups, -1)
    cols = np.matmul(w_rows.transpose(0, 2, 1), _to_groups(gy, groups))
    channels = w.shape[1] * groups
    return _col2im(
        cols.reshape(channels * math.prod(kernel), -1),
        channels,
        n,
        kernel,
        gy.shape[2:],
        size,
        stride,
        padding,
        dilation,
    )


def _conv_weight_grad(x, gy, kernel, stride, padding, dilation, groups):
    """The gradient of ``_conv`` with respect to its ``(O, C/G, *kernel)`` weight."""
    cols, _ = _im2col(x, kernel, stride, padding, dilation, groups, gy.shape[2:])
    gw = np.matmul(_to_groups(gy, groups), cols.transpose(0, 2, 1))
    return gw.reshape((gy.shape[1], x.shape[1] // groups) + tuple(kernel))


def _transposed_size(x, w, stride, padding, dilation, output_padding):
    return tuple(
        (x.shape[2 + i] - 1) * stride[i]
        - 2 * padding[i]
        + dilation[i] * (w.shape[2 + i] - 1)
        + output_padding[i]
        + 1
        for i in range(w.ndim - 2)
    )


def _params(w, stride, padding, dilation, output_padding):
    dim = w.ndim - 2
    return (
        _expand_param(stride, "stride", dim),
        _expand_param(padding, "padding", dim),
        _expand_param(dilation, "dilation", dim),
        _expand_param(output_padding, "output_padding", dim),
    )


# ---- the ops ---------------------------------------------------------------------------------


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The forward of ``aten::convolution`` (plain or transposed, any spatial rank)."""
    stride, padding, dilation, output_padding = _params(
        weight, stride, padding, dilation, output_padding
    )
    ct = opmath_dtype(input.dtype)
    x, w = input.astype(ct, copy=False), weight.astype(ct, copy=False)
    if not transposed:
        out = _conv(x, w, stride, padding, dilation, groups)
    else:
        size = _transposed_size(x, w, stride, padding, dilation, output_padding)
        out = _conv_input_grad(x, w, size, stride, padding, dilation, groups)
    if bias is not None:
        out += per_channel(bias.astype(ct, copy=False), out.ndim)
    return out.astype(input.dtype, copy=False)


def convolution_backward(
    grad_output,
    input,
    weight,
    bias_sizes,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    output_mask,
):
    """(grad_input, grad_weight, grad_bias) of ``aten::convolution``, each only where
    ``output_mask`` asks (else None)."""
    stride, padding, dilation, output_padding = _params(
        weight, stride, padding, dilation, output_padding
    )
    ct = opmath_dtype(input.dtype)
    gy = grad_output.astype(ct, copy=False)
    x, w = input.astype(ct, copy=False), weight.astype(ct, copy=False)
    kernel = w.shape[2:]
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if not transposed:
            gi = _conv_input_grad(gy, w, x.shape[2:], stride, padding, dilation, groups)
        else:
            gi = _conv(gy, w, stride, padding, dilation, groups, x.shape[2:])
        grad_input = gi.astype(input.dtype, copy=False)
    if output_mask[1]:
        if not transposed:
            gw = _conv_weight_grad(x, gy, kernel, stride, padding, dilation, groups)
        else:
            gw = _conv_weight_grad(gy, x, kernel, stride, padding, dilation, groups)
        grad_weight = gw.astype(weight.dtype, copy=False)
    if output_mask[2]:
        axes = (0,) + tuple(range(2, gy.ndim))
        grad_bias = gy.sum(axis=axes).astype(grad_output.dtype, copy=False)
    return grad_input, grad_weight, grad_bias
