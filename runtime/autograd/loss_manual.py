"""Formula helpers of the losses (PyTorch's FunctionsManual): their double backward,
forward-mode pieces and the reduction every loss formula applies. functions_manual.py
re-exports them, so derivatives.yaml names them like its own helpers.

Built from dispatched ops, so they are differentiable themselves (create_graph) and a
dispatch mode sees their aten calls. Where PyTorch updates a temporary in place (``mul_``,
``div_``) these helpers compute the same value out of place.
"""

from __future__ import annotations

from ..generated import ops as aten
from ..loss_reduction import Reduction
from .grad_mode import no_grad
from .norm_manual import linalg_vector_norm_backward, linalg_vector_norm_jvp

__all__ = [
    "apply_loss_reduction",
    "nll_loss_forward_output",
    "nll_loss2d_forward_output",
    "nll_loss_symint",
    "nll_loss2d_symint",
    "mse_loss_double_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_double_backward",
    "binary_cross_entropy_double_backward_grad_output",
    "binary_cross_entropy_double_backward_target",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    "smooth_l1_loss_double_backward",
    "huber_loss_double_backward",
    "huber_loss_double_backward_grad_output",
    "soft_margin_loss_double_backward",
    "soft_margin_loss_double_backward_grad_output",
    "norm_backward",
    "norm_jvp",
    "minimum_backward",
]

# The double-backward formulas hold eps as a C++ double (FunctionsManual.cpp), while the
# binary_cross_entropy_backward kernel clamps with a C float (loss_kernels._BCE_EPS): the
# two differ in the 9th digit, and opgrad keeps each as torch has it.
_BCE_EPS = 1e-12


def apply_loss_reduction(unreduced, reduction: int):
    """The loss as it is, its mean (MeanBackward0) or its sum (SumBackward0)."""
    if reduction == Reduction.MEAN:
        return aten.mean(unreduced)
    if reduction == Reduction.SUM:
        return aten.sum(unreduced)
    return unreduced


def _mean_divided(t, like, reduction: int):
    """``t / like.numel()`` for a mean reduction (PyTorch divides by the SymInt)."""
    return aten.div_Scalar(t, like._data.size) if reduction == Reduction.MEAN else t


def nll_loss_forward_output(self, target, weight, reduction: int, ignore_index: int):
    return aten.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d_forward_output(self, target, weight, reduction: int, ignore_index: int):
    return aten.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_symint(self, target, weight, reduction: int, ignore_index: int):
    return aten.nll_loss(self, target, weight, reduction, ignore_index)


def nll_loss2d_symint(self, target, weight, reduction: int, ignore_index: int):
    return aten.nll_loss2d(self, target, weight, reduction, ignore_index)


def mse_loss_double_backward(grad, input, reduction: int):
    return _mean_divided(aten.mul_Scalar(grad, 2), input, reduction)


def _logit(self):
    return aten.log(self / (1 - self))


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction: int):
    grad_target = -_logit(self) * grad
    if weight is not None:
        grad_target = grad_target * weight
    return _mean_divided(grad_target, target, reduction)


def binary_cross_entropy_double_backward(grad_output, grad, input, target, weight, reduction):
    inp_pl_eps = input + _BCE_EPS
    one_m_inp_pl_eps = 1 - input + _BCE_EPS
    gI = (input * input - 2 * input * target + target) / (
        inp_pl_eps.pow(2) * one_m_inp_pl_eps.pow(2)
    )
    gI = gI * (grad * grad_output)
    if weight is not None:
        gI = gI * weight
    return _mean_divided(gI, input, reduction)


def binary_cross_entropy_double_backward_grad_output(grad, input, target, weight, reduction):
    ggO = (input - target) / ((input + _BCE_EPS) * (1 - input + _BCE_EPS))
    ggO = ggO * grad
    if weight is not None:
        ggO = ggO * weight
    return _mean_divided(ggO, input, reduction)


def binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight, reduction):
    res = -grad * grad_output
    if weight is not None:
        res = res * weight
    denom = (1 - self) * self
    with no_grad():
        aten.clamp_(denom, _BCE_EPS)
    return _mean_divided(res / denom, target, reduction)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight, reduction):
    if pos_weight is not None:
        t = pos_weight * target
        grad_input = (t + 1 - target) * input.sigmoid() - t
    else:
        grad_input = input.sigmoid() - target
    grad_input = grad_input * grad
    if weight is not None:
        grad_input = grad_input * weight
    return _mean_divided(grad_input, input, reduction)


def binary_cross_entropy_with_logits_target_backward(
    grad_output, self, target, weight, pos_weight, reduction
):
    if pos_weight is not None:
        grad_target = (aten.log_sigmoid(-self) - aten.log_sigmoid(self) * pos_weight) * grad_output
    else:
        grad_target = -self * grad_output
    if weight is not None:
        grad_target = grad_target * weight
    return _mean_divided(grad_target, target, reduction)


def smooth_l1_loss_double_backward(grad, input, target, reduction: int, beta: float):
    if beta == 0:
        return aten.zeros(grad.shape, dtype=grad.dtype)
    d = (input - target).abs()
    grad_input = grad * (d < beta).type_as(grad) / beta
    return _mean_divided(grad_input, input, reduction)


def huber_loss_double_backward(grad, input, target, reduction: int, delta: float):
    d = (input - target).abs()
    return _mean_divided(grad * (d < delta), input, reduction)


def huber_loss_double_backward_grad_output(grad, grad_output, input, target, reduction, delta):
    if reduction == Reduction.NONE:
        return aten.huber_loss_backward(grad, input, target, reduction, delta)
    r = aten.huber_loss_backward(aten.ones_like(grad_output), input, target, reduction, delta)
    return (r * grad).sum()


def soft_margin_loss_double_backward(grad, input, target, reduction: int):
    z = (input * -target).exp()
    zplus1 = z + 1
    grad_input = grad * (target * target) * z / (zplus1 * zplus1)
    return _mean_divided(grad_input, input, reduction)


def soft_margin_loss_double_backward_grad_output(grad, grad_output, input, target, reduction):
    if reduction == Reduction.NONE:
        return aten.soft_margin_loss_backward(grad, input, target, reduction)
    r = aten.soft_margin_loss_backward(aten.ones_like(grad_output), input, target, reduction)
    return (r * grad).sum()


def norm_backward(grad, self, p, norm, dim, keepdim: bool):
    """PyTorch's norm_backward for at::norm over ``dim`` (p None is 2): linalg_vector_norm's
    gradient, which is the same function in PyTorch."""
    return linalg_vector_norm_backward(grad, self, 2 if p is None else p, norm, dim, keepdim)


def norm_jvp(self_p, self_t, p, norm, dim, keepdim: bool):
    return linalg_vector_norm_jvp(self_p, self_t, 2 if p is None else p, norm, dim, keepdim)


def minimum_backward(grad, self, other, is_other: bool):
    """Ties split the gradient evenly; the losing side's entries (the larger) become 0."""
    half = aten.div_Scalar(grad, 2)  # before the tie mask: C++ evaluates where's args last first
    shared = aten.where_self(aten.eq_Tensor(self, other), half, grad)
    loser = aten.lt_Tensor(self, other) if is_other else aten.gt_Tensor(self, other)
    return aten.masked_fill__Scalar(shared, loser, 0)
