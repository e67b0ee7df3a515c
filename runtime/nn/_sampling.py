"""``opgrad.nn.functional``'s sliding blocks and sampling (torch.nn.functional's ``unfold``,
``fold``, ``affine_grid``, ``grid_sample``).

Each validates its arguments as torch 2.13's does and calls the aten op torch's function
calls on the CPU, so the grad_fn is torch's (``F.unfold(x, 2).grad_fn`` is Im2ColBackward0,
``F.fold`` gives Col2ImBackward0, ``F.affine_grid`` AffineGridGeneratorBackward0,
``F.grid_sample`` GridSampler2DBackward0 or GridSampler3DBackward0).
"""

from __future__ import annotations

import warnings
from typing import List, Optional

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = ["affine_grid", "fold", "grid_sample", "unfold"]

_ALIGN_CORNERS_DEFAULT_CHANGED = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _public(impl):
    relevant = lambda args, kwargs: args[:1] if args else (kwargs["input"],)  # noqa: E731
    return _overrides.overridable(impl, relevant=relevant, builtin=False)


def _pair(value) -> tuple:
    """torch's _pair: an iterable as a tuple (of whatever length), anything else twice."""
    try:
        return tuple(value)
    except TypeError:
        return (value, value)


@_public
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks from a batched ``(N, C, H, W)`` (or unbatched
    ``(C, H, W)``) input: ``(N, C * prod(kernel_size), L)``."""
    return _aten.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


@_public
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine an array of sliding local blocks into a large containing tensor, summing
    where blocks overlap: ``(N, C * prod(kernel_size), L)`` -> ``(N, C, *output_size)``."""
    return _aten.col2im(
        input,
        _pair(output_size),
        _pair(kernel_size),
        _pair(dilation),
        _pair(padding),
        _pair(stride),
    )


@_public
def affine_grid(theta: Tensor, size: List[int], align_corners: Optional[bool] = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` (``(N, D, H, W, 3)``) of a batch of 2-D (3-D) affine
    matrices ``theta`` for an output of ``size``, in grid_sample's normalised coordinates."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT_CHANGED, stacklevel=3)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial_size) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=3,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _aten.affine_grid_generator(theta, size, align_corners)


_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_sample_relevant(args, kwargs):
    return tuple(args[:2]) + tuple(v for n, v in kwargs.items() if n in ("input", "grid"))


@_overrides.overridable(relevant=_grid_sample_relevant, builtin=False)
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """``input`` sampled at the normalised ``grid`` locations (``[-1, 1]`` spans the image),
    with ``mode`` interpolation and ``padding_mode`` outside the image."""
    if mode not in _INTERPOLATION_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT_CHANGED, stacklevel=3)
        align_corners = False
    return _aten.grid_sampler(
        input, grid, _INTERPOLATION_MODES[mode], _PADDING_MODES[padding_mode], align_corners
    )
