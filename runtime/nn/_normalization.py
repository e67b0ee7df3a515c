"""``opgrad.nn.functional``'s linear and normalisation functions (torch.nn.functional's
``linear``, ``bilinear``, ``layer_norm``, ``rms_norm``, ``group_norm``, ``instance_norm``,
``batch_norm``, ``local_response_norm``, ``normalize``).

Each calls the aten op PyTorch 2.13's function calls on the CPU, so the grad_fn chain and
saved fields are torch's (``F.layer_norm(x, ...).grad_fn`` is NativeLayerNormBackward0).
"""

from __future__ import annotations

from typing import List, Optional

from .. import overrides as _overrides
from .. import python_arg_parser as _python_arg_parser
from ..generated import ops as _aten
from ..tensor import Tensor
from ._padding import pad
from ._pooling import avg_pool2d, avg_pool3d

__all__ = [
    "batch_norm",
    "bilinear",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear",
    "local_response_norm",
    "normalize",
    "rms_norm",
]


def _tensors(*names: str):
    """The arguments torch's function checks for ``__torch_function__`` (its
    ``has_torch_function_variadic(input, weight, bias)``), by position or by name."""

    def relevant(args: tuple, kwargs: dict) -> tuple:
        found = list(args[: len(names)])
        found += [kwargs[n] for n in names[len(found) :] if n in kwargs]
        return tuple(t for t in found if t is not None)

    return relevant


def _public(*names: str):
    return lambda impl: _overrides.overridable(impl, relevant=_tensors(*names), builtin=False)


#: torch binds linear straight to the aten op (torch._C._nn.linear)
linear = _python_arg_parser._overloaded("linear", "linear", (_aten.linear_op,), varargs=False)

#: F.bilinear is torch.bilinear
bilinear = _python_arg_parser._overloaded(
    "bilinear", "bilinear", (_aten.bilinear_op,), varargs=False
)


@_public("input", "weight", "bias")
def layer_norm(
    input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalization over the last ``len(normalized_shape)`` dimensions."""
    return _aten.layer_norm(input, normalized_shape, weight, bias, eps, True)


def _verify_batch_size(size) -> None:
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def _verify_spatial_size(size) -> None:
    count = 1
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}"
        )


@_public("input", "running_mean", "running_var", "weight", "bias")
def batch_norm(
    input: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalization over dim 1; while training, ``running_mean`` and
    ``running_var`` are updated in place."""
    if training:
        _verify_batch_size(input.size())
    return _aten.batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, True
    )


@_public("input", "running_mean", "running_var", "weight", "bias")
def instance_norm(
    input: Tensor,
    running_mean: Optional[Tensor] = None,
    running_var: Optional[Tensor] = None,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Instance normalization: each sample's channels normalised on their own."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _aten.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True
    )


@_public("input", "weight", "bias")
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Group normalization: the channels normalised in ``num_groups`` groups."""
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    size = input.size()
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups] + list(size[2:]))
    return _aten.group_norm(input, num_groups, weight, bias, eps, True)


@_public("input", "weight")
def rms_norm(
    input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor] = None,
    eps: Optional[float] = None,
) -> Tensor:
    """Root mean square layer normalization over the last ``len(normalized_shape)``
    dimensions; ``eps`` defaults to the machine epsilon of the input's op-math type."""
    return _aten.rms_norm(input, normalized_shape, weight, eps)


@_public("input", "out")
def normalize(
    input: Tensor,
    p: float = 2.0,
    dim: int = 1,
    eps: float = 1e-12,
    out: Optional[Tensor] = None,
) -> Tensor:
    """Divide ``input`` by its ``p``-norm over ``dim`` (at least ``eps``)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    norm = _aten.linalg_vector_norm(input, p, dims, True)
    denom = _aten.expand_as(_aten.clamp_min(norm, eps), input)
    if out is None:
        return _aten.div_Tensor(input, denom)
    return _aten.div_out(input, denom, out=out)


@_public("input")
def local_response_norm(
    input: Tensor, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``input`` divided by ``(k + alpha * mean of squares over size neighbouring
    channels) ** beta``: torch's composition (square, zero-pad the channels, average-pool
    across them, then mul, add, pow, div)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} "
            "dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
