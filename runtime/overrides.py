"""``opgrad.overrides``: the Python-level override protocol (``__torch_function__``).

A public callable (``opgrad.mul``, ``Tensor.mul``, ``Tensor.backward``, a
property getter, an ``opgrad.ops`` overload) hands its call to a
``TorchFunctionMode`` or to the ``__torch_function__`` of a Tensor subclass
among its arguments, before the dispatcher and autograd see it. Order, as in
PyTorch: the innermost mode (popped while its handler runs), then the
arguments' types, a subclass before its superclass and otherwise left to
right; ``NotImplemented`` passes on to the next.

Cost for plain tensors: generated op entries test one bit of the include
mask they read anyway (set while a mode is live) and meet subclasses only on
the branch they already take for arguments that are not plain tensors.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterable, List, Optional

from . import dispatch_keys as K
from ._tls import refresh_plain
from ._tls import state as _tls
from .dispatcher import multiple_dispatch_failed, subclass_first_index
from .tensor import TENSOR_CLASSES as _PLAIN

__all__ = [
    "TorchFunctionMode",
    "BaseTorchFunctionMode",
    "get_default_nowrap_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
]

ENABLED, SUBCLASSES_DISABLED, ALL_DISABLED = 0, 1, 2
_TF = K.TORCH_FUNCTION


# ---- thread-local state ----------------------------------------------------------------


def _sync_mode_flag() -> None:
    """Keep the include bit equal to "a mode is live" (stack not empty, not all disabled)."""
    if _tls.tf_modes and _tls.tf_state != ALL_DISABLED:
        _tls.plain = False
        _tls.include = _tls.include | _TF
    else:
        _tls.include = _tls.include & ~_TF
    refresh_plain()


def _set_state(state: int) -> None:
    _tls.tf_state = state
    _sync_mode_flag()


def _is_torch_function_enabled() -> bool:
    """Whether subclasses' ``__torch_function__`` run (neither guard is active)."""
    return _tls.tf_state == ENABLED


def _is_torch_function_mode_enabled() -> bool:
    return bool(_tls.include & _TF)


def _is_torch_function_all_disabled() -> bool:
    return _tls.tf_state == ALL_DISABLED


class _StateGuard:
    _state = ENABLED

    def __enter__(self):
        self._saved = _tls.tf_state
        _set_state(max(self._saved, self._state))
        return self

    def __exit__(self, *exc) -> None:
        _set_state(self._saved)


class DisableTorchFunctionSubclass(_StateGuard):
    """Inside the block subclasses' ``__torch_function__`` are skipped (modes still run)."""

    _state = SUBCLASSES_DISABLED


class DisableTorchFunction(_StateGuard):
    """Inside the block neither modes nor subclasses see calls."""

    _state = ALL_DISABLED


class _DisabledTorchFunctionImpl:
    """``__torch_function__ = opgrad._C._disabled_torch_function_impl`` opts a subclass
    out of the protocol. An instance, not a function, so it never binds."""

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_function_impl>"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


# ---- modes ---------------------------------------------------------------------------------


class TorchFunctionMode:
    """Subclass and define ``__torch_function__(self, func, types, args=(), kwargs=None)``.

    Inside ``with mode:`` every public call reaches the handler first; while it
    runs the mode is popped, so ``func(*args, **kwargs)`` goes to the next mode
    or runs the function.
    """

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# Push sets the flag before adding the mode, pop removes the mode before clearing the
# flag: interrupted in between, a flag without a mode is harmless (handlers look at the
# stack), whereas a mode without its flag would be skipped.


def _push_mode(mode: TorchFunctionMode) -> None:
    if _tls.tf_state != ALL_DISABLED:
        _tls.plain = False
        _tls.include = _tls.include | _TF
    _tls.tf_modes.append(mode)


def _pop_mode() -> TorchFunctionMode:
    if not _tls.tf_modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _tls.tf_modes.pop()
    _sync_mode_flag()
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode() -> Optional[TorchFunctionMode]:
    return _tls.tf_modes[-1] if _tls.tf_modes else None


def _get_current_function_mode_stack() -> list:
    return list(_tls.tf_modes)


def _len_torch_function_stack() -> int:
    return len(_tls.tf_modes)


# ---- which arguments take part -------------------------------------------------------


def class_overrides(cls: type) -> bool:
    """Whether ``cls`` takes part: it has a ``__torch_function__`` that is not the disabled one.
    (Exact tensors never do; they are filtered before this is asked.)"""
    impl = getattr(cls, "__torch_function__", None)
    return impl is not None and getattr(impl, "__func__", impl) is not _disabled_torch_function_impl


def overrides(value: Any) -> bool:
    """Whether ``value`` itself would get the call (subclasses enabled and it overrides)."""
    cls = value.__class__
    return _tls.tf_state == ENABLED and cls not in _PLAIN and class_overrides(cls)


def flatten_relevant(values: Iterable) -> list:
    out = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(value)
        else:
            out.append(value)
    return out


