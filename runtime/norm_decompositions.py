"""CompositeImplicitAutograd ops of the linear and normalisation family (linear, layer_norm,
batch_norm, instance_norm, group_norm, rms_norm, bilinear, the dropouts): each calls the ops
PyTorch 2.13's CPU composite calls, in its order, so the recorded graph is torch's.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .autograd.forward_grad import fw_grad
from .generated import ops as aten
from .numpy_kernels import wrap_dim
from .dtypes import uint8
from .tensor import TENSOR_CLASSES
from .user_warnings import warn_user

__all__ = [
    "linear",
    "bilinear",
    "layer_norm",
    "batch_norm",
    "instance_norm",
    "group_norm",
    "rms_norm",
    "dropout",
    "dropout_",
    "feature_dropout",
    "feature_dropout_",
    "alpha_dropout",
    "alpha_dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
]


def linear(input, weight, bias=None):
    """addmm for a matrix with a bias; the flattened addmm for a contiguous input with a
    vector bias; otherwise matmul, plus the bias in place."""
    x = input._data
    if x.ndim == 2 and bias is not None:
        return aten.addmm(bias, input, aten.t(weight))
    if bias is not None and x.flags.c_contiguous and (x.ndim == 3 or bias._data.ndim == 1):
        return _flatten_nd_linear(input, weight, bias)
    output = aten.matmul(input, aten.t(weight))
    if bias is not None:
        if bias.__class__ not in TENSOR_CLASSES or fw_grad(bias) is not None:
            return aten.add_Tensor(output, bias)  # out of place, as torch for these
        output = aten.add__Tensor(output, bias)
    return output


def bilinear(input1, input2, weight, bias=None):
    """``x1^T W x2`` (+ bias) per row: both inputs flattened to matrices, one _trilinear,
    reshaped back; PyTorch's checks in its order."""
    a, b, w = input1._data, input2._data, weight._data
    if a.ndim != b.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {a.ndim} and {b.ndim}")
    for dim in range(a.ndim - 1):
        if a.shape[dim] != b.shape[dim]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                f"{a.shape[dim]} and {b.shape[dim]}"
            )
    for which, x, dim in (("input1", a, 1), ("input2", b, 2)):
        expected = _size(weight, dim)
        if x.shape[-1] != expected:
            raise RuntimeError(
                f"bilinear(): {which} size does not match weight size: got {x.shape[-1]} but "
                f"expected {expected}"
            )
    if bias is not None and _size(bias, 0) != w.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {_size(bias, 0)} but "
            f"expected {w.shape[0]}"
        )
    output_size = a.shape[:-1] + (w.shape[0],)
    flat1 = aten.reshape(input1, (-1, a.shape[-1]))
    flat2 = aten.reshape(input2, (-1, b.shape[-1]))
    product = aten._trilinear(flat1, weight, flat2, [1, 3], [0], [1, 2], [2, 3])
    output = aten.reshape(product, output_size)
    return output if bias is None else aten.add_Tensor(output, bias)


def _size(t, dim: int) -> int:
    """``t.size(dim)`` with PyTorch's IndexError for a dim ``t`` does not have."""
    shape = t._data.shape
    return shape[wrap_dim(dim, len(shape))]


def _flatten_nd_linear(input, weight, bias):
    sizes = input._data.shape
    flat = aten.reshape(input, (math.prod(sizes[:-1]), sizes[-1]))
    result = aten.addmm(bias, flat, aten.t(weight))
    return aten.view(result, sizes[:-1] + (result._data.shape[1],))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return aten.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled
):
    if input._data.size == 0:
        # PyTorch's empty-input path: a clone (scaled by the first weight and shifted by
        # the first bias) rather than a view or a fresh empty tensor, so the graph holds
        for _ in range(3):  # the reserve, save_mean and save_invstd it makes first
            aten.empty_memory_format([0], dtype=input.dtype)
        out = aten.clone(input)
        if weight is not None:
            out = out * aten.select_int(weight, 0, 0)
        if bias is not None:
            out = out + aten.select_int(bias, 0, 0)
        return out
    channels = input._data.shape[1] if input._data.ndim > 1 else 1
    for what, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{what} should contain {channels} elements not {t._data.size}")
    aten.empty_memory_format([0], dtype=uint8)  # _batch_norm_impl_index's reserve
    return aten.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def _repeat_if_defined(t, repeat: int):
    return aten.repeat(t, [repeat]) if t is not None else None


def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    shape = input._data.shape
    b, c = shape[0], shape[1]
    weight_ = _repeat_if_defined(weight, b)
    bias_ = _repeat_if_defined(bias, b)
    running_mean_ = _repeat_if_defined(running_mean, b)
    running_var_ = _repeat_if_defined(running_var, b)
    reshaped = aten.view(input.contiguous(), (1, b * c) + shape[2:])
    out = batch_norm(
        reshaped,
        weight_,
        bias_,
        running_mean_,
        running_var_,
        use_input_stats,
        momentum,
        eps,
        cudnn_enabled,
    )
    # the running statistics are written through an alias, as PyTorch's composite does
    if running_mean is not None:
        aten.copy_(aten.alias(running_mean), aten.mean_dim(aten.view(running_mean_, (b, c)), [0]))
    if running_var is not None:
        aten.copy_(aten.alias(running_var), aten.mean_dim(aten.view(running_var_, (b, c)), [0]))
    return aten.view(out, shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    shape = input._data.shape
    N, C = shape[0], shape[1]
    HxW = math.prod(shape[2:])
    from .norm_kernels import group_norm_check

    group_norm_check(input, weight, bias, N, C, HxW, num_groups)
    x = input.contiguous()
    gamma = weight.contiguous() if weight is not None else None
    beta = bias.contiguous() if bias is not None else None
    return aten.native_group_norm(x, gamma, beta, N, C, HxW, num_groups, eps)[0]


def _rms_norm_check(input, normalized_shape, weight) -> None:
    """layer_norm's checks, in its order; the input's shape error words it as PyTorch's
    rms_norm does (``[*3, 4]``)."""
    from .norm_kernels import layer_norm_check

    shape, sizes = tuple(normalized_shape), input._data.shape
    if shape and (weight is None or tuple(weight._data.shape) == shape):
        if len(sizes) < len(shape) or tuple(sizes[len(sizes) - len(shape) :]) != shape:
            raise RuntimeError(
                f"Given normalized_shape={list(shape)}, expected input with shape "
                f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(sizes)}"
            )
    layer_norm_check(input, normalized_shape, weight, None)


