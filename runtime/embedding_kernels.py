"""numpy kernels of the embedding ops and one_hot (``k.<fn>`` in derivatives.yaml)."""

from __future__ import annotations

import numpy as np

from . import dtypes

__all__ = [
    "embedding",
    "embedding_dense_backward",
    "embedding_renorm",
    "one_hot",
]

_INDEX_TYPES = (np.dtype(np.int64), np.dtype(np.int32))


def _check_indices(indices, position: int, op: str) -> None:
    if indices.dtype not in _INDEX_TYPES:
        raise RuntimeError(
            f"Expected tensor for argument #{position} 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {dtypes.legacy_tensor_type(indices.dtype)} "
            f"instead (while checking arguments for {op})"
        )


def _check_range(indices, rows: int) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        raise IndexError("index out of range in self")


def embedding(weight, indices):
    """The rows of ``weight`` that ``indices`` name, shaped ``indices.shape + (dim,)``."""
    _check_indices(indices, 1, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_range(indices, weight.shape[0])
    return weight[indices]


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Each gradient row added into the row its index names (none into ``padding_idx``),
    divided by how often the index occurs when ``scale_grad_by_freq``."""
    _check_indices(indices, 2, "embedding_backward")
    flat = indices.reshape(-1).astype(np.int64, copy=False)
    dim = grad_output.shape[-1] if grad_output.ndim else 1
    rows = grad_output.reshape(flat.size, dim)  # explicit: -1 cannot be inferred from 0 rows
    keep = flat != padding_idx
    flat, rows = flat[keep], rows[keep]
    if scale_grad_by_freq and flat.size:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat][:, None].astype(rows.dtype)
    out = np.zeros((num_weights, dim), grad_output.dtype)
    np.add.at(out, flat, rows)
    return out


def embedding_renorm(weight, indices, max_norm: float, norm_type: float):
    """``weight`` with each named row whose ``norm_type``-norm exceeds ``max_norm`` scaled
    down to ``max_norm`` (over ``norm + 1e-7``, as PyTorch); embedding_renorm_ writes it
    back."""
    _check_indices(indices, 2, "embedding_renorm_")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_range(indices, weight.shape[0])
    unique = np.unique(indices)
    rows = weight[unique]
    norms = np.linalg.norm(rows, ord=norm_type, axis=1)
    over = norms > max_norm
    scale = (max_norm / (norms[over] + 1e-7)).astype(weight.dtype)
    out = weight.copy()
    out[unique[over]] = rows[over] * scale[:, None]
    return out


def one_hot(a, num_classes: int):
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(a.shape + (num_classes,), np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return out
