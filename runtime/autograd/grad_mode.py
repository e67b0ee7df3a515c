"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .. import dispatch_keys as K
from .._tls import refresh_plain
from .._tls import state as _tls


class _DecoratorContextManager:
    """A context manager that also decorates functions, generators and coroutines
    so that the mode holds only while their own code runs."""

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            import warnings

            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            func.__init__ = self(func.__init__)
            return func
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args, **kwargs):
                with self.clone():
                    return await func(*args, **kwargs)

            return async_wrapper
        return wrapper

    def _wrap_generator(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return wrapper

    def clone(self) -> "_DecoratorContextManager":
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Usable as ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording inside the block or function."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = False

    def __exit__(self, *exc: Any) -> None:
        _tls.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside the block, even within no_grad."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = True

    def __exit__(self, *exc: Any) -> None:
        _tls.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{type(mode).__name__}"
            )
        self.prev = _tls.grad_enabled
        self.mode = bool(mode)
        _tls.grad_enabled = self.mode

    def __call__(self, func: Callable) -> Callable:
        _tls.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _tls.grad_enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        _tls.grad_enabled = self.prev

    def clone(self) -> "set_grad_enabled":
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside skip autograd and view tracking."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __new__(cls, mode: Any = True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self) -> None:
        self._saved = (_tls.grad_enabled, _tls.inference_mode, _tls.keep)
        _tls.plain = False
        if self.mode:
            _tls.grad_enabled = False
            _tls.inference_mode = True
            _tls.keep = _tls.keep & ~K.AUTOGRAD
        else:
            _tls.grad_enabled = True
            _tls.inference_mode = False
            _tls.keep = _tls.keep | K.AUTOGRAD
        refresh_plain()

    def __exit__(self, *exc: Any) -> None:
        _tls.grad_enabled, _tls.inference_mode, _tls.keep = self._saved
        refresh_plain()

    def clone(self) -> "inference_mode":
        return self.__class__(self.mode)


def is_grad_enabled() -> bool:
    return _tls.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _tls.inference_mode
