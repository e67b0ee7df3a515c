"""Numpy kernels of the loss ops (PyTorch's CPU kernels of nll_loss, mse_loss, ...).

derivatives.yaml names them as ``k.<name>``: numpy_kernels imports them. ``reduction``
is PyTorch's enum (loss_reduction.Reduction).
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .kernel_support import opmath, refuse_non_float, shape_text
from .loss_reduction import Reduction
from . import numpy_kernels as k

__all__ = [
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "mse_loss",
    "mse_loss_backward",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
    "binary_cross_entropy_with_logits",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
    "soft_margin_loss",
    "soft_margin_loss_backward",
    "xlogy",
    "norm_scalaropt_dim",
]


def _name(dtype) -> str:
    return dtypes.scalar_type_name(dtype)


def _same_dtype(a, b) -> None:
    """PyTorch's ``data_ptr<scalar_t>()`` check on a second tensor of the kernel."""
    if b is not None and b.dtype != a.dtype:
        raise RuntimeError(f"expected scalar type {_name(a.dtype)} but found {_name(b.dtype)}")


def _exact_dtype(a, b) -> None:
    """TensorIterator's check that an input has the op's common dtype."""
    if b is not None and b.dtype != a.dtype:
        raise RuntimeError(f"Found dtype {_name(b.dtype)} but expected {_name(a.dtype)}")


def reduce(loss: np.ndarray, reduction: int, dtype) -> np.ndarray:
    """``apply_loss_reduction``: the loss as it is, its mean or its sum, in ``dtype``."""
    loss = loss.astype(dtype, copy=False)
    if reduction == Reduction.MEAN:
        return np.asarray(k.mean(loss, None, False, None))
    if reduction == Reduction.SUM:
        return np.asarray(k.sum(loss, None, False, None))
    return loss


# ---- nll_loss ------------------------------------------------------------------------------


def _check_target_dtype(target) -> None:
    if target.dtype != np.int64 and target.dtype != np.uint8:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_name(target.dtype)}"
        )


def _picked(self, target, weight, ignore_index):
    """Per target element: the input at its class (class axis 1), its class weight (0 where
    ignored) and the ignored mask; PyTorch's IndexError for a class out of range."""
    n_classes = self.shape[1]
    t = target.astype(np.int64, copy=False)
    ignored = t == ignore_index
    bad = ~ignored & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[bad].flat[0]} is out of bounds.")
    safe = np.where(ignored, 0, t)
    x = opmath(self[np.arange(len(safe)), safe])  # only the picked elements converted
    w = np.ones_like(x) if weight is None else opmath(weight)[safe]
    return x, np.where(ignored, 0, w), ignored


def _nll(self, target, weight, reduction, ignore_index, per_sample: bool):
    """The output and total_weight of nll_loss / nll_loss2d on (N, C, ...) input."""
    x, w, ignored = _picked(self, target, weight, ignore_index)
    losses = np.where(ignored, 0, -x * w)
    if per_sample:
        return losses.astype(self.dtype), np.zeros((), self.dtype)
    total_weight = w.sum(dtype=np.float64)
    total = losses.sum(dtype=np.float64)
    if reduction == Reduction.MEAN:
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.float64(total) / total_weight
    return np.asarray(total, self.dtype), np.asarray(total_weight, self.dtype)


def nll_loss_forward(self, target, weight, reduction: int, ignore_index: int):
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch_dim = self.ndim == 1 and target.ndim == 0
    if not no_batch_dim and self.shape[0] != target.shape[0]:
        raise RuntimeError(
            f"size mismatch (got input: {shape_text(self.shape)}, target: {shape_text(target.shape)})"
        )
    n_classes = self.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.size != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {shape_text(weight.shape)}"
        )
    _check_target_dtype(target)
    refuse_non_float(self, "nll_loss_out_frame")
    _same_dtype(self, weight)
    per_sample = reduction == Reduction.NONE and self.ndim == 2
    return _nll(
        self.reshape(-1, n_classes), target.reshape(-1), weight, reduction, ignore_index, per_sample
    )


