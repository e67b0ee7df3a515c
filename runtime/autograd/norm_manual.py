"""Formula helpers of the linear and normalisation family (PyTorch's FunctionsManual):
double backward of layer, batch and group norm, their forward-mode formulas, and the
trilinear and vector-norm gradients. functions_manual.py re-exports them, so formulas
name them like its own helpers.

Built from dispatched ops, so they are differentiable themselves (create_graph) and a
dispatch mode sees their aten calls. Where PyTorch updates a temporary in place (``div_``,
``add_``) these helpers compute the same value out of place.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from ..generated import ops as aten

__all__ = [
    "not_implemented",
    "layer_norm_jvp",
    "layer_norm_double_backward",
]


def not_implemented(name: str):
    """A derivative PyTorch declares ``not_implemented`` (raised only when it is needed)."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


# ---- shared pieces of the norms' forward-mode formulas ----------------------------------------


def _invstd_jvp(input_p, input_t, mean_p, invstd_p, dims, numel: int, keepdim: bool):
    """The tangent of ``1 / input.std(dims)`` (biased)."""
    invstd_t = input_t - input_t.mean(dims, True)
    invstd_t = invstd_t * (input_p - mean_p)
    invstd_t = invstd_t * -invstd_p.pow(3)
    return invstd_t.sum(dims, keepdim) / numel


def _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel: int):
    """The tangent of ``(input - mean) * invstd`` over ``dims``."""
    invstd_t = _invstd_jvp(input_p, input_t, mean_p, invstd_p, dims, numel, True)
    result_t = (input_t - input_t.mean(dims, True)) * invstd_p
    return result_t + (input_p - mean_p) * invstd_t


def _affine_jvp(input_p, input_t, weight_p, weight_t, bias_t):
    """The tangent of ``input * weight + bias`` (weight and bias may be absent)."""
    if weight_p is not None:
        input_t = input_t * weight_p + input_p * weight_t
    if bias_t is not None:
        input_t = input_t + bias_t
    return input_t


# ---- layer norm ------------------------------------------------------------------------------


def layer_norm_jvp(
    input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean, saved_invstd, normalized_shape
):
    shape = tuple(input_t.shape)
    axis = len(shape) - len(normalized_shape)
    dims = list(range(axis, len(shape)))
    view_size = shape[:axis] + (1,) * len(normalized_shape)
    view_size_affine = (1,) * axis + shape[axis:]
    numel = math.prod(shape[axis:])
    mean_p = saved_mean.view(view_size)
    invstd_p = saved_invstd.view(view_size)
    result_t = _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel)
    result_p = (input_p - mean_p) * invstd_p if weight_p is not None else None
    return _affine_jvp(
        result_p,
        result_t,
        weight_p.view(view_size_affine) if weight_p is not None else None,
        weight_t.view(view_size_affine) if weight_t is not None else None,
        bias_t.view(view_size_affine) if bias_t is not None else None,
    )


def layer_norm_double_backward(
    input_t,
    gamma,
    ggI,
    ggG,
    ggB,
    gO_t,
    save_mean_t,
    save_invstd_t,
    normalized_shape: Sequence[int],
    output_mask: Sequence[bool],
):
    """The gradients of native_layer_norm_backward's (grad_input, grad_weight, grad_bias)
    with respect to (input, weight, grad_out), given their incoming ggI, ggG, ggB."""
    shape = tuple(input_t.shape)
    axis = len(shape) - len(normalized_shape)
    M = math.prod(shape[:axis])
    N = math.prod(shape[axis:])
    input = input_t.reshape((M, N))
    gO = gO_t.reshape((M, N))
    save_mean = save_mean_t.reshape((M, 1))
    save_invstd = save_invstd_t.reshape((M, 1))
    affine = gamma is not None
    ggG_expanded = ggB_expanded = None
    if affine:
        gamma_expanded = gamma.reshape((1, N))
        if ggG is not None:
            ggG_expanded = ggG.reshape((1, N))
        if ggB is not None:
            ggB_expanded = ggB.reshape((1, N))
    else:
        gamma_expanded = aten.ones([1], dtype=input.dtype)
    ggI_expanded = ggI.reshape((M, N)) if ggI is not None else None

    mu = save_mean.to(input.dtype)
    input_sub_mu = input - mu
    sigma2_eps_neg_1_2 = save_invstd.to(input.dtype)
    sigma2_eps_neg_1 = sigma2_eps_neg_1_2.pow(2)
    sigma2_eps_neg_3_2 = sigma2_eps_neg_1_2.pow(3)

    gI = None
    input_mu_sigma2_neg_3_2 = input_sub_mu * sigma2_eps_neg_3_2
    if ggI is not None:
        gxhat = gO * gamma_expanded
        gxhat_mu_sum = (gxhat * input_sub_mu).sum(1, True)
        gxhat_sum = gxhat.sum(1, True)
        ggI_sum = ggI_expanded.sum(1, True)
        ggI_mu_sum = (ggI_expanded * input_sub_mu).sum(1, True)
        all_sub = (
            (ggI_sum * gxhat_sum) / N
            - (ggI_expanded * gxhat).sum(1, True)
            + (sigma2_eps_neg_1 * gxhat_mu_sum * ggI_mu_sum) * (3.0 / N)
        )
        gI_0t = (input_mu_sigma2_neg_3_2 * all_sub) / N
        gI_1t = (ggI_mu_sum * sigma2_eps_neg_3_2) / N * (gxhat_sum / N - gxhat)
        gI_2t = (gxhat_mu_sum * sigma2_eps_neg_3_2) / N * (ggI_sum / N - ggI_expanded)
        gI = gI_0t + gI_1t + gI_2t
    if affine and ggG is not None:
        t0 = gO * ggG_expanded * sigma2_eps_neg_1_2
        t1 = (sigma2_eps_neg_1_2 * (gO * ggG_expanded).sum(1, True)) / -N
        t2 = (input_mu_sigma2_neg_3_2 * (gO * ggG_expanded * input_sub_mu).sum(1, True)) / -N
        gI_G_term = t0 + t1 + t2
        gI = gI + gI_G_term if gI is not None else gI_G_term
    if gI is not None:
        gI = gI.reshape(shape)

    def first_bwd_fn_grad_input(gO_local, gamma_local):
        h0 = (gamma_local * sigma2_eps_neg_1_2) / N
        h1 = (
            gO_local * N
            - gO_local.sum(1, True)
            - input_sub_mu * sigma2_eps_neg_1 * (gO_local * input_sub_mu).sum(1, True)
        )
        return h0 * h1

    gG = None
    if affine and ggI is not None:
        one = aten.ones([], dtype=sigma2_eps_neg_1_2.dtype)
        gG = first_bwd_fn_grad_input(ggI_expanded, one)
        gG = (gO * gG).sum(0).reshape(tuple(gamma.shape))

    ggO = None
    if ggI is not None:
        ggO = first_bwd_fn_grad_input(ggI_expanded, gamma_expanded)
    if ggG is not None:
        term = ggG_expanded * input_sub_mu * sigma2_eps_neg_1_2
        ggO = ggO + term if ggO is not None else term
    if ggB is not None:
        ggO = ggO + ggB_expanded if ggO is not None else ggB_expanded
    if ggO is not None:
        ggO = ggO.expand((M, N)).reshape(shape)
    return gI, gG, ggO
