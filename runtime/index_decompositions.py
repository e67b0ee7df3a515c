"""CompositeImplicitAutograd ops of the gather family: take_along_dim, as PyTorch 2.13's
composite runs it (a mode sees its expand, remainder and gather calls)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes
from .generated import ops as aten
from .numpy_kernels import broadcast_error, wrap_dim

__all__ = ["take_along_dim"]

_INT64 = np.dtype(np.int64)


def take_along_dim(self, indices, dim: Optional[int] = None):
    if dim is None:  # the flattened input, as `take` reads it
        return aten.gather(aten.view(self, [-1]), 0, aten.view(indices, [-1]))
    if indices._data.dtype != _INT64:
        raise RuntimeError(
            "opgrad.take_along_dim(): dtype of indices should be Long but got "
            f"{dtypes.scalar_type_name(indices._data.dtype)}"
        )
    self_shape, index_shape = self._data.shape, indices._data.shape
    if len(self_shape) != len(index_shape):
        raise RuntimeError(
            "opgrad.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(self_shape)} dimensions for input, and "
            f"{len(index_shape)} dimensions for indices"
        )
    dim = wrap_dim(dim, len(self_shape))
    # both broadcast against each other in every dim but `dim`, which each keeps its own of
    self_sizes = self_shape[:dim] + index_shape[dim : dim + 1] + self_shape[dim + 1 :]
    indices = aten.expand(indices, _broadcast(self_sizes, index_shape))
    index_sizes = index_shape[:dim] + self_shape[dim : dim + 1] + index_shape[dim + 1 :]
    self = aten.expand(self, _broadcast(index_sizes, self_shape))
    # PyTorch wraps the indices into range: negative ones count from the end
    indices = aten.remainder_Scalar(indices, self_shape[dim] if self_shape else 1)
    return aten.gather(self, dim, indices)


def _broadcast(a, b) -> list:
    try:
        return list(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise RuntimeError(broadcast_error(tuple(a), tuple(b))) from None
