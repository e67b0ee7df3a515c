"""CPU kernels of the linear and normalisation ops (addmm, layer/batch/group norm and
their backward ops, rsqrt, the vector norm, bernoulli_).

Each kernel takes numpy arrays (None for an absent optional tensor) and computes in the
op's accumulation type: float32 for float16/bfloat16 inputs, as PyTorch's CPU kernels do.
Shape errors carry PyTorch's messages; they are checked before anything is written.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .scalar_fit import check_fits
from .kernel_support import opmath, per_channel, shape_text

__all__ = [
    "addmm",
    "addmm_check",
    "layer_norm_check",
    "native_layer_norm",
    "native_layer_norm_backward",
    "batch_norm_check",
    "native_batch_norm",
    "native_batch_norm_backward",
    "group_norm_check",
    "native_group_norm",
    "native_group_norm_backward",
    "linalg_vector_norm",
]

_F64 = np.dtype(np.float64)


def _name(a: np.ndarray) -> str:
    return dtypes.scalar_type_name(a.dtype)


# ---- addmm -----------------------------------------------------------------------------------


def addmm_check(self, mat1, mat2) -> None:
    """addmm's refusals, in PyTorch's order: matrices, shapes, dtypes, self's broadcast."""
    m1, m2, s = mat1._data, mat2._data, self._data
    if m1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor")
    if m2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({m1.shape[0]}x{m1.shape[1]} and "
            f"{m2.shape[0]}x{m2.shape[1]})"
        )
    if s.dtype != m2.dtype or m1.dtype != m2.dtype:
        other = m2 if s.dtype != m2.dtype else m1
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_name(s)} and {_name(other)}"
        )
    from .numpy_kernels import expand  # imported here: numpy_kernels imports this module

    expand(s, (m1.shape[0], m2.shape[1]))  # self must broadcast to the product
    if m1.dtype == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _integral_scalar(value, dtype: np.dtype):
    """``value`` as an integer kernel sees it: checked against ``dtype``'s range, then
    truncated toward zero (``beta=1.5`` multiplies by 1), as PyTorch's ``Scalar.to<int>``."""
    check_fits(value, dtype)
    value = value.real if isinstance(value, complex) else value
    return np.asarray(int(value)).astype(dtype)


def addmm(self, mat1, mat2, beta, alpha):
    """``beta * self + alpha * (mat1 @ mat2)``; beta 0 ignores self (NaN included).

    Integer matrices multiply in their own dtype (wrapping as PyTorch's do) with beta and
    alpha truncated to integers; float16 accumulates in float32 and rounds once."""
    if mat1.dtype.kind in "iu":
        beta, alpha = _integral_scalar(beta, mat1.dtype), _integral_scalar(alpha, mat1.dtype)
    product = np.matmul(opmath(mat1), opmath(mat2))
    if alpha != 1:
        product = product * alpha
    target = product.shape
    if beta == 0:
        result = product
    elif beta == 1:
        result = product + opmath(self)
    else:
        result = product + opmath(self) * beta
    return np.broadcast_to(result, target).astype(mat1.dtype, copy=True)


# ---- layer norm ------------------------------------------------------------------------------


