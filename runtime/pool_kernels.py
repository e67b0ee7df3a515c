"""CPU kernels of the poolings (max with indices, average, adaptive average and max) over
the last ``nd`` dimensions, their backward ops, and the checks of the 1-d poolings, which
PyTorch runs before it hands the input on to the 2-d ones.

Windows are one strided view of the padded input; a max or a sum over the kernel axes
reduces them. Backward ops scatter the gradient back: the max poolings with one
``bincount`` over the saved indices, the average poolings with one strided add per
kernel position (never a loop over pixels). Adaptive average pooling is a product with
one small averaging matrix per dimension; adaptive max pooling gathers each dimension's
(variable, at most ``ceil(size/out) + 1`` long) windows padded to one length. Max
unpooling writes each value at its index in a zero output with one indexed assignment.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .kernel_support import in_layout_of, opmath, refuse_non_float, shape_text
from numpy.lib.stride_tricks import sliding_window_view

__all__ = [
    "avg_pool_check",
    "pool_check",
    "max_pool_with_indices",
    "max_pool_with_indices_backward",
    "avg_pool",
    "avg_pool_backward",
    "adaptive_avg_pool_check",
    "adaptive_avg_pool",
    "adaptive_avg_pool_backward",
    "pool1d_check",
    "max_pool1d_check",
    "max_pool1d_values",
    "adaptive_max_pool1d_check",
    "adaptive_max_pool_check",
    "adaptive_max_pool",
    "max_unpool_check",
    "max_unpool",
    "fractional_max_pool",
]


def _params(kernel_size, stride, padding, dilation, nd: int):
    kernel = tuple(kernel_size) * nd if len(kernel_size) == 1 else tuple(kernel_size)
    stride = (
        kernel if len(stride) == 0 else (tuple(stride) * nd if len(stride) == 1 else tuple(stride))
    )
    padding = tuple(padding) * nd if len(padding) == 1 else tuple(padding)
    dilation = tuple(dilation) * nd if len(dilation) == 1 else tuple(dilation)
    return kernel, stride, padding, dilation


def pooling_output_size(size, kernel, pad, stride, dilation, ceil_mode) -> int:
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_pool_input(x: np.ndarray, nd: int, name: str) -> None:
    """A (batched) input with no empty dimension but the batch, in PyTorch's words."""
    if x.ndim not in (nd + 1, nd + 2):
        if nd == 2 and name.startswith("avg"):
            raise RuntimeError(
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                f"input, but got:{shape_text(x.shape)}"
            )
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
        )
    if all(x.shape[x.ndim - nd - 1 :]):
        return
    if nd == 2:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{shape_text(x.shape)}"
        )
    where = "max_pool3d_with_indices_out_cpu_template" if name.startswith("max") else name
    # PyTorch's message names dimension 0 whichever dimension is empty.
    raise RuntimeError(
        f"{where}(): Expected input's non-batch dimensions to have positive length, but input "
        f"has a shape of {shape_text(x.shape)} and non-batch dimension 0 has length zero!"
    )


def pool_check(self, kernel_size, stride, padding, dilation, ceil_mode, nd: int, name: str):
    """The poolings' refusals, with PyTorch's texts."""
    x = self._data
    for what, values in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        if what == "stride" and len(values) == 0:
            continue
        if len(values) not in (1, nd):
            words = "two" if nd == 2 else "three"
            raise RuntimeError(
                f"{name}: {what} must either be a single int, or a tuple of {words} ints"
            )
    kernel, stride, padding, dilation = _params(kernel_size, stride, padding, dilation, nd)
    _check_pool_input(x, nd, name)
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for p in padding:
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_size: {list(kernel)}"
        )
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
    sizes = x.shape[-nd:]
    out = [
        pooling_output_size(s, k, p, st, d, ceil_mode)
        for s, k, p, st, d in zip(sizes, kernel, padding, stride, dilation)
    ]
    if any(o < 1 for o in out):
        channels = x.shape[-nd - 1]
        given = "x".join(str(s) for s in (channels,) + tuple(sizes))
        calc = "x".join(str(s) for s in [channels] + out)
        raise RuntimeError(
            f"Given input size: ({given}). Calculated output size: ({calc}). "
            "Output size is too small"
        )
    if name.startswith("max") and x.dtype.kind in "bc":  # every real dtype but bool
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{dtypes.scalar_type_name(x.dtype)}'"
        )


