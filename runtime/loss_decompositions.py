"""CompositeImplicitAutograd loss ops (PyTorch's LossNLL.cpp, Loss.cpp): each calls the ops
PyTorch 2.13's CPU composite calls, in its order, so the recorded graph is torch's.
``reduction`` is PyTorch's enum (loss_reduction.Reduction).
"""

from __future__ import annotations

from . import dtypes
from . import numpy_kernels as k
from .autograd.loss_manual import apply_loss_reduction
from .generated import ops as aten
from .loss_reduction import Reduction

__all__ = [
    "l1_loss",
    "nll_loss",
    "nll_loss2d",
    "nll_loss_nd",
    "cross_entropy_loss",
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
