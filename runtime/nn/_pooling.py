"""``opgrad.nn.functional``'s poolings (torch.nn.functional's ``max_pool1d/2d/3d``,
``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``, ``adaptive_max_pool1d/2d/3d``,
``lp_pool1d/2d/3d``, ``max_unpool1d/2d/3d``, ``fractional_max_pool2d/3d``).

Each calls the aten op torch 2.13's function calls on the CPU, so the grad_fn is torch's
(``F.max_pool2d(x, 2).grad_fn`` is MaxPool2DWithIndicesBackward0).
"""

from __future__ import annotations

from typing import List, Optional

from .. import factories as _factories
from .. import overrides as _overrides
from .. import python_arg_parser as _python_arg_parser
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = [
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
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _public(impl):
    relevant = lambda args, kwargs: args[:1] if args else (kwargs["input"],)  # noqa: E731
    return _overrides.overridable(impl, relevant=relevant, builtin=False)


def _binding(name: str, op):
    """A function torch binds straight to one aten op (``torch._C._nn.avg_pool2d``)."""
    return _python_arg_parser._overloaded(name, name, (op,), varargs=False)


avg_pool1d = _binding("avg_pool1d", _aten.avg_pool1d_op)
avg_pool2d = _binding("avg_pool2d", _aten.avg_pool2d_op)
avg_pool3d = _binding("avg_pool3d", _aten.avg_pool3d_op)


def _stride(stride):
    return [] if stride is None else stride


@_public
def max_pool1d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """1-D max pooling over ``input``; returns (values, indices)."""
    return _aten.max_pool1d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


@_public
def _max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    return _aten.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


@_public
def max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """2-D max pooling over ``input``; returns (values, indices)."""
    return _aten.max_pool2d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


@_public
def _max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    return _aten.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


@_public
def max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """3-D max pooling over ``input``; returns (values, indices)."""
    return _aten.max_pool3d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


@_public
def _max_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    return _aten.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def _boolean_dispatch(with_indices, without, name: str, index: int = 6):
    """torch's boolean_dispatch on ``return_indices`` (argument ``index``)."""

    def fn(*args, **kwargs):
        flag = (
            kwargs["return_indices"]
            if "return_indices" in kwargs
            else (args[index] if len(args) > index else False)
        )
        return with_indices(*args, **kwargs) if flag else without(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = with_indices.__doc__
    return fn


max_pool1d = _boolean_dispatch(max_pool1d_with_indices, _max_pool1d, "max_pool1d")
max_pool2d = _boolean_dispatch(max_pool2d_with_indices, _max_pool2d, "max_pool2d")
max_pool3d = _boolean_dispatch(max_pool3d_with_indices, _max_pool3d, "max_pool3d")


def _list_with_default(out_size, defaults) -> List[int]:
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]


adaptive_avg_pool1d = _binding("adaptive_avg_pool1d", _aten.adaptive_avg_pool1d_op)
_adaptive_max_pool1d_binding = _binding("adaptive_max_pool1d", _aten.adaptive_max_pool1d_op)


@_public
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """2-D adaptive average pooling to ``output_size`` (None keeps the input's size)."""
    return _aten.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


@_public
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """3-D adaptive average pooling to ``output_size`` (None keeps the input's size)."""
    return _aten.adaptive_avg_pool3d(input, _list_with_default(output_size, input.size()))


@_public
def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """1-D adaptive max pooling to ``output_size``; returns (values, indices)."""
    return _adaptive_max_pool1d_binding(input, output_size)


@_public
def _adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool1d_with_indices(input, output_size)[0]


@_public
def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """2-D adaptive max pooling to ``output_size`` (None keeps the input's size); returns
    (values, indices)."""
    return _aten.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()))


@_public
def _adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


@_public
def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """3-D adaptive max pooling to ``output_size`` (None keeps the input's size); returns
    (values, indices)."""
    return _aten.adaptive_max_pool3d(input, _list_with_default(output_size, input.size()))


@_public
def _adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


adaptive_max_pool1d = _boolean_dispatch(
    adaptive_max_pool1d_with_indices, _adaptive_max_pool1d, "adaptive_max_pool1d", 2
)
adaptive_max_pool2d = _boolean_dispatch(
    adaptive_max_pool2d_with_indices, _adaptive_max_pool2d, "adaptive_max_pool2d", 2
)
adaptive_max_pool3d = _boolean_dispatch(
    adaptive_max_pool3d_with_indices, _adaptive_max_pool3d, "adaptive_max_pool3d", 2
)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, pool, max_pool, window: int):
    """torch's power-average pooling: (sum over the window of x**p) ** (1/p), written as
    the average times the window size, with sign * relu(abs) keeping the gradient of an
    all-zero window zero."""
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def _expand(kernel_size, n: int):
    return tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * n