_warned_dtype_mismatch = False


def _warn_dtype_mismatch_once(input_dtype, weight_dtype) -> None:
    """PyTorch's rms_norm warns once per process (TORCH_WARN_ONCE) of a weight whose
    dtype is not the input's, naming both as C++ types."""
    global _warned_dtype_mismatch
    if _warned_dtype_mismatch:
        return
    _warned_dtype_mismatch = True
    names = [dtypes.cpp_type_name(d) for d in (input_dtype, weight_dtype)]
    warn_user(
        f"Mismatch dtype between input and weight: input dtype = {names[0]}, weight dtype = "
        f"{names[1]}, Cannot dispatch to fused implementation."
    )


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """PyTorch's CPU composite: the input in its op-math type (float16 and bfloat16 in
    float), times rsqrt(mean(x**2) + eps) over the normalized dims, times the weight, then
    cast back to the input's dtype. eps defaults to that type's machine epsilon."""
    _rms_norm_check(input, normalized_shape, weight)
    dtype = input._data.dtype
    if dtype.kind != "f":
        raise NotImplementedError(
            f"\"rms_norm\" not implemented for '{dtypes.scalar_type_name(dtype)}'"
        )
    if weight is not None and weight._data.dtype != dtype:
        _warn_dtype_mismatch_once(dtype, weight._data.dtype)
    ndim = input._data.ndim
    dims = [ndim - i - 1 for i in range(len(normalized_shape))]
    opmath = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    eps = float(np.finfo(opmath).eps) if eps is None else float(opmath.type(eps))
    x = input if opmath == dtype else aten._to_copy(input, dtype=dtypes.FROM_NUMPY[opmath])
    squares = aten.pow_Tensor_Scalar(x, 2)
    rstd = aten.rsqrt(aten.add__Scalar(aten.mean_dim(squares, dims, True), eps))
    result = aten.mul_Tensor(x, rstd)
    if weight is not None:
        result = aten.mul_Tensor(result, weight)
    if result._data.dtype != dtype:
        result = aten._to_copy(result, dtype=input.dtype)
    return result


# ---- the dropouts ------------------------------------------------------------------------
# PyTorch's _dropout_impl: the mask is drawn by bernoulli_(1 - p) into a fresh tensor (one
# value per element, or per (sample, channel) for the feature dropouts), scaled in place,
# then multiplied into the input: the graph holds only MulBackward0 (and alpha dropout's
# AddBackward0). Eval mode, p == 0 or an empty input give the input itself back.

_SELU_ALPHA = 1.7580993408473766  # SELU's alpha * scale: alpha dropout's saturation value


def _dropout_impl(input, p: float, train: bool, feature: bool, alpha: bool, inplace: bool):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    if p == 0 or not train or input._data.size == 0:
        return input
    multiply = aten.mul__Tensor if inplace else aten.mul_Tensor
    if p == 1:
        return multiply(input, aten.zeros([], dtype=input.dtype))
    noise = _feature_noise(input) if feature else aten.empty_like(input)
    aten.bernoulli__float(noise, 1 - p)
    if not alpha:
        aten.div__Scalar(noise, 1 - p)
        return multiply(input, noise)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = aten.add_Scalar(noise, -1)
    aten.mul__Scalar(b, _SELU_ALPHA * a)
    aten.add__Scalar(b, _SELU_ALPHA * a * p)
    aten.mul__Scalar(noise, a)
    return aten.add__Tensor(multiply(input, noise), b)


def _feature_noise(input):
    """A tensor of shape (N, C, 1, ...): one mask value per sample and channel."""
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return aten.new_empty(input, list(shape[:2]) + [1] * (len(shape) - 2))


def dropout(input, p, train):
    return _dropout_impl(input, p, train, feature=False, alpha=False, inplace=False)


def dropout_(self, p, train):
    return _dropout_impl(self, p, train, feature=False, alpha=False, inplace=True)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, feature=True, alpha=False, inplace=False)


def feature_dropout_(self, p, train):
    return _dropout_impl(self, p, train, feature=True, alpha=False, inplace=True)


def alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, feature=False, alpha=True, inplace=False)


def alpha_dropout_(self, p, train):
    return _dropout_impl(self, p, train, feature=False, alpha=True, inplace=True)


def feature_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, feature=True, alpha=True, inplace=False)


def feature_alpha_dropout_(self, p, train):
    return _dropout_impl(self, p, train, feature=True, alpha=True, inplace=True)
