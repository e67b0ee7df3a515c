"""Argument handling for op entries and the Python surface.

Entries normalize arguments (numbers where a Tensor is expected become
wrapped 0-dim tensors, ints become int lists). Names with several overloads
pick one per call as PyTorch's parser does: first an exact match on types,
then one that accepts numbers for Tensor arguments.
"""

from __future__ import annotations

import operator
from typing import Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from ._tls import state as _tls
from .dispatch_keys import TORCH_FUNCTION
from .overrides import (
    Site,
    class_overrides,
    dispatch,
    flatten_relevant,
    has_torch_function,
    public_entry,
)
from .tensor import TENSOR_CLASSES, Size, Tensor, wrap_scalar


class Overridden(Exception):
    """Raised while an entry normalizes its arguments when one of them takes the call
    through ``__torch_function__``; the entry then hands the call over as given."""


def as_tensor_arg(value) -> Tensor:
    cls = value.__class__
    if cls is float or cls is int or cls is bool:
        return wrap_scalar(value)
    if isinstance(value, Tensor):
        if cls in TENSOR_CLASSES or _tls.tf_state or not class_overrides(cls):
            return value
        raise Overridden
    if isinstance(value, (bool, int, float, np.generic)):
        return wrap_scalar(value)
    if not _tls.tf_state and class_overrides(cls):  # a tensor-like that is not a Tensor
        raise Overridden
    raise TypeError(f"expected Tensor as element 0 in argument 0, but got {type(value).__name__}")


def as_int(value) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"an integer is required (got type {type(value).__name__})") from None


def int_list(value, size: int = 1) -> tuple:
    if value.__class__ is tuple:
        return value
    if isinstance(value, (tuple, list, Size)):
        return tuple(operator.index(v) for v in value)
    if isinstance(value, Tensor) and value._data.ndim == 1:
        return tuple(value.tolist())
    return (as_int(value),) * size


def tensor_list(value) -> tuple:
    if isinstance(value, Tensor):
        raise TypeError("expected a sequence of Tensors, but got a Tensor")
    return tuple([as_tensor_arg(v) if v is not None else None for v in value])


def list_keys(tensors: Sequence[Tensor]) -> int:
    keys = 0
    for t in tensors:
        if t is not None:
            keys |= t._keys
    return keys


# ---- overload resolution -------------------------------------------------------------

_NUMBER = (bool, int, float, np.number, np.bool_)


def _accepts(arg, value, lenient: bool) -> bool:
    t = arg.type
    if value is None:
        return t.optional
    if t.is_list:
        if t.base == "Tensor":
            return isinstance(value, (list, tuple))
        if isinstance(value, (list, tuple, Size)):
            return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
        return (
            t.base in ("int", "SymInt")
            and isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
        )
    base = t.base
    if base == "Tensor":
        return isinstance(value, Tensor) or (lenient and isinstance(value, _NUMBER))
    if base == "Scalar":
        return isinstance(value, _NUMBER) or (
            lenient and isinstance(value, Tensor) and value._data.ndim == 0
        )
    if base in ("int", "SymInt"):
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if base == "float":
        return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
    if base == "bool":
        return isinstance(value, (bool, np.bool_))
    if base == "str":
        return isinstance(value, str)
    return True  # ScalarType, Layout, Device, MemoryFormat, Generator: checked by kernels


def _collapse_varargs(op, args: tuple, varargs: bool) -> bool:
    """Whether ``x.view(2, 3)`` must be read as ``x.view((2, 3))``."""
    positional = op._positional
    return (
        varargs
        and len(positional) >= 2
        and positional[1].type.is_list
        and positional[1].type.base in ("int", "SymInt")
        and len(args) > 2
        and all(isinstance(v, (int, np.integer)) for v in args[1:])
    )


def _bind(op, args: tuple, kwargs: dict, lenient: bool, varargs: bool):
    schema_args = op._schema.arguments
    positional = op._positional
    if _collapse_varargs(op, args, varargs):
        args = (args[0], tuple(args[1:]))
    if len(args) > len(positional):
        return None
    bound = []
    kwargs = dict(kwargs)
    for index, arg in enumerate(schema_args):
        if index < len(args) and not arg.kwarg_only:
            value = args[index]
        elif arg.name in kwargs:
            value = kwargs.pop(arg.name)
        elif index == 0 and "input" in kwargs:
            value = kwargs.pop("input")
        elif arg.has_default:
            bound.append(arg.default_value)
            continue
        else:
            return None
        if not _accepts(arg, value, lenient):
            return None
        bound.append(value)
    if kwargs:
        return None
    return tuple(bound)