@_public
def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """1-D power-average pooling over ``input``."""
    return _lp_pool(
        input, norm_type, kernel_size, stride, ceil_mode, avg_pool1d, max_pool1d, kernel_size
    )


@_public
def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """2-D power-average pooling over ``input``."""
    kw, kh = _expand(kernel_size, 2)
    return _lp_pool(
        input, norm_type, kernel_size, stride, ceil_mode, avg_pool2d, max_pool2d, kw * kh
    )


@_public
def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """3-D power-average pooling over ``input``."""
    kd, kw, kh = _expand(kernel_size, 3)
    return _lp_pool(
        input, norm_type, kernel_size, stride, ceil_mode, avg_pool3d, max_pool3d, kd * kw * kh
    )


def _ntuple(value, n: int) -> tuple:
    """torch's _single/_pair/_triple: an iterable as a tuple, anything else repeated."""
    try:
        return tuple(value)
    except TypeError:
        return (value,) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size) -> List[int]:
    """The unpooled spatial size: the pooling's input size by default, or ``output_size``
    (with or without the batch and channel sizes) when it is one the pooling could have
    come from."""
    n = len(kernel_size)
    sizes = input.size()
    default = [(sizes[d - n] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it "
                f"has a length of '{len(output_size)}'"
            )
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {low} and '
                    f"{high})"
                )
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={ret[d]}"
            )
    return ret


def _unpool_geometry(input, kernel_size, stride, padding, output_size, n: int):
    kernel_size = _ntuple(kernel_size, n)
    stride = _ntuple(stride, n) if stride is not None else kernel_size
    padding = _ntuple(padding, n)
    return stride, padding, _unpool_output_size(input, kernel_size, stride, padding, output_size)


@_public
def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """A partial inverse of max_pool1d: each value back at its index, zeros elsewhere."""
    _, _, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 1)
    size = list(size) + [1] if isinstance(size, list) else tuple(size) + (1,)
    return _aten.squeeze_dim(
        _aten.max_unpool2d(_aten.unsqueeze(input, -1), _aten.unsqueeze(indices, -1), size), -1
    )


@_public
def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """A partial inverse of max_pool2d: each value back at its index, zeros elsewhere."""
    _, _, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 2)
    return _aten.max_unpool2d(input, indices, size)


@_public
def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """A partial inverse of max_pool3d: each value back at its index, zeros elsewhere."""
    stride, padding, size = _unpool_geometry(input, kernel_size, stride, padding, output_size, 3)
    return _aten.max_unpool3d(input, indices, size, stride, padding)


def _fractional(input, kernel_size, output_size, output_ratio, samples, nd: int):
    """torch's fractional_max_pool{nd}d_with_indices: the output size (given, or the input's
    times ``output_ratio``, truncated), the random samples (drawn with ``rand`` of shape
    (N, C, nd) in the input's dtype when not given) and the aten op."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.size(axis - nd) * ratio[axis]) for axis in range(nd)]
    if samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = _factories.rand(batch, input.size(-nd - 1), nd, dtype=input.dtype)
    op = _aten.fractional_max_pool2d if nd == 2 else _aten.fractional_max_pool3d
    return op(input, kernel_size, output_size, samples)


def _fractional_relevant(args: tuple, kwargs: dict) -> tuple:
    found = args[:1] + args[5:6]
    return found + tuple(v for k, v in kwargs.items() if k in ("input", "_random_samples"))


def _fractional_public(impl):
    return _overrides.overridable(impl, relevant=_fractional_relevant, builtin=False)


@_fractional_public
def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
):
    """2-D fractional max pooling over ``input``; returns (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


@_fractional_public
def _fractional_max_pool2d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
) -> Tensor:
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)[0]


@_fractional_public
def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
):
    """3-D fractional max pooling over ``input``; returns (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


@_fractional_public
def _fractional_max_pool3d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
) -> Tensor:
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)[0]


fractional_max_pool2d = _boolean_dispatch(
    fractional_max_pool2d_with_indices, _fractional_max_pool2d, "fractional_max_pool2d", 4
)
fractional_max_pool3d = _boolean_dispatch(
    fractional_max_pool3d_with_indices, _fractional_max_pool3d, "fractional_max_pool3d", 4
)
