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
from typing import Sequence

from ..generated import ops as aten

__all__ = [
    "not_implemented",
    "layer_norm_jvp",
    "layer_norm_double_backward",
    "batch_norm_jvp",
    "batchnorm_double_backward",
    "native_group_norm_grads",
    "infinitely_differentiable_native_group_norm_backward",
    "group_norm_jvp",
    "group_norm_mean_jvp",
    "group_norm_invstd_jvp",
    "repeat_backward",
    "linalg_vector_norm_backward",
    "linalg_vector_norm_jvp",
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


# ---- batch norm ------------------------------------------------------------------------------


def _sum_exclude_dim1(t, keepdim: bool = True):
    r = t.sum(0, keepdim)
    start = 1 if keepdim else 0
    for dim in range(r.dim() - 1, start, -1):
        r = r.sum(dim, keepdim)
    return r


def _unsqueeze_dim1(src, target):
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    if src.dim() == target.dim() - 1:
        src = src.unsqueeze(0)
    return src


def _expand_as_dim1(src, target):
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    return src.expand_as(target)


def batch_norm_jvp(
    input_p,
    input_t,
    weight_p,
    weight_t,
    bias_p,
    bias_t,
    running_mean,
    running_var,
    saved_mean,
    saved_invstd,
    train: bool,
    eps: float,
):
    shape = tuple(input_t.shape)
    dims = [d for d in range(len(shape)) if d != 1]
    view_size = tuple(s if d == 1 else 1 for d, s in enumerate(shape))
    numel = math.prod(shape[d] for d in dims)
    if train:
        mean_p = saved_mean.view(view_size)
        invstd_p = saved_invstd.view(view_size)
        result_t = _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel)
    else:
        mean_p = running_mean.view(view_size)
        invstd_p = (1 / (running_var + eps).sqrt()).view(view_size)
        result_t = input_t * invstd_p
    result_p = (input_p - mean_p) * invstd_p if weight_p is not None else None
    return _affine_jvp(
        result_p,
        result_t,
        weight_p.view(view_size) if weight_p is not None else None,
        weight_t.view(view_size) if weight_t is not None else None,
        bias_t.view(view_size) if bias_t is not None else None,
    )


