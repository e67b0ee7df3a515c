"""TorchDispatchMode: intercept every aten call below autograd."""

from __future__ import annotations

from typing import Any

from .. import dispatch_keys as K
from .._tls import state as _tls

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode_stack", "_get_current_dispatch_mode"]


class TorchDispatchMode:
    """Subclass and define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``.

    Inside ``with mode:`` every aten op reaches the handler after autograd has
    run: composite ops arrive decomposed, and the backward pass's ops arrive
    too. While the handler runs the mode is popped, so ``func(*args, **kwargs)``
    goes to the next mode or the backend.
    """

    def __init__(self, _dispatch_key=None) -> None:
        self._entered = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode(self)

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _push_mode(mode: TorchDispatchMode) -> None:
    _tls.mode_stack.append(mode)
    _tls.include = _tls.include | K.PYTHON


def _pop_mode(mode: Any = None) -> TorchDispatchMode:
    stack = _tls.mode_stack
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    if mode is not None and stack[-1] is not mode:
        raise RuntimeError("Trying to exit a dispatch mode that is not the innermost one")
    popped = stack.pop()
    if not stack:
        _tls.include = _tls.include & ~K.PYTHON
    return popped


def _get_current_dispatch_mode_stack() -> list:
    return list(_tls.mode_stack)


def _get_current_dispatch_mode():
    return _tls.mode_stack[-1] if _tls.mode_stack else None