def _windows(x, kernel, stride, padding, dilation, ceil_mode, fill):
    """The view ``(*lead, *out, *kernel)`` of ``x`` padded with ``fill`` (on the right also
    as far as ceil_mode's last windows reach), and the output's spatial shape."""
    nd = len(kernel)
    sizes = x.shape[-nd:]
    out = [
        pooling_output_size(s, k, p, st, d, ceil_mode)
        for s, k, p, st, d in zip(sizes, kernel, padding, stride, dilation)
    ]
    right = [
        max(p, (o - 1) * st + (k - 1) * d + 1 - p - s)
        for s, k, p, st, d, o in zip(sizes, kernel, padding, stride, dilation, out)
    ]
    widths = [(0, 0)] * (x.ndim - nd) + [(p, r) for p, r in zip(padding, right)]
    if any(w != (0, 0) for w in widths):
        x = np.pad(x, widths, constant_values=fill)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(x, span, axis=tuple(range(x.ndim - nd, x.ndim)))
    lead = (slice(None),) * (x.ndim - nd)
    index = (
        lead
        + tuple(slice(0, (o - 1) * st + 1, st) for o, st in zip(out, stride))
        + tuple(slice(None, None, d) for d in dilation)
    )
    return view[index], out


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, nd: int):
    """(values, indices): each window's maximum (its last NaN, if any) and its flat
    position in the input's spatial dims."""
    kernel, stride, padding, dilation = _params(kernel_size, stride, padding, dilation, nd)
    view, out = _windows(self, kernel, stride, padding, dilation, ceil_mode, _lowest(self.dtype))
    flat = view.reshape(view.shape[: view.ndim - nd] + (math.prod(kernel),))
    best = np.argmax(flat, axis=-1)
    if self.dtype.kind == "f":
        nan = np.isnan(flat)
        if nan.any():  # PyTorch keeps the last NaN of a window
            last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            best = np.where(nan.any(axis=-1), last_nan, best)
    values = np.take_along_axis(flat, best[..., None], axis=-1)[..., 0]
    offsets = np.unravel_index(best, kernel)
    sizes = self.shape[-nd:]
    index = np.zeros(best.shape, np.int64)
    for axis in range(nd):
        shape = [1] * best.ndim
        shape[best.ndim - nd + axis] = out[axis]
        start = (np.arange(out[axis]) * stride[axis] - padding[axis]).reshape(shape)
        index = index * sizes[axis] + start + offsets[axis] * dilation[axis]
    return in_layout_of(np.ascontiguousarray(values), self), in_layout_of(index, self)


def max_pool_with_indices_backward(grad_output, self, indices, nd: int):
    """The gradient scattered (summed) onto the positions the indices name."""
    lead = math.prod(self.shape[: self.ndim - nd])
    spatial = math.prod(self.shape[self.ndim - nd :])
    per_plane = math.prod(indices.shape[indices.ndim - nd :])  # explicit: lead may be 0
    idx = indices.reshape(lead, per_plane) + (np.arange(lead) * spatial)[:, None]
    g = grad_output.reshape(lead, per_plane)
    if self.dtype.kind == "c":
        total = np.zeros(lead * spatial, self.dtype)
        np.add.at(total, idx.ravel(), g.ravel())
    else:
        total = np.bincount(idx.ravel(), weights=g.ravel(), minlength=lead * spatial)
    return in_layout_of(total.reshape(self.shape).astype(self.dtype, copy=False), self)


def _divisors(sizes, kernel, stride, padding, out, count_include_pad, divisor_override):
    """Each output position's divisor, as a broadcastable ``(*out)`` array."""
    if divisor_override is not None:
        return divisor_override
    total = 1
    nd = len(kernel)
    for axis in range(nd):
        start = np.arange(out[axis]) * stride[axis] - padding[axis]
        end = np.minimum(start + kernel[axis], sizes[axis] + padding[axis])
        if count_include_pad:
            count = end - start
        else:
            count = np.minimum(end, sizes[axis]) - np.maximum(start, 0)
        shape = [1] * nd
        shape[axis] = out[axis]
        total = total * count.reshape(shape)
    return total


def _truncating_divide(a: np.ndarray, b) -> np.ndarray:
    """C++'s integer division: the quotient rounded toward zero (numpy's ``//`` floors)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (np.asarray(b) < 0), -q, q)


def avg_pool_check(self, kernel_size, stride, padding, ceil_mode, divisor_override, nd, name):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 2 and self._data.ndim < 3:  # PyTorch reads the channel size first
        from .numpy_kernels import wrap_dim

        wrap_dim(-3, self._data.ndim)
    pool_check(self, kernel_size, stride, padding, (1,), ceil_mode, nd, name)
    if self._data.dtype.kind != "f" and self._data.dtype != np.int64:  # floats and int64 only
        refuse_non_float(self._data, "avg_pool2d" if nd == 2 else "avg_pool3d_out_frame")


def avg_pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor, nd: int):
    kernel, stride, padding, _ = _params(kernel_size, stride, padding, (1,), nd)
    x = opmath(self)
    view, out = _windows(x, kernel, stride, padding, (1,) * nd, ceil_mode, 0)
    sums = view.sum(axis=tuple(range(view.ndim - nd, view.ndim)))
    div = _divisors(self.shape[-nd:], kernel, stride, padding, out, count_include_pad, divisor)
    if self.dtype.kind == "i":  # int64: C++ integer division, truncating toward zero
        return _truncating_divide(sums, div).astype(self.dtype, copy=False)
    return (sums / div).astype(self.dtype, copy=False)


def avg_pool_backward(
    grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor, nd
):
    """Each output's gradient, divided by its divisor, added onto its window."""
    kernel, stride, padding, _ = _params(kernel_size, stride, padding, (1,), nd)
    sizes = self.shape[-nd:]
    out = grad_output.shape[-nd:]
    div = _divisors(sizes, kernel, stride, padding, out, count_include_pad, divisor)
    g = opmath(grad_output) / div
    reach = [
        max(s + 2 * p, (o - 1) * st + k)
        for s, p, o, st, k in zip(sizes, padding, out, stride, kernel)
    ]
    canvas = np.zeros(self.shape[: self.ndim - nd] + tuple(reach), g.dtype)
    lead = (slice(None),) * (self.ndim - nd)
    for position in np.ndindex(*kernel):
        target = tuple(
            slice(k, k + (o - 1) * st + 1, st) for k, o, st in zip(position, out, stride)
        )
        canvas[lead + target] += g
    crop = tuple(slice(p, p + s) for p, s in zip(padding, sizes))
    return np.array(canvas[lead + crop], dtype=self.dtype, order="C")


# ---- adaptive average pooling ----------------------------------------------------------------


def adaptive_avg_pool_check(self, output_size, nd: int) -> None:
    x = self._data
    name = f"adaptive_avg_pool{nd}d"
    if len(output_size) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    for dim in range(max(x.ndim - nd, 0), x.ndim):  # only the spatial sizes must be non-zero
        if x.shape[dim] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {shape_text(x.shape)} with dimension {dim} being empty"
            )
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {shape_text(x.shape)}"
        )
    refuse_non_float(x, name if nd == 2 else "adaptive_avg_pool3d_cpu")


def _averaging_matrix(size: int, out: int, dtype) -> np.ndarray:
    """``(out, size)``: row o averages input positions floor(o*size/out) to
    ceil((o+1)*size/out)."""
    o = np.arange(out)
    start = (o * size) // out
    end = -((-(o + 1) * size) // out)
    i = np.arange(size)
    inside = (i >= start[:, None]) & (i < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _apply_per_axis(x, matrices, nd: int):
    for axis, m in enumerate(matrices):
        x = np.moveaxis(
            np.matmul(m, np.moveaxis(x, x.ndim - nd + axis, -2)), -2, x.ndim - nd + axis
        )
    return x


def adaptive_avg_pool(self, output_size, nd: int):
    x = opmath(self)
    mats = [_averaging_matrix(s, o, x.dtype) for s, o in zip(self.shape[-nd:], output_size)]
    return np.array(_apply_per_axis(x, mats, nd), dtype=self.dtype, order="C")


def adaptive_avg_pool_backward(grad_output, self, nd: int):
    g = opmath(grad_output)
    out = grad_output.shape[-nd:]
    mats = [_averaging_matrix(s, o, g.dtype).T for s, o in zip(self.shape[-nd:], out)]
    return np.array(_apply_per_axis(g, mats, nd), dtype=self.dtype, order="C")


# ---- the 1-d poolings' own checks -----------------------------------------------------------


def pool1d_check(self, name: str, **arguments) -> None:
    """PyTorch's checkDimRange and check1d: a 2-d or 3-d input and one int per argument."""
    ndim = self._data.ndim
    if ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {ndim}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {name})"
        )
    for what, values in arguments.items():
        if len(values) != 1:
            raise RuntimeError(
                f"{name}() argument '{what}' should contain one int (got {len(values)})"
            )


def max_pool1d_check(self, kernel_size, stride, padding, dilation, ceil_mode) -> None:
    """max_pool1d's refusals (its own texts, whichever kernel then runs)."""
    shape = self._data.shape
    if not (len(shape) == 2 and shape[0] and shape[1]) and not (
        len(shape) == 3 and shape[1] and shape[2]
    ):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{shape_text(shape)}"
        )
    what = "max_pool1d()"
    if len(kernel_size) != 1:
        raise RuntimeError(
            f"{what} kernel_size must be an int, list of ints or tuple of ints of size 1 but "
            f"got size {len(kernel_size)}"
        )
    if len(stride) not in (0, 1):
        raise RuntimeError(
            f"{what} stride must be None, an int, list of ints, or tuple of ints of size 1 but "
            f"got size {len(stride)}"
        )
    if len(padding) != 1:
        raise RuntimeError(
            f"{what} padding must be an int, list of ints, or tuple of ints of size 1 but got "
            f"size {len(padding)}"
        )
    if len(dilation) != 1:
        raise RuntimeError(
            f"{what} dilation must be an int, list of ints or tuple of ints of size 1 but got "
            f"size {len(dilation)}"
        )
    (k,), (p,), (d,) = kernel_size, padding, dilation
    s = stride[0] if len(stride) else k
    if k <= 0:
        raise RuntimeError(f"{what} kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"{what} stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"{what} padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            f"{what} padding should be at most half of kernel size, but got padding={p} and "
            f"kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"{what} dilation must be greater than zero, but got {d}")
    out = pooling_output_size(shape[-1], k, p, s, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"{what} Invalid computed output size: {out}")


def max_pool1d_values(self, kernel_size, stride, padding, dilation, ceil_mode) -> np.ndarray:
    """max_pool1d's own kernel (no indices), for floating inputs only."""
    refuse_non_float(self, "max_pool1d_impl")
    return max_pool_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, 1)[0]


# ---- adaptive max pooling -------------------------------------------------------------------


def adaptive_max_pool1d_check(self, output_size) -> None:
    pool1d_check(self, "adaptive_max_pool1d", output_size=output_size)
    shape = self._data.shape
    for dim in range(1, len(shape)):
        if shape[dim] <= 0:
            raise RuntimeError(
                "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {shape_text(shape)} with dimension {dim} "
                "being empty"
            )


def adaptive_max_pool_check(self, output_size, nd: int) -> None:
    shape = self._data.shape
    name = f"adaptive_max_pool{nd}d"
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape_text(shape)}"
        )
    for dim in range(1, len(shape)):
        if shape[dim] <= 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {shape_text(shape)} with dimension {dim} being empty"
            )
    if len(output_size) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    negative = [o for o in output_size if o < 0]
    if negative:
        size = shape[: len(shape) - nd] + tuple(output_size)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative[0]}: {shape_text(size)}"
        )
    refuse_non_float(self._data, name if nd == 2 else "adaptive_max_pool3d_cpu")


def _adaptive_windows(size: int, out: int):
    """``(out, width)`` input positions of each output's window (floor(o*size/out) to
    ceil((o+1)*size/out)), clipped into range, and which of them lie inside the window."""
    o = np.arange(out)
    start = (o * size) // out
    end = -((-(o + 1) * size) // out)
    width = int((end - start).max()) if out else 1
    positions = start[:, None] + np.arange(width)
    inside = positions < end[:, None]
    return np.minimum(positions, size - 1), inside


def adaptive_max_pool(self, output_size, nd: int):
    """(values, indices): each adaptive window's maximum (its last NaN, if any; the first of
    equal maxima) and its flat position in the input's spatial dims."""
    sizes = self.shape[-nd:]
    lead = self.shape[: self.ndim - nd]
    windows = [_adaptive_windows(s, o) for s, o in zip(sizes, output_size)]
    # flat input position and validity of each (out..., window...) cell, row-major
    flat = np.zeros((), np.int64)
    inside = np.ones((), bool)
    for axis, (positions, valid) in enumerate(windows):
        shape = [1] * (2 * nd)
        shape[axis], shape[nd + axis] = positions.shape
        flat = flat * sizes[axis] + positions.reshape(shape)
        inside = inside & valid.reshape(shape)
    out_shape = tuple(output_size)
    cells = flat.shape[nd:]
    flat = np.broadcast_to(flat, out_shape + cells).reshape(out_shape + (math.prod(cells),))
    inside = np.broadcast_to(inside, out_shape + cells).reshape(flat.shape)
    values = self.reshape(lead + (math.prod(sizes),))[..., flat]  # (*lead, *out, cells)
    candidates = np.where(inside, values, _lowest(self.dtype))
    best = np.argmax(candidates, axis=-1)
    nan = np.isnan(values) & inside
    if nan.any():  # PyTorch keeps the last NaN of a window
        last_nan = nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        best = np.where(nan.any(axis=-1), last_nan, best)
    result = np.take_along_axis(values, best[..., None], axis=-1)[..., 0]
    cells = np.broadcast_to(flat, best.shape + flat.shape[-1:])
    index = np.take_along_axis(cells, best[..., None], axis=-1)[..., 0]
    result = np.ascontiguousarray(result)
    if nd == 2:  # the 2-d kernel keeps a channels-last input's layout, the 3-d one does not
        return in_layout_of(result, self), in_layout_of(index, self)
    return result, np.ascontiguousarray(index)


# ---- max unpooling --------------------------------------------------------------------------


def max_unpool_check(self, indices, output_size, stride, padding, nd: int) -> None:
    """max_unpool2d/3d's refusals, with PyTorch's texts (the 3-d op also takes the pooling's
    stride and padding, and checks only the stride)."""
    x, idx = self._data, indices._data
    if idx.dtype != np.int64:
        suffix = f" but got: {dtypes.scalar_type_name(idx.dtype)}" if nd == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{suffix}")
    words = "two elements (height, width)" if nd == 2 else "three elements (depth, height, width)"
    if nd == 2 and len(output_size) != 2:
        raise RuntimeError(
            f"There should be exactly {words} in output_size, but got {len(output_size)} "
            "elements."
        )
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {x.ndim} dimensions."
        )
    if nd == 3:
        for what, values in (("output_size", output_size), ("stride", stride)):
            if len(values) != 3:
                colon = ":" if what != "output_size" else ""
                raise RuntimeError(
                    f"There should be exactly {words} in {what}, but got{colon} {len(values)} "
                    "elements."
                )
        if len(padding) != 3:
            raise RuntimeError(
                f"There should be exactly {words} in padding, but got: {len(padding)} elements."
            )
    if x.shape != idx.shape:
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({shape_text(x.shape)}) but got indices tensor with shape: {shape_text(idx.shape)}"
        )
    for dim in range(1, x.ndim):
        if x.shape[dim] <= 0:
            raise RuntimeError(
                f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for "
                f"non-batch dimensions, but got {shape_text(x.shape)} with dimension {dim} "
                "being empty."
            )
    if nd == 3 and any(st <= 0 for st in stride):
        raise RuntimeError(
            f"strides should be greater than zero, but got stride: {shape_text(stride)}"
        )
    refuse_non_float(x, f"max_unpool{nd}d")
    spatial = math.prod(output_size)
    bad = (idx < 0) | (idx >= spatial)
    if spatial and bad.any():  # an empty output is not written, so not checked
        first = idx.ravel()[np.argmax(bad.ravel())]
        raise RuntimeError(
            f"Found an invalid max index: {first} (output volumes are of size "
            f"{'x'.join(str(o) for o in output_size)})"
        )


def max_unpool(self, indices, output_size, nd: int) -> np.ndarray:
    """A zero output of spatial size ``output_size`` with each input value written at its
    index (of equal indices, the last value wins, as in PyTorch's loop)."""
    lead = self.shape[: self.ndim - nd]
    rows = math.prod(lead)
    out = np.zeros((rows, math.prod(output_size)), self.dtype)
    if out.size:
        out[np.arange(rows)[:, None], indices.reshape(rows, -1)] = self.reshape(rows, -1)
    out = out.reshape(lead + tuple(output_size))
    return in_layout_of(out, self) if nd == 2 else out


# ---- fractional max pooling ------------------------------------------------------------------

_FRACTIONAL_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_check(self, kernel, out, samples, nd: int) -> None:
    """PyTorch's checks of fractional_max_pool2d/3d, in its order."""
    op = f"fractional_max_pool{nd}d"
    where = op + ("()" if nd == 2 else "_out()")
    count = "" if nd == 2 else "three "
    for name, value in (("kernel_size", kernel), ("output_size", out)):
        if len(value) != nd:
            raise RuntimeError(f"{op}: {name} must either be a single Int or tuple of {count}Ints")
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape_text(self.shape)}"
        )
    first = self.ndim - nd - 1
    for dim in range(first, self.ndim):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"{where}: Expected input to have non-zero size for non-batch dimensions, but "
                f"got{shape_text(self.shape)} with dimension {dim} being empty."
            )
    names = _FRACTIONAL_AXES[nd]
    for axis in (0, 1) if nd == 2 else (0, 2, 1):  # PyTorch checks the 3-d width before height
        name, size = names[axis], self.shape[self.ndim - nd + axis]
        # the 3-d op asks for a strictly larger input (PyTorch's check differs there)
        if out[axis] + kernel[axis] - 1 > size - (nd == 3):
            raise RuntimeError(
                f"{where}: pool {name} {kernel[axis]} too large relative to input {name} {size}"
            )
    if samples.dtype != self.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch = self.shape[0] if self.ndim == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != self.shape[first]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}."
        )
    refuse_non_float(self, f"fractional_max_pool{nd}d_out_frame")


def _fractional_starts(sample, size: int, out: int, pool: int):
    """Each window's start along one axis for every plane's ``sample`` (shape (N, C)): the
    pseudo-random increasing sequence of PyTorch's kernel, computed in the input's dtype,
    whose last start is ``size - pool``."""
    starts = np.empty(sample.shape + (out,), np.int64)
    if out > 1:
        dtype = sample.dtype.type
        alpha = dtype(size - pool) / dtype(out - 1)
        steps = np.arange(out - 1).astype(sample.dtype)
        scaled = ((steps + sample[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = scaled - (sample * alpha).astype(np.int64)[..., None]
    if out > 0:
        starts[..., -1] = size - pool
    return starts


def fractional_max_pool(self, kernel_size, output_size, random_samples, nd: int):
    """(values, indices): the maximum of each pseudo-randomly placed window (its last NaN,
    if any) and its flat position in the input's spatial dims."""
    kernel, out = tuple(kernel_size), tuple(output_size)
    _fractional_check(self, kernel, out, random_samples, nd)
    x = self if self.ndim == nd + 2 else self[None]
    batch, planes, sizes = x.shape[0], x.shape[1], x.shape[2:]
    samples = random_samples[:batch]
    # the sample of each axis: (width, height) in 2-d, (time, height, width) in 3-d
    which = (1, 0) if nd == 2 else (0, 1, 2)
    coords = []  # per axis: the input coordinates of each window's cells, broadcastable
    for axis in range(nd):
        starts = _fractional_starts(samples[..., which[axis]], sizes[axis], out[axis], kernel[axis])
        cells = starts[..., None] + np.arange(kernel[axis])  # (N, C, out, kernel)
        shape = [batch, planes] + [1] * (2 * nd)
        shape[2 + axis], shape[2 + nd + axis] = out[axis], kernel[axis]
        coords.append(cells.reshape(shape))
    n = np.arange(batch).reshape((-1, 1) + (1,) * (2 * nd))
    c = np.arange(planes).reshape((1, -1) + (1,) * (2 * nd))
    windows = x[(n, c) + tuple(coords)]
    flat_shape = windows.shape[: 2 + nd] + (math.prod(kernel),)
    flat = windows.reshape(flat_shape)
    position = np.zeros(windows.shape, np.int64)
    for axis in range(nd):
        position = position * sizes[axis] + coords[axis]
    position = position.reshape(flat_shape)
    if flat.shape[-1] == 0:  # an empty window: -inf at its start, as PyTorch's loop leaves it
        values = np.full(flat_shape[:-1], -np.inf, self.dtype)
        index = np.zeros(flat_shape[:-1], np.int64)
        for axis in range(nd):
            start = coords[axis].reshape(coords[axis].shape[: 2 + nd])
            index = index * sizes[axis] + np.broadcast_to(start, index.shape)
    else:
        best = np.argmax(flat, axis=-1)
        nan = np.isnan(flat)
        if nan.any():  # PyTorch keeps the last NaN of a window
            last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            best = np.where(nan.any(axis=-1), last_nan, best)
        values = np.take_along_axis(flat, best[..., None], axis=-1)[..., 0]
        index = np.take_along_axis(position, best[..., None], axis=-1)[..., 0]
    if self.ndim == nd + 1:
        values, index = values[0], index[0]
    return np.ascontiguousarray(values), np.ascontiguousarray(index)
