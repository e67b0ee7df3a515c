"""CompositeImplicitAutograd loss ops (PyTorch's LossNLL.cpp, Loss.cpp): each calls the ops
PyTorch 2.13's CPU composite calls, in its order, so the recorded graph is torch's.
``reduction`` is PyTorch's enum (loss_reduction.Reduction).
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from . import numpy_kernels as k
from .autograd.grad_mode import no_grad
from .autograd.loss_manual import apply_loss_reduction
from .generated import ops as aten
from .kernel_support import shape_text
from .loss_reduction import Reduction

__all__ = [
    "pdist",
    "l1_loss",
    "nll_loss",
    "nll_loss2d",
    "nll_loss_nd",
    "cross_entropy_loss",
    "kl_div",
    "poisson_nll_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_similarity",
    "pairwise_distance",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "multilabel_margin_loss",
    "ctc_loss_intlist",
    "ctc_loss_tensor",
]


def _sizes(t) -> str:
    return "[" + ", ".join(str(s) for s in t._data.shape) + "]"


def l1_loss(self, target, reduction: int = Reduction.MEAN):
    return apply_loss_reduction(aten.abs(aten.sub_Tensor(self, target)), reduction)


def nll_loss(self, target, weight=None, reduction: int = Reduction.MEAN, ignore_index: int = -100):
    return aten.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d(
    self, target, weight=None, reduction: int = Reduction.MEAN, ignore_index: int = -100
):
    return aten.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd(
    self, target, weight=None, reduction: int = Reduction.MEAN, ignore_index: int = -100
):
    """nll_loss for 1-D and 2-D input, nll_loss2d for 4-D, and for 3-D or 5-D on the input
    viewed as (N, C, 1, -1)."""
    shape = self._data.shape
    ndim = len(shape)
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    target_shape = target._data.shape
    target_batch = target_shape[0] if target_shape else 0
    if ndim != 1 and shape[0] != target_batch:
        raise ValueError(
            f"Expected input batch_size ({shape[0]}) to match target batch_size ({target_batch})."
        )
    if ndim <= 2:
        return aten.nll_loss(self, target, weight, reduction, ignore_index)
    if ndim == 4:
        return aten.nll_loss2d(self, target, weight, reduction, ignore_index)
    n, c = shape[0], shape[1]
    out_size = (n,) + shape[2:]
    if target_shape[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target_shape)}")
    input_ = self.contiguous()
    target_ = target.contiguous()
    input_ = aten.view(input_, (n, c, 1, -1) if input_._data.size else (n, c, 0, 0))
    target_ = aten.view(target_, (n, 1, -1) if target_._data.size else (n, 0, 0))
    out = aten.nll_loss2d(input_, target_, weight, reduction, ignore_index)
    return out if reduction != Reduction.NONE else aten.view(out, out_size)


def cross_entropy_loss(
    self,
    target,
    weight=None,
    reduction: int = Reduction.MEAN,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
):
    """Class probabilities when target has self's shape, else class indices; label
    smoothing mixes in the loss against the uniform distribution."""
    if self._data.shape == target._data.shape:
        if target._data.dtype.kind != "f":
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{dtypes.scalar_type_name(target._data.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_prob_target(self, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_label_smoothing(
            self, target, weight, reduction, ignore_index, label_smoothing
        )
    class_dim = 0 if self._data.ndim == 1 else 1
    log_probs = aten._log_softmax(self, class_dim, False)
    return aten.nll_loss_nd(log_probs, target, weight, reduction, ignore_index)


def _check_label_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _class_weight_view(weight, ndim: int, class_dim: int):
    """The per-class weight shaped to broadcast along ``class_dim`` of an ndim tensor."""
    shape = [1] * ndim
    shape[class_dim] = weight._data.shape[0]
    return aten.view(weight, tuple(shape))


def _cross_entropy_prob_target(self, target, weight, reduction, label_smoothing):
    class_dim = 0 if self._data.ndim == 1 else 1
    n_classes = self._data.shape[k.wrap_dim(class_dim, self._data.ndim)]
    if weight is not None and (weight._data.ndim != 1 or weight._data.size != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} classes "
            f"or no classes but got weight tensor of shape: {_sizes(weight)}"
        )
    log_probs = aten._log_softmax(self, class_dim, False)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = aten.add_Scalar(
            aten.mul_Scalar(target, 1 - label_smoothing), label_smoothing / n_classes
        )
    product = aten.mul_Tensor(log_probs, target)
    if weight is not None:
        if log_probs._data.ndim > 1:
            weight = _class_weight_view(weight, log_probs._data.ndim, 1)
        product = aten.mul_Tensor(product, weight)
    if reduction == Reduction.MEAN:
        total = aten.neg(aten.sum(product))
        if log_probs._data.size == 0:
            return aten.fill__Scalar(total, float("nan"))
        return aten.div_Scalar(total, log_probs._data.size // n_classes)
    if reduction == Reduction.SUM:
        return aten.neg(aten.sum(product))
    return aten.neg(aten.sum_dim_IntList(product, [class_dim]))


def _cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index, label_smoothing):
    class_dim = 0 if self._data.ndim == 1 else 1
    log_probs = aten._log_softmax(self, class_dim, False)
    nll = aten.nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    n_classes = log_probs._data.shape[class_dim]
    if weight is not None:
        weighted = aten.mul_Tensor(
            log_probs, _class_weight_view(weight, log_probs._data.ndim, class_dim)
        )
        smooth_loss = aten.neg(aten.sum_dim_IntList(weighted, [class_dim]))
    else:
        smooth_loss = aten.neg(aten.sum_dim_IntList(log_probs, [class_dim]))
    ignore_mask = aten.eq_Scalar(target, ignore_index)
    aten.masked_fill__Scalar(smooth_loss, ignore_mask, 0.0)
    if reduction == Reduction.MEAN:
        # PyTorch: ~ignore_mask and weight.gather(0, target.masked_select(~ignore_mask));
        # the same values, from ops opgrad has
        kept = aten.ne_Scalar(target, ignore_index)
        if weight is not None:
            kept_weight = aten.index_Tensor(weight, [aten.index_Tensor(target, [kept])])
            ret = aten.div_Tensor(aten.sum(smooth_loss), aten.sum(kept_weight))
        else:
            ret = aten.div_Tensor(aten.sum(smooth_loss), aten.sum(kept))
    elif reduction == Reduction.SUM:
        ret = aten.sum(smooth_loss)
    else:
        ret = smooth_loss
    return aten.add_Tensor(
        aten.mul_Scalar(nll, 1 - label_smoothing),
        aten.mul_Scalar(ret, label_smoothing / n_classes),
    )


# ---- Loss.cpp's composites -------------------------------------------------------------------


def _scalar_minus(scalar, tensor):
    """ATen's ``scalar - tensor``: empty_like(tensor).fill_(scalar).sub_(tensor), so the
    graph holds SubBackward0, not RsubBackward1."""
    return aten.sub__Tensor(aten.fill__Scalar(aten.empty_like(tensor), scalar), tensor)


def kl_div(self, target, reduction: int = Reduction.MEAN, log_target: bool = False):
    """target * (log(target) - self) pointwise, the target given as probabilities or, with
    log_target, as log-probabilities."""
    if self._data.dtype.kind == "c" or target._data.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if self._data.dtype.kind in "biu" or target._data.dtype.kind in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # C++ evaluates a binary operator's right operand first: torch calls mul before xlogy
    if log_target:
        difference = aten.sub_Tensor(target, self)
        output = aten.mul_Tensor(aten.exp(target), difference)
    else:
        product = aten.mul_Tensor(target, self)
        output = aten.sub_Tensor(aten.xlogy_Tensor(target, target), product)
    return apply_loss_reduction(output, reduction)


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction: int):
    """exp(input) - target * input for a log rate, input - target * log(input + eps) for a
    rate; ``full`` adds Stirling's approximation of log(target!) where target > 1."""
    # the right operand of each C++ binary operator first, as torch evaluates them
    if log_input:
        product = aten.mul_Tensor(target, input)
        loss = aten.sub_Tensor(aten.exp(input), product)
    else:
        product = aten.mul_Tensor(target, aten.log(aten.add_Scalar(input, float(eps))))
        loss = aten.sub_Tensor(input, product)
    if full:
        log_term = aten.mul_Scalar(aten.log(aten.mul_Scalar(target, 2 * math.pi)), 0.5)
        entropy_term = aten.sub_Tensor(aten.mul_Tensor(target, aten.log(target)), target)
        stirling = aten.add_Tensor(entropy_term, log_term)
        loss = aten.add__Tensor(
            loss, aten.masked_fill_Scalar(stirling, aten.le_Scalar(target, 1), 0)
        )
    return apply_loss_reduction(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin: float = 0.0, reduction: int = Reduction.MEAN
):
    difference = aten.sub_Tensor(input1, input2)  # before neg: C++'s operand order
    unclamped = aten.add_Scalar(aten.mul_Tensor(aten.neg(target), difference), float(margin))
    return apply_loss_reduction(aten.clamp_min_(unclamped, 0), reduction)


