"""``F.embedding`` and ``F.one_hot``.

``embedding`` checks ``padding_idx`` as PyTorch's Python function does, renormalises the
named rows of ``weight`` in place without recording it (``max_norm``), then calls the
``embedding`` op: its node is ``EmbeddingBackward0``.
"""

from __future__ import annotations

from typing import Optional

from .. import _functions as _torch_functions
from .. import overrides as _overrides
from ..autograd.grad_mode import no_grad
from ..generated import ops as _aten
from ..tensor import Tensor

one_hot = _torch_functions.one_hot


def _embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: Optional[int] = None,
    max_norm: Optional[float] = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    if padding_idx is not None:
        rows = weight.size(0)
        if padding_idx > 0:
            if padding_idx >= rows:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -rows:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = rows + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():
            _aten.embedding_renorm_(weight, input, max_norm, norm_type)
    return _aten.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _relevant(args: tuple, kwargs: dict) -> tuple:
    return args[:2] + tuple(v for k, v in kwargs.items() if k in ("input", "weight"))


embedding = _overrides.overridable(_embedding, relevant=_relevant, builtin=False, name="embedding")
