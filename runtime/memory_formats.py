"""Memory formats (``opgrad.contiguous_format`` ...) and PyTorch's stride rules for them.

A memory format says how a new tensor lays out its dims: row-major
(``contiguous_format``), channels innermost (``channels_last`` for 4-d,
``channels_last_3d`` for 5-d), or like the tensor it is made from
(``preserve_format``, the default of clone, ``_to_copy`` and the ``*_like``
factories). This module holds the formats and PyTorch's rules: the strides each
format gives, and which format a tensor's strides follow. Strides count elements,
as ``Tensor.stride()`` does.
"""

from __future__ import annotations

from typing import Sequence, Tuple

__all__ = [
    "memory_format",
    "preserve_format",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
]

Strides = Tuple[int, ...]


class memory_format:
    """How a new tensor lays out its elements (``opgrad.channels_last``)."""

    __slots__ = ("name", "enum_name")

    def __init__(self, name: str, enum_name: str) -> None:
        self.name = name
        self.enum_name = enum_name  # PyTorch's MemoryFormat enum, as its errors print it

    def __repr__(self) -> str:
        return f"opgrad.{self.name}"

    def __reduce__(self):
        return self.name


preserve_format = memory_format("preserve_format", "Preserve")
contiguous_format = memory_format("contiguous_format", "Contiguous")
channels_last = memory_format("channels_last", "ChannelsLast")
channels_last_3d = memory_format("channels_last_3d", "ChannelsLast3d")

#: the channels-last formats: their rank, and their dims from innermost to outermost
_CHANNELS_LAST = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def contiguous_strides(shape: Sequence[int]) -> Strides:
    """Row-major strides (a size-0 dim counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _channels_last(fmt) -> Tuple[int, Tuple[int, ...]]:
    """A channels-last format's rank and dim order; a TypeError for what is no format (an
    op's kernel may be the first to look at its memory_format argument)."""
    found = _CHANNELS_LAST.get(fmt) if fmt.__class__ is memory_format else None
    if found is None:
        raise TypeError(
            f"argument 'memory_format' must be opgrad.memory_format, not {type(fmt).__name__}"
        )
    return found


def channels_last_strides(fmt: memory_format, shape: Sequence[int]) -> Strides:
    """The strides of ``channels_last`` (4-d) or ``channels_last_3d`` (5-d)."""
    rank, order = _channels_last(fmt)
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    strides, step = [0] * rank, 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill a block of memory exactly, each once, in some dim order
    (an empty tensor does, whatever its strides)."""
    if 0 in shape:
        return True
    expected = 1
    for stride, size in sorted((st, n) for n, st in zip(shape, strides) if n >= 2):
        if stride != expected:
            return False
        expected *= size
    return True


def infer_dense_strides(shape: Sequence[int], strides: Sequence[int]) -> Strides:
    """Dense strides in the dim order of ``strides``: dims sorted innermost first by
    stride, the larger size outside on a tie, a stride-0 dim kept where it is (PyTorch's
    insertion sort, the one its TensorIterator orders dims with)."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first
    for i in range(1, ndim):
        moving = i
        for j in range(i - 1, -1, -1):
            inner, outer = perm[j], perm[moving]
            s_inner, s_outer = strides[inner], strides[outer]
            if s_inner == 0 or s_outer == 0:
                continue  # ambiguous: compare with the next dim out
            if s_inner < s_outer:
                break
            if s_inner > s_outer or shape[inner] > shape[outer]:
                perm[j], perm[moving] = outer, inner
                moving = j
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(out)


def strides_for(fmt, shape: Sequence[int], strides: Sequence[int]) -> Strides:
    """The strides of a new tensor made like one of ``shape`` and ``strides`` in ``fmt``
    (None is preserve_format): preserve keeps a dense tensor's strides and gives any
    other dense strides in its dim order."""
    if fmt is None or fmt is preserve_format:
        if is_non_overlapping_and_dense(shape, strides):
            return tuple(strides)
        return infer_dense_strides(shape, strides)
    if fmt is contiguous_format:
        return contiguous_strides(shape)
    return channels_last_strides(fmt, shape)


def is_contiguous_as(fmt, shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``is_contiguous(memory_format=fmt)``: the strides are exactly ``fmt``'s where a dim
    is longer than 1 (preserve asks for row-major, as in PyTorch)."""
    if fmt is not contiguous_format and fmt is not preserve_format:
        rank, order = _channels_last(fmt)
    else:
        rank, order = len(shape), range(len(shape) - 1, -1, -1)
        if 0 in shape:
            return True
    if len(shape) != rank:
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _strides_like_channels_last(fmt, shape, strides) -> bool:
    """PyTorch's guess that a tensor is channels-last laid out (strides growing from the
    channel dim outwards), with its row-major fallbacks for ambiguous size-1 layouts."""
    rank, order = _CHANNELS_LAST[fmt]
    if len(shape) != rank or strides[1] == 0:
        return False
    smallest = 0
    for d in order:
        if shape[d] == 0 or strides[d] < smallest or (d == 0 and smallest == strides[1]):
            return False
        smallest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_memory_format(shape: Sequence[int], strides: Sequence[int]) -> memory_format:
    """The format a tensor's strides follow: channels_last(_3d), else contiguous_format."""
    for fmt in _CHANNELS_LAST:
        if _strides_like_channels_last(fmt, shape, strides):
            return fmt
    return contiguous_format