def resolve_overload(overloads, args: tuple, kwargs: dict, varargs: bool = False):
    """The first overload whose schema accepts the call, and the bound arguments."""
    for lenient in (False, True):
        for op in overloads:
            bound = _bind(op, args, kwargs, lenient, varargs)
            if bound is not None:
                return op, bound
    names = ", ".join(str(op._schema) for op in overloads)
    given = ", ".join(
        [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    )
    raise TypeError(
        f"{overloads[0]._opname}() received an invalid combination of arguments - got ({given}), "
        f"but expected one of: {names}"
    )


def call_bound(op, bound: tuple, entry: Optional[Callable] = None):
    n = len(op._positional)
    kw = {a.name: v for a, v in zip(op._kwarg_only, bound[n:])}
    return (entry or op._entry)(*bound[:n], **kw)


def function(name: str, overloads: tuple) -> Callable:
    """``opgrad.<name>``: a copy of the entry for one overload, else a resolving wrapper."""
    if len(overloads) == 1:
        return public_entry(overloads[0], name, name)
    return _overloaded(name, name, overloads, varargs=False)


def _overloaded(name: str, qualname: str, overloads: tuple, varargs: bool, site=None) -> Callable:
    # Calls with the same argument classes and keyword names pick the same
    # overload: remember it, and call its entry with the arguments as given.
    # The entries are copies that name this wrapper to __torch_function__ handlers.
    cache: Dict[tuple, tuple] = {}
    own = site is None
    site = site or Site()
    entries = {op: public_entry(op, name, qualname, site) for op in overloads}

    def call(*args, **kwargs):
        if _tls.include & TORCH_FUNCTION:  # a mode sees the call as given
            return dispatch(site, flatten_relevant(args + tuple(kwargs.values())), args, kwargs)
        classes = tuple([a.__class__ for a in args])
        hit = cache.get((classes, tuple(kwargs)))
        if hit is None:
            try:
                op, bound = resolve_overload(overloads, args, kwargs, varargs)
            except TypeError:
                relevant = flatten_relevant(args + tuple(kwargs.values()))
                if has_torch_function(relevant):  # tensor-likes that are not Tensors
                    return dispatch(site, relevant, args, kwargs)
                raise
            overriding = any([c not in TENSOR_CLASSES and class_overrides(c) for c in classes])
            if "input" in kwargs:  # renamed argument: call with the bound ones, uncached
                if overriding and not _tls.tf_state:
                    return dispatch(
                        site, flatten_relevant(args + tuple(kwargs.values())), args, kwargs
                    )
                return call_bound(op, bound, entries[op])
            hit = (entries[op], _collapse_varargs(op, args, varargs), overriding)
            cache[(classes, tuple(kwargs))] = hit
        entry, collapse, overriding = hit
        if overriding and not _tls.tf_state:
            return dispatch(site, flatten_relevant(args + tuple(kwargs.values())), args, kwargs)
        if collapse:
            args = (args[0], tuple(args[1:]))
        return entry(*args, **kwargs)

    call.__name__ = name
    call.__qualname__ = qualname
    if own:
        site.func = call
    return call


def method(name: str, overloads: tuple, site=None) -> Callable:
    """A Tensor method: as ``function``, also accepting ``x.view(2, 3)`` varargs.
    ``site`` names the method to __torch_function__ handlers (default: itself)."""
    qualname = f"Tensor.{name}"
    first = overloads[0]._positional
    takes_varargs = (
        len(first) >= 2 and first[1].type.is_list and first[1].type.base in ("int", "SymInt")
    )
    if len(overloads) == 1 and not takes_varargs:
        return public_entry(overloads[0], name, qualname, site)
    if len(overloads) == 1:
        own = site is None
        site = site or Site()
        entry = public_entry(overloads[0], name, qualname, site)

        def varargs_method(self, *args, **kwargs):
            # x.view(2, 3) means x.view((2, 3)): only when every argument is an int
            if args and all([a.__class__ is int for a in args]):
                args = (args,)
            return entry(self, *args, **kwargs)

        varargs_method.__name__ = name
        varargs_method.__qualname__ = qualname
        if own:
            site.func = varargs_method
        return varargs_method
    return _overloaded(name, qualname, overloads, varargs=True, site=site)
