"""Formula helpers of the grid-sampling ops, re-exported by functions_manual."""

from __future__ import annotations

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
    """The derivative of grid_sampler_2d_backward / grid_sampler_3d_backward. PyTorch 2.13
    has one (a composite of gathers and scatters); opgrad does not yet, and says so rather
    than return a wrong or partial gradient."""
    raise NotImplementedError(
        "opgrad does not implement the double backward of grid_sampler_2d / grid_sampler_3d "
        "yet (the derivative of grid_sampler_2d_backward / grid_sampler_3d_backward)"
    )
