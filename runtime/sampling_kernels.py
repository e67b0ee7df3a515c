"""CPU kernels of the sliding-block and sampling ops (``k.<fn>`` in derivatives.yaml):
``im2col`` / ``col2im`` (nn.functional's unfold and fold) and ``affine_grid_generator``.

``im2col`` reads every block through one strided view of the zero-padded input; ``col2im``
adds the blocks back one kernel offset at a time (a loop over the few kernel positions,
never over pixels), in the order PyTorch's CPU kernel adds them, so reduced-precision
sums round as torch's do.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from . import dtypes
from .conv_kernels import _col2im, _windows
from .kernel_support import fused_multiply_add, opmath, shape_text

__all__ = [
    "im2col_check",
    "im2col",
    "col2im_check",
    "col2im",
    "affine_grid_check",
    "affine_grid_generator",
    "affine_base_grid",
    "grid_sampler_check",
    "grid_sampler",
    "grid_sampler_backward",
    "grid_sampler_backward_in_grid",
]


# ---- unfold / fold: checks --------------------------------------------------------------------


def _dim_out_of_range(ndim: int, dim: int) -> IndexError:
    if ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(
        f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
        f"but got {dim})"
    )


def _check_lengths(**lists: Sequence[int]) -> None:
    for name, values in lists.items():
        if len(values) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")


def _check_positive(name: str, what: str, values: Sequence[int], *, allow_zero=False) -> None:
    h, w = values
    ok = h >= 0 and w >= 0 if allow_zero else h > 0 and w > 0
    if not ok:
        raise RuntimeError(f"{what}, but got {name}_height: {h} {name}_width: {w}")


def _check_block_params(kernel_size, dilation, padding, stride, *, fold: bool) -> None:
    """The kernel, dilation, padding and stride refusals, in each op's order."""
    kernel = ("kernel", "kernel size should be greater than zero", kernel_size, False)
    dil = ("dilation", "dilation should be greater than zero", dilation, False)
    pad = ("pad", "padding should be non-negative", padding, True)
    step = ("stride", "stride should be greater than zero", stride, False)
    for name, what, values, allow_zero in (
        (kernel, step, dil, pad) if fold else (kernel, dil, pad, step)
    ):
        _check_positive(name, what, values, allow_zero=allow_zero)


def _blocks(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    """How many blocks fit along one axis (floor division, as PyTorch's div_rtn)."""
    return (size + 2 * padding - (dilation * (kernel - 1) + 1)) // stride + 1


def _refuse_integers(a, kernel: str) -> None:
    if a.dtype.kind in "iu":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )


def im2col_check(self, kernel_size, dilation, padding, stride) -> None:
    """im2col's refusals, in PyTorch's order and words."""
    _check_lengths(kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    _check_block_params(kernel_size, dilation, padding, stride, fold=False)
    shape = self._data.shape
    nd = len(shape)
    for dim in (1, 2):
        if dim >= nd:
            raise _dim_out_of_range(nd, dim)
    valid = shape[1] != 0 and shape[2] != 0
    if not ((nd == 3 and shape[0] != 0 and valid) or (nd == 4 and valid and shape[3] != 0)):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {shape_text(shape)}"
        )
    height, width = shape[-2:]
    out_h, out_w = (
        _blocks(n, *params)
        for n, params in zip((height, width), zip(kernel_size, dilation, padding, stride))
    )
    if out_h < 1 or out_w < 1:
        raise RuntimeError(
            f"Given input with spatial size ({height}, {width}), kernel_size=({kernel_size[0]}, "
            f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
            f"{padding[1]}), calculated shape of the array of sliding blocks as ({out_h}, "
            f"{out_w}), but its components must be at least one."
        )
    _refuse_integers(self._data, "im2col_out_cpu")