def hinge_embedding_loss(self, target, margin: float = 1.0, reduction: int = Reduction.MEAN):
    """self where target is 1, max(0, margin - self) where it is -1 (their sum elsewhere)."""
    zeros = aten.zeros_like(self)
    margin_clamp = aten.clamp_min_(_scalar_minus(float(margin), self), 0)
    output_margin = aten.where_self(aten.ne_Scalar(target, 1), margin_clamp, zeros)
    output_self = aten.where_self(aten.ne_Scalar(target, -1), self, zeros)
    return apply_loss_reduction(aten.add_Tensor(output_margin, output_self), reduction)


# The composites' `float` arguments reach the ops they call as doubles, as in PyTorch (a
# node saves 2.0, not 2): opgrad's entries pass Python numbers through as given.

# ---- distances (Distance.cpp) and the losses built on them ----------------------------------

# Loss.cpp's EPSILON, a C float, as cosine_embedding_loss adds it to the squared magnitudes
_COSINE_EPS = float(np.float32(1e-12))


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """<x1, x2> / (max(||x1||, eps) * max(||x2||, eps)) along ``dim``, each input divided by
    its clamped norm first (integral inputs converted to the common float dtype)."""
    common = dtypes.result_type(x1, x2)
    if common.kind != "f":
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{dtypes.scalar_type_name(common)}"
        )
    to_dtype = dtypes.FROM_NUMPY[common]
    if x1._data.dtype.kind in "biu":
        x1 = x1.to(to_dtype)
    if x2._data.dtype.kind in "biu":
        x2 = x2.to(to_dtype)
    if x1._data.shape != x2._data.shape:  # expand_outplace: both expanded
        try:
            shape = np.broadcast_shapes(x1._data.shape, x2._data.shape)
        except ValueError:
            raise RuntimeError(k.broadcast_error(x1._data.shape, x2._data.shape)) from None
        x1, x2 = aten.expand(x1, shape), aten.expand(x2, shape)
    x1_norm = aten.clone(aten.linalg_vector_norm(x1, 2, [dim], True))
    x2_norm = aten.clone(aten.linalg_vector_norm(x2, 2, [dim], True))
    with no_grad():
        eps_t = aten.scalar_tensor(float(eps), dtype=x1_norm.dtype)
        aten.clamp_min__Tensor(x1_norm, eps_t)
        aten.clamp_min__Tensor(x2_norm, eps_t)
    x2_normalized = aten.div_Tensor(x2, x2_norm)  # C++'s right operand first
    x1_normalized = aten.div_Tensor(x1, x1_norm)
    return aten.sum_dim_IntList(aten.mul_Tensor(x1_normalized, x2_normalized), [dim])