def _nll_grad(grad_output, self, target, weight, reduction, ignore_index, total_weight, per_sample):
    """The gradient of nll_loss (class axis 1 of ``self``) for a per-sample or single
    ``grad_output``."""
    _, w, ignored = _picked(self, target, weight, ignore_index)
    g = opmath(grad_output)
    if not per_sample:
        g = g.reshape(())
        if reduction == Reduction.MEAN:
            with np.errstate(invalid="ignore", divide="ignore"):
                g = g / opmath(total_weight).reshape(())
    grad = np.where(ignored, 0, -(w * g))
    grad_input = np.zeros(self.shape, self.dtype)
    t = np.where(ignored, 0, target.astype(np.int64, copy=False))
    np.put_along_axis(grad_input, t[:, None], grad[:, None].astype(self.dtype), axis=1)
    return grad_input


def _check_total_weight(total_weight) -> None:
    if total_weight.size != 1:
        raise RuntimeError(
            "expected total_weight to be a  single element tensor, got: "
            f"{shape_text(total_weight.shape)} ({total_weight.size} elements)"
        )


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch_dim = self.ndim == 1 and target.ndim == 0
    if not no_batch_dim and self.shape[0] != target.shape[0]:
        raise RuntimeError(
            f"size mismatch (got input: {shape_text(self.shape)}, target: {shape_text(target.shape)})"
        )
    _check_total_weight(total_weight)
    n_classes = self.shape[-1]
    if weight is not None and weight.size != n_classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {shape_text(weight.shape)}"
        )
    per_sample = reduction == Reduction.NONE and self.ndim == 2
    if per_sample:
        if grad_output.ndim != 1 or grad_output.shape[0] != self.shape[0]:
            got = grad_output.shape[0] if grad_output.ndim else None
            if got is None:
                raise IndexError("Dimension specified as 0 but tensor has no dimensions")
            raise RuntimeError(
                f"Expected a tensor of dimension 1 and tensor.size[0] == {self.shape[0]} but got: "
                f"dimension {grad_output.ndim} and tensor.size[0] = {got}"
            )
    elif grad_output.size != 1:
        raise RuntimeError(
            f"Expected a single element grad_output tensor, but got: {shape_text(grad_output.shape)}"
        )
    _check_target_dtype(target)
    refuse_non_float(self, "nll_loss_backward_out_frame")
    _same_dtype(self, weight)
    _same_dtype(self, total_weight)
    flat = self.reshape(-1, n_classes)
    grad = _nll_grad(
        grad_output,
        flat,
        target.reshape(-1),
        weight,
        reduction,
        ignore_index,
        total_weight,
        per_sample,
    )
    return grad.reshape(self.shape)


def _check_nll2d(self, target, weight) -> None:
    if target.ndim != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of dimension: "
            f"{target.ndim}"
        )
    if self.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of dimension: "
            f"{self.ndim}"
        )
    if weight is not None and weight.size != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    n, _, h, w = self.shape
    if target.shape != (n, h, w):
        raise RuntimeError(
            f"size mismatch (got input: {shape_text(self.shape)} , target: {shape_text(target.shape)}"
        )


def _channels_last(self):
    """(N, C, H, W) -> (N*H*W, C): one row per target element."""
    return np.moveaxis(self, 1, -1).reshape(-1, self.shape[1])


def nll_loss2d_forward(self, target, weight, reduction: int, ignore_index: int):
    _check_nll2d(self, target, weight)
    _check_target_dtype(target)
    refuse_non_float(self, "nll_loss2d_forward_out_frame")
    _same_dtype(self, weight)
    per_sample = reduction == Reduction.NONE
    output, total_weight = _nll(
        _channels_last(self), target.reshape(-1), weight, reduction, ignore_index, per_sample
    )
    return (output.reshape(target.shape) if per_sample else output), total_weight


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll2d(self, target, weight)
    _check_total_weight(total_weight)
    per_sample = reduction == Reduction.NONE
    if per_sample:
        if grad_output.ndim != 3:
            raise RuntimeError(
                f"grad_output must have same dimension as target (3) but got dimension: "
                f"{shape_text(grad_output.shape)}"
            )
        if grad_output.shape != target.shape:
            raise RuntimeError(
                f"grad_output sizes don't match target sizes: target {shape_text(target.shape)}, "
                f"grad_output {shape_text(grad_output.shape)}"
            )
    elif grad_output.size != 1:
        raise RuntimeError(
            f"Expected a single element grad_output tensor, but got: {shape_text(grad_output.shape)}"
        )
    _check_target_dtype(target)
    refuse_non_float(self, "nll_loss2d_backward_out_frame")
    _same_dtype(self, weight)
    _same_dtype(self, total_weight)
    g = grad_output.reshape(-1) if per_sample else grad_output
    grad = _nll_grad(
        g,
        _channels_last(self),
        target.reshape(-1),
        weight,
        reduction,
        ignore_index,
        total_weight,
        per_sample,
    )
    n, c, h, w = self.shape
    return np.moveaxis(grad.reshape(n, h, w, c), -1, 1).copy()