def layer_norm_check(input, normalized_shape, weight, bias) -> None:
    shape = tuple(normalized_shape)
    if len(shape) < 1:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            f"one element, but got normalized_shape = {shape_text(shape)}"
        )
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._data.shape) != shape:
            raise RuntimeError(
                f"Expected {what} to be of same shape as normalized_shape, but got {what} of "
                f"shape {shape_text(t._data.shape)} and normalized_shape = {shape_text(shape)}"
            )
    x = input._data.shape
    if len(x) < len(shape) or tuple(x[len(x) - len(shape) :]) != shape:
        expected = "[*, " + ", ".join(str(s) for s in shape) + "]"
        raise RuntimeError(
            f"Given normalized_shape={shape_text(shape)}, expected input with shape "
            f"{expected}, but got input of size{shape_text(x)}"
        )


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): mean and rstd keep the normalized dims as ones."""
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    x = opmath(input)
    stats_shape = input.shape[: input.ndim - len(axes)] + (1,) * len(axes)
    if x.size == 0:
        mean = np.zeros(stats_shape, x.dtype)
        rstd = np.zeros(stats_shape, x.dtype)
        return input.copy(), mean.astype(input.dtype), rstd.astype(input.dtype)
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.maximum((centered**2).mean(axis=axes, keepdims=True), 0)
    rstd = 1 / np.sqrt(var + x.dtype.type(eps))
    out = centered * rstd
    if weight is not None:
        out = out * opmath(weight)
    if bias is not None:
        out = out + opmath(bias)
    return out.astype(input.dtype), mean.astype(input.dtype), rstd.astype(input.dtype)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, mask):
    """(grad_input, grad_weight, grad_bias), each only where ``mask`` asks (else None)."""
    n_axes = len(normalized_shape)
    inner = tuple(range(input.ndim - n_axes, input.ndim))
    outer = tuple(range(input.ndim - n_axes))
    g, x = opmath(grad_out), opmath(input)
    x_hat = (x - opmath(mean)) * opmath(rstd)
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        gx = g * opmath(weight) if weight is not None else g
        count = max(math.prod(input.shape[input.ndim - n_axes :]), 1)
        grad_input = opmath(rstd) * (
            gx
            - gx.sum(axis=inner, keepdims=True) / count
            - x_hat * (gx * x_hat).sum(axis=inner, keepdims=True) / count
        )
        grad_input = grad_input.astype(input.dtype)
    if mask[1] and weight is not None:
        grad_weight = (g * x_hat).sum(axis=outer).astype(weight.dtype)
    if mask[2] and bias is not None:
        grad_bias = g.sum(axis=outer).astype(bias.dtype)
    return grad_input, grad_weight, grad_bias


# ---- batch norm ------------------------------------------------------------------------------


def _channel_axes(a: np.ndarray) -> tuple:
    return (0,) + tuple(range(2, a.ndim))


def batch_norm_check(input, weight, bias, running_mean, running_var, training) -> None:
    x = input._data
    channels = x.shape[1] if x.ndim > 1 else 1
    for what, t in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{what} should contain {channels} elements not {t._data.size}")
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd). Training normalises by the batch statistics and
    updates the running ones in place (the unbiased variance, PyTorch's momentum); eval
    uses the running statistics and returns empty save_mean / save_invstd."""
    x = opmath(input)
    axes = _channel_axes(x)
    if training:
        count = x.size // max(x.shape[1], 1) if x.ndim > 1 else x.size
        mean = x.mean(axis=axes)
        centered = x - per_channel(mean, x.ndim)
        var = (centered**2).mean(axis=axes)
        invstd = 1 / np.sqrt(var + x.dtype.type(eps))
        if running_mean is not None:
            running_mean[...] = momentum * mean + (1 - momentum) * running_mean
        if running_var is not None:
            unbiased = var * (count / (count - 1)) if count > 1 else np.full_like(var, np.inf)
            running_var[...] = momentum * unbiased + (1 - momentum) * running_var
        save_mean, save_invstd = mean.astype(input.dtype), invstd.astype(input.dtype)
    else:
        mean = opmath(running_mean)
        invstd = 1 / np.sqrt(opmath(running_var) + x.dtype.type(eps))
        save_mean = save_invstd = np.empty((0,), input.dtype)
        centered = x - per_channel(mean, x.ndim)
    out = centered * per_channel(invstd, x.ndim)
    if weight is not None:
        out = out * per_channel(opmath(weight), x.ndim)
    if bias is not None:
        out = out + per_channel(opmath(bias), x.ndim)
    return out.astype(input.dtype), save_mean, save_invstd