def col2im_check(self, output_size, kernel_size, dilation, padding, stride) -> None:
    """col2im's refusals, in PyTorch's order and words."""
    _check_lengths(
        output_size=output_size,
        kernel_size=kernel_size,
        dilation=dilation,
        padding=padding,
        stride=stride,
    )
    _check_block_params(kernel_size, dilation, padding, stride, fold=True)
    shape = self._data.shape
    nd = len(shape)
    if not (
        (nd == 2 and shape[0] != 0 and shape[1] != 0)
        or (nd == 3 and shape[1] != 0 and shape[2] != 0)
    ):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {shape_text(shape)}"
        )
    planes, length = shape[-2:]
    kh, kw = kernel_size
    if planes % (kh * kw) != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={planes} and kernel_size=({kh}, {kw})."
        )
    out_h, out_w = output_size
    blocks_h, blocks_w = (
        _blocks(n, *params)
        for n, params in zip(output_size, zip(kernel_size, dilation, padding, stride))
    )
    given = (
        f"Given output_size=({out_h}, {out_w}), kernel_size=({kh}, {kw}), "
        f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
        f"stride=({stride[0]}, {stride[1]}), "
    )
    if length != blocks_h * blocks_w:
        raise RuntimeError(
            given + "expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks_h} * {blocks_w} = {blocks_h * blocks_w}, but got "
            f"input.size(2)={length}."
        )
    if blocks_h < 1 or blocks_w < 1:
        raise RuntimeError(
            given + f"calculated shape of the array of sliding blocks as ({blocks_h}, "
            f"{blocks_w}), which is too small (non-positive)"
        )
    if out_h < 1 or out_w < 1:
        raise RuntimeError(
            "Expected output spatial size to be positive, but got: "
            f"output_size=({out_h}, {out_w})."
        )
    _refuse_integers(self._data, "col2im_out_cpu")


# ---- unfold / fold: kernels ----------------------------------------------------------------------


def im2col(self: np.ndarray, kernel_size, dilation, padding, stride) -> np.ndarray:
    """``(N, C, H, W)`` -> ``(N, C * kh * kw, L)``: every block, channel-major, then the
    kernel's rows and columns; an unbatched ``(C, H, W)`` gives ``(C * kh * kw, L)``.
    The blocks are the convolution's windows."""
    batched = self.ndim == 4
    x = self if batched else self[None]
    n, c = x.shape[:2]
    view = _windows(x, kernel_size, stride, padding, dilation)  # (N, C, oh, ow, kh, kw)
    blocks = view.shape[2] * view.shape[3]
    cols = view.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * math.prod(kernel_size), blocks)
    return cols if batched else cols[0]


def col2im(self: np.ndarray, output_size, kernel_size, dilation, padding, stride) -> np.ndarray:
    """The blocks of ``(N, C * kh * kw, L)`` summed back into ``(N, C, H, W)`` (unbatched
    ``(C * kh * kw, L)`` into ``(C, H, W)``); overlapping blocks add up, one kernel
    position at a time, as the convolution's backward adds them."""
    batched = self.ndim == 3
    cols = self if batched else self[None]
    n = cols.shape[0]
    c = cols.shape[1] // math.prod(kernel_size)
    out_shape = [
        _blocks(size, k, d, p, s)
        for size, k, d, p, s in zip(output_size, kernel_size, dilation, padding, stride)
    ]
    # (N, C, kh, kw, oh, ow) -> the convolution's (C, kh, kw, N, oh, ow)
    blocks = cols.reshape((n, c) + tuple(kernel_size) + tuple(out_shape)).transpose(
        1, 2, 3, 0, 4, 5
    )
    image = _col2im(blocks, c, n, kernel_size, out_shape, output_size, stride, padding, dilation)
    return image if batched else image[0]


# ---- affine_grid ----------------------------------------------------------------------------


def _linspace_from_neg_one(steps: int, dtype: np.dtype, align_corners: bool) -> np.ndarray:
    """The normalised coordinates of ``steps`` pixels: torch.linspace(-1, 1, steps) to the
    bit (its CPU kernel counts from -1 for the first half and back from 1 for the rest, each
    value one fused multiply-add), scaled by (steps - 1) / steps without align_corners;
    a single pixel sits at 0."""
    if steps <= 1:
        return np.zeros(1, dtype)
    i = np.arange(steps)
    if dtype.kind == "f" and dtype.itemsize >= 4:
        ct = dtype.type
        step = ct(2) / ct(steps - 1)
        first = fused_multiply_add(i, step, -1, dtype)
        last = fused_multiply_add(steps - 1 - i, -step, 1, dtype)
    else:  # float16, bfloat16 (rounded at each step) and integers (a double step)
        wide = dtype.type if dtype.kind in "fc" else np.float64
        step = wide(2) / wide(steps - 1)
        first = wide(-1) + step * i.astype(wide)
        last = wide(1) - step * (steps - 1 - i).astype(wide)
    grid = np.where(i < steps // 2, first, last).astype(dtype)
    if align_corners:
        return grid
    scaled = grid * dtype.type(steps - 1)
    # true division: an integer grid divides in float32 and is truncated back
    quotient = scaled / (np.float32(steps) if dtype.kind in "iub" else dtype.type(steps))
    return quotient.astype(dtype)


def affine_base_grid(dtype: np.dtype, size, align_corners: bool) -> np.ndarray:
    """``(N, H, W, 3)`` (or ``(N, D, H, W, 4)``): each output pixel's normalised x, y (, z)
    and a 1, the points the affine matrices transform."""
    spatial = list(size[2:])
    grid = np.empty([size[0]] + spatial + [len(spatial) + 1], dtype)
    for axis, steps in enumerate(reversed(spatial)):  # x runs along the last dimension
        line = _linspace_from_neg_one(steps, dtype, align_corners)
        grid[..., axis] = line.reshape((-1,) + (1,) * axis)
    grid[..., -1] = 1
    return grid


def affine_grid_check(theta, size) -> None:
    """affine_grid_generator's refusals: the size's rank, then the batched product's
    shapes, in PyTorch's words."""
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    shape = theta._data.shape
    nd = len(size) - 2
    for dim in (1, 2):  # theta.transpose(1, 2)
        if dim >= len(shape):
            raise _dim_out_of_range(len(shape), dim)
    if len(shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if shape[0] != size[0] or shape[2] != nd + 1:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, {nd + 1}] but got: [{shape[0]}, {shape[2]}]."
        )
    if shape[1] != nd:
        points = int(np.prod(size[2:]))
        target = shape_text([size[0]] + list(size[2:]) + [nd])
        raise RuntimeError(
            f"shape '{target}' is invalid for input of size {size[0] * points * shape[1]}"
        )


def affine_grid_generator(theta: np.ndarray, size, align_corners: bool) -> np.ndarray:
    """The sampling grid ``(N, *spatial, nd)``: every base-grid point times each batch
    element's affine matrix. The products are summed one term at a time, in order, as
    torch's bmm does for a contraction this short, so the values are torch's to the bit."""
    n, spatial = size[0], list(size[2:])
    base = opmath(affine_base_grid(theta.dtype, size, align_corners))
    points = base.reshape(n, int(np.prod(spatial)), 1, len(spatial) + 1)
    matrices = opmath(theta)[:, None]  # (N, 1, nd, nd + 1)
    grid = points[..., 0] * matrices[..., 0]
    for term in range(1, len(spatial) + 1):
        grid = grid + points[..., term] * matrices[..., term]
    return grid.astype(theta.dtype, copy=False).reshape([n] + spatial + [len(spatial)])


# ---- grid_sample ---------------------------------------------------------------------------------
#
# Every output point reads its input taps through one gather over the batch and all points
# at once; the backward scatters with one bincount. Loops run only over the few taps of a
# point (4 or 8 corners, 16 bicubic taps) and the 2 or 3 grid components.

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75