def batchnorm_double_backward(
    input,
    gamma,
    ggI,
    ggG,
    ggB,
    gO,
    running_mean,
    running_var,
    training: bool,
    eps: float,
    save_mean,
    save_invstd,
    output_mask: Sequence[bool],
):
    """The gradients of native_batch_norm_backward's results with respect to (input,
    weight, grad_out), given their incoming ggI, ggG, ggB."""
    affine = gamma is not None
    ggG_expanded = ggB_expanded = None
    if affine:
        gamma_expanded = _expand_as_dim1(gamma, input)
        if ggG is not None:
            ggG_expanded = _expand_as_dim1(ggG, input)
        if ggB is not None:
            ggB_expanded = _expand_as_dim1(ggB, input)
    else:
        gamma_expanded = aten.ones([], dtype=input.dtype)
    M = input.shape[0] * math.prod(input.shape[2:])
    mu = _unsqueeze_dim1(save_mean.to(input.dtype) if training else running_mean, input)
    input_sub_mu = input - mu
    if training:
        invstd = save_invstd.to(input.dtype)
    else:
        invstd = (running_var + eps).pow(-0.5)
    sigma2_eps_neg_1_2 = _unsqueeze_dim1(invstd, input)
    sigma2_eps_neg_1 = sigma2_eps_neg_1_2.pow(2)
    sigma2_eps_neg_3_2 = sigma2_eps_neg_1_2.pow(3)

    input_mu_sigma2_neg_3_2 = input_sub_mu * sigma2_eps_neg_3_2
    gOinmu_sum = _sum_exclude_dim1(gO * input_sub_mu)
    gO_sum = _sum_exclude_dim1(gO)

    gI = None
    if ggI is not None and training:
        ggI_sum = _sum_exclude_dim1(ggI)
        ggIinmu_sum = _sum_exclude_dim1(ggI * input_sub_mu)
        all_sub = (
            (ggI_sum * gO_sum) / M
            - _sum_exclude_dim1(gO * ggI)
            + (sigma2_eps_neg_1 * gOinmu_sum * ggIinmu_sum) * (3.0 / M)
        )
        gI_0t = (input_mu_sigma2_neg_3_2 * all_sub) / M
        gI_1t = (ggIinmu_sum * sigma2_eps_neg_3_2) / M * (gO_sum / M - gO)
        gI_2t = (gOinmu_sum * sigma2_eps_neg_3_2) / M * (ggI_sum / M - ggI)
        gI = gamma_expanded * (gI_0t + gI_1t + gI_2t)
    if affine and ggG is not None:
        if training:
            t0 = gO * sigma2_eps_neg_1_2
            t1 = (sigma2_eps_neg_1_2 * gO_sum) / -M
            t2 = (input_mu_sigma2_neg_3_2 * _sum_exclude_dim1(gO * input_sub_mu)) / -M
            term = ggG_expanded * (t0 + t1 + t2)
        else:
            term = ggG_expanded * sigma2_eps_neg_1_2 * gO
        gI = gI + term if gI is not None else term

    def first_back_grad_input(gO_local, gamma_local):
        h0 = (gamma_local * sigma2_eps_neg_1_2) / M
        h1 = (
            gO_local * M
            - _sum_exclude_dim1(gO_local)
            - input_sub_mu * sigma2_eps_neg_1 * _sum_exclude_dim1(gO_local * input_sub_mu)
        )
        return h0 * h1

    gG = None
    if affine and ggI is not None:
        if training:
            one = aten.ones([], dtype=sigma2_eps_neg_1_2.dtype)
            gG = _sum_exclude_dim1(ggI * first_back_grad_input(gO, one), False)
        else:
            gG = _sum_exclude_dim1(ggI * gO * sigma2_eps_neg_1_2, False)

    ggO = None
    if ggI is not None:
        if training:
            ggO = first_back_grad_input(ggI, gamma_expanded)
        else:
            ggO = ggI * sigma2_eps_neg_1_2 * gamma_expanded
    if ggG is not None:
        term = ggG_expanded * input_sub_mu * sigma2_eps_neg_1_2
        ggO = ggO + term if ggO is not None else term
    if ggB is not None:
        ggO = ggO + ggB_expanded if ggO is not None else ggB_expanded
    return gI, gG, ggO


# ---- group norm ------------------------------------------------------------------------------


def native_group_norm_grads(
    grads, input, mean, rstd, weight, N, C, HxW, group, eps, grad_input_mask
):
    """native_group_norm's formula: the differentiable form while grad mode records or the
    statistics get gradients, else the native_group_norm_backward kernel."""
    from .functions_manual import grad_mode_enabled

    dY, dmean, drstd = grads
    if grad_mode_enabled() or dmean is not None or drstd is not None:
        return infinitely_differentiable_native_group_norm_backward(
            dY, dmean, drstd, input, mean, rstd, weight, N, C, HxW, group, eps, grad_input_mask
        )
    if dY is None:
        return None, None, None
    return aten.native_group_norm_backward(
        dY.contiguous(),
        input.contiguous(),
        mean,
        rstd,
        weight,
        N,
        C,
        HxW,
        group,
        list(grad_input_mask),
    )


