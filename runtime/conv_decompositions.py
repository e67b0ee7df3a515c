"""CompositeImplicitAutograd ops of the convolution and pooling family (conv1d/2d/3d with
int or string padding, conv_transpose1d/2d/3d, the 1-d poolings, adaptive_avg_pool*):
each calls the ops PyTorch 2.13's CPU composite calls, in its order, so the recorded graph
is torch's.
"""

from __future__ import annotations

from .generated import ops as aten
from .user_warnings import warn_user

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv1d_padding",
    "conv2d_padding",
    "conv3d_padding",
    "conv_transpose1d",
    "conv_transpose2d_input",
    "conv_transpose3d_input",
    "max_pool2d",
    "max_pool3d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
]


def _batchify(input, spatial: int, name: str):
    """``input`` with a batch dimension, and whether one was added (PyTorch's batchify)."""
    dim = input._data.ndim
    if dim not in (spatial + 1, spatial + 2):
        shape = "[" + ", ".join(str(s) for s in input._data.shape) + "]"
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, "
            f"but got input of size: {shape}"
        )
    if dim == spatial + 1:
        return aten.unsqueeze(input, 0), True
    return input, False


def _convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
):
    """aten::convolution as PyTorch's conv* composites call it: their absent bias reaches it
    as an undefined tensor, whose sizes the node saves as ``(0,)`` (a direct call with None
    saves None)."""
    output = aten.convolution(
        input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    )
    if bias is None:
        node = output.grad_fn
        if node is not None and type(node).__name__ == "ConvolutionBackward0":
            node.bias_sym_sizes_opt_ = (0,)
    return output


def _conv(input, weight, bias, stride, padding, dilation, groups, spatial: int, name: str):
    input, unbatched = _batchify(input, spatial, name)
    output = _convolution(
        input, weight, bias, stride, padding, dilation, False, [0] * spatial, groups
    )
    return aten.squeeze_dim(output, 0) if unbatched else output


def conv1d(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(
    input, weight, bias=None, stride=(1,) * 3, padding=(0,) * 3, dilation=(1,) * 3, groups=1
):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_padding(input, weight, bias, stride, padding, dilation, groups, spatial, name):
    input, unbatched = _batchify(input, spatial, name)
    output = _convolution_mode(input, weight, bias, stride, padding, dilation, groups)
    return aten.squeeze_dim(output, 0) if unbatched else output


def _convolution_mode(input, weight, bias, stride, padding: str, dilation, groups):
    """PyTorch's _convolution_mode: 'valid' is no padding; 'same' pads half the
    dilated kernel on each side, the odd element (even kernels) by an explicit pad."""
    spatial = weight._data.ndim - 2
    if padding == "valid":  # PyTorch passes one zero for every dimension here
        return _convolution(input, weight, bias, stride, [0], dilation, False, [0], groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    stride = list(stride) * spatial if len(stride) == 1 else list(stride)
    dilation = list(dilation) * spatial if len(dilation) == 1 else list(dilation)
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    padding_l = [0] * spatial
    pad_nd = [0] * (2 * spatial)
    symmetric = True
    for i in range(spatial):
        total = dilation[i] * (weight._data.shape[2 + i] - 1)
        left = total // 2
        padding_l[i] = left
        if total - 2 * left:
            symmetric = False
            pad_nd[2 * (spatial - 1 - i) + 1] = total - 2 * left
    if not symmetric:
        _warn_even_same_padding_once()
        input = aten.constant_pad_nd(input, pad_nd, 0)
    return _convolution(
        input, weight, bias, stride, padding_l, dilation, False, [0] * spatial, groups
    )


_warned_even_same_padding = False


def _warn_even_same_padding_once() -> None:
    """PyTorch warns once per process (TORCH_WARN_ONCE)."""
    global _warned_even_same_padding
    if not _warned_even_same_padding:
        _warned_even_same_padding = True
        warn_user(
            "Using padding='same' with even kernel lengths and odd dilation may require a "
            "zero-padded copy of the input be created (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)"
        )


def conv1d_padding(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,), groups=1):
    return _conv_padding(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d_padding(
    input, weight, bias=None, stride=(1, 1), padding="valid", dilation=(1, 1), groups=1
):
    return _conv_padding(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d_padding(
    input, weight, bias=None, stride=(1,) * 3, padding="valid", dilation=(1,) * 3, groups=1
):
    return _conv_padding(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(
    input, weight, bias, stride, padding, output_padding, groups, dilation, spatial, name
):
    input, unbatched = _batchify(input, spatial, name)
    output = _convolution(
        input, weight, bias, stride, padding, dilation, True, output_padding, groups
    )
    return aten.squeeze_dim(output, 0) if unbatched else output


def conv_transpose1d(
    input,
    weight,
    bias=None,
    stride=(1,),
    padding=(0,),
    output_padding=(0,),
    groups=1,
    dilation=(1,),
):
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        1,
        "conv_transpose1d",
    )


def conv_transpose2d_input(
    input,
    weight,
    bias=None,
    stride=(1, 1),
    padding=(0, 0),
    output_padding=(0, 0),
    groups=1,
    dilation=(1, 1),
):
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        2,
        "conv_transpose2d",
    )


def conv_transpose3d_input(
    input,
    weight,
    bias=None,
    stride=(1,) * 3,
    padding=(0,) * 3,
    output_padding=(0,) * 3,
    groups=1,
    dilation=(1,) * 3,
):
    return _conv_transpose(
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
        3,
        "conv_transpose3d",
    )


# ---- poolings --------------------------------------------------------------------------------


def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return aten.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return aten.max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _adaptive_avg_pool(self, output_size, nd: int):
    if len(output_size) == nd and any(o < 0 for o in output_size):
        sizes = ", ".join(str(o) for o in output_size[:2]) + "".join(
            f",{o}" for o in output_size[2:]  # PyTorch's 3-d text has no space before the third
        )
        raise RuntimeError(
            f"adaptive_avg_pool{nd}d: elements of output_size must be greater than or equal to "
            f"0 but received {{{sizes}}}"
        )
    if all(o == 1 for o in output_size) and len(output_size) == nd:
        # PyTorch's shortcut to a global average, taken before the kernel checks the input
        return aten.mean_dim(self, [-1 - i for i in range(nd)], True)
    pool = aten._adaptive_avg_pool2d if nd == 2 else aten._adaptive_avg_pool3d
    return pool(self, output_size)


def adaptive_avg_pool2d(self, output_size):
    return _adaptive_avg_pool(self, output_size, 2)


def adaptive_avg_pool3d(self, output_size):
    return _adaptive_avg_pool(self, output_size, 3)
