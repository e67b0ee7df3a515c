"""TorchDispatchMode: intercept every aten call below autograd."""

from __future__ import annotations

import collections
import contextlib
from typing import Any

from .. import dispatch_keys as K
from .._tls import refresh_plain
from .._tls import state as _tls

__all__ = [
    "TorchDispatchMode",
    "BaseTorchDispatchMode",
    "is_in_torch_dispatch_mode",
    "_get_current_dispatch_mode_stack",
    "_get_current_dispatch_mode",
]

# Set while any mode is entered (process-wide, as in torch): handlers see it too,
# though their own mode is popped while they run.
_is_in_torch_dispatch_mode = False


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    return _is_in_torch_dispatch_mode


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
        global _is_in_torch_dispatch_mode
        self.__dict__.setdefault("_old_flags", collections.deque()).append(
            _is_in_torch_dispatch_mode
        )
        _is_in_torch_dispatch_mode = True
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        # As torch: pops the innermost mode, whichever it is (exiting out of order
        # pops the other one), and a mode exited more often than entered raises
        # IndexError from its own flags.
        global _is_in_torch_dispatch_mode
        _is_in_torch_dispatch_mode = self._old_flags.pop()
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


# Push sets the Python key before adding the mode, pop removes the mode before clearing
# the key: interrupted in between, a key without a mode is harmless (the Python kernel
# looks at the stack), whereas a mode without its key would be skipped.


def _push_mode(mode: TorchDispatchMode) -> None:
    _tls.plain = False
    _tls.include = _tls.include | K.PYTHON
    _tls.mode_stack.append(mode)


def _pop_mode(k: Any = None) -> TorchDispatchMode:
    """Pop the innermost mode (``k``, a dispatch key in torch, selects nothing here)."""
    stack = _tls.mode_stack
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    popped = stack.pop()
    if not stack:
        _tls.include = _tls.include & ~K.PYTHON
        refresh_plain()
    return popped


def _get_current_dispatch_mode_stack() -> list:
    return list(_tls.mode_stack)


def _get_current_dispatch_mode():
    return _tls.mode_stack[-1] if _tls.mode_stack else None


class BaseTorchDispatchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


@contextlib.contextmanager
def _disable_current_modes():
    """Pop every mode for the duration of the block (innermost first), then restore them."""
    old = [_pop_mode() for _ in range(len(_tls.mode_stack))]
    try:
        yield old
    finally:
        for mode in reversed(old):
            _push_mode(mode)


def _len_torch_dispatch_stack() -> int:
    return len(_tls.mode_stack)