def grid_sampler_check(input, grid, interpolation_mode: int, nd: int) -> None:
    """grid_sampler's refusals (the common ones, then the rank's), in PyTorch's words."""
    x, g = input._data, grid._data
    if x.shape[:1] != g.shape[:1]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {shape_text(x.shape)} and grid with sizes {shape_text(g.shape)}"
        )
    if g.shape[-1] != x.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {x.ndim - 2} in last dimension, but "
            f"got grid with sizes {shape_text(g.shape)}"
        )
    for dim in range(2, x.ndim):
        if x.shape[dim] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {shape_text(x.shape)} with dimension {dim} being empty"
            )
    if x.ndim != nd + 2 or g.ndim != nd + 2:
        raise RuntimeError(
            f"grid_sampler(): expected {nd + 2}D input and grid with same number of "
            f"dimensions, but got input with sizes {shape_text(x.shape)} and grid with "
            f"sizes {shape_text(g.shape)}"
        )
    if interpolation_mode == BICUBIC and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if interpolation_mode not in (BILINEAR, NEAREST, BICUBIC):
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    if x.dtype.kind != "f":
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(x.dtype)}'"
        )
    if g.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type_name(x.dtype)} but found "
            f"{dtypes.scalar_type_name(g.dtype)}"
        )


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool):
    """Grid coordinates in [-1, 1] to pixel positions, and d(position)/d(coord)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(position: np.ndarray, size: int):
    """Border padding: the position clipped into the image, and its derivative."""
    inside = (position > 0) & (position < size - 1)
    return np.clip(position, 0, size - 1), inside


def _reflect(position: np.ndarray, twice_low: int, twice_high: int):
    """The position reflected off the borders at twice_low / 2 and twice_high / 2 until it
    lies between them, and its derivative (+-1)."""
    if twice_low == twice_high:
        return np.zeros_like(position), np.zeros_like(position)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = position - low
    sign = np.where(shifted < 0, -1, 1).astype(position.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _pad_position(position, size: int, padding_mode: int, align_corners: bool):
    """compute_coordinates: the position the padding mode reads, and its derivative."""
    if padding_mode == _BORDER:
        return _clip(position, size)
    if padding_mode == _REFLECTION:
        if align_corners:
            reflected, d = _reflect(position, 0, 2 * (size - 1))
        else:
            reflected, d = _reflect(position, -1, 2 * size - 1)
        clipped, inside = _clip(reflected, size)
        return clipped, d * inside
    return position, 1


def _cubic_weights(t: np.ndarray):
    """The four cubic-convolution weights of fraction ``t`` and their first and second
    derivatives in t."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def near_slope(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far_slope(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    def near_curvature(x):
        return 6 * (a + 2) * x - 2 * (a + 3)

    def far_curvature(x):
        return 6 * a * x - 10 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    slopes = [far_slope(t + 1), near_slope(t), -near_slope(1 - t), -far_slope(2 - t)]
    curvatures = [far_curvature(t + 1), near_curvature(t), near_curvature(1 - t)]
    curvatures.append(far_curvature(2 - t))
    return weights, slopes, curvatures


def _axis_taps(coord, size, mode, padding_mode, align_corners):
    """Per spatial axis: a list of taps (index, weight, d weight / d coord,
    d2 weight / d coord2), indices possibly outside [0, size) (those read zero). Positions
    depend piecewise linearly on the coordinate, so only bicubic weights curve."""
    position, scale = _unnormalize(coord, size, align_corners)
    if mode == BICUBIC:
        base = np.floor(position)
        weights, slopes, curvatures = _cubic_weights(position - base)
        taps = []
        for i in range(4):
            at, _ = _pad_position(base - 1 + i, size, padding_mode, align_corners)
            taps.append(
                (at.astype(np.int64), weights[i], slopes[i] * scale, curvatures[i] * scale**2)
            )
        return taps
    position, d_pad = _pad_position(position, size, padding_mode, align_corners)
    d_position = scale * d_pad
    if mode == NEAREST:
        return [(np.rint(position).astype(np.int64), np.ones_like(position), 0, 0)]
    low = np.floor(position)
    frac = position - low
    low = low.astype(np.int64)
    return [(low, 1 - frac, -d_position, 0), (low + 1, frac, d_position, 0)]


def _taps(input_shape, grid: np.ndarray, mode, padding_mode, align_corners, curvatures=False):
    """Every tap of every output point: (flat index into the spatial dims, in-bounds mask,
    weight, [d weight / d position on each axis]) for the product of the per-axis taps; with
    ``curvatures``, also the weight's second derivatives, [[d2 weight / d axis d axis']]."""
    spatial = input_shape[2:]
    nd = len(spatial)
    per_axis = [
        _axis_taps(grid[..., nd - 1 - axis], size, mode, padding_mode, align_corners)
        for axis, size in enumerate(spatial)
    ]
    strides = [int(np.prod(spatial[axis + 1 :])) for axis in range(nd)]
    for combo in np.ndindex(*[len(taps) for taps in per_axis]):
        chosen = [per_axis[axis][i] for axis, i in enumerate(combo)]
        index, inside, weight = 0, True, 1
        for (at, w, _, _), size, stride in zip(chosen, spatial, strides):
            inside = inside & (at >= 0) & (at < size)
            index = index + np.clip(at, 0, size - 1) * stride
            weight = weight * w
        slopes = [_weight_derivative(chosen, {axis: 1}) for axis in range(nd)]
        if not curvatures:
            yield index, inside, weight, slopes
            continue
        second = [[None] * nd for _ in range(nd)]
        for axis in range(nd):
            for other in range(axis, nd):
                orders = {axis: 2} if axis == other else {axis: 1, other: 1}
                second[axis][other] = second[other][axis] = _weight_derivative(chosen, orders)
        yield index, inside, weight, slopes, second


def _weight_derivative(chosen, orders: dict):
    """A derivative of the product of the per-axis weights of ``chosen`` taps: on each axis,
    the weight's derivative of the order ``orders`` gives it (0: the weight itself)."""
    product = 1
    for axis, tap in enumerate(chosen):
        product = product * tap[1 + orders.get(axis, 0)]
    return product


def _gather(x: np.ndarray, index: np.ndarray, inside) -> np.ndarray:
    """``x[n, c, index[n, ...]]`` for every batch element and channel; zero outside."""
    n, c = x.shape[:2]
    flat = x.reshape(n, c, int(np.prod(x.shape[2:])))
    points = index.reshape(n, 1, int(np.prod(index.shape[1:])))
    values = np.take_along_axis(flat, np.broadcast_to(points, (n, c, points.shape[-1])), 2)
    return values.reshape((n, c) + index.shape[1:]) * np.expand_dims(inside, 1)


def grid_sampler(
    input: np.ndarray, grid: np.ndarray, interpolation_mode, padding_mode, align_corners
):
    """grid_sampler_2d / grid_sampler_3d: ``(N, C, *S)`` sampled at ``grid``'s
    ``(N, *O, nd)`` points gives ``(N, C, *O)``."""
    x, g = opmath(input), opmath(grid)
    out = np.zeros(x.shape[:2] + g.shape[1:-1], x.dtype)
    for index, inside, weight, _ in _taps(
        x.shape, g, interpolation_mode, padding_mode, align_corners
    ):
        out += _gather(x, index, inside) * np.expand_dims(weight, 1)
    return out.astype(input.dtype, copy=False)


