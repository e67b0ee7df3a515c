"""``opgrad.autograd.forward_ad``: forward-mode AD with dual tensors, as ``torch.autograd.forward_ad``.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives a tensor carrying the
tangent ``t``; every op then computes the tangent of its output eagerly from
the forward formulas of derivatives.yaml, and ``unpack_dual`` reads it back.
Only one level can be active at a time (nesting is an error, as in PyTorch);
leaving it drops every tangent.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from .._tls import set_forward_ad_level
from .._tls import state as _tls
from ..generated import ops as aten
from ..generated.nodes import AliasBackward0
from ..tensor import Tensor
from . import forward_grad as _fg

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

#: the active level, -1 when none (read by PyTorch's own tests as fwAD._current_level)
_current_level = -1


def enter_dual_level() -> int:
    """Enter a new forward grad level and make it the current one."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    set_forward_ad_level(True)
    return _current_level


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """Exit the current level, deleting every tangent associated with it."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _fg.clear_all()
    set_forward_ad_level(False)
    _current_level = level - 1


def make_dual(tensor: Tensor, tangent: Tensor, *, level: Optional[int] = None) -> Tensor:
    """A new tensor aliasing ``tensor`` that carries ``tangent`` (kept as is when it has
    the same layout, copied otherwise). Backward-differentiable, like a view."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    # read off the dtype, as PyTorch's C++ does (a subclass's handler sees no call)
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tangent._data.dtype.kind not in "fc":
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    # Only level 0 can exist; PyTorch checks the given level in this order.
    if level == 0 and _fg.fw_grad(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if level != 0:
        raise RuntimeError("Invalid level given to _make_dual")
    _fg.check_new_tangent(tangent)
    _fg.check_size(tensor, tangent)
    if _current_level < 0:
        raise RuntimeError(
            "Trying to access a forward AD level with an invalid index. This index was either "
            "not created or is already deleted."
        )
    with _fg.suspended():
        dual = aten.view(tensor, tensor._data.shape)
    dual._fw_root = True
    _fg.set_fw_grad(dual, tangent)
    return dual


class Identity(AliasBackward0):
    """The unpacked primal's node (a plain ``Identity`` in PyTorch, not AliasBackward0)."""

    __slots__ = ()

    def name(self) -> str:
        return "opgrad::autograd::Identity"


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and the tangent (None if there is none)."""

    primal: Tensor
    tangent: Optional[Tensor]


def unpack_dual(tensor: Tensor, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: the primal is an alias of ``tensor`` without
    the tangent, the tangent is returned as is (None outside a level or without one)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(
            "_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    # none while forward AD is off (inside a custom Function's forward)
    tangent = _fg.fw_grad(tensor) if _tls.fw_active else None
    # PyTorch only rejects another level when there is a tangent (at level 0) to ignore
    if tangent is not None and level != 0:
        raise RuntimeError("Invalid level given to _fw_primal")
    with _fg.suspended():
        primal = aten.alias(tensor)
    node = primal._grad_fn
    if type(node) is AliasBackward0:  # not when a mode produced the alias
        node.__class__ = Identity
    primal._fw_root = True
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager (and decorator) within which forward AD computations happen."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper
