"""``F.pad``, ``F.pixel_shuffle``, ``F.pixel_unshuffle`` and ``F.channel_shuffle``.

``pad`` is PyTorch's ``aten::pad``: constant padding is ``constant_pad_nd``; reflect and
replicate call the op for the number of padded dims; circular copies slices of a new
tensor as PyTorch's ``_pad_circular`` does, so its graph ends in ``CopySlices``.
"""

from __future__ import annotations

from typing import Optional, Sequence

from .. import _functions as _torch_functions
from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor

pixel_shuffle = _torch_functions.pixel_shuffle
pixel_unshuffle = _torch_functions.pixel_unshuffle
channel_shuffle = _torch_functions.channel_shuffle

_PAD_OPS = {
    ("reflect", 1): _aten.reflection_pad1d,
    ("reflect", 2): _aten.reflection_pad2d,
    ("reflect", 3): _aten.reflection_pad3d,
    ("replicate", 1): _aten.replication_pad1d,
    ("replicate", 2): _aten.replication_pad2d,
    ("replicate", 3): _aten.replication_pad3d,
}


def _pad_ints(pad) -> tuple:
    bad = next((p for p in pad if not isinstance(p, int) or isinstance(p, bool)), None)
    if bad is not None:
        raise TypeError(
            "pad(): argument 'pad' failed to unpack the object at pos 2 with error "
            f'"type must be tuple of ints,but got {type(bad).__name__}"'
        )
    return tuple(pad)


def _pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None):
    pad = _pad_ints(pad)
    ndim = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {ndim}"
        )
    if mode == "constant":
        return _aten.constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pad) // 2
    if not (1 <= dims <= 3 and dims + 1 <= ndim <= dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return _pad_circular(input, pad)
    return _PAD_OPS[(mode, dims)](input, pad)


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """A new tensor holding the input (cropped by negative pads), then each padded dim's
    ends copied from its opposite side, the last dim first."""
    dims = len(pad) // 2
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(dims):
        dim = len(in_shape) - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left > in_shape[dim] or right > in_shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = in_shape[dim] + left + right
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    out = input.new_empty(out_shape)
    out_slice, in_slice = out, input
    for i in range(dims):
        dim = len(in_shape) - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        out_slice = _aten.slice_Tensor(out_slice, dim, max(left, 0), out_shape[dim] - max(right, 0))
        in_slice = _aten.slice_Tensor(in_slice, dim, max(-left, 0), in_shape[dim] - max(-right, 0))
    _aten.copy_(out_slice, in_slice)
    for i in range(dims):
        dim = len(in_shape) - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = out_shape[dim]
        if left > 0:
            target = _aten.slice_Tensor(out, dim, 0, left)
            source = _aten.slice_Tensor(out, dim, size - left - max(right, 0), size - max(right, 0))
            _aten.copy_(target, source)
        if right > 0:
            target = _aten.slice_Tensor(out, dim, size - right, size)
            source = _aten.slice_Tensor(out, dim, max(left, 0), max(left, 0) + right)
            _aten.copy_(target, source)
    return out


def _pad_relevant(args: tuple, kwargs: dict) -> tuple:
    return args[:1] if args else tuple(v for k, v in kwargs.items() if k == "input")


pad = _overrides.overridable(_pad, relevant=_pad_relevant, builtin=False, name="pad")
