"""The dropouts of ``opgrad.nn.functional``, as torch 2.13 writes them.

Each checks ``p`` and the input's dimensions in Python, then calls the aten composite
torch's function calls (``dropout``, ``feature_dropout``, ``alpha_dropout``,
``feature_alpha_dropout`` or their in-place forms). Their masks come from ``bernoulli_``
on the default generator, so one seed gives torch's mask where torch's CPU kernel is its
default one (everywhere but Intel CPUs, where its MKL build draws from MKL's stream).
"""

from __future__ import annotations

import warnings

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor


def _input_arg(args: tuple, kwargs: dict) -> tuple:
    return args[:1] if args else tuple(v for k, v in kwargs.items() if k == "input")


def _public(impl):
    """A torch Python function: overridable through ``input``."""
    return _overrides.overridable(impl, relevant=_input_arg, builtin=False)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _warn(message: str) -> None:
    """A warning pointing at the line that called the dropout (torch's stacklevel=2)."""
    from .functional import _stacklevel  # functional imports this module

    warnings.warn(message, stacklevel=_stacklevel(3))


@_public
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""
    _check_p(p)
    if inplace:
        return _aten.dropout_(input, p, training)
    return _aten.dropout(input, p, training)


@_public
def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value,
    and the result is scaled and shifted to keep zero mean and unit variance."""
    _check_p(p)
    if inplace:
        return _aten.alpha_dropout_(input, p, training)
    return _aten.alpha_dropout(input, p, training)


@_public
def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels: one mask value per (sample, channel)."""
    _check_p(p)
    if inplace:
        return _aten.feature_alpha_dropout_(input, p, training)
    return _aten.feature_alpha_dropout(input, p, training)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    if inplace:
        return _aten.feature_dropout_(input, p, training)
    return _aten.feature_dropout(input, p, training)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Feature dropout of one sample: given a batch dimension of one, then without it."""
    input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    return result.squeeze_(0) if inplace else result.squeeze(0)


@_public
def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input, each with probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if ndim == 3:
        return _feature_dropout(input, p, training, inplace)
    return _unbatched_feature_dropout(input, p, training, inplace)


@_public
def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input, each with probability ``p``. A 3-D
    input is taken as (N, C, L), as torch still does."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs)."
        )
    if ndim == 3:
        _warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead."
        )
    return _feature_dropout(input, p, training, inplace)


@_public
def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input, each with
    probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs)."
        )
    if ndim == 5:
        return _feature_dropout(input, p, training, inplace)
    return _unbatched_feature_dropout(input, p, training, inplace)
