"""``F.embedding``, ``F.embedding_bag`` and ``F.one_hot``.

``embedding`` checks ``padding_idx`` as PyTorch's Python function does, renormalises the
named rows of ``weight`` in place without recording it (``max_norm``), then calls the
``embedding`` op: its node is ``EmbeddingBackward0``.

``embedding_bag`` checks its arguments as PyTorch's Python function does, turns a 2-d input
into fixed-length bags (``offsets`` from ``arange``), renormalises like ``embedding`` and
calls ``embedding_bag.padding_idx``: its node is ``EmbeddingBagBackward0``.
"""

from __future__ import annotations

from typing import Optional

from .. import _functions as _torch_functions
from .. import factories as _factories
from .. import overrides as _overrides
from ..autograd.grad_mode import no_grad
from ..dtypes import int64 as _long
from ..generated import ops as _aten
from ..tensor import Tensor
from ..user_warnings import warn_user

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


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def _type_text(value) -> str:
    """``str(type(value))`` with opgrad's Tensor under its public name, as torch's is."""
    return "<class 'opgrad.Tensor'>" if type(value) is Tensor else str(type(value))


def _embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Optional[Tensor] = None,
    max_norm: Optional[float] = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Optional[Tensor] = None,
    include_last_offset: bool = False,
    padding_idx: Optional[int] = None,
) -> Tensor:
    if weight.dtype == _long and input.is_floating_point():
        warn_user(
            "Argument order of nn.functional.embedding_bag was changed. "
            "Usage `embedding_bag(weight, input, ...)` is deprecated, "
            "and should now be `embedding_bag(input, weight, ...)`."
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_text(offsets)}"
            )
        offsets = _factories.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    mode_enum = _BAG_MODES.get(mode) if isinstance(mode, str) else None
    if mode_enum is None:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode_enum == 2:
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _aten.embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. "
            "per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    return _aten.embedding_bag_padding_idx(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        mode_enum,
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )[0]


def _bag_relevant(args: tuple, kwargs: dict) -> tuple:
    named = ("input", "weight", "offsets", "per_sample_weights")
    positional = args[:3] + args[8:9]
    return positional + tuple(v for k, v in kwargs.items() if k in named)


embedding_bag = _overrides.overridable(
    _embedding_bag, relevant=_bag_relevant, builtin=False, name="embedding_bag"
)