def pdist(self, p: float = 2.0):
    """PyTorch's checks, then _pdist_forward of a contiguous input."""
    x = self._data
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if x.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return aten._pdist_forward(self.contiguous(), p)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The p-norm of x1 - x2 + eps over the last dimension of the broadcast inputs."""
    innermost_dim = max(x1._data.ndim, x2._data.ndim) - 1
    shifted = aten.add_Scalar(aten.sub_Tensor(x1, x2), float(eps))
    return aten.norm_ScalarOpt_dim(shifted, float(p), [innermost_dim], keepdim)


def cosine_embedding_loss(
    input1, input2, target, margin: float = 0.0, reduction: int = Reduction.MEAN
):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""
    targ_dim = target._data.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    sizes = f"{shape_text(input1._data.shape)} and {shape_text(input2._data.shape)}."
    if targ_dim == 1 and not (input1._data.ndim == 2 and input2._data.ndim == 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with sizes {sizes}"
        )
    if targ_dim == 0 and not (input1._data.ndim == 1 and input2._data.ndim == 1):
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes {sizes}"
        )
    prod_sum = aten.sum_dim_IntList(aten.mul_Tensor(input1, input2), [targ_dim])
    mag_square1 = aten.add_Scalar(
        aten.sum_dim_IntList(aten.mul_Tensor(input1, input1), [targ_dim]), _COSINE_EPS
    )
    mag_square2 = aten.add_Scalar(
        aten.sum_dim_IntList(aten.mul_Tensor(input2, input2), [targ_dim]), _COSINE_EPS
    )
    denom = aten.sqrt_(aten.mul_Tensor(mag_square1, mag_square2))
    cos = aten.div_Tensor(prod_sum, denom)
    zeros = aten.zeros_like(cos)
    pos = _scalar_minus(1, cos)
    neg = aten.clamp_min_(aten.sub_Scalar(cos, float(margin)), 0)
    output_pos = aten.where_self(aten.eq_Scalar(target, 1), pos, zeros)
    output_neg = aten.where_self(aten.eq_Scalar(target, -1), neg, zeros)
    return apply_loss_reduction(aten.add_Tensor(output_pos, output_neg), reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = Reduction.MEAN,
):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with pairwise distances;
    ``swap`` takes the smaller of d(anchor, negative) and d(positive, negative)."""
    a_dim, p_dim, n_dim = anchor._data.ndim, positive._data.ndim, negative._data.ndim
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            "inputs"
        )
    dist_pos = aten.pairwise_distance(anchor, positive, p, eps)
    dist_neg = aten.pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_swap = aten.pairwise_distance(positive, negative, p, eps)
        dist_neg = aten.minimum(dist_neg, dist_swap)
    output = aten.clamp_min(aten.sub_Tensor(aten.add_Scalar(dist_pos, float(margin)), dist_neg), 0)
    return apply_loss_reduction(output, reduction)


