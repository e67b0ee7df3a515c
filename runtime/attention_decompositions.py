"""scaled_dot_product_attention as PyTorch 2.13 runs it on CPU.

The flash kernel (``_scaled_dot_product_flash_attention_for_cpu``, one node) serves 4-d
float32/float64 inputs with equal batch, heads and head sizes, unit last strides,
non-empty sequences, no dropout and no mask that needs a gradient; everything else takes the math composition:
``query * sqrt(scale)``, ``key^T * sqrt(scale)``, matmul, the additive mask,
``_safe_softmax``, dropout, matmul. A boolean mask becomes an additive one (0 where
True, -inf where False) first, as PyTorch converts it.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .device import device
from ._tls import state as _tls
from .generated import ops as aten
from .layouts import strided
from . import numpy_kernels as k
from .numpy_kernels import element_strides
from .tensor import _make

__all__ = ["scaled_dot_product_attention"]

_CPU = device("cpu")
_FLASH_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    _validate(query, key, value, attn_mask)
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if attn_mask is not None and attn_mask._data.dtype == np.bool_:
        attn_mask = _additive_mask(attn_mask, query.dtype)
    if _flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return aten._scaled_dot_product_flash_attention_for_cpu(
            query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale
        )[0]
    return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _validate(query, key, value, attn_mask) -> None:
    """PyTorch's input checks, in its order."""
    q, k, v = query._data, key._data, value._data
    if not q.dtype == k.dtype == v.dtype:
        names = [dtypes.cpp_type_name(t.dtype) for t in (q, k, v)]
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{names[0]} key.dtype: {names[1]} and value.dtype: {names[2]} instead."
        )
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype != np.bool_ and m.dtype != q.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {dtypes.cpp_type_name(m.dtype)} and  query.dtype: "
                f"{dtypes.cpp_type_name(q.dtype)} instead."
            )
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead."
        )


def _additive_mask(mask, dtype):
    """0 where ``mask`` is True, -inf where it is False (PyTorch's two scalar tensors and
    a where, made in that order)."""
    neg_inf = aten.scalar_tensor(-math.inf, dtype=dtype, device=_CPU)
    zero = aten.scalar_tensor(0.0, dtype=dtype, layout=strided, device=_CPU)
    return aten.where_self(mask, zero, neg_inf)


def _flash_applies(query, key, value, attn_mask, dropout_p: float, enable_gqa: bool) -> bool:
    q, k, v = query._data, key._data, value._data
    return (
        q.ndim == k.ndim == v.ndim == 4
        and q.shape[0] == k.shape[0] == v.shape[0]
        # the heads: the same, or (grouped-query attention) key/value heads alike and
        # each serving the same number of query heads
        and (
            q.shape[1] == k.shape[1] == v.shape[1]
            or (enable_gqa and k.shape[1] == v.shape[1] > 0 and q.shape[1] % k.shape[1] == 0)
        )
        # the flash op has no gradient for the mask: a mask that needs one takes the math
        and (attn_mask is None or not (attn_mask.requires_grad and _tls.grad_enabled))
        and dropout_p == 0.0
        and q.dtype in _FLASH_DTYPES
        and q.shape[-1] == k.shape[-1] == v.shape[-1]
        and q.shape[-2] > 0
        and k.shape[-2] > 0
        and all(element_strides(t)[-1] == 1 for t in (q, k, v))
    )


def _shared_heads_repeated(query, key, value) -> tuple:
    """Grouped-query attention on the math path: key and value repeated along their
    heads (dim -3), each head as often as it serves query heads."""
    heads = [t._data.shape[k.wrap_dim(-3, t._data.ndim)] for t in (query, key, value)]
    if heads[0] == heads[1] == heads[2]:
        return key, value
    if not all(h and heads[0] % h == 0 for h in heads[1:]):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return (
        aten.repeat_interleave_self_int(key, heads[0] // heads[1], -3),
        aten.repeat_interleave_self_int(value, heads[0] // heads[2], -3),
    )


def _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's _scaled_dot_product_attention_math: the scale split as a square root onto
    both operands (its sign on the query's)."""
    q, k = query._data, key._data
    factor = scale if scale is not None else 1 / math.sqrt(q.shape[-1])
    root = math.sqrt(abs(factor))
    query = aten.mul_Scalar(query, -root if factor < 0 else root)
    if enable_gqa:
        key, value = _shared_heads_repeated(query, key, value)
    if is_causal:
        # PyTorch builds it with ones + tril (which opgrad lacks); the mask is the same
        lower = _make(np.tri(q.shape[-2], k.shape[-2], dtype=bool))
        attn_mask = _additive_mask(lower, query.dtype)
    key_t = aten.mul_Scalar(aten.transpose_int(key, -2, -1), root)
    attn = aten.matmul(query, key_t)
    if attn_mask is not None:
        attn = aten.add_Tensor(attn, attn_mask)
    attn = aten._safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = aten.dropout(attn, dropout_p, True)
    return aten.matmul(attn, value)