def _get_overloaded_args(relevant_args: Iterable, with_plain: bool = False) -> List[Any]:
    """Arguments whose type's handler is called, in order: one per type, a subclass before
    its superclass, otherwise left to right. Exact tensors take part only for the Python
    ``handle_torch_function`` (``with_plain``), as in torch."""
    if _tls.tf_state != ENABLED:
        return []
    plain = _PLAIN
    types: list = []
    args: list = []
    for arg in relevant_args:
        cls = arg.__class__
        if cls in plain:
            if not with_plain:
                continue
            from .tensor import Tensor

            cls = Tensor
        if cls in types or not class_overrides(cls):
            continue
        index = subclass_first_index(types, cls)
        types.insert(index, cls)
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether a call with these arguments goes to a mode or a subclass handler."""
    mode = bool(_tls.include & _TF)
    for arg in relevant_args:
        if mode or overrides(arg):
            return True
    return False


def has_torch_function_unary(arg: Any) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp: Any) -> bool:
    from .tensor import Tensor

    return type(inp) is Tensor or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    from .tensor import Tensor

    name = getattr(func, "__name__", None)
    return name == "__get__" or (name is not None and getattr(Tensor, name, None) is func)


def get_default_nowrap_functions() -> set:
    """Public functions whose results the default handler returns as they are (field reads)."""
    from .tensor import Tensor

    return {Tensor.grad.__get__}


# ---- calling the handlers -------------------------------------------------------------


class Site:
    """What a public callable tells the protocol about itself: the ``func`` handlers
    receive, whether it is a binary operator (which returns NotImplemented when no handler
    takes the call) and which of PyTorch's two error texts it raises (C++ bindings name
    themselves ``torch.Tensor.sum``; Python functions ``module.name``)."""

    __slots__ = ("func", "operator", "builtin")

    def __init__(self, func: Any = None, operator: bool = False, builtin: bool = True) -> None:
        self.func = func
        self.operator = operator
        self.builtin = builtin


def _public_type(arg: Any) -> type:
    """The type handlers are told about (the runtime's own Tensor classes read as Tensor)."""
    cls = arg.__class__
    if cls in _PLAIN:
        from .tensor import Tensor

        return Tensor
    return cls


def _builtin_name(func: Any) -> str:
    from .dispatcher import OpOverload, OpOverloadPacket

    if isinstance(func, OpOverload):
        return f"opgrad.ops{func.namespace}.{func._opname}"
    if isinstance(func, OpOverloadPacket):
        return f"opgrad.ops{func.namespace}.{func.__name__}"
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):
        return f"opgrad.Tensor.{owner.fget.__name__}.{func.__name__}"
    qualname = getattr(func, "__qualname__", func.__name__)
    return f"opgrad.{qualname}"


def _no_handler(site: Site, overloaded: list, mode: Any):
    if site.operator:
        return NotImplemented
    func = site.func
    if site.builtin:
        types = [_public_type(a) for a in overloaded]
        raise multiple_dispatch_failed(_builtin_name(func), "__torch_function__", mode, types)
    message = (
        f"no implementation found for '{func.__module__}.{func.__name__}' on types that "
        f"implement __torch_function__: {[_public_type(a) for a in overloaded]}"
    )
    if mode is not None:
        message += f" nor in mode {mode}"
    raise TypeError(message)


def dispatch(site: Site, relevant: Iterable, args: tuple, kwargs: dict, with_plain=False):
    """Hand ``site.func(*args, **kwargs)`` to the live mode, then to the arguments' types."""
    overloaded = _get_overloaded_args(relevant, with_plain)
    types = tuple(_public_type(a) for a in overloaded)
    func = site.func
    if site.builtin and not kwargs:
        kwargs = None  # as torch's C++ bindings pass it
    tried_mode = None
    modes = _tls.tf_modes
    if _tls.include & _TF and modes:
        tried_mode = modes[-1]
        saved_include = _tls.include
        # As for dispatch modes: single stores that the finally undoes, so that an
        # exception at any instruction leaves the modes and keys as they were.
        try:
            _tls.tf_modes = modes[:-1]
            if len(modes) == 1:
                _tls.include = saved_include & ~_TF
                refresh_plain()
            result = tried_mode.__torch_function__(func, types, args, kwargs)
        finally:
            _tls.tf_modes = modes
            _tls.plain = False  # the mode is live again
            _tls.include = saved_include
            refresh_plain()
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        owner = arg if arg.__class__ not in _PLAIN else _public_type(arg)
        result = owner.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    return _no_handler(site, overloaded, tried_mode)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args, **kwargs):
    """Call the handlers for ``public_api(*args, **kwargs)`` (guard with has_torch_function)."""
    return dispatch(Site(public_api, builtin=False), relevant_args, args, kwargs, True)


def handle_entry(site: Site, op, *flat):
    """The slow branch of a generated op entry: ``flat`` holds its arguments in schema
    order, as given (a number already wrapped reads as the number again)."""
    flat = tuple(a._data.item() if getattr(a, "_wrapped", False) else a for a in flat)
    args, kwargs = op._unflatten(flat)
    return dispatch(site, flatten_relevant(flat), args, kwargs)


def public_entry(op, name: str, qualname: str, site: Optional[Site] = None):
    """A copy of ``op``'s entry for the Python surface, known to handlers as ``site.func``
    (default: the copy itself)."""
    own = site is None
    if own:
        site = Site()
    entry = op._make_entry(site)
    entry.__name__ = name
    entry.__qualname__ = qualname
    if own:
        site.func = entry
    return entry


def self_only(args: tuple, kwargs: dict) -> tuple:
    """``relevant`` for methods that check only ``self`` (as torch's Python methods do)."""
    return args[:1]


# Exact tensors and Python scalars never have a handler: skipped without a lookup.
_SKIPPED = frozenset(_PLAIN) | {int, float, bool, complex, str, type(None)}


def _relevant_positional(args: tuple, kwargs: dict) -> list:
    for arg in args:
        if isinstance(arg, (list, tuple)):
            return flatten_relevant(args)
    return args


def overridable(
    func: Optional[Callable] = None,
    *,
    relevant: Callable = _relevant_positional,
    builtin: bool = True,
    operator: bool = False,
    name: Optional[str] = None,
    qualname: Optional[str] = None,
    identity: Any = None,
):
    """Make a Python-defined public function go through the protocol.

    ``relevant(args, kwargs)`` lists the arguments checked for subclasses (default:
    the positional ones, lists flattened). ``identity`` is the ``func`` handlers see
    (default: the wrapper itself).
    """

    def wrap(impl: Callable) -> Callable:
        site = Site(None, operator, builtin)
        plain = _SKIPPED

        if relevant is self_only:

            @functools.wraps(impl)
            def public(self, *args, **kwargs):
                if _tls.include & _TF or (self.__class__ not in plain and overrides(self)):
                    return dispatch(site, (self,), (self,) + args, kwargs)
                return impl(self, *args, **kwargs)

        elif operator and relevant is _relevant_positional:
            # x ** 2: tensors and numbers only, looked at in this frame
            @functools.wraps(impl)
            def public(*args, **kwargs):
                try:
                    if _tls.include & _TF:
                        return dispatch(site, relevant(args, kwargs), args, kwargs)
                    for arg in args:
                        if arg.__class__ not in plain:
                            for candidate in relevant(args, kwargs):
                                if candidate.__class__ not in plain and overrides(candidate):
                                    return dispatch(site, relevant(args, kwargs), args, kwargs)
                            break
                    return impl(*args, **kwargs)
                except TypeError:  # as torch's binary operators: let Python try the other side
                    return NotImplemented

        else:

            @functools.wraps(impl)
            def public(*args, **kwargs):
                if _tls.include & _TF:
                    return dispatch(site, relevant(args, kwargs), args, kwargs)
                for arg in relevant(args, kwargs):
                    if arg.__class__ not in plain and overrides(arg):
                        return dispatch(site, relevant(args, kwargs), args, kwargs)
                return impl(*args, **kwargs)

        if operator and not (relevant is _relevant_positional):
            checked = public

            @functools.wraps(impl)
            def public(*args, **kwargs):
                try:
                    return checked(*args, **kwargs)
                except TypeError:  # as torch's binary operators: let Python try the other side
                    return NotImplemented

        if name is not None:
            public.__name__ = name
        if qualname is not None:
            public.__qualname__ = qualname
        site.func = identity if identity is not None else public
        return public

    return wrap if func is None else wrap(func)


def overridable_property(prop: property, name: str, none_slot: Optional[str] = None) -> property:
    """A Tensor property whose getter and setter go through the protocol, as
    ``Tensor.<name>.__get__`` / ``.__set__``. With ``none_slot``, assigning None stores
    None in that slot without calling the setter (``x.grad = None`` every step)."""
    get_site, set_site = Site(), Site()
    fget, fset = prop.fget, prop.fset

    def getter(self):
        if _tls.include & _TF or (self.__class__ not in _PLAIN and overrides(self)):
            return dispatch(get_site, (self,), (self,), {})
        return fget(self)

    def setter(self, value):
        if _tls.include & _TF or (self.__class__ not in _PLAIN and overrides(self)):
            dispatch(set_site, (self,), (self, value), {})
        elif value is None and none_slot is not None:
            setattr(self, none_slot, None)
        else:
            fset(self, value)

    getter.__name__ = setter.__name__ = name
    # a deleter (del x.grad) runs as written, outside the protocol
    new = property(getter, setter if fset is not None else None, prop.fdel, doc=prop.__doc__)
    get_site.func = new.__get__
    set_site.func = new.__set__
    return new


# ---- the default handler of Tensor subclasses ------------------------------------------


def _convert(result, cls):
    from .tensor import Tensor

    if cls is Tensor:
        return result
    if isinstance(result, Tensor) and not isinstance(result, cls):
        result = result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        result = type(result)(_convert(r, cls) for r in result)
    return result


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclasses disabled, and make its
    tensor results instances of ``cls`` (field reads such as ``.grad`` excepted)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        result = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return result
        return _convert(result, cls)
