"""numpy kernels of the embedding ops and one_hot (``k.<fn>`` in derivatives.yaml)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .kernel_support import opmath_dtype

__all__ = [
    "embedding",
    "embedding_dense_backward",
    "embedding_renorm",
    "one_hot",
    "embedding_bag_forward",
    "embedding_bag_backward",
    "embedding_bag_per_sample_weights_backward",
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


# ---- embedding_bag ---------------------------------------------------------------------------
# PyTorch's CPU kernels of _embedding_bag / _embedding_bag_forward_only and their backward, with
# every observable detail of theirs: the four outputs (offset2bag is left empty where PyTorch's
# fast sum path skips it), the bag sizes net of padding, the max path's first-maximum rule, and
# the range error each path raises.

_SUM, _MEAN, _MAX = 0, 1, 2
# by name: bfloat16's numpy dtype comes from ml_dtypes, imported on first use
_FAST_TYPES = ("float32", "float16", "bfloat16")
_BAG_WEIGHT_TYPES = ("float64",) + _FAST_TYPES


def _bag_index_types(indices, offsets):
    """indices and offsets in their common type (PyTorch promotes them before checking)."""
    common = dtypes.promote_types(
        dtypes.from_numpy_dtype(indices.dtype), dtypes.from_numpy_dtype(offsets.dtype)
    ).np
    if common not in _INDEX_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {dtypes.legacy_tensor_type(common)} instead (while "
            "checking arguments for embedding_bag)"
        )
    return indices.astype(common, copy=False), offsets.astype(common, copy=False)


def _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    if indices.ndim not in (1, 2):
        raise RuntimeError(
            f"input has to be a 1D or 2D Tensor, but got Tensor of dimension {indices.ndim}"
        )
    if indices.ndim == 1 and offsets.ndim != 1:
        raise RuntimeError(
            f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.ndim}"
        )
    if weight.ndim != 2:
        raise RuntimeError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )
    indices, offsets = _bag_index_types(indices, offsets)
    if weight.dtype.name not in _BAG_WEIGHT_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {dtypes.legacy_tensor_type(weight.dtype)} "
            "instead (while checking arguments for embedding_bag)"
        )
    if offsets.shape[0]:
        first, last = int(offsets.flat[0]), int(offsets.flat[offsets.shape[0] - 1])
        if first != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {first}\n"
                f"[ {dtypes.legacy_tensor_type(offsets.dtype)}{{}} ]"
            )
        if last > indices.shape[0]:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                f"offsets[-1] of {last}"
            )
    if per_sample_weights is not None:
        if mode != _SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(
                "Expected tensor for argument #1 'weight' to have the same type as tensor for "
                "argument #1 'per_sample_weights'; but type "
                f"{dtypes.legacy_tensor_type(weight.dtype)} does not equal "
                f"{dtypes.legacy_tensor_type(per_sample_weights.dtype)} (while checking "
                "arguments for embedding_bag)"
            )
        for holds, text in (
            (per_sample_weights.ndim == 1, "per_sample_weights.value().dim() == 1"),
            (
                per_sample_weights.size == indices.size,
                "per_sample_weights.value().numel() == indices.numel()",
            ),
        ):
            if not holds:
                raise RuntimeError(
                    f"Expected {text} to be true, but got false.  (Could this error message be "
                    "improved?  If so, please report an enhancement request to PyTorch.)"
                )
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if mode not in (_SUM, _MEAN, _MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    return indices, offsets


def _offset2bag(offsets, count: int):
    """The bag of each index: a one at each bag's start, cumulated (empty bags share a start,
    so a start may count twice)."""
    marks = np.bincount(offsets.astype(np.int64, copy=False), minlength=count + 1)
    marks[0] -= 1
    return np.cumsum(marks[: count + 1])[:count].astype(offsets.dtype)


def _bag_sizes(offsets, count: int, bags: int, dtype):
    sizes = np.empty(bags, dtype)
    if bags:
        sizes[:-1] = np.diff(offsets[:bags])
        sizes[-1] = count - offsets[bags - 1]
    return sizes


def _range_error(indices, rows: int, fast: bool):
    bad = np.flatnonzero((indices < 0) | (indices >= rows))
    if bad.size:
        at = int(bad[0])
        if fast:  # PyTorch's fast (fbgemm) path words it otherwise
            raise RuntimeError(
                f"Index {at} of input takes value {int(indices[at])} which is not in the valid "
                f"range [0, {rows})"
            )
        raise RuntimeError(
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
            f"{int(indices[at])}"
        )


def _bag_max(rows, bag_of, out, max_indices, words) -> None:
    """Each bag's running maximum per feature as PyTorch's loop keeps it: the bag's first
    row starts it, a later row replaces it only when strictly greater (so a NaN stays only
    when it comes first), and max_indices names the row that set it. Bags are runs of
    ``bag_of`` (it never decreases)."""
    if not rows.shape[0]:
        return
    new_bag = np.r_[False, bag_of[1:] != bag_of[:-1]]
    starts = np.flatnonzero(np.r_[True, new_bag[1:]])
    comparable = np.where(np.isnan(rows), -np.inf, rows)
    best = np.maximum.reduceat(comparable, starts, axis=0)
    position = np.arange(rows.shape[0])[:, None]
    hit = np.where(comparable == best[np.cumsum(new_bag)], position, rows.shape[0])
    chosen = np.where(np.isnan(rows[starts]), starts[:, None], np.minimum.reduceat(hit, starts))
    out[bag_of[starts]] = rows[chosen, np.arange(rows.shape[1])]
    max_indices[bag_of[starts]] = words[chosen]


def embedding_bag_forward(
    weight,
    indices,
    offsets,
    mode: int,
    per_sample_weights,
    include_last_offset: bool,
    padding_idx: int,
    requires_grad: bool,
):
    """(output, offset2bag, bag_size, max_indices) of ``_embedding_bag`` (``requires_grad``)
    or ``_embedding_bag_forward_only``."""
    indices, offsets = _check_bag_arguments(
        weight, indices, offsets, mode, per_sample_weights, include_last_offset
    )
    count, rows, dim = indices.shape[0], weight.shape[0], weight.shape[1]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    # PyTorch's fast sum path: reduced float types, unit feature stride, no padding
    fast = (
        mode != _MAX
        and weight.dtype.name in _FAST_TYPES
        and weight.strides[1] == weight.itemsize
        and padding_idx < 0
        and (
            per_sample_weights is None
            or per_sample_weights.strides[0] == per_sample_weights.itemsize
        )
    )
    offset2bag = (
        _offset2bag(offsets[:bags], count)
        if not (fast and mode == _SUM)
        else np.empty(0, offsets.dtype)
    )
    if requires_grad or mode != _SUM:
        bag_size = _bag_sizes(offsets, count, bags, offsets.dtype)
    else:
        bag_size = np.zeros(offsets.shape[0], offsets.dtype)
    bag_of = offset2bag if offset2bag.shape[0] == count else _offset2bag(offsets[:bags], count)
    considered = slice(None)
    if fast and include_last_offset and bags:
        # the fast path reads each bag up to the next offset only: indices past the last offset
        # take no part (the slow path puts them in the last bag)
        considered = slice(0, int(offsets[bags]))
    words = indices[considered]
    _range_error(words, rows, fast)
    bag_of = bag_of[considered]
    keep = words != padding_idx
    if not keep.all():
        np.subtract.at(bag_size, bag_of[~keep], 1)
        words, bag_of = words[keep], bag_of[keep]
    if mode == _MAX:
        out = np.zeros((bags, dim), weight.dtype)
        max_indices = np.zeros((bags, dim), offsets.dtype)
        _bag_max(weight[words], bag_of, out, max_indices, words)
        return out, offset2bag, bag_size, max_indices
    compute = np.float32 if weight.dtype != np.float64 else np.float64
    out = np.zeros((bags, dim), compute)
    rows_of = weight[words].astype(compute, copy=False)
    if per_sample_weights is not None:
        scale = per_sample_weights[considered][keep].astype(compute, copy=False)
        rows_of = rows_of * scale[:, None]
    np.add.at(out, bag_of, rows_of)
    out = out.astype(weight.dtype, copy=False)
    if mode == _MEAN:
        out = out / np.maximum(bag_size, 1).astype(weight.dtype)[:, None]
    else:
        bag_size = np.zeros_like(bag_size)
    return out, offset2bag, bag_size, bag_size.copy()


def _dense_bag_backward(
    grad,
    indices,
    offset2bag,
    bag_size,
    maximum_indices,
    num_weights,
    scale_grad_by_freq,
    mode,
    per_sample_weights,
    padding_idx,
):
    dim = grad.shape[1]
    if mode == _MAX:
        out = np.zeros((num_weights, dim), grad.dtype)
        filled = np.flatnonzero(bag_size)
        columns = np.broadcast_to(np.arange(dim), (filled.size, dim))
        np.add.at(out, (maximum_indices[filled], columns), grad[filled])
        return out
    keep = indices != padding_idx
    words, bag_of = indices[keep], offset2bag[keep]
    scale = np.ones(words.shape[0], np.float64)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights[keep]
    if scale_grad_by_freq:
        # PyTorch divides the rows of the k-th distinct index by the count of the k-th
        # smallest index (the k-th entry of the sorted indices), not of that index itself
        rank = np.searchsorted(np.unique(indices), words)
        counts = np.bincount(indices.astype(np.int64, copy=False), minlength=num_weights)
        scale = scale / counts[np.sort(indices)[rank]]
    if mode == _MEAN:
        sizes = bag_size[bag_of]
        scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
    out = np.zeros((num_weights, dim), grad.dtype)
    np.add.at(out, words, grad[bag_of] * scale.astype(grad.dtype)[:, None])
    return out


def embedding_bag_backward(
    grad,
    indices,
    offsets,
    offset2bag,
    bag_size,
    maximum_indices,
    num_weights: int,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights,
    padding_idx: int,
):
    """The weight's gradient of embedding_bag (PyTorch's dense backward on the CPU)."""
    indices, offsets = _bag_index_types(indices, offsets)
    if sparse:
        # PyTorch hands back a sparse COO gradient; opgrad has the strided layout only
        raise NotImplementedError("embedding_bag(sparse=True): opgrad has no sparse tensors")
    if indices.size and not offset2bag.size:  # the fast sum path left it empty
        offset2bag = _offset2bag(offsets, indices.shape[0])
    if grad.dtype.name not in _BAG_WEIGHT_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'grad_' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {dtypes.legacy_tensor_type(grad.dtype)} "
            "instead (while checking arguments for embedding_bag)"
        )
    return _dense_bag_backward(
        grad,
        indices,
        offset2bag,
        bag_size,
        maximum_indices,
        num_weights,
        scale_grad_by_freq,
        mode,
        per_sample_weights,
        padding_idx,
    )


def embedding_bag_per_sample_weights_backward(
    grad, weight, indices, offsets, offset2bag, mode: int, padding_idx: int
):
    """Each sample's weight gradient: its bag's gradient row dotted with its embedding row
    (zero for padding)."""
    if mode != _SUM:
        raise RuntimeError(
            "embedding_bag_backward: per_sample_weights only supported for mode='sum'"
        )
    indices, offsets = _bag_index_types(indices, offsets)
    if indices.size and not offset2bag.size:
        offset2bag = _offset2bag(offsets, indices.shape[0])
    out = np.zeros(indices.shape[0], grad.dtype)
    keep = indices != padding_idx
    compute = opmath_dtype(grad.dtype)
    products = grad[offset2bag[keep]].astype(compute) * weight[indices[keep]].astype(compute)
    out[keep] = products.sum(axis=1)
    return out