def infinitely_differentiable_native_group_norm_backward(
    dY, dmean, drstd, X, mean, rstd, gamma, N, C, HxW, group, eps, grad_input_mask
):
    G = group
    D = C // G
    s = 1.0 / (D * HxW)
    dX = dgamma = dbeta = None
    X_tensor = X.reshape((N, G, D, HxW))
    mean_tensor = mean.reshape((N, G, 1, 1))
    rstd_tensor = rstd.reshape((N, G, 1, 1))
    dY_tensor = ds = db = None
    if dY is not None:
        dY_tensor = dY.reshape((N, G, D, HxW))
        ds = (dY_tensor * X_tensor).sum(3).unsqueeze(-1)
        db = dY_tensor.sum(3).unsqueeze(-1)
    if grad_input_mask[0]:
        gamma_tensor = gamma.reshape((1, G, D, 1)) if gamma is not None else None
        var = ((rstd_tensor * rstd_tensor).reciprocal() - eps).clamp(min=0)
        rstd_cube = rstd_tensor * rstd_tensor * rstd_tensor
        dvar = -0.5 * rstd_cube * drstd.view((N, G, 1, 1)) if drstd is not None else None
        both = dmean is not None and drstd is not None
        if dY is not None:
            a = rstd_tensor * gamma_tensor if gamma is not None else rstd_tensor
            b = ((ds * gamma_tensor).sum(2) if gamma is not None else ds.sum(2)).unsqueeze(-2)
            c = ((db * gamma_tensor).sum(2) if gamma is not None else db.sum(2)).unsqueeze(-2)
            b = (c * mean_tensor - b) * rstd_cube * s
            c = -b * mean_tensor - c * rstd_tensor * s
            dX = a * dY_tensor + b * X_tensor + c
            if both:
                dX = dX + _var_mean_backward(dvar, dmean.view((N, G, 1, 1)), X_tensor)
            dX = dX.reshape(tuple(X.shape))
        elif both:
            dX = _var_mean_backward(dvar, dmean.view((N, G, 1, 1)), X_tensor)
            dX = dX.reshape(tuple(X.shape))
        del var
    if grad_input_mask[1] and dY is not None:
        dgamma = ((ds - db * mean_tensor) * rstd_tensor).sum(0).reshape(tuple(gamma.shape))
    if grad_input_mask[2] and dY is not None:
        dbeta = db.sum(0).reshape(tuple(gamma.shape))
    return dX, dgamma, dbeta


def _var_mean_backward(dvar, dmean, X):
    """The gradient of (var, mean) over dims (2, 3), biased, kept dims."""
    n = X.shape[2] * X.shape[3]
    grad = (X - X.mean([2, 3], True)) * dvar * (2.0 / n)
    return grad + dmean.expand(tuple(X.shape)) / n


def group_norm_jvp(
    input_p, input_t, weight_p, weight_t, bias_p, bias_t, saved_mean, saved_invstd, groups: int
):
    shape = tuple(input_p.shape)
    N, C = shape[0], shape[1]
    view = (1, N * groups, -1 if N else 1)
    input_t_reshaped = input_t.view(view)
    input_p_reshaped = input_p.view(view)
    result_t = batch_norm_jvp(
        input_p_reshaped,
        input_t_reshaped,
        None,
        None,
        None,
        None,
        None,
        None,
        saved_mean,
        saved_invstd,
        True,
        0,
    ).view(shape)
    result_p = None
    if weight_p is not None:
        view_size = (1, input_t_reshaped.shape[1], 1)
        result_p = (
            (input_p_reshaped - saved_mean.view(view_size)) * saved_invstd.view(view_size)
        ).view(shape)
    affine = (1, C) + (1,) * (len(shape) - 2)
    return _affine_jvp(
        result_p,
        result_t,
        weight_p.view(affine) if weight_p is not None else None,
        weight_t.view(affine) if weight_t is not None else None,
        bias_t.view(affine) if bias_t is not None else None,
    )


def group_norm_mean_jvp(input_t, mean_p, groups: int):
    N = input_t.shape[0]
    reshaped = input_t.view((1, N * groups, -1 if N else 1))
    return reshaped.mean([2], False).view_as(mean_p)


def group_norm_invstd_jvp(input_p, input_t, mean_p, invstd_p, groups: int):
    N = input_p.shape[0]
    view = (1, N * groups, -1 if N else 1)
    input_t_reshaped = input_t.view(view)
    input_p_reshaped = input_p.view(view)
    # PyTorch passes (input_t, input_p) to _invstd_jvp in this order
    return _invstd_jvp(
        input_t_reshaped,
        input_p_reshaped,
        mean_p.view(view),
        invstd_p.view(view),
        [2],
        input_t_reshaped.shape[2],
        False,
    ).view_as(invstd_p)


# ---- repeat ----------------------------------------------------------------------------------


