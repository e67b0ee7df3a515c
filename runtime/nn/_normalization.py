"""``opgrad.nn.functional``'s linear and normalisation functions (torch.nn.functional's
``linear``, ``bilinear``, ``layer_norm``, ``rms_norm``, ``group_norm``, ``instance_norm``,
``batch_norm``, ``local_response_norm``, ``normalize``).

Each calls the aten op PyTorch 2.13's function calls on the CPU, so the grad_fn chain and
saved fields are torch's (``F.layer_norm(x, ...).grad_fn`` is NativeLayerNormBackward0).
"""

from __future__ import annotations

from typing import List, Optional

from .. import overrides as _overrides
from .. import python_arg_parser as _python_arg_parser
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = ["linear", "layer_norm"]


def _tensors(*names: str):
    """The arguments torch's function checks for ``__torch_function__`` (its
    ``has_torch_function_variadic(input, weight, bias)``), by position or by name."""

    def relevant(args: tuple, kwargs: dict) -> tuple:
        found = list(args[: len(names)])
        found += [kwargs[n] for n in names[len(found) :] if n in kwargs]
        return tuple(t for t in found if t is not None)

    return relevant


def _public(*names: str):
    return lambda impl: _overrides.overridable(impl, relevant=_tensors(*names), builtin=False)


#: torch binds linear straight to the aten op (torch._C._nn.linear)
linear = _python_arg_parser._overloaded("linear", "linear", (_aten.linear_op,), varargs=False)


@_public("input", "weight", "bias")
def layer_norm(
    input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalization over the last ``len(normalized_shape)`` dimensions."""
    return _aten.layer_norm(input, normalized_shape, weight, bias, eps, True)
