"""Formula helpers of the grid-sampling ops, re-exported by functions_manual."""

from __future__ import annotations

from ..tensor import _make
from .._tls import state as _tls
from .. import numpy_kernels as k
from ..generated import ops as aten
from ..sampling_kernels import NEAREST

__all__ = ["grid_sampler_double_backward"]


def grid_sampler_double_backward(
    grad_grad_input,
    grad_grad_grid,
    grad_output,
    input,
    grid,
    interpolation_mode,
    padding_mode,
    align_corners,
    output_mask,
):
    """The derivative of grid_sampler_2d_backward / grid_sampler_3d_backward: gradients of
    (grad_output, input, grid) from those of its results (grad_input, grad_grid), each None
    where PyTorch leaves it undefined.

    grad_input is a transposed sampling of grad_output, linear in both, so a gradient of it
    comes back as a sampling (for grad_output) and as grid_sampler_backward's grad_grid with
    the gradient in the input's place (for the grid): those two are aten calls and stay
    differentiable. What a gradient of grad_grid feeds goes through the weights' second
    derivatives, computed by one numpy kernel: it has no graph, so it refuses to run where
    a graph of it is wanted (a third derivative) rather than return one without history."""
    want_output, want_input, want_grid = output_mask
    planar = input.dim() == 4
    d_output = d_input = d_grid = None
    if grad_grad_input is not None:
        if want_output:
            sample = aten.grid_sampler_2d if planar else aten.grid_sampler_3d
            d_output = sample(
                grad_grad_input, grid, interpolation_mode, padding_mode, align_corners
            )
        if want_grid:
            backward = aten.grid_sampler_2d_backward if planar else aten.grid_sampler_3d_backward
            d_grid = backward(
                grad_output,
                grad_grad_input,
                grid,
                interpolation_mode,
                padding_mode,
                align_corners,
                [False, True],
            )[1]
    if grad_grad_grid is None or interpolation_mode == NEAREST:  # nearest weights are flat
        return d_output, d_input, d_grid
    operands = (grad_grad_grid, grad_output, input, grid)
    if _tls.grad_enabled and any(t.requires_grad for t in operands):
        raise NotImplementedError(
            "opgrad computes the second derivative of grid_sampler_2d / grid_sampler_3d in "
            "the grid's direction without a graph: its third derivative (create_graph=True "
            "through grid_sampler_2d_backward's gradient) is not implemented"
        )
    parts = k.grid_sampler_backward_in_grid(
        *(t._data for t in operands),
        interpolation_mode,
        padding_mode,
        align_corners,
        output_mask,
    )
    d_output, d_input, d_grid = (
        _added(total, part) for total, part in zip((d_output, d_input, d_grid), parts)
    )
    return d_output, d_input, d_grid


def _added(total, part):
    if part is None:
        return total
    return _make(part) if total is None else aten.add_Tensor(total, _make(part))