# ---- pointwise losses ----------------------------------------------------------------------


def _broadcast_pair(a, b):
    if a.shape != b.shape:
        try:
            a, b = np.broadcast_arrays(a, b)
        except ValueError:
            raise RuntimeError(k.broadcast_error(a.shape, b.shape)) from None
    return a, b


def mse_loss(self, target, reduction: int):
    refuse_non_float(self, "mse_cpu")
    a, b = _broadcast_pair(opmath(self), opmath(target))
    d = a - b
    return reduce(d * d, reduction, self.dtype)


def mse_loss_backward(grad_output, self, target, reduction: int):
    refuse_non_float(self, "mse_backward_cpu")
    norm = 2.0 / self.size if reduction == Reduction.MEAN else 2.0
    a, b = _broadcast_pair(opmath(self), opmath(target))
    return (norm * (a - b) * opmath(grad_output)).astype(self.dtype)


# Loss.cpp's EPSILON is a C float: the kernel clamps (1 - x) * x at float32(1e-12), a bit
# below the C++ double 1e-12 of the double-backward formulas (autograd/loss_manual.py).
_BCE_EPS = float(np.float32(1e-12))


def binary_cross_entropy(self, target, weight, reduction: int):
    _exact_dtype(self, target)
    _exact_dtype(self, weight)
    refuse_non_float(self, "binary_cross_entropy")
    x, y = opmath(self), opmath(target)
    if not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = (y - 1) * np.maximum(np.log1p(-x), -100) - y * np.maximum(np.log(x), -100)
    if weight is not None:
        loss = loss * opmath(weight)
    return reduce(loss, reduction, self.dtype)


def binary_cross_entropy_backward(grad_output, self, target, weight, reduction: int):
    _exact_dtype(self, target)
    _exact_dtype(self, weight)
    refuse_non_float(self, "binary_cross_entropy_backward")
    x, y, g = opmath(self), opmath(target), opmath(grad_output)
    grad = g * (x - y) / np.maximum((1 - x) * x, _BCE_EPS)
    if weight is not None:
        grad = grad * opmath(weight)
    if reduction == Reduction.MEAN:
        grad = grad / self.size
    return np.broadcast_to(grad, self.shape).astype(self.dtype)


def binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction: int):
    refuse_non_float(self, "binary_cross_entropy_with_logits")
    x, y = opmath(self), opmath(target)
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((opmath(pos_weight) - 1) * y + 1)
    loss = (1 - y) * x - log_sigmoid
    if weight is not None:
        loss = loss * opmath(weight)
    return reduce(loss, reduction, self.dtype)


# ---- smooth_l1, huber and soft margin --------------------------------------------------------


def _stepwise(dtype):
    """A rounding after each operation for float16, which PyTorch's Half kernels compute
    one op at a time (each result a Half); the identity for other dtypes."""
    if dtype != np.float16:
        return lambda v: v
    return lambda v: np.asarray(v).astype(np.float16).astype(np.float32)


def smooth_l1_loss(self, target, reduction: int, beta: float):
    """0.5 * z * z / beta below beta, z - 0.5 * beta above (z = |self - target|); float16
    computes op by op with beta rounded to it, as PyTorch's Half kernel does."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    refuse_non_float(self, "smooth_l1_cpu")
    a, b = _broadcast_pair(opmath(self), opmath(target))
    r = _stepwise(self.dtype)
    beta_t = r(beta)
    z = np.abs(r(a - b))
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.where(z < beta_t, r(r(r(0.5 * z) * z) / beta_t), r(z - r(0.5 * beta_t)))
    return reduce(loss, reduction, self.dtype)


def smooth_l1_loss_backward(grad_output, self, target, reduction: int, beta: float):
    refuse_non_float(self, "smooth_l1_backward_cpu")
    norm = 1.0 / self.size if reduction == Reduction.MEAN else 1.0
    a, b = _broadcast_pair(opmath(self), opmath(target))
    x = a - b
    g = opmath(grad_output)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = np.where(x <= -beta, -norm * g, np.where(x >= beta, norm * g, norm * x * g / beta))
    return np.broadcast_to(grad, x.shape).astype(self.dtype)


def _common_float(self, target):
    """Both inputs in the dtype TensorIterator computes them in: the wider float (two
    16-bit floats meet at float32); an integral target takes self's dtype."""
    if target.dtype == self.dtype or target.dtype.kind != "f":
        return self, target.astype(self.dtype, copy=False)
    if self.dtype.kind != "f":
        return self.astype(target.dtype), target
    if self.dtype.itemsize == target.dtype.itemsize == 2:
        common = np.dtype(np.float32)
    else:
        common = self.dtype if self.dtype.itemsize > target.dtype.itemsize else target.dtype
    return self.astype(common, copy=False), target.astype(common, copy=False)


