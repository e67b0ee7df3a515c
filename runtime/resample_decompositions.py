"""CompositeImplicitAutograd ops of the upsampling family: the ``.vec`` overloads, which
take an output size or scale factors, work out the output size as PyTorch 2.13 does and
call the default overload, passing the scale factors on (the node saves them)."""

from __future__ import annotations

from .generated import ops as aten

__all__ = [
    "upsample_nearest1d_vec",
    "upsample_nearest2d_vec",
    "upsample_nearest3d_vec",
    "upsample_nearest_exact1d_vec",
    "upsample_nearest_exact2d_vec",
    "upsample_nearest_exact3d_vec",
    "upsample_linear1d_vec",
    "upsample_bilinear2d_vec",
    "upsample_trilinear3d_vec",
    "upsample_bicubic2d_vec",
    "upsample_bilinear2d_aa_vec",
    "upsample_bicubic2d_aa_vec",
    "upsample_lanczos2d_aa_vec",
]

_UNCHECKED = (
    "Expected static_cast<int64_t>({what}->size()) == spatial_dimensions to be true, but got "
    "false.  (Could this error message be improved?  If so, please report an enhancement "
    "request to PyTorch.)"
)


def _output_size_and_scales(input, output_size, scale_factors):
    """PyTorch's compute_output_size, and the per-dimension scales (None without them)."""
    spatial = input.dim() - 2
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        if len(output_size) != spatial:
            raise RuntimeError(_UNCHECKED.format(what="output_size"))
        return list(output_size), [None] * spatial
    if len(scale_factors) != spatial:
        raise RuntimeError(_UNCHECKED.format(what="scale_factors"))
    scales = [float(f) for f in scale_factors]  # a float[]: Python ints become doubles
    # a C++ cast of the double product: truncated toward zero
    return [int(s * f) for s, f in zip(input.shape[2:], scales)], scales


def _nearest(op):
    def composite(input, output_size, scale_factors):
        size, scales = _output_size_and_scales(input, output_size, scale_factors)
        return op(input, size, *scales)

    return composite


def _interpolating(op):
    def composite(input, output_size, align_corners, scale_factors):
        size, scales = _output_size_and_scales(input, output_size, scale_factors)
        return op(input, size, align_corners, *scales)

    return composite


upsample_nearest1d_vec = _nearest(aten.upsample_nearest1d)
upsample_nearest2d_vec = _nearest(aten.upsample_nearest2d)
upsample_nearest3d_vec = _nearest(aten.upsample_nearest3d)
upsample_nearest_exact1d_vec = _nearest(aten._upsample_nearest_exact1d)
upsample_nearest_exact2d_vec = _nearest(aten._upsample_nearest_exact2d)
upsample_nearest_exact3d_vec = _nearest(aten._upsample_nearest_exact3d)
upsample_linear1d_vec = _interpolating(aten.upsample_linear1d)
upsample_bilinear2d_vec = _interpolating(aten.upsample_bilinear2d)
upsample_trilinear3d_vec = _interpolating(aten.upsample_trilinear3d)
upsample_bicubic2d_vec = _interpolating(aten.upsample_bicubic2d)
upsample_bilinear2d_aa_vec = _interpolating(aten._upsample_bilinear2d_aa)
upsample_bicubic2d_aa_vec = _interpolating(aten._upsample_bicubic2d_aa)
upsample_lanczos2d_aa_vec = _interpolating(aten._upsample_lanczos2d_aa)
