"""``opgrad.nn.functional``'s resampling (torch.nn.functional's ``interpolate`` and the
deprecated ``upsample``, ``upsample_nearest``, ``upsample_bilinear``).

``interpolate`` validates its arguments as torch 2.13's does and calls the ``.vec``
overload of the upsampling op its mode and rank pick (``'area'`` goes through the adaptive
average poolings), so the grad_fn and its saved fields are torch's
(``UpsampleBilinear2DBackward0`` with ``_saved_scales_h`` ...).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Optional

import numpy as np

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_MODES_TEXT = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"

#: (mode, input rank) -> the upsampling op's .vec overload and whether it takes align_corners
_VEC_OPS = {
    ("nearest", 3): (_aten.upsample_nearest1d_vec, False),
    ("nearest", 4): (_aten.upsample_nearest2d_vec, False),
    ("nearest", 5): (_aten.upsample_nearest3d_vec, False),
    ("nearest-exact", 3): (_aten._upsample_nearest_exact1d_vec, False),
    ("nearest-exact", 4): (_aten._upsample_nearest_exact2d_vec, False),
    ("nearest-exact", 5): (_aten._upsample_nearest_exact3d_vec, False),
    ("linear", 3): (_aten.upsample_linear1d_vec, True),
    ("bilinear", 4): (_aten.upsample_bilinear2d_vec, True),
    ("trilinear", 5): (_aten.upsample_trilinear3d_vec, True),
    ("bicubic", 4): (_aten.upsample_bicubic2d_vec, True),
}

#: mode -> the antialiased upsampling op's .vec overload (4-d input only)
_AA_VEC_OPS = {
    "bilinear": _aten._upsample_bilinear2d_aa_vec,
    "bicubic": _aten._upsample_bicubic2d_aa_vec,
    "lanczos": _aten._upsample_lanczos2d_aa_vec,
}

#: the modes' ranks, for the "Got 4D input, but linear mode needs 3D input" refusals
_MODE_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _public(impl):
    relevant = lambda args, kwargs: args[:1] if args else (kwargs["input"],)  # noqa: E731
    return _overrides.overridable(impl, relevant=relevant, builtin=False)


def _is_integer(x) -> bool:
    """torch's _is_integer: an int, a numpy integer or a non-floating tensor."""
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, Tensor) and not x.is_floating_point()


def _as_int(x) -> int:
    return int(x.item()) if isinstance(x, Tensor) else int(x)


@_public
def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
    recompute_scale_factor: Optional[bool] = None,
    antialias: bool = False,
) -> Tensor:
    """Down/up sample ``input`` to ``size`` or by ``scale_factor`` with the algorithm
    ``mode`` names: ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
    ``'bicubic'``, ``'trilinear'``, ``'area'`` or (4-d, with ``antialias``) ``'lanczos'``;
    ``antialias=True`` widens the bilinear / bicubic filter when downsampling."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False

    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(x) for x in size]}"
                )
            output_size = [_as_int(x) for x in size]
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:  # area needs a size: recompute it
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None

    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if output_size is not None and not all(isinstance(s, numbers.Integral) for s in output_size):
        raise TypeError(
            f"{_op_name(mode, input.dim())}() received an invalid combination of arguments - "
            f"got (Tensor, {type(output_size).__name__}, {type(scale_factors).__name__}), but "
            "expected one of:"
        )

    if mode == "area" and input.dim() in (3, 4, 5):
        return _area(input, output_size)
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if input.dim() == 4 and (antialias or mode == "lanczos"):  # bilinear, bicubic, lanczos
        return _AA_VEC_OPS[mode](input, output_size, align_corners, scale_factors)
    found = _VEC_OPS.get((mode, input.dim()))
    if found is not None:
        op, takes_align_corners = found
        if takes_align_corners:
            return op(input, output_size, align_corners, scale_factors)
        return op(input, output_size, scale_factors)
    needs = _MODE_RANK.get(mode)
    if needs is not None and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needs}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        f"modes: {_MODES_TEXT} (got {mode})"
    )


def _op_name(mode: str, rank: int) -> str:
    found = _VEC_OPS.get((mode, rank))
    return found[0].__name__.replace("_vec", "") if found else "upsample"


def _area(input: Tensor, output_size) -> Tensor:
    """'area' mode: adaptive average pooling, the 1-d case through the 2-d one as torch's
    adaptive_avg_pool1d does."""
    if input.dim() == 3:
        pooled = _aten.adaptive_avg_pool2d(_aten.unsqueeze(input, -2), [1, output_size[0]])
        return _aten.squeeze_dim(pooled, -2)
    if input.dim() == 4:
        return _aten.adaptive_avg_pool2d(input, output_size)
    return _aten.adaptive_avg_pool3d(input, output_size)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: ``interpolate`` without its last two arguments."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
