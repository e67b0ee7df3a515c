"""CPU kernels of searchsorted and bucketize: where values would go in sorted boundaries.

As PyTorch's binary search, a NaN value compares false with every boundary and lands after
all of them. (NaN boundaries are searched as numpy orders them, last; PyTorch's binary
search reads them differently, position by position.) A batch of boundary rows is searched at once: each row's values and boundaries are
ranked together, and the ranks offset by row make one sorted sequence.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes
from .kernel_support import shape_text

__all__ = ["bucketize_check", "search_out_check", "searchsorted", "searchsorted_check"]

_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)


def _side(right: bool, side: Optional[str]) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(
            f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
        )
    if right and side == "left":
        raise RuntimeError(
            "torch.searchsorted(): side and right can't be set to opposites, got side of left "
            "while right was True"
        )
    return side


def searchsorted_check(sorted_sequence, values, sorter) -> None:
    """searchsorted's refusals on the tensors as given (values may be a number)."""
    seq = sorted_sequence._data
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if not hasattr(values, "_data"):
        if seq.ndim != 1:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
                "dim(0) numel(1)"
            )
    elif seq.ndim != 1 and seq.shape[:-1] != values._data.shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {shape_text(seq.shape)} and input value tensor "
            f"{shape_text(values._data.shape)}"
        )
    if sorter is not None and sorter._data.dtype != _INT64:
        raise RuntimeError(
            "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
            + dtypes.scalar_type_name(sorter._data.dtype)
        )
    if sorter is not None and sorter._data.shape != seq.shape:
        raise RuntimeError(
            "torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
            f"tensor {shape_text(seq.shape)}and got sorter tensor {shape_text(sorter._data.shape)}"
        )


def bucketize_check(boundaries) -> None:
    if boundaries._data.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})"
        )


def search_out_check(target, out_int32: bool) -> None:
    if target._data.dtype != (_INT32 if out_int32 else _INT64):
        raise RuntimeError(
            "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
            "Long(int64) depending on whether out_int32 flag is True, but we got output "
            f"tensor's dtype {dtypes.scalar_type_name(target._data.dtype)} and out_int32 flag "
            f"is {out_int32}"
        )


def searchsorted(
    sequence: np.ndarray,
    values,
    out_int32: bool,
    right: bool,
    side: Optional[str],
    sorter: Optional[np.ndarray],
) -> np.ndarray:
    """Operands already of their common type; ``sequence``'s last dim is searched, row by
    row when it has more than one."""
    side = _side(right, side)
    if sequence.dtype.kind == "b":
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if sorter is not None:
        sequence = np.take_along_axis(sequence, sorter, -1)
    values = np.asarray(values, sequence.dtype)
    length = sequence.shape[-1]
    if length == 0 or values.size == 0:
        found = np.zeros(values.shape, _INT64)
    elif sequence.ndim == 1:
        found = np.searchsorted(sequence, values, side)
    else:
        rows = int(np.prod(sequence.shape[:-1]))
        flat_seq = sequence.reshape(rows, length)
        flat_values = values.reshape(rows, -1)
        # rank every number of a row with its boundaries; rows stacked by an offset
        _, ranks = np.unique(np.concatenate([flat_seq, flat_values], 1), return_inverse=True)
        ranks = ranks.reshape(rows, -1)
        offset = (np.arange(rows) * (ranks.max() + 1 if ranks.size else 1))[:, None]
        keys = (ranks[:, :length] + offset).ravel()
        found = np.searchsorted(keys, ranks[:, length:] + offset, side)
        found = (found - np.arange(rows)[:, None] * length).reshape(values.shape)
    if sequence.dtype.kind == "f":
        # numpy puts a NaN value among equal NaNs; PyTorch's comparisons with NaN are false
        found = np.where(np.isnan(values), length, found)
    return np.asarray(found, _INT32 if out_int32 else _INT64)
