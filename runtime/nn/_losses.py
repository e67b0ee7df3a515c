"""The loss functions of ``opgrad.nn.functional``, as torch 2.13 writes them.

Each calls the aten op torch's function calls (``cross_entropy_loss``, ``nll_loss_nd``,
``mse_loss`` ...) or, where torch computes in Python, the same tensor ops, so the
grad_fn chain and saved fields are torch's. ``reduction`` strings become torch's enum
(loss_reduction.Reduction) as ``torch.nn._reduction`` makes them.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Callable, Optional

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..loss_reduction import Reduction
from ..tensor import Tensor

# ---- torch.nn._reduction -----------------------------------------------------------------


def _get_enum(reduction: str) -> int:
    if reduction == "none":
        return Reduction.NONE
    if reduction == "mean":
        return Reduction.MEAN
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=2,
        )
        return Reduction.MEAN
    if reduction == "sum":
        return Reduction.SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_get_string(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
        "instead.",
        stacklevel=3,
    )
    return ret


def _reduction_of(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_get_string(size_average, reduce)
    return reduction


# ---- the protocol and warnings ---------------------------------------------------------------


def _public(*names: str) -> Callable:
    """A torch Python loss: overridable through the tensors named (torch's
    ``has_torch_function_variadic`` arguments)."""

    def wrap(impl: Callable) -> Callable:
        params = list(inspect.signature(impl).parameters)
        where = [(params.index(n), n) for n in names]

        def relevant(args: tuple, kwargs: dict) -> tuple:
            found = (args[i] if i < len(args) else kwargs.get(n) for i, n in where)
            return tuple(v for v in found if v is not None)

        return _overrides.overridable(impl, relevant=relevant, builtin=False)

    return wrap


def _warn_user(message: str) -> None:
    """A warning that points at the line calling the loss, as torch's stacklevel=2 does."""
    # functional imports this module: its helper is looked up when a warning is due
    from .functional import _stacklevel

    warnings.warn(message, stacklevel=_stacklevel(2))


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        _warn_user(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size."
        )


def _broadcast_shapes(*shapes) -> tuple:
    """torch.broadcast_shapes (its error text for shapes that do not broadcast)."""
    result: list = []
    for index, shape in enumerate(shapes):
        shape = tuple(shape)
        ndim = max(len(result), len(shape))
        result = [1] * (ndim - len(result)) + result
        for i in range(1, len(shape) + 1):
            size = shape[-i]
            if result[-i] == 1 or size == result[-i]:
                result[-i] = size if result[-i] == 1 else result[-i]
            elif size != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {-i}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {result}"
                )
    return tuple(result)


# ---- losses -------------------------------------------------------------------------------


@_public("input", "target", "weight")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood loss of log-probabilities ``input`` (N, C, d1, ...) for
    class indices ``target``."""
    reduction = _reduction_of(size_average, reduce, reduction)
    return _aten.nll_loss_nd(input, target, weight, _get_enum(reduction), ignore_index)


@_public("input", "target", "weight")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross entropy between logits ``input`` and class indices or class probabilities
    ``target``."""
    reduction = _reduction_of(size_average, reduce, reduction)
    return _aten.cross_entropy_loss(
        input, target, weight, _get_enum(reduction), ignore_index, label_smoothing
    )


def _weighted_reduction(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _aten.sum(loss)
    if reduction == "mean":
        return _aten.sum(loss) / _aten.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


@_public("input", "target", "weight")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """The mean squared error between ``input`` and ``target`` (optionally weighted)."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_of(size_average, reduce, reduction)
    expanded_input, expanded_target = _aten.broadcast_tensors([input, target])
    if weight is None:
        return _aten.mse_loss(expanded_input, expanded_target, _get_enum(reduction))
    _check_weight_size(weight, input)
    squared = (expanded_input - expanded_target).pow(2)
    return _weighted_reduction(squared * weight, weight, reduction)


@_public("input", "target")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """The mean absolute error between ``input`` and ``target`` (optionally weighted)."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_of(size_average, reduce, reduction)
    expanded_input, expanded_target = _aten.broadcast_tensors([input, target])
    if weight is None:
        return _aten.l1_loss(expanded_input, expanded_target, _get_enum(reduction))
    _check_weight_size(weight, input)
    absolute = (expanded_input - expanded_target).abs()
    return _weighted_reduction(absolute * weight, weight, reduction)


@_public("input", "target", "weight")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross entropy between probabilities ``input`` and ``target``."""
    reduction_enum = _get_enum(_reduction_of(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(_broadcast_shapes(target.size(), weight.size()))
    return _aten.binary_cross_entropy(input, target, weight, reduction_enum)


@_public("input", "target", "weight", "pos_weight")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    pos_weight: Optional[Tensor] = None,
) -> Tensor:
    """The binary cross entropy between ``sigmoid(input)`` and ``target``, computed stably
    from the logits; ``pos_weight`` weighs the positive examples."""
    reduction_enum = _get_enum(_reduction_of(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size ({input.size()})"
        )
    return _aten.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)