def _scatter_add(shape, contributions) -> np.ndarray:
    """The sum into a zero array of ``shape`` (N, C, *S) of (index, values) pairs, values
    (N, C, *O) added at the flat spatial ``index`` (N, *O) of their plane."""
    n, c = shape[:2]
    spatial = int(np.prod(shape[2:]))
    planes = (np.arange(n * c) * spatial).reshape((n, c) + (1,) * (len(shape) - 2))
    indices = [(planes + np.expand_dims(index, 1)).ravel() for index, _ in contributions]
    values = [values.ravel() for _, values in contributions]
    flat = np.bincount(
        np.concatenate(indices) if indices else np.zeros(0, np.int64),
        weights=np.concatenate(values) if values else None,
        minlength=n * c * spatial,
    )
    return flat.reshape(shape)


def grid_sampler_backward(
    grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask
):
    """(grad_input, grad_grid), each None where output_mask is False."""
    x, g, go = opmath(input), opmath(grid), opmath(grad_output)
    nd = g.shape[-1]
    want_input, want_grid = output_mask
    scattered = []
    grad_grid = np.zeros(g.shape, x.dtype) if want_grid else None
    for index, inside, weight, slopes in _taps(
        x.shape, g, interpolation_mode, padding_mode, align_corners
    ):
        if want_input:
            contribution = go * np.expand_dims(weight * inside, 1)
            scattered.append((index, np.broadcast_to(contribution, go.shape)))
        if want_grid and interpolation_mode != NEAREST:
            read = (_gather(x, index, inside) * go).sum(axis=1)
            for component in range(nd):
                grad_grid[..., component] += read * slopes[nd - 1 - component]
    grad_input = None
    if want_input:
        grad_input = _scatter_add(x.shape, scattered).astype(input.dtype)
    if grad_grid is not None:
        grad_grid = grad_grid.astype(grid.dtype, copy=False)
    return grad_input, grad_grid


def grid_sampler_backward_in_grid(
    grad_grad_grid,
    grad_output,
    input,
    grid,
    interpolation_mode,
    padding_mode,
    align_corners,
    output_mask,
):
    """The part of grid_sampler_backward's derivative that a gradient of its grad_grid,
    ``grad_grad_grid``, feeds: (d grad_output, d input, d grid), None where output_mask is
    False. grad_grid is a sum over taps of weight slopes times input times grad_output, so
    the grid's tangent ``grad_grad_grid`` (its slope along each tap's weight) reaches
    grad_output and input as a sampling and a scatter, and the grid through the weights'
    second derivatives. Nearest weights are flat: nothing at all (None throughout)."""
    if interpolation_mode == NEAREST:
        return None, None, None
    x, g, go, gg = opmath(input), opmath(grid), opmath(grad_output), opmath(grad_grad_grid)
    nd = g.shape[-1]
    want_output, want_input, want_grid = output_mask
    d_output = np.zeros(go.shape, x.dtype) if want_output else None
    d_grid = np.zeros(g.shape, x.dtype) if want_grid else None
    scattered = []
    axis_of = [nd - 1 - component for component in range(nd)]
    for index, inside, _, slopes, second in _taps(
        x.shape, g, interpolation_mode, padding_mode, align_corners, curvatures=True
    ):
        along = sum(gg[..., component] * slopes[axis_of[component]] for component in range(nd))
        read = _gather(x, index, inside) if want_output or want_grid else None
        if want_output:
            d_output += read * np.expand_dims(along, 1)
        if want_input:
            contribution = go * np.expand_dims(along * inside, 1)
            scattered.append((index, np.broadcast_to(contribution, go.shape)))
        if want_grid:
            paired = (read * go).sum(axis=1)
            for target in range(nd):
                bend = sum(
                    gg[..., component] * second[axis_of[component]][axis_of[target]]
                    for component in range(nd)
                )
                d_grid[..., target] += paired * bend
    d_input = _scatter_add(x.shape, scattered).astype(input.dtype) if want_input else None
    if d_output is not None:
        d_output = d_output.astype(grad_output.dtype, copy=False)
    if d_grid is not None:
        d_grid = d_grid.astype(grid.dtype, copy=False)
    return d_output, d_input, d_grid
