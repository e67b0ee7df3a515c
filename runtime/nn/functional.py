"""``opgrad.nn.functional``: PyTorch's ``torch.nn.functional`` on opgrad's ops.

Each function decomposes as PyTorch 2.13 decomposes it on the CPU, so the grad_fn
chain and saved fields a user inspects are torch's. Functions torch writes in Python
go through the ``__torch_function__`` protocol under their own name; functions that
are bindings of one aten op in torch (``gelu``, ``softplus``, ``elu_`` ...) are
that op's entry here too.
"""

from __future__ import annotations

import sys
import warnings
from typing import Optional

from .. import overrides as _overrides
from ..generated import ops as _aten
from ..tensor import Tensor

__all__ = ["gumbel_softmax", "log_softmax", "softmax", "softmin"]


def _input_arg(args: tuple, kwargs: dict) -> tuple:
    """The tensor torch's Python functions check for ``__torch_function__``."""
    return args[:1] if args else tuple(v for k, v in kwargs.items() if k in ("input", "logits"))


def _public(impl):
    """A torch Python function: overridable through its first (tensor) argument."""
    return _overrides.overridable(impl, relevant=_input_arg, builtin=False)


def _stacklevel(stacklevel: int) -> int:
    """The ``stacklevel`` that makes ``warnings.warn``, called by the function that calls
    this, point where torch's same call points: the frames torch has not (the protocol's
    wrapper around a public function) are skipped."""
    frame = sys._getframe(2)  # the warning function's caller
    real, extra = 1, 0
    while frame is not None and real < stacklevel:
        if frame.f_globals.get("__name__") == _overrides.__name__:
            extra += 1
        else:
            real += 1
        frame = frame.f_back
    return stacklevel + extra


# ---- softmax family ----------------------------------------------------------------------


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=_stacklevel(stacklevel),
    )
    return 0 if ndim in (0, 1, 3) else 1


@_public
def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmax function along ``dim``: :math:`\exp(x_i) / \sum_j \exp(x_j)`."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.softmax(dim)
    return input.softmax(dim, dtype=dtype)


@_public
def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmin function along ``dim``: the softmax of ``-input``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


@_public
def log_softmax(
    input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None
) -> Tensor:
    r"""Apply a softmax followed by a logarithm along ``dim``, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.log_softmax(dim)
    return input.log_softmax(dim, dtype=dtype)


@_public
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    r"""Sample from the Gumbel-Softmax distribution and optionally discretize.

    The Gumbel noise is ``-log(Exponential(1))`` drawn from the default generator, as
    torch draws it, so one seed gives torch's sample.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=_stacklevel(2))
    gumbels = -_aten.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    raise NotImplementedError(
        "gumbel_softmax(hard=True) needs max.dim and scatter_, which opgrad does not have yet"
    )