def native_batch_norm_backward(
    grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, mask
):
    x, g = opmath(input), opmath(grad_out)
    axes = _channel_axes(x)
    if train:
        mean, invstd = opmath(save_mean), opmath(save_invstd)
    else:
        mean = opmath(running_mean)
        invstd = 1 / np.sqrt(opmath(running_var) + x.dtype.type(eps))
    mean_b, invstd_b = per_channel(mean, x.ndim), per_channel(invstd, x.ndim)
    x_hat = (x - mean_b) * invstd_b
    w = per_channel(opmath(weight), x.ndim) if weight is not None else 1
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        if train:
            count = max(x.size // max(x.shape[1], 1), 1)
            g_sum = g.sum(axis=axes, keepdims=True)
            dot = (g * x_hat).sum(axis=axes, keepdims=True)
            grad_input = (g - g_sum / count - x_hat * dot / count) * invstd_b * w
        else:
            grad_input = g * invstd_b * w
        grad_input = grad_input.astype(input.dtype)
    if mask[1]:
        grad_weight = (g * x_hat).sum(axis=axes).astype(input.dtype)
    if mask[2]:
        grad_bias = g.sum(axis=axes).astype(input.dtype)
    return grad_input, grad_weight, grad_bias


# ---- group norm ------------------------------------------------------------------------------


def group_norm_check(input, weight, bias, N, C, HxW, group) -> None:
    shape = shape_text(input._data.shape)
    if C % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {shape} and num_groups={group}"
        )
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != C):
            raise RuntimeError(
                f"Expected {what} to be a vector of size equal to the number of channels in "
                f"input, but got {what} of shape {shape_text(t._data.shape)} and input of "
                f"shape {shape}"
            )


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), mean and rstd of shape (N, group)."""
    x = opmath(input).reshape(N, group, -1) if N * C * HxW else opmath(input).reshape(N, group, 0)
    mean = x.mean(axis=2) if x.shape[2] else np.zeros((N, group), x.dtype)
    var = ((x - mean[..., None]) ** 2).mean(axis=2) if x.shape[2] else mean
    rstd = 1 / np.sqrt(var + x.dtype.type(eps))
    out = ((x - mean[..., None]) * rstd[..., None]).reshape(input.shape)
    if weight is not None:
        out = out * per_channel(opmath(weight), input.ndim)
    if bias is not None:
        out = out + per_channel(opmath(bias), input.ndim)
    return out.astype(input.dtype), mean.astype(input.dtype), rstd.astype(input.dtype)


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, mask):
    D = C // group
    x = opmath(input).reshape(N, group, D, HxW)
    g = opmath(grad_out).reshape(N, group, D, HxW)
    mu, rs = opmath(mean).reshape(N, group, 1, 1), opmath(rstd).reshape(N, group, 1, 1)
    x_hat = (x - mu) * rs
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        gx = g * opmath(weight).reshape(1, group, D, 1) if weight is not None else g
        count = max(D * HxW, 1)
        grad_input = rs * (
            gx
            - gx.sum(axis=(2, 3), keepdims=True) / count
            - x_hat * (gx * x_hat).sum(axis=(2, 3), keepdims=True) / count
        )
        grad_input = grad_input.reshape(input.shape).astype(input.dtype)
    if mask[1]:
        grad_weight = (g * x_hat).sum(axis=(0, 3)).reshape(C).astype(input.dtype)
    if mask[2]:
        grad_bias = g.sum(axis=(0, 3)).reshape(C).astype(input.dtype)
    return grad_input, grad_weight, grad_bias


# ---- the vector norm -----------------------------------------------------------------------


def linalg_vector_norm(a, ord, dim, keepdim: bool, dtype):
    """``(sum |x|**ord) ** (1 / ord)`` over ``dim`` (every dim for None or []), computed in
    double and rounded to the result type: the input's, or ``dtype``, to which the input
    must widen."""
    from .numpy_kernels import _dims

    if a.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {_name(a)}"
        )
    out = a.dtype if dtype is None else dtype.np
    if dtype is not None and np.promote_types(a.dtype, out) != out:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_name(a)}) should be convertible "
            f"without narrowing to the specified dtype ({dtypes.scalar_type_name(out)})"
        )
    axis = _dims(dim, a.ndim)
    ord = float(ord)
    if math.isinf(ord) and a.size == 0:
        _refuse_empty_inf_norm(a, ord, dim, axis)
    x = np.abs(a.astype(_F64))
    if ord == 0:
        result = np.add.reduce(x != 0, axis, _F64, None, keepdim)
    elif ord == math.inf:
        result = np.max(x, axis, keepdims=keepdim)
    elif ord == -math.inf:
        result = np.min(x, axis, keepdims=keepdim)
    elif ord == 1:
        result = np.add.reduce(x, axis, None, None, keepdim)
    elif ord == 2:
        result = np.sqrt(np.add.reduce(x * x, axis, None, None, keepdim))
    else:
        result = np.add.reduce(x**ord, axis, None, None, keepdim) ** (1.0 / ord)
    return np.asarray(result).astype(out)


def _refuse_empty_inf_norm(a, ord: float, dim, axis) -> None:
    """The inf norms have no identity: an empty input, or an empty reduced dim, is refused
    (the dim named as given, PyTorch's text without its missing space)."""
    name = "inf" if ord > 0 else "-inf"
    if axis is None:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because the "
            "operation does not have an identity"
        )
    for given, d in zip(dim, axis):
        if a.shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on the dimension {given}"
                "because this dimension is empty and the operation does not have an identity"
            )
