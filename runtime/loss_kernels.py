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
from .ctc_kernels import ctc_loss_backward, ctc_loss_forward  # re-exported for the YAML

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
    "multi_margin_loss",
    "multi_margin_loss_backward",
    "multilabel_margin_loss_forward",
    "multilabel_margin_loss_backward",
    "ctc_loss_forward",
    "ctc_loss_backward",
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
    ignored), the ignored mask and the class index (0 where ignored); PyTorch's IndexError
    for a class out of range. Without ignored elements, no masking is done at all."""
    n_classes = self.shape[1]
    t = target.astype(np.int64, copy=False)
    ignored = t == ignore_index
    if t.size and (t.min() < 0 or t.max() >= n_classes):
        bad = ~ignored & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {t[bad].flat[0]} is out of bounds.")
    some_ignored = ignored.any()
    safe = np.where(ignored, 0, t) if some_ignored else t
    x = opmath(self[np.arange(len(safe)), safe])  # only the picked elements converted
    w = np.ones_like(x) if weight is None else opmath(weight)[safe]
    if some_ignored:
        w = np.where(ignored, 0, w)
    return x, w, ignored if some_ignored else None, safe


def _divided(numerator, denominator):
    """``numerator / denominator`` as numpy divides them, inf or nan for a zero
    denominator without numpy's warning (PyTorch gives no warning)."""
    if denominator != 0:
        return numerator / denominator
    with np.errstate(invalid="ignore", divide="ignore"):
        return numerator / denominator


def _nll(self, target, weight, reduction, ignore_index, per_sample: bool):
    """The output and total_weight of nll_loss / nll_loss2d on (N, C, ...) input."""
    x, w, ignored, _ = _picked(self, target, weight, ignore_index)
    losses = -x * w
    if ignored is not None:
        losses = np.where(ignored, 0, losses)
    if per_sample:
        return losses.astype(self.dtype), np.zeros((), self.dtype)
    total_weight = w.sum(dtype=np.float64)
    total = losses.sum(dtype=np.float64)
    if reduction == Reduction.MEAN:
        total = _divided(np.float64(total), total_weight)
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
    _, w, ignored, safe = _picked(self, target, weight, ignore_index)
    g = opmath(grad_output)
    if not per_sample:
        g = g.reshape(())
        if reduction == Reduction.MEAN:
            g = _divided(g, opmath(total_weight).reshape(()))
    if np.isfinite(g).all():
        grad = -(w * g)
    else:  # a zero total weight's inf or nan meets the ignored elements' zero weights
        with np.errstate(invalid="ignore"):
            grad = -(w * g)
    if ignored is not None:
        grad = np.where(ignored, 0, grad)
    grad_input = np.zeros(self.shape, self.dtype)
    grad_input[np.arange(len(safe)), safe] = grad  # an ignored element's 0 lands on class 0
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


# ---- multi_margin_loss and multilabel_margin_loss ----------------------------------------------


def _refuse_non_double_or_float(a, kernel: str) -> None:
    """The margin losses' kernels exist for float and double only (no Half)."""
    if a.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Half'")
    refuse_non_float(a, kernel)


def _margin_frames(self):
    """(nframe, dim) of a vector or a matrix of class scores (a 0-dim input is one score)."""
    ndim = self.ndim
    if not ((ndim == 2 and self.shape[1] != 0) or (ndim == 1 and self.shape[0] != 0) or ndim == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{shape_text(self.shape)}"
        )
    if ndim <= 1:
        return 1, (1 if ndim == 0 else self.shape[0])
    return self.shape[0], self.shape[1]


def _multi_margin_check(self, target, p, weight):
    if p != 1 and p != 2:
        raise RuntimeError("only p == 1 and p == 2 supported")
    nframe, dim = _margin_frames(self)
    if target.ndim > 1 or target.size != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{shape_text(target.shape)}. Input has shape {shape_text(self.shape)}."
        )
    if weight is not None and (weight.ndim > 1 or weight.size != dim):
        raise RuntimeError(
            f"inconsistent weight size, expected {dim} but got {shape_text(weight.shape)}"
        )
    _refuse_non_double_or_float(self, "multi_margin_loss_cpu_kernel")
    _check_target_dtype_long(target)
    _same_dtype(self, weight)
    return nframe, dim


def _multi_margin_terms(self, target, margin, nframe, dim):
    """Per frame and class: the hinge term (0 at the target class and where the margin
    holds), its positive mask, the frames' target classes and rows."""
    x = self.reshape(nframe, dim)
    t = target.reshape(nframe)
    if ((t < 0) | (t >= dim)).any():
        raise RuntimeError("target out of range")
    rows = np.arange(nframe)
    z = margin - x[rows, t][:, None] + x
    active = z > 0
    active[rows, t] = False
    return z, active, t, rows


def multi_margin_loss(self, target, p, margin, weight, reduction: int):
    """sum over classes d != target of max(0, margin - x[target] + x[d]) ** p, times the
    target's weight, over the number of classes."""
    nframe, dim = _multi_margin_check(self, target, p, weight)
    z, active, t, _ = _multi_margin_terms(self, target, margin, nframe, dim)
    h = z if p == 1 else z * z
    if weight is not None:
        h = h * weight.reshape(-1)[t][:, None]
    per_frame = np.where(active, h, 0).sum(axis=1).astype(self.dtype) / self.dtype.type(dim)
    if reduction == Reduction.NONE and target.ndim > 0:
        return per_frame.astype(self.dtype)
    if reduction == Reduction.NONE:
        return np.asarray(per_frame[0], self.dtype)
    total = per_frame.sum(dtype=np.float64)  # accumulated in double, as torch's accscalar_t
    if reduction == Reduction.MEAN:
        total = total / nframe
    return np.asarray(total, self.dtype)


