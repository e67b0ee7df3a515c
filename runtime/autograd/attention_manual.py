"""Formula helpers of the attention ops, re-exported by functions_manual."""

from __future__ import annotations

import numpy as np

from ..generated import ops as aten
from ..tensor import _make

__all__ = ["safe_logsumexp_jvp"]


def safe_logsumexp_jvp(self_p, self_t, dim, keepdim: bool):
    """logsumexp's tangent, 0 along a row that is all -inf (where _safe_softmax gives 0
    and the plain tangent would be NaN)."""
    from .functions_manual import logsumexp_jvp

    tangent = logsumexp_jvp(self_p, self_t, dim, keepdim)
    data = self_p._data
    axis = tuple(d % data.ndim for d in dim) if data.ndim else None
    masked = np.all(data == -np.inf, axis=axis, keepdims=keepdim)
    if not masked.any():
        return tangent
    return aten.where_self(_make(masked), aten.zeros_like(tangent), tangent)
