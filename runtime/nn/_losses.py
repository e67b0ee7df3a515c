"""The loss functions of ``opgrad.nn.functional``, as torch 2.13 writes them.

Each calls the aten op torch's function calls (``cross_entropy_loss``, ``nll_loss_nd``,
``mse_loss`` ...) or, where torch computes in Python, the same tensor ops, so the
grad_fn chain and saved fields are torch's. ``reduction`` strings become torch's enum
(loss_reduction.Reduction) as ``torch.nn._reduction`` makes them.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Callable, Optional

from .. import overrides as _overrides
from .. import _functions
from .._functions import cosine_similarity, pairwise_distance, pdist  # F names them too
from ..autograd.grad_mode import no_grad
from ..generated import ops as _aten
from ..user_warnings import warn_user
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


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warn_user(
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


def _pointwise_loss(input, target, reduction: str, weight, aten_loss, per_element):
    """mse_loss and l1_loss as torch's Python writes both: the size warning, both operands
    broadcast, then the aten loss, or without it (a weight given) ``per_element`` of the
    difference, weighted and reduced."""
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = _aten.broadcast_tensors([input, target])
    if weight is None:
        return aten_loss(expanded_input, expanded_target, _get_enum(reduction))
    _check_weight_size(weight, input)
    return _weighted_reduction(
        per_element(expanded_input - expanded_target) * weight, weight, reduction
    )


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
    reduction = _reduction_of(size_average, reduce, reduction)
    return _pointwise_loss(input, target, reduction, weight, _aten.mse_loss, lambda d: d.pow(2))


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
    reduction = _reduction_of(size_average, reduce, reduction)
    return _pointwise_loss(input, target, reduction, weight, _aten.l1_loss, lambda d: d.abs())


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


def _as_double(value):
    """A ``float`` schema argument as torch's parser reads it (an int becomes a float, which
    a node saves as such); opgrad's generated entries pass numbers through as given."""
    return float(value) if value.__class__ is int else value


def _enum_of(size_average, reduce, reduction: str) -> int:
    """torch's ``legacy_get_enum`` when a legacy argument is given, else ``get_enum``."""
    return _get_enum(_reduction_of(size_average, reduce, reduction))


@_public("input", "target")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """The squared error below ``beta`` (halved, over ``beta``), the absolute error above it."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_of(size_average, reduce, reduction)
    expanded_input, expanded_target = _aten.broadcast_tensors([input, target])
    if beta == 0.0:
        return _aten.l1_loss(expanded_input, expanded_target, _get_enum(reduction))
    return _aten.smooth_l1_loss(
        expanded_input, expanded_target, _get_enum(reduction), _as_double(beta)
    )


@_public("input", "target", "weight")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Optional[Tensor] = None,
) -> Tensor:
    """The squared error below ``delta`` (halved), ``delta`` times the absolute error less
    ``delta / 2`` above it; optionally weighted."""
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = _aten.broadcast_tensors([input, target])
    if weight is None:
        return _aten.huber_loss(
            expanded_input, expanded_target, _get_enum(reduction), _as_double(delta)
        )
    _check_weight_size(weight, input)
    unweighted = _aten.huber_loss(
        expanded_input, expanded_target, Reduction.NONE, _as_double(delta)
    )
    weighted = unweighted * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _aten.sum(weighted)
    if reduction == "mean":
        return weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@_public("input", "target")
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The two-class logistic loss log(1 + exp(-target * input)) for targets 1 and -1."""
    return _aten.soft_margin_loss(input, target, _enum_of(size_average, reduce, reduction))


@_public("input", "target")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from log-probabilities ``input``;
    'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warn_user(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the KL "
                "div math definition.'mean' will be changed to behave the same as 'batchmean' in "
                "the next major release."
            )
        reduction_enum = _get_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _aten.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


@_public("input", "target")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Optional[bool] = None,
    eps: float = 1e-8,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of ``target`` under a Poisson distribution whose rate is
    ``input`` (its log, with log_input)."""
    reduction = _reduction_of(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _aten.poisson_nll_loss(input, target, log_input, full, eps, _get_enum(reduction))


@_public("input", "target", "var")
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of ``target`` under Gaussians of mean ``input`` and
    variance ``var`` (one per element, or shared along the last or one other dimension)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _aten.ones_like(input)
    elif (var < 0)._data.any():  # torch.any(var < 0), read at once
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _aten.unsqueeze(var, -1)
        elif not (
            input.dim() == var.dim()
            and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_aten.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@_public("input1", "input2", "target")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin): ``target`` 1 ranks input1 first."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _aten.margin_ranking_loss(input1, input2, target, margin, reduction_enum)


@_public("input", "target")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where target is 1, max(0, margin - input) where it is -1."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    return _aten.hinge_embedding_loss(input, target, margin, reduction_enum)


@_public("input", "target", "weight")
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The per-class logistic loss of multi-label ``target`` (0 or 1), averaged over the
    classes (the last dimension)."""
    reduction = _reduction_of(size_average, reduce, reduction)
    loss = -(target * _aten.log_sigmoid(input) + (1 - target) * _aten.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


@_public("input1", "input2", "target")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(input1, input2) for target 1, max(0, cos(input1, input2) - margin) for -1."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    return _aten.cosine_embedding_loss(input1, input2, target, margin, reduction_enum)


@_public("anchor", "positive", "negative")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the pairwise p-norm
    distance ``d``; ``swap`` uses d(positive, negative) where it is smaller."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _aten.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction_enum
    )


@_public("anchor", "positive", "negative")
def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss with any ``distance_function`` (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            "inputs"
        )
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_swap = distance_function(positive, negative)
        dist_neg = _aten.minimum(dist_neg, dist_swap)
    loss = _aten.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _aten.sum(loss)
    if reduction == "mean":
        return _aten.mean(loss)
    return loss


@_public("input", "target", "weight")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: max(0, margin - x[target] + x[d]) ** p summed over the
    other classes d (times the target's weight), over the number of classes."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _aten.multi_margin_loss(input, target, p, margin, weight, reduction_enum)


@_public("input", "target")
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: max(0, 1 - x[y] + x[d]) summed over the target classes y
    (``target``'s entries before its first -1) and the other classes d, over the classes."""
    reduction_enum = _enum_of(size_average, reduce, reduction)
    return _aten.multilabel_margin_loss(input, target, reduction_enum)


@_public("log_probs", "targets", "input_lengths", "target_lengths")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The Connectionist Temporal Classification loss of log-probabilities ``log_probs``
    (T, N, C) for ``targets`` (N, S) or concatenated (sum of target_lengths)."""
    return _functions.ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _get_enum(reduction),
        zero_infinity,
    )
