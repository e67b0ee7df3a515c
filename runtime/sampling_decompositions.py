"""CompositeImplicitAutograd ops of the sampling family: affine_grid_generator's backward,
built from differentiable ops as PyTorch 2.13 builds it, so a second derivative flows
through its batched product."""

from __future__ import annotations

import math

from . import numpy_kernels as k
from .generated import ops as aten
from .tensor import _make

__all__ = ["affine_grid_generator_backward", "grid_sampler"]


def affine_grid_generator_backward(grad, size, align_corners):
    """The gradient of the affine matrices: the base grid's points, transposed, times the
    grid's gradient, per batch element. The base grid is a constant made directly (opgrad
    has no linspace op, so a dispatch mode does not see the ops torch fills it with)."""
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    n, nd = size[0], len(size) - 2
    count = math.prod(size[2:])
    base = _make(k.affine_base_grid(grad._data.dtype, size, align_corners))
    points = aten.view(base, [n, count, nd + 1])
    grad_theta = aten.bmm(aten.transpose_int(points, 1, 2), aten.reshape(grad, [n, count, nd]))
    return aten.transpose_int(grad_theta, 1, 2)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler_2d for a 4-d input, grid_sampler_3d otherwise, after the checks both
    share (so a 3-d input is refused in the common words first)."""
    planar = input.dim() == 4
    k.grid_sampler_check(input, grid, interpolation_mode, 2 if planar else 3)
    op = aten.grid_sampler_2d if planar else aten.grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)
