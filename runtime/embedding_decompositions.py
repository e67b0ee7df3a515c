"""CompositeImplicitAutograd ops of embedding_bag: they check padding_idx and hand contiguous
indices and offsets to ``_embedding_bag`` when a gradient may be needed (the weight or the
per-sample weights require grad, or the weight carries a tangent), else to
``_embedding_bag_forward_only``, as PyTorch 2.13's CPU composite does.
"""

from __future__ import annotations

from .generated import ops as aten

__all__ = ["embedding_bag", "embedding_bag_padding_idx"]


def embedding_bag_padding_idx(
    weight,
    indices,
    offsets,
    scale_grad_by_freq,
    mode,
    sparse,
    per_sample_weights,
    include_last_offset,
    padding_idx,
):
    wrapped = -1
    if padding_idx is not None:
        rows = weight.size(0)
        if not -rows <= padding_idx < rows:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{rows} through "
                f"{rows - 1}, but got {padding_idx}"
            )
        wrapped = padding_idx + rows if padding_idx < 0 else padding_idx
    recorded = (
        weight.requires_grad
        or weight._fw_grad is not None
        or (per_sample_weights is not None and per_sample_weights.requires_grad)
    )
    op = aten._embedding_bag if recorded else aten._embedding_bag_forward_only
    return op(
        weight,
        indices.contiguous(),
        offsets.contiguous(),
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        wrapped,
    )


def embedding_bag(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
):
    return embedding_bag_padding_idx(
        weight,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        None,
    )
