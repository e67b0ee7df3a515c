"""``opgrad.norm`` and ``Tensor.norm``: torch.norm, which PyTorch writes in Python over the
linalg norms. A number (None is 2) and 'fro' over at most two dims are a vector norm; any
other string order is a matrix norm over the given dims (every dim for None)."""

from __future__ import annotations

from typing import Optional, Union

from . import linalg
from .overrides import overridable


def _norm(input, p: Union[str, float, None] = "fro", dim=None, keepdim=False, out=None, dtype=None):
    dims = [dim] if isinstance(dim, int) else dim
    extra = {} if out is None else {"out": out}
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg.vector_norm(input, 2, dims, keepdim, dtype=dtype, **extra)
        if dims is None:
            dims = list(range(input.dim()))
        return linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype, **extra)
    return linalg.vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype, **extra)


norm = overridable(_norm, builtin=False, name="norm", qualname="norm")


def tensor_norm(self, p: Union[str, float, None] = "fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm``: torch.norm of the tensor (no out=)."""
    return norm(self, p, dim, keepdim, dtype=dtype)