def repeat_backward(grad, repeats: Sequence[int], input_shape: Sequence[int]):
    """Sum each tile of ``grad`` back onto ``input_shape``."""
    input_shape = tuple(input_shape)
    lead = len(repeats) - len(input_shape)
    padded = (1,) * lead + input_shape
    split, sum_dims = [], []
    for r, s in zip(repeats, padded):
        if r != 1:
            sum_dims.append(len(split))
            split.append(r)
        split.append(s)
    if not sum_dims:
        return grad.reshape(input_shape) if lead else grad
    return grad.reshape(tuple(split)).sum(sum_dims).reshape(input_shape)


# ---- the vector norm -------------------------------------------------------------------------


def _norm_dims(dim, ndim: int) -> list:
    return list(dim) if dim else []


def _unsqueeze_reduced(t, dim, ndim: int):
    """``t`` with the reduced dims back as ones (every dim for an empty ``dim``)."""
    dims = _norm_dims(dim, ndim) or list(range(ndim))
    for d in sorted(d % ndim for d in dims):
        t = aten.unsqueeze(t, d)
    return t


def _masked_zero(t, mask):
    return aten.masked_fill_Scalar(t, mask, 0)


def linalg_vector_norm_backward(grad, self, ord, norm, dim, keepdim: bool):
    """PyTorch's norm_backward: the gradient of ``linalg_vector_norm(self, ord, dim)``
    (None, an undefined gradient, for ord 0)."""
    p = float(ord)
    ndim = self.dim()
    if not keepdim and ndim != 0 and dim:
        grad = _unsqueeze_reduced(grad, dim, ndim)
        norm = _unsqueeze_reduced(norm, dim, ndim)
    if p == 0.0:
        return None
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * _masked_zero(self / norm, aten.eq_Scalar(norm, 0))
    if math.isinf(p):
        self_abs = self.abs()
        mask = aten.logical_or(aten.eq_Tensor(self_abs, norm), aten.isnan(self_abs))
        count = aten.sum_dim_IntList(mask, _norm_dims(dim, ndim) or None, True)
        return self.sgn() * ((grad / count) * mask)
    if p < 1.0:
        self_scaled = self.sgn() * _masked_zero(self.abs().pow(p - 1), aten.eq_Scalar(self, 0))
        return self_scaled * grad * norm.pow(1 - p)
    if p < 2.0:
        self_scaled = self.sgn() * self.abs().pow(p - 1)
    else:
        self_scaled = self * self.abs().pow(p - 2)
    scale_v = _masked_zero(grad / norm.pow(p - 1), aten.eq_Scalar(norm, 0))
    return self_scaled * scale_v


def linalg_vector_norm_jvp(self_p, self_t, ord, norm, dim, keepdim: bool):
    """PyTorch's norm_jvp: the tangent of ``linalg_vector_norm``."""
    p = float(ord)
    dims = _norm_dims(dim, self_p.dim()) or None

    def total(t):
        return aten.sum_dim_IntList(t, dims, keepdim)

    if p == 0.0:
        return aten.zeros_like(norm)
    if p == 1.0:
        return total(self_p.sgn() * self_t)
    if p == 2.0:
        return _masked_zero(total(self_p * self_t) / norm, aten.eq_Scalar(norm, 0))
    if math.isinf(p):
        ndim = self_p.dim()
        if not keepdim and ndim != 0 and dim:
            norm = _unsqueeze_reduced(norm, dim, ndim)
        both_nan = aten.logical_and(aten.isnan(self_p), aten.isnan(norm))
        is_max = aten.logical_or(aten.eq_Tensor(self_p.abs(), norm), both_nan).to(norm.dtype)
        count = aten.sum_dim_IntList(is_max, dims, True)
        return total(self_p.sgn() * self_t * is_max / count)
    if p < 1.0:
        powered = _masked_zero(self_p.abs().pow(p - 1), aten.eq_Scalar(self_p, 0))
        return total(powered * (self_p.sgn() * self_t)) * norm.pow(1 - p)
    if p < 2.0:
        sumpow_t = total(self_p.abs().pow(p - 1) * (self_p.sgn() * self_t))
    else:
        sumpow_t = total(self_p.abs().pow(p - 2) * (self_p * self_t))
    return _masked_zero(sumpow_t / norm.pow(p - 1), aten.eq_Scalar(norm, 0))
