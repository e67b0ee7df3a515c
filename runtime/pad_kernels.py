"""numpy kernels of the padding and pixel-rearranging ops (``k.<fn>`` in derivatives.yaml).

The reflection and replication pads map every output position of the padded dims to
the input position it copies; their backward adds the gradient of each output position
into that input position, in output order (as PyTorch's CPU kernels accumulate).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .kernel_support import shape_text

__all__ = [
    "constant_pad_nd",
    "constant_pad_nd_check",
    "channel_shuffle",
    "pixel_shuffle",
    "pixel_unshuffle",
    "reflection_pad",
    "reflection_pad_backward",
    "replication_pad",
    "replication_pad_backward",
]


def _padded_dims_check(a, padding: Sequence[int]) -> int:
    dims = len(padding) // 2
    if a.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size "
            f"and other non-zero dimensions for input, but got: {shape_text(a.shape)}"
        )
    if any(s == 0 for s in a.shape[a.ndim - dims - 1 + (a.ndim == dims + 1) :]):
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size "
            f"and other non-zero dimensions for input, but got: {shape_text(a.shape)}"
        )
    return dims


def _source_index(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each output position of a padded dim, the input position it copies."""
    positions = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(positions, 0, size - 1)
    period = 2 * (size - 1)
    if period == 0:
        return np.zeros_like(positions)
    positions = np.abs(positions) % period
    return np.where(positions >= size, period - positions, positions)


def _index_grid(a, padding: Sequence[int], mode: str):
    """The padded dims' count and the per-dim source indices, last padded dim last."""
    dims = len(padding) // 2
    indices = []
    for i in range(dims):
        dim = a.ndim - dims + i
        j = dims - 1 - i  # padding lists the last dim first
        indices.append(_source_index(a.shape[dim], padding[2 * j], padding[2 * j + 1], mode))
    return dims, indices


def _check_reflection(a, padding: Sequence[int]) -> None:
    dims = _padded_dims_check(a, padding)
    for i in range(dims):
        dim = a.ndim - 1 - i
        before, after = padding[2 * i], padding[2 * i + 1]
        if before >= a.shape[dim] or after >= a.shape[dim]:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                f"{shape_text(a.shape)}"
            )


def _check_replication(a, padding: Sequence[int]) -> None:
    """PyTorch refuses when every padded size would be below 1; otherwise a negative size
    fails as the tensor is made, and a zero size gives an empty result."""
    dims = _padded_dims_check(a, padding)
    sizes = a.shape[a.ndim - dims :]
    out = [s + padding[2 * j] + padding[2 * j + 1] for s, j in zip(sizes, range(dims - 1, -1, -1))]
    if all(o < 1 for o in out):
        if dims == 1:
            raise RuntimeError(f"input (W: {sizes[0]}) is too small. Calculated output W: {out[0]}")
        if dims == 2:
            raise RuntimeError(
                f"input (H: {sizes[0]}, W: {sizes[1]} ) is too small. Calculated output H: "
                f"{out[0]} W: {out[1]}"
            )
        raise RuntimeError(
            f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated "
            f"output D: {out[0]} H: {out[1]} W: {out[2]}"
        )
    negative = next((o for o in out if o < 0), None)
    if negative is not None:
        shape = a.shape[: a.ndim - dims] + tuple(out)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative}: {shape_text(shape)}"
        )


def _pad(a, padding, mode):
    _, indices = _index_grid(a, padding, mode)
    grid = np.ix_(*indices)
    return np.ascontiguousarray(a[(Ellipsis,) + grid])


def _pad_backward(grad_output, a, padding, mode):
    dims, indices = _index_grid(a, padding, mode)
    padded = a.shape[a.ndim - dims :]
    flat_index = np.ravel_multi_index(np.ix_(*indices), padded).ravel()
    batch = a.shape[: a.ndim - dims]
    rows = int(np.prod(batch, dtype=np.int64))
    out = np.zeros((rows, int(np.prod(padded, dtype=np.int64))), grad_output.dtype)
    np.add.at(out, (slice(None), flat_index), grad_output.reshape(rows, flat_index.size))
    return out.reshape(a.shape)


def reflection_pad(a, padding: Sequence[int]):
    _check_reflection(a, padding)
    return _pad(a, padding, "reflect")


def reflection_pad_backward(grad_output, a, padding: Sequence[int]):
    return _pad_backward(grad_output, a, padding, "reflect")


def replication_pad(a, padding: Sequence[int]):
    _check_replication(a, padding)
    return _pad(a, padding, "replicate")


def replication_pad_backward(grad_output, a, padding: Sequence[int]):
    return _pad_backward(grad_output, a, padding, "replicate")


def pixel_shuffle(a, factor: int):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    if a.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{a.ndim} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {factor}")
    *batch, c, h, w = a.shape
    if c % (factor * factor):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by "
            f"{factor * factor}"
        )
    oc = c // (factor * factor)
    n = len(batch)
    x = a.reshape(*batch, oc, factor, factor, h, w)
    x = x.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(x).reshape(*batch, oc, h * factor, w * factor)


def pixel_unshuffle(a, factor: int):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    if a.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
            f"with {a.ndim} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {factor}")
    *batch, c, h, w = a.shape
    if h % factor:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {factor}"
        )
    if w % factor:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {factor}"
        )
    oh, ow = h // factor, w // factor
    n = len(batch)
    x = a.reshape(*batch, c, oh, factor, ow, factor)
    x = x.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(x).reshape(*batch, c * factor * factor, oh, ow)


def channel_shuffle(a, groups: int):
    """(N, g*k, *) -> (N, k*g, *): channel i*k + j goes to j*g + i."""
    if a.ndim < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input "
            f"with {a.ndim} dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = a.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and "
            f"{groups} groups."
        )
    x = a.reshape(a.shape[0], groups, c // groups, *a.shape[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(x).reshape(a.shape)


# ---- constant padding ------------------------------------------------------------------------


def constant_pad_nd_check(self, pad) -> None:
    ndim = self._data.ndim
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * ndim:
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)}while the input has {ndim}dimensions."
        )
    shape = self._data.shape
    for i in range(len(pad) // 2):
        # negative pads crop first (a narrow): the cropped length may not be negative
        if shape[ndim - 1 - i] + min(pad[2 * i], 0) + min(pad[2 * i + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def constant_pad_nd(self, pad, value):
    """``self`` padded with ``value`` (the last dimension first, as ``pad`` lists them);
    negative padding crops."""
    ndim = self.ndim
    crop = [slice(None)] * ndim
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        dim = ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        crop[dim] = slice(max(-before, 0), self.shape[dim] - max(-after, 0))
        widths[dim] = (max(before, 0), max(after, 0))
    cropped = self[tuple(crop)]
    if not any(w != (0, 0) for w in widths):
        return cropped.copy()
    return np.pad(cropped, widths, constant_values=np.array(value).astype(self.dtype))
