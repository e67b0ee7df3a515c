"""``opgrad.nn.functional``'s sliding blocks and sampling (torch.nn.functional's ``unfold``,
``fold``).

Each calls the aten op torch 2.13's function calls on the CPU, so the grad_fn is torch's
(``F.unfold(x, 2).grad_fn`` is Im2ColBackward0, ``F.fold`` gives Col2ImBackward0).
"""

from __future__ import annotations

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = ["fold", "unfold"]


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
