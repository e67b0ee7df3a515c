"""numpy kernels of scaled dot-product attention: ``_safe_softmax`` (the math path's
softmax, zero for a row that is entirely -inf) and the CPU flash-attention op with its
backward (``_scaled_dot_product_flash_attention_for_cpu``).

The flash op computes what PyTorch's blocked CPU kernel computes, in one pass: the
output and the row-wise logsumexp of the scaled, masked scores (0 and an all-zero output
row where every score is masked). Its summation order differs from the blocked kernel's,
so results agree to rounding, not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from .kernel_support import opmath, opmath_dtype, refuse_non_float

__all__ = [
    "safe_softmax",
    "flash_attention",
    "flash_attention_backward",
]


def safe_softmax(a: np.ndarray, dim: int, dtype) -> np.ndarray:
    """softmax over ``dim`` (in ``dtype`` when given), 0 along a row that is all -inf."""
    from .numpy_kernels import softmax, wrap_dim

    x = a if dtype is None else a.astype(dtype.np, copy=False)
    out = softmax(x, dim, False)
    if x.size:
        axis = wrap_dim(dim, x.ndim) if x.ndim else None
        masked = np.all(x == -np.inf, axis=axis, keepdims=True)
        if masked.any():
            out = np.where(masked, 0, out).astype(out.dtype, copy=False)
    return out


def _scores(q, k, is_causal: bool, attn_mask, scale):
    """The scaled scores ``q k^T * scale`` with the causal mask (top-left aligned) and the
    additive or boolean ``attn_mask`` applied, in the compute dtype."""
    factor = scale if scale is not None else 1 / math.sqrt(q.shape[-1])
    s = np.matmul(opmath(q), np.swapaxes(opmath(k), -1, -2)) * opmath_dtype(q.dtype).type(factor)
    if is_causal:
        length, source = s.shape[-2], s.shape[-1]
        s = np.where(np.tri(length, source, dtype=bool), s, -np.inf)
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            s = np.where(attn_mask, s, -np.inf)
        else:
            s = s + opmath(attn_mask)
    return s


def _heads_per_group(query, key) -> int:
    """How many query heads share a key/value head (grouped-query attention: 1 without)."""
    return query.shape[1] // key.shape[1]


def flash_attention(query, key, value, dropout_p: float, is_causal: bool, attn_mask, scale):
    """(output, logsumexp): softmax(scores) @ value and the scores' row logsumexp. With
    fewer key/value heads than query heads, each serves a run of consecutive query heads."""
    refuse_non_float(query, "_scaled_dot_product_flash_attention_cpu")
    if dropout_p > 0:
        raise NotImplementedError("opgrad's CPU flash attention has no dropout")
    group = _heads_per_group(query, key)
    if group > 1:
        key, value = np.repeat(key, group, axis=1), np.repeat(value, group, axis=1)
    s = _scores(query, key, is_causal, attn_mask, scale)
    peak = np.max(s, axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    e = np.exp(s - peak)
    total = np.sum(e, axis=-1, keepdims=True)
    empty = total == 0  # every score masked: PyTorch gives 0 (output and logsumexp)
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(empty, 0, e / total)
        lse = np.where(empty, 0, peak + np.log(total))
    out = np.matmul(weights, opmath(value)).astype(query.dtype, copy=False)
    # PyTorch allocates the output like the query (empty_like: its dim order kept), which
    # decides whether a reshape of it is a view (multi_head_attention_forward's is)
    from .numpy_kernels import in_layout  # imported here: numpy_kernels imports this module

    return in_layout(out, query, None), np.ascontiguousarray(lse[..., 0])


def flash_attention_backward(
    grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale
):
    """(grad_query, grad_key, grad_value) from the saved output and logsumexp: the
    probabilities are recomputed as exp(scores - logsumexp)."""
    factor = scale if scale is not None else 1 / math.sqrt(query.shape[-1])
    group = _heads_per_group(query, key)
    key_heads = key.shape[1]
    key_dtype, value_dtype = key.dtype, value.dtype
    if group > 1:
        key, value = np.repeat(key, group, axis=1), np.repeat(value, group, axis=1)
    s = _scores(query, key, is_causal, attn_mask, scale)
    p = np.exp(s - opmath(logsumexp)[..., None])
    g, q, k, v = opmath(grad_out), opmath(query), opmath(key), opmath(value)
    grad_value = np.matmul(np.swapaxes(p, -1, -2), g)
    dp = np.matmul(g, np.swapaxes(v, -1, -2))
    row = np.sum(g * opmath(out), axis=-1, keepdims=True)
    ds = p * (dp - row) * s.dtype.type(factor)
    grad_query = np.matmul(ds, k)
    grad_key = np.matmul(np.swapaxes(ds, -1, -2), q)
    if group > 1:  # a shared head's gradient sums those of the query heads it served
        grouped = (grad_key.shape[0], key_heads, group) + grad_key.shape[2:]
        grad_key = grad_key.reshape(grouped).sum(axis=2)
        grad_value = grad_value.reshape(grouped[:3] + grad_value.shape[2:]).sum(axis=2)
    return (
        grad_query.astype(query.dtype, copy=False),
        grad_key.astype(key_dtype, copy=False),
        grad_value.astype(value_dtype, copy=False),
    )
