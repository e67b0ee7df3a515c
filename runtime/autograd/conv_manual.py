"""Formula helpers of the convolutions and poolings (PyTorch's FunctionsManual): the
convolution's double backward and its forward-mode formulas, and the max poolings'
gather of a gradient through their indices. functions_manual.py re-exports them, so
formulas name them like its own helpers.

Built from dispatched ops (``convolution``, ``transpose``, ``narrow`` ...), so they are
differentiable themselves and a dispatch mode sees their aten calls.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..generated import ops as aten

__all__ = [
    "convolution_jvp",
    "convolution_backward_jvp",
    "convolution_backward_jvp_grad_bias",
    "convolution_double_backward",
    "constant_pad_nd_backward",
    "max_pool_double_backward",
]


def _add(a, b):
    """``a + b`` where either may be absent (a zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def convolution_jvp(
    input_p,
    input_t,
    weight_p,
    weight_t,
    bias_p,
    bias_t,
    stride,
    padding,
    dilation,
    transposed: bool,
    output_padding,
    groups: int,
):
    """The tangent of a convolution: linear in input, weight and bias separately."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    result = None
    if input_t is not None:
        result = aten.convolution(input_t, weight_p, None, *args)
    if weight_t is not None:
        result = _add(result, aten.convolution(input_p, weight_t, bias_t, *args))
    elif bias_t is not None:
        shape = [1] * input_p.dim()
        shape[1] = -1
        result = _add(result, bias_t.reshape(shape))
    return result


def convolution_backward_jvp(
    which: int,
    grad_output_p,
    grad_output_t,
    input_p,
    input_t,
    weight_p,
    weight_t,
    bias_sizes,
    stride,
    padding,
    dilation,
    transposed: bool,
    output_padding,
    groups: int,
):
    """The tangent of convolution_backward's grad_input (``which`` 0) or grad_weight (1):
    each is bilinear in grad_output and the other primal."""
    mask = [which == 0, which == 1, False]
    args = (bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)
    result = None
    if which == 0 and weight_t is not None:
        result = aten.convolution_backward(grad_output_p, input_p, weight_t, *args)[0]
    if which == 1 and input_t is not None:
        result = aten.convolution_backward(grad_output_p, input_t, weight_p, *args)[1]
    if grad_output_t is not None:
        term = aten.convolution_backward(grad_output_t, input_p, weight_p, *args)[which]
        result = _add(result, term)
    return result


def convolution_backward_jvp_grad_bias(grad_out_t, grad_bias):
    if grad_bias is None or grad_out_t is None:
        return None
    return grad_out_t.sum([0] + list(range(2, grad_out_t.dim())))


def _narrow_to(t, sizes: Sequence[int]):
    """``t`` narrowed in its spatial dims to at most ``sizes``."""
    for i in range(2, t.dim()):
        if t.size(i) > sizes[i]:
            t = aten.narrow(t, i, 0, sizes[i])
    return t


def _channel_slice(t, dim: int, groups: int, g: int):
    n = t.size(dim) // groups
    return aten.narrow(t, dim, n * g, n)


def convolution_double_backward(
    ggI,
    ggW,
    ggb,
    gO,
    weight,
    input,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Optional[Sequence[bool]] = None,
):
    """The gradients of convolution_backward's (grad_input, grad_weight, grad_bias) with
    respect to (grad_output, input, weight), given their incoming ggI, ggW and ggb:
    ggO = conv(ggI, w) + conv(i, ggW) + ggb, gW = conv(ggI, gO), gI = convT(gO, ggW)."""
    dim = weight.dim() - 2
    stride = _expand(stride, dim)
    padding = _expand(padding, dim)
    dilation = _expand(dilation, dim)
    output_padding = _expand(output_padding, dim)
    if not transposed and input.dim() > 4:
        # PyTorch infers a 3-d convolution's groups from the channels
        groups = input.size(1) // weight.size(1) if weight.size(1) > 0 else -1
    empty = input.numel() == 0
    ggO = None
    if not empty:
        if ggI is not None:
            ggO = aten.convolution(
                ggI, weight, None, stride, padding, dilation, transposed, output_padding, groups
            )
        if ggW is not None:
            term = aten.convolution(
                input, ggW, None, stride, padding, dilation, transposed, output_padding, groups
            )
            ggO = _add(ggO, term)
    if ggb is not None:
        shape = [1] * gO.dim()
        shape[1] = ggb.size(0)
        ggb_expanded = aten.expand(aten.view(ggb.contiguous(), shape), gO.shape)
        ggO = _add(ggO, ggb_expanded)

    gW = None
    if ggI is not None and not empty:
        # groups handled one by one; stride and dilation swap places
        gOt = aten.transpose_int(gO, 0, 1)
        ggIt = aten.transpose_int(ggI, 0, 1)
        params = (dilation, padding, stride, False, output_padding, 1)
        if groups == 1:
            if transposed:
                gWt = aten.convolution(gOt, ggIt, None, *params)
            else:
                gWt = aten.convolution(ggIt, gOt, None, *params)
        else:
            parts = []
            for g in range(groups):
                ggIt_g = _channel_slice(ggIt, 0, groups, g)
                gOt_g = _channel_slice(gOt, 0, groups, g)
                if transposed:
                    parts.append(aten.convolution(gOt_g, ggIt_g, None, *params))
                else:
                    parts.append(aten.convolution(ggIt_g, gOt_g, None, *params))
            gWt = aten.cat(parts, 1)
        gW = _narrow_to(aten.transpose_int(gWt, 0, 1), weight.shape)

    gI = None
    if ggW is not None and not empty:
        if transposed:
            gI = aten.convolution(
                gO, ggW, None, stride, padding, dilation, False, output_padding, groups
            )
            gI = _narrow_to(gI, input.shape)
        else:
            gi_output_padding = list(output_padding)
            for i in range(dim):
                expected = (
                    (weight.size(2 + i) - 1) * dilation[i]
                    - 2 * padding[i]
                    + stride[i] * (gO.size(2 + i) - 1)
                    + 1
                )
                if expected != input.size(2 + i):
                    gi_output_padding[i] = input.size(2 + i) - expected
            gI = aten.convolution(
                gO, ggW, None, stride, padding, dilation, True, gi_output_padding, groups
            )
    return ggO, gI, gW


def _expand(values, dim: int) -> list:
    values = list(values)
    return values * dim if len(values) == 1 else values


def constant_pad_nd_backward(grad, pad: Sequence[int]):
    """The padding undone: the same pad negated (a crop)."""
    return aten.constant_pad_nd(grad, [-p for p in pad], 0)


def max_pool_double_backward(grad, indices, dim: int):
    """``grad`` read at the max poolings' ``indices`` (flat positions in the last ``dim``
    dimensions): PyTorch's ``grad.flatten(-dim).gather(-1, indices.flatten(-dim))``,
    written with advanced indexing (opgrad has no gather yet)."""
    if grad is None:
        return None
    flat = aten.flatten_using_ints(grad, grad.dim() - dim, -1)
    positions = aten.flatten_using_ints(indices, indices.dim() - dim, -1)
    lead = positions.dim() - 1
    index = []
    for axis in range(lead):
        shape = [1] * (lead + 1)
        shape[axis] = positions.size(axis)
        index.append(aten.view(aten.arange(positions.size(axis)), shape))
    index.append(positions)
    return aten.view(aten.index_Tensor(flat, index), indices.shape)