def huber_loss(self, target, reduction: int, delta: float):
    """The loss lands in self's dtype (torch writes it into an ``empty_like(self)``)."""
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, b = _common_float(self, target)
    refuse_non_float(a, "huber_cpu")
    a, b = _broadcast_pair(opmath(a), opmath(b))
    if a.shape != self.shape:
        raise RuntimeError(
            f"output with shape {shape_text(self.shape)} doesn't match the broadcast shape "
            f"{shape_text(a.shape)}"
        )
    z = np.abs(a - b)
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(self.dtype)
    return reduce(loss, reduction, self.dtype)


def huber_loss_backward(grad_output, self, target, reduction: int, delta: float):
    refuse_non_float(self, "huber_backward_cpu_out")
    norm = 1.0 / self.size if reduction == Reduction.MEAN else 1.0
    a, b = _broadcast_pair(opmath(self), opmath(target))
    x = a - b
    g = opmath(grad_output)
    grad = np.where(
        x <= -delta, -norm * g * delta, np.where(x >= delta, norm * g * delta, norm * x * g)
    )
    return np.broadcast_to(grad, x.shape).astype(self.dtype)


def _in_self_dtype(self, value):
    """A step of an in-place chain on a tensor of self's dtype: rounded to it, as PyTorch's
    ``neg_out(output, input).mul_(target).exp_()`` rounds after each op."""
    return value.astype(self.dtype, copy=False)


def _refuse_integral_output(self, other) -> None:
    if self.dtype.kind != "f":
        float_name = _name(other.dtype) if other.dtype.kind == "f" else "Float"
        raise RuntimeError(
            f"result type {float_name} can't be cast to the desired output type {_name(self.dtype)}"
        )


def soft_margin_loss(self, target, reduction: int):
    """log1p(exp(-self * target)), each step rounded to self's dtype as torch's in-place
    chain rounds it."""
    _refuse_integral_output(self, target)
    neg_x = opmath(-self)
    t = opmath(target)
    if np.broadcast_shapes(self.shape, target.shape) != self.shape:
        raise RuntimeError(
            f"output with shape {shape_text(self.shape)} doesn't match the broadcast shape "
            f"{shape_text(np.broadcast_shapes(self.shape, target.shape))}"
        )
    product = opmath(_in_self_dtype(self, neg_x * t))
    exp = opmath(_in_self_dtype(self, np.exp(product)))
    loss = _in_self_dtype(self, np.log1p(exp))
    return reduce(opmath(loss), reduction, self.dtype)


def soft_margin_loss_backward(grad_output, self, target, reduction: int):
    """-norm * target * z / (1 + z) * grad_output with z = exp(-target * self), in torch's
    order of operations (float16 rounded after each, as torch's chain of ops rounds it)."""
    _refuse_integral_output(self, target)
    norm = 1.0 / self.size if reduction == Reduction.MEAN else 1.0
    x, t, g = opmath(self), opmath(target), opmath(grad_output)
    r = _stepwise(self.dtype)
    z = r(np.exp(r(-t * x)))
    grad = r(r(r(r(t * z) * -norm) / r(z + 1)) * g)
    return np.broadcast_to(grad, np.broadcast_shapes(x.shape, t.shape)).astype(self.dtype)


# ---- xlogy (kl_div's) ------------------------------------------------------------------------


def xlogy(self, other):
    """self * log(other), 0 where self is 0 (unless other is NaN)."""
    x, y = opmath(self), opmath(other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y))
    return np.asarray(out).astype(self.dtype, copy=False)


# ---- norm (pairwise_distance's) --------------------------------------------------------------


def norm_scalaropt_dim(self, p, dim, keepdim: bool):
    """at::norm over ``dim``: linalg_vector_norm's kernel (p None is 2), after norm's own
    dtype check."""
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_name(self.dtype)} instead."
        )
    return k.linalg_vector_norm(self, 2 if p is None else p, dim, keepdim, None)
