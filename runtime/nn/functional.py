"""``opgrad.nn.functional``: PyTorch's ``torch.nn.functional`` on opgrad's ops.

Each function decomposes as PyTorch 2.13 decomposes it on the CPU, so the grad_fn
chain and saved fields a user inspects are torch's. Functions torch writes in Python
go through the ``__torch_function__`` protocol under their own name; functions that
are bindings of one aten op in torch (``gelu``, ``softplus``, ``elu_`` ...) are
that op's entry here too.
"""

from __future__ import annotations

import sys
import warnings
from typing import Callable, Optional

import numpy as _np

from .. import _functions as _torch_functions
from .. import numpy_kernels as _k
from ..tensor import _make as _make_tensor
from .. import overrides as _overrides
from .. import python_arg_parser as _python_arg_parser
from ..generated import ops as _aten
from ..tensor import Tensor
from ._losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cosine_similarity,
    cross_entropy,
    ctc_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    pairwise_distance,
    pdist,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ._normalization import (
    batch_norm,
    bilinear,
    group_norm,
    instance_norm,
    layer_norm,
    linear,
    local_response_norm,
    normalize,
    rms_norm,
)
from ._embedding import embedding, embedding_bag, one_hot
from ._attention import scaled_dot_product_attention
from ._multihead import multi_head_attention_forward
from ._padding import channel_shuffle, pad, pixel_shuffle, pixel_unshuffle
from ._conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ._pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ._resample import interpolate, upsample, upsample_bilinear, upsample_nearest
from ._sampling import affine_grid, fold, grid_sample, unfold

__all__ = [
    # softmax family
    "gumbel_softmax",
    "log_softmax",
    "softmax",
    "softmin",
    # activations
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
    # losses
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "ctc_loss",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    # linear and normalisation
    "batch_norm",
    "bilinear",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear",
    "local_response_norm",
    "normalize",
    "rms_norm",
    # dropout
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    # embeddings
    "embedding",
    "embedding_bag",
    "one_hot",
    # padding and pixel rearrangement
    "channel_shuffle",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    # convolution and pooling
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    # attention
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    # upsampling and sampling
    "interpolate",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
    "affine_grid",
    "fold",
    "grid_sample",
    "unfold",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _input_arg(args: tuple, kwargs: dict) -> tuple:
    """The tensor torch's Python functions check for ``__torch_function__``."""
    return args[:1] if args else tuple(v for k, v in kwargs.items() if k in ("input", "logits"))


def _public(impl):
    """A torch Python function: overridable through its first (tensor) argument."""
    return _overrides.overridable(impl, relevant=_input_arg, builtin=False)


def _stacklevel(stacklevel: int) -> int:
    """The ``stacklevel`` that makes ``warnings.warn``, called by the function that calls
    this, point where torch's same call points: the frames torch has not (the protocol's
    wrapper around a public function) are skipped."""
    frame = sys._getframe(2)  # the warning function's caller
    real, extra = 1, 0
    while frame is not None and real < stacklevel:
        if frame.f_globals.get("__name__") == _overrides.__name__:
            extra += 1
        else:
            real += 1
        frame = frame.f_back
    return stacklevel + extra


# ---- softmax family ----------------------------------------------------------------------


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=_stacklevel(stacklevel),
    )
    return 0 if ndim in (0, 1, 3) else 1


@_public
def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmax function along ``dim``: :math:`\exp(x_i) / \sum_j \exp(x_j)`."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.softmax(dim)
    return input.softmax(dim, dtype=dtype)


@_public
def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmin function along ``dim``: the softmax of ``-input``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


@_public
def log_softmax(
    input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None
) -> Tensor:
    r"""Apply a softmax followed by a logarithm along ``dim``, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.log_softmax(dim)
    return input.log_softmax(dim, dtype=dtype)


@_public
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    r"""Sample from the Gumbel-Softmax distribution and optionally discretize.

    The Gumbel noise is ``-log(Exponential(1))`` drawn from the default generator, as
    torch draws it, so one seed gives torch's sample.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=_stacklevel(2))
    gumbels = -_aten.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    # torch: zeros_like(logits).scatter_(dim, y_soft.max(dim, keepdim=True)[1], 1.0). opgrad
    # has no max.dim or scatter_ yet: the same one-hot (the first maximum, a NaN first) is
    # made here, outside autograd, as torch's is (it requires no grad either)
    y_hard = _make_tensor(_one_hot_of_max(y_soft._data, dim))
    return y_hard - y_soft.detach() + y_soft


