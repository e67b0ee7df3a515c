"""Backward helpers of the embedding ops, re-exported by functions_manual."""

from __future__ import annotations

from ..generated import ops as aten

__all__ = ["embedding_backward", "embedding_dense_double_backward"]


def embedding_backward(
    grad, indices, num_weights: int, padding_idx: int, scale_grad_by_freq, sparse
):
    if sparse:
        # PyTorch hands back a sparse COO gradient; opgrad has the strided layout only
        raise NotImplementedError("embedding(sparse=True): opgrad has no sparse tensors")
    return aten.embedding_dense_backward(
        grad, indices, num_weights, padding_idx, scale_grad_by_freq
    )


def embedding_dense_double_backward(grad, indices, padding_idx: int):
    """The rows of ``grad`` the indices name (zero for ``padding_idx``): frequency
    scaling was the first backward's."""
    rows = aten.index_Tensor(grad, [aten.reshape(indices, (-1,))])
    if padding_idx >= 0:
        rows = aten.masked_fill_Scalar(
            rows, aten.reshape(aten.eq_Scalar(indices, padding_idx), (-1, 1)), 0
        )
    return aten.view(rows, tuple(indices.shape) + (-1,))