def multilabel_margin_loss(self, target, reduction: int = Reduction.MEAN):
    return aten.multilabel_margin_loss_forward(self, target, reduction)[0]


# ---- ctc_loss (LossCTC.cpp) ------------------------------------------------------------------


def _ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity, divisor
):
    """torch's ctc_loss_impl: an unbatched (T, C) input gets a batch of one; targets become
    int64; zero_infinity zeroes infinite losses; 'mean' averages the losses divided by their
    clamped target lengths (``divisor()`` makes that tensor)."""
    is_batched = log_probs._data.ndim == 3
    if not is_batched:
        log_probs = aten.unsqueeze(log_probs, 1)
    if targets._data.dtype != np.int64:
        targets = aten._to_copy(targets, dtype=dtypes.int64)
    res = aten._ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        zero = aten.zeros([], dtype=res.dtype)
        res = aten.where_self(aten.eq_Scalar(res, math.inf), zero, res)
    if reduction == Reduction.MEAN:
        return aten.mean(aten.div_Tensor(res, aten.clamp_min(divisor(res), 1)))
    if reduction == Reduction.SUM:
        return aten.sum(res)
    return res if is_batched else aten.squeeze_dim(res, 0)


def ctc_loss_intlist(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: int = Reduction.MEAN,
    zero_infinity: bool = False,
):
    def divisor(res):  # at::tensor(target_lengths, res.options()): a new tensor, then its data
        lengths = aten.empty_memory_format([len(target_lengths)], dtype=res.dtype)
        lengths._data[...] = np.asarray(target_lengths, dtype=lengths._data.dtype)
        return lengths

    return _ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity, divisor
    )


def ctc_loss_tensor(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: int = Reduction.MEAN,
    zero_infinity: bool = False,
):
    """The lengths read as int lists (torch's CPU path: CtcLossBackward0 saves them so)."""
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
    return _ctc_loss(
        log_probs,
        targets,
        [int(v) for v in input_lengths._data.reshape(-1)],
        [int(v) for v in target_lengths._data.reshape(-1)],
        blank,
        reduction,
        zero_infinity,
        lambda res: target_lengths,
    )