def _times_grad_output(grad, grad_output, reduction: int, nframe: int):
    """torch's last step: one grad_output for a reduced (or 0-dim) loss, one per frame else."""
    if reduction != Reduction.NONE or grad_output.ndim == 0:
        return grad * grad_output.reshape(-1)[0]
    return grad * grad_output.reshape(nframe, 1)


def multi_margin_loss_backward(grad_output, self, target, p, margin, weight, reduction: int):
    nframe, dim = _multi_margin_check(self, target, p, weight)
    z, active, t, rows = _multi_margin_terms(self, target, margin, nframe, dim)
    scalar = self.dtype.type
    g = scalar(1.0 / (nframe * dim)) if reduction == Reduction.MEAN else scalar(1.0 / dim)
    h = np.broadcast_to(g, z.shape) if p == 1 else 2 * g * z
    if weight is not None:
        h = h * weight.reshape(-1)[t][:, None]
    grad = np.where(active, h, 0).astype(self.dtype)
    grad[rows, t] = -grad.sum(axis=1)
    grad = _times_grad_output(grad, grad_output, reduction, nframe)
    return grad.astype(self.dtype).reshape(self.shape)


def _check_target_dtype_long(target) -> None:
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_name(target.dtype)}")


def _multilabel_check(self, target):
    nframe, dim = _margin_frames(self)
    if self.ndim <= 1:
        ok = target.ndim <= 1 and target.size == dim
    else:
        ok = target.shape == (nframe, dim)
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {shape_text(target.shape)} for input of size: "
            f"{shape_text(self.shape)}"
        )
    _check_target_dtype_long(target)
    if target.size and (target.min() < -1 or target.max() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    return nframe, dim


def _multilabel_targets(target, nframe, dim):
    """Each frame's target classes (those before its first -1) as (classes, valid) of shape
    (nframe, dim), and the is_target mask of the classes named."""
    t = target.reshape(nframe, dim)
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    is_target = np.zeros((nframe, dim + 1), bool)
    np.put_along_axis(is_target, np.where(valid, t, dim), True, axis=1)
    return np.where(valid, t, 0), valid, is_target[:, :dim]


def _multilabel_hinges(x, classes, valid, is_target):
    """Per target slot j (a loop over the few slots any frame uses): the hinge terms
    1 - x[target_j] + x[d] over the non-target classes d, and where they are positive."""
    rows = np.arange(x.shape[0])
    for j in range(int(valid.sum(axis=1).max(initial=0))):
        z = 1 - x[rows, classes[:, j]][:, None] + x
        yield j, z, (z > 0) & ~is_target & valid[:, j : j + 1]


def multilabel_margin_loss_forward(self, target, reduction: int):
    """The hinge 1 - x[y] + x[d] summed over target classes y and non-target classes d, over
    the number of classes; ``is_target`` marks the target classes (in self's dtype)."""
    nframe, dim = _multilabel_check(self, target)
    _refuse_non_double_or_float(self, "multilabel_margin_loss_forward_out_frame")
    x = self.reshape(nframe, dim)
    classes, valid, is_target = _multilabel_targets(target, nframe, dim)
    per_frame = np.zeros(nframe, self.dtype)
    for _, z, positive in _multilabel_hinges(x, classes, valid, is_target):
        per_frame += np.where(positive, z, 0).sum(axis=1)
    is_target_out = is_target.astype(self.dtype).reshape(target.shape)
    if reduction == Reduction.NONE and self.ndim == 2:
        return per_frame / self.dtype.type(dim), is_target_out
    if reduction == Reduction.NONE and self.ndim == 0:
        return (per_frame / self.dtype.type(dim)).reshape(target.shape), is_target_out
    total = per_frame.sum(dtype=np.float64) / dim
    if reduction == Reduction.MEAN:
        total = total / nframe
    return np.asarray(total, self.dtype), is_target_out


def multilabel_margin_loss_backward(grad_output, self, target, reduction: int, is_target):
    nframe, dim = _multilabel_check(self, target)
    _refuse_non_double_or_float(self, "multilabel_margin_loss_backward_out_frame")
    _same_dtype(self, is_target)
    x = self.reshape(nframe, dim)
    classes, valid, _ = _multilabel_targets(target, nframe, dim)
    marked = is_target.reshape(nframe, dim) != 0
    scalar = self.dtype.type
    g = scalar(1.0 / (nframe * dim)) if reduction == Reduction.MEAN else scalar(1.0 / dim)
    grad = np.zeros((nframe, dim), self.dtype)
    rows = np.arange(nframe)
    for j, _, positive in _multilabel_hinges(x, classes, valid, marked):
        grad += np.where(positive, g, 0).astype(self.dtype)
        grad[rows, classes[:, j]] -= (g * positive.sum(axis=1)).astype(self.dtype)
    grad = _times_grad_output(grad, grad_output, reduction, nframe)
    return grad.astype(self.dtype).reshape(self.shape)