def _one_hot_of_max(data, dim: int):
    if data.ndim == 0:
        return _np.ones_like(data)
    dim = _k.wrap_dim(dim, data.ndim)
    hard = _np.zeros_like(data)
    _np.put_along_axis(hard, _np.argmax(data, axis=dim, keepdims=True), 1, axis=dim)
    return hard


# ---- activations -------------------------------------------------------------------------


def _binding(name: str, op) -> Callable:
    """A function torch binds straight to one aten op (``torch._C._nn.gelu``), taking
    ``input`` by name as torch's bindings do."""
    return _python_arg_parser._overloaded(name, name, (op,), varargs=False)


relu_ = _torch_functions.relu_
selu_ = _torch_functions.selu_
celu_ = _torch_functions.celu_
threshold_ = _torch_functions.threshold_
hardshrink = _torch_functions.hardshrink
elu_ = _binding("elu_", _aten.elu__op)
hardtanh_ = _binding("hardtanh_", _aten.hardtanh__op)
leaky_relu_ = _binding("leaky_relu_", _aten.leaky_relu__op)
gelu = _binding("gelu", _aten.gelu_op)
softplus = _binding("softplus", _aten.softplus_op)
softshrink = _binding("softshrink", _aten.softshrink_op)
logsigmoid = _binding("log_sigmoid", _aten.log_sigmoid_op)
prelu = _torch_functions.prelu


@_public
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """Threshold each element: ``value`` where ``input <= threshold``, else ``input``."""
    if inplace:
        return _aten.threshold_(input, threshold, value)
    return _aten.threshold(input, threshold, value)


threshold.__name__ = "_threshold"  # torch's name for F.threshold


@_public
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the rectified linear unit function element-wise."""
    if inplace:
        return _aten.relu_(input)
    return _aten.relu(input)


@_public
def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """Clamp each element to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _aten.hardtanh_(input, min_val, max_val)
    return _aten.hardtanh(input, min_val, max_val)


@_public
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)`` element-wise: hardtanh(input, 0, 6)."""
    if inplace:
        return _aten.relu6_(input)
    return _aten.relu6(input)


@_public
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Apply the Exponential Linear Unit function element-wise."""
    if inplace:
        return _aten.elu_(input, alpha)
    return _aten.elu(input, alpha)


@_public
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply SELU: elu with PyTorch's fixed alpha and scale."""
    if inplace:
        return _aten.selu_(input)
    return _aten.selu(input)


@_public
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Apply CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if inplace:
        return _aten.celu_(input, alpha)
    return _aten.celu(input, alpha)


@_public
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """Apply ``max(0, x) + negative_slope * min(0, x)`` element-wise."""
    if inplace:
        return _aten.leaky_relu_(input, negative_slope)
    return _aten.leaky_relu(input, negative_slope)


@_public
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves of ``input``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _aten.glu(input, dim)


@_public
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Hardsigmoid function element-wise."""
    if inplace:
        return _aten.hardsigmoid_(input)
    return _aten.hardsigmoid(input)


@_public
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Hardswish function element-wise."""
    if inplace:
        return _aten.hardswish_(input)
    return _aten.hardswish(input)


@_public
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Sigmoid Linear Unit (swish) function: ``x * sigmoid(x)``."""
    if inplace:
        return _aten.silu_(input)
    return _aten.silu(input)


@_public
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply Mish: ``x * tanh(softplus(x))``."""
    if inplace:
        return _aten.mish_(input)
    return _aten.mish(input)


@_public
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` element-wise."""
    return input - input.tanh()


@_public
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` element-wise."""
    return input / (input.abs() + 1)


@_public
def tanh(input: Tensor) -> Tensor:
    """Apply tanh element-wise."""
    return input.tanh()


@_public
def sigmoid(input: Tensor) -> Tensor:
    """Apply the sigmoid function element-wise."""
    return input.sigmoid()


rrelu_ = _torch_functions.rrelu_


@_public
def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: while training, each negative element's slope is drawn
    uniformly from ``[lower, upper]`` (from the default generator, as torch draws it);
    in eval mode the slope is ``(lower + upper) / 2``."""
    if inplace:
        return _aten.rrelu_(input, lower, upper, training)
    return _aten.rrelu(input, lower, upper, training)
