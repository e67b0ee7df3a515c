"""Argument handling for op entries and the Python surface.

Entries normalize arguments (ints become int lists; for the arithmetic ops PyTorch
lets take numbers as tensors, numbers become wrapped 0-dim tensors, any other op
refuses them with PyTorch's error). Names with several overloads pick one per call
as PyTorch's parser does: first an exact match on types, then one that accepts
numbers for Tensor arguments (those ops only) or a 0-dim tensor for a Scalar.
"""

from __future__ import annotations

import operator
from typing import Callable, Dict, Optional, Sequence

import numpy as np

from . import dtypes
from ._tls import state as _tls
from .device import check_factory_device, device, is_device_like
from .dispatcher import declares_several_returns
from .dispatch_keys import TORCH_FUNCTION
from .memory_formats import memory_format
from .overrides import (
    Site,
    class_overrides,
    dispatch,
    flatten_relevant,
    has_torch_function,
    public_entry,
)
from .numpy_scalars import python_number
from . import return_types
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


#: the Python numbers an arithmetic op takes for a tensor, as a 0-dim wrapped number
WRAPPED_NUMBER_CLASSES = frozenset({float, int, bool})


def tensor_arg(value, site, op, index: int) -> Tensor:
    """A Tensor argument of an op entry: a Tensor; a Python number where the op takes
    numbers for tensors (PyTorch's arithmetic ops: wrapped into a 0-dim tensor); a
    tensor-like that overrides __torch_function__ (Overridden). Anything else is
    refused with the error PyTorch gives at that call site."""
    cls = value.__class__
    if op._numbers_as_tensors and cls in WRAPPED_NUMBER_CLASSES:
        return wrap_scalar(value)
    if isinstance(value, Tensor) or (
        op._numbers_as_tensors and isinstance(value, (int, float, np.generic))
    ):
        return as_tensor_arg(value)
    if not _tls.tf_state and class_overrides(cls):
        raise Overridden
    raise wrong_type(value, site, op, index, "Tensor", "Tensor")


#: the classes a Scalar argument takes as they are
PY_NUMBERS = frozenset({int, float, bool, complex})


def scalar_arg(value, site, op, index: int):
    """A Scalar argument that is no Python number: a tensor gives its value, a numpy scalar
    the Python number PyTorch reads from it (numpy_scalars: np.uint8(200) is 200,
    np.float16(1.5) is 1.5, np.bool_ is a float), so it promotes as that number; anything
    else is refused with the error PyTorch gives at that call site."""
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, np.generic):
        return python_number(value)
    raise wrong_type(value, site, op, index, "Number", "number")


def int_arg(value, site, op, index: int) -> int:
    """An int argument (anything with __index__ but a bool, as PyTorch's parser takes)."""
    if value.__class__ is bool:
        raise wrong_type(value, site, op, index, "int", "int")
    try:
        return operator.index(value)
    except TypeError:
        raise wrong_type(value, site, op, index, "int", "int") from None


def float_arg(value, site, op, index: int) -> float:
    """A float argument that is not a float: ints and bools convert (PyTorch keeps a double,
    so ``_saved_beta`` reads 2.0 for 2), as do numpy numbers and one-element tensors;
    anything else is refused with the error PyTorch gives at that call site."""
    if isinstance(value, (int, np.integer, np.floating, np.bool_)):
        return float(value)
    if isinstance(value, Tensor) and value._data.size == 1 and value._data.dtype.kind != "c":
        return float(value.item())
    raise wrong_type(value, site, op, index, "float", "float")


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python


def py_type_name(value) -> str:
    """A value's type as PyTorch's messages name it (the C type name): ``str``,
    ``numpy.float64``, a Python class by its own name."""
    cls = type(value)
    if cls.__flags__ & _HEAP_TYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_aten_call(site, op) -> bool:
    """Whether the entry was called as opgrad.ops.aten.<op>.<overload>(...) (``site`` None:
    the overload's own check)."""
    return site is None or site.func is op or site.func is None


def wrong_type(value, site, op, index: int, py_type: str, jit_type: str) -> Exception:
    """PyTorch's error for ``value`` given for ``op``'s argument ``index``: TorchScript's
    RuntimeError for an opgrad.ops.aten call, the Python signature's TypeError otherwise."""
    arg = op._schema.arguments[index]
    if _is_aten_call(site, op):
        # TorchScript names the type by its bare name (ndarray, uint8) and says "Cannot cast"
        # for a number
        details = "Cannot cast" if jit_type == "number" else "Unable to cast"
        if arg.type.optional:
            jit_type = f"Optional[{jit_type}]"
        return RuntimeError(
            f"aten::{op._schema.base_name}() Expected a value of type '{jit_type}' for argument "
            f"'{arg.name}' but instead found type '{type(value).__name__}'.\nPosition: {index}\n"
            f"Value: {value!r}\nDeclaration: {op._schema}\nCast error details: {details} "
            f"{value} to {jit_type.replace('Optional[', '').rstrip(']')}"
        )
    kind = py_type_name(value)
    # Python signatures call self "input"; a method's self is not counted; a keyword-only
    # argument has no position
    method = site.func.__qualname__.startswith("Tensor.")
    name = "input" if arg.name == "self" else arg.name
    where = "" if arg.kwarg_only else f" (position {index if method else index + 1})"
    return TypeError(
        f"{op._schema.base_name}(): argument '{name}'{where} must be {py_type}, not {kind}"
    )


# ---- dtype and device arguments --------------------------------------------------------

# Python types PyTorch's Python signatures take for a dtype (an ops.aten call does not)
_PYTHON_TYPE_DTYPES = {float: "float64", int: "int64", bool: "bool"}


def as_dtype(value, python_call: bool = True) -> Optional[dtypes.dtype]:
    """``value`` as a dtype argument, or None when it is none (a string, a numpy type)."""
    if value.__class__ is dtypes.dtype:
        return value
    if python_call and value.__class__ is type and value in _PYTHON_TYPE_DTYPES:
        return getattr(dtypes, _PYTHON_TYPE_DTYPES[value])
    return None


def dtype_arg(value, site, op, index: int) -> dtypes.dtype:
    """A ScalarType argument of an op entry (called only when it is not a dtype)."""
    found = as_dtype(value, not _is_aten_call(site, op))
    if found is None:
        raise wrong_type(value, site, op, index, "opgrad.dtype", "int")
    return found


def memory_format_arg(function: str, value, optional: bool = False) -> Optional[memory_format]:
    """A memory_format argument of a Python-level method or factory, else PyTorch's
    TypeError."""
    if value.__class__ is memory_format or (optional and value is None):
        return value
    raise TypeError(
        f"{function}(): argument 'memory_format' must be opgrad.memory_format, not "
        f"{arg_type_name(value)}"
    )


def device_arg(value, site, op, index: int) -> device:
    """A Device argument of an op entry: the CPU, or PyTorch's error for another device."""
    if not is_device_like(value):
        raise wrong_type(value, site, op, index, "opgrad.device", "Device")
    name = op._schema.base_name
    kernel = "empty_strided" if name.endswith("_like") or name == "_to_copy" else None
    return check_factory_device(
        value, kernel or "empty.memory_format", python_call=not _is_aten_call(site, op)
    )


# PyTorch's Python signatures of the factories that have several: a bad argument there
# gets the "invalid combination" text listing them.
_OPTIONS = (
    "opgrad.dtype dtype = None, opgrad.layout layout = None, opgrad.device device = None, "
    "bool pin_memory = False, bool requires_grad = False"
)
_FACTORY_SIGNATURES = {
    "rand": (
        f"(tuple of ints size, *, opgrad.Generator generator, Tensor out = None, {_OPTIONS})",
        f"(tuple of ints size, *, Tensor out = None, {_OPTIONS})",
    ),
    "arange": (
        f"(Number end, *, Tensor out = None, {_OPTIONS})",
        f"(Number start, Number end, *, {_OPTIONS})",
        f"(Number start, Number end, Number step = 1, *, Tensor out = None, {_OPTIONS})",
    ),
    "eye": (
        f"(int n, *, Tensor out = None, {_OPTIONS})",
        f"(int n, int m, *, Tensor out = None, {_OPTIONS})",
    ),
    "rand_like": (
        "(Tensor input, *, opgrad.Generator generator, opgrad.memory_format memory_format = "
        f"None, {_OPTIONS})",
        f"(Tensor input, *, opgrad.memory_format memory_format = None, {_OPTIONS})",
    ),
}
_FACTORY_SIGNATURES["randn"] = _FACTORY_SIGNATURES["rand"]
_FACTORY_SIGNATURES["randn_like"] = _FACTORY_SIGNATURES["rand_like"]


def factory_argument_error(function: str, name: str, py_type: str, value, call) -> TypeError:
    """PyTorch's TypeError for a Python-level factory's bad argument ``name``. ``call`` is
    the call's (args, kwargs), named in the text of factories with several signatures
    (keyword arguments that are None were not given)."""
    signatures = _FACTORY_SIGNATURES.get(function)
    if signatures is None:
        where = " (position 1)" if name == "input" else ""
        return TypeError(
            f"{function}(): argument '{name}'{where} must be {py_type}, not {arg_type_name(value)}"
        )
    args, kwargs = call
    given = ", ".join(
        [arg_type_name(a) for a in args]
        + [f"{k}={arg_type_name(v)}" for k, v in kwargs.items() if v is not None]
    )
    lines = "".join(f" * {s}\n" for s in signatures)
    return TypeError(
        f"{function}() received an invalid combination of arguments - got ({given}), but "
        f"expected one of:\n{lines}"
    )


def python_dtype(function: str, value, call=((), {})) -> Optional[dtypes.dtype]:
    """The ``dtype=`` of a Python-level factory, refused with PyTorch's TypeError."""
    if value is None:
        return None
    found = as_dtype(value)
    if found is None:
        raise factory_argument_error(function, "dtype", "opgrad.dtype", value, call)
    return found


def python_device(
    function: str, value, call=((), {}), kernel: Optional[str] = "empty.memory_format"
) -> None:
    """The ``device=`` of a Python-level factory: refused with PyTorch's TypeError when it
    is no device, with the error of a CPU-only build when it is not the CPU (unless
    ``kernel`` is None: the caller checks the device itself)."""
    if value is None:
        return
    if not is_device_like(value):
        raise factory_argument_error(function, "device", "opgrad.device", value, call)
    if kernel is not None:
        check_factory_device(value, kernel)


def as_int(value) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"an integer is required (got type {type(value).__name__})") from None


def int_list(value, size: int = 1, site=None, op=None, index: int = 0) -> tuple:
    """An int[] argument: a tuple as given (the fast path), a list, a 1-D tensor or one
    int repeated ``size`` times. With the entry's ``site``, ``op`` and argument ``index``,
    anything else is refused with PyTorch's text for that call site."""
    if value.__class__ is tuple:
        return value
    if isinstance(value, (tuple, list, Size)):
        try:
            return tuple([operator.index(v) for v in value])
        except TypeError:
            if op is None:
                raise
            position, bad = next((i, v) for i, v in enumerate(value) if not _is_index(v))
            raise _unpack_error(bad, position, site, op, index) from None
    if isinstance(value, Tensor) and value._data.ndim == 1:
        return tuple(value.tolist())
    try:
        return (as_int(value),) * size
    except TypeError:
        if op is None:
            raise
        raise wrong_type(value, site, op, index, "tuple of ints", "List[int]") from None


def _is_index(value) -> bool:
    try:
        operator.index(value)
        return True
    except TypeError:
        return False


def _unpack_error(value, position: int, site, op, index: int) -> Exception:
    if _is_aten_call(site, op):
        return wrong_type(value, site, op, index, "tuple of ints", "List[int]")
    arg = op._schema.arguments[index]
    return TypeError(
        f"{op._schema.base_name}(): argument '{arg.name}' failed to unpack the object at pos "
        f'{position + 1} with error "type must be tuple of ints,but got {py_type_name(value)}"'
    )


def tensor_list(value, index: int = 0) -> tuple:
    """A Tensor[] argument (the schema's ``index``-th) as a tuple; refuses other elements."""
    if isinstance(value, Tensor):
        raise TypeError("expected a sequence of Tensors, but got a Tensor")
    tensors = []
    for position, v in enumerate(value):
        if v is not None and v.__class__ not in TENSOR_CLASSES:
            if not isinstance(v, Tensor) and (_tls.tf_state or not class_overrides(v.__class__)):
                raise TypeError(
                    f"expected Tensor as element {position} in argument {index}, but got "
                    f"{type(v).__name__}"
                )
            v = as_tensor_arg(v)  # a subclass or tensor-like may take the call
        tensors.append(v)
    return tuple(tensors)


def list_keys(tensors: Sequence[Tensor]) -> int:
    keys = 0
    for t in tensors:
        if t is not None:
            keys |= t._keys
    return keys


# ---- overload resolution -------------------------------------------------------------

_NUMBER = (bool, int, float, complex, np.number, np.bool_)


def _accepts(arg, value, lenient: bool, numbers_as_tensors: bool) -> bool:
    t = arg.type
    if value is None:
        return t.optional
    if t.is_list:
        if t.base == "Tensor":
            return isinstance(value, (list, tuple))
        if t.base == "bool":  # a backward op's output_mask
            return isinstance(value, (list, tuple)) and all(
                isinstance(v, (bool, np.bool_)) for v in value
            )
        if isinstance(value, (list, tuple, Size)):
            if t.base == "float":  # float[] (scale factors): ints and floats alike
                return all(
                    isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                    for v in value
                )
            return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
        return (
            t.base in ("int", "SymInt")
            and isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
        )
    base = t.base
    if base == "Tensor":
        return isinstance(value, Tensor) or (
            lenient and numbers_as_tensors and isinstance(value, _NUMBER)
        )
    if base == "Scalar":
        # a 0-dim tensor stands for a number, unless it needs its history
        return isinstance(value, _NUMBER) or (
            lenient and isinstance(value, Tensor) and value._data.ndim == 0 and not value._rg
        )
    if base in ("int", "SymInt"):
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if base == "float":  # a bool is a number here, and a one-element tensor its value
        return isinstance(value, (int, float, np.number, np.bool_)) or (
            lenient and isinstance(value, Tensor) and value._data.size == 1
        )
    if base == "bool":
        return isinstance(value, (bool, np.bool_))
    if base == "str":
        return isinstance(value, str)
    if base == "ScalarType":
        return as_dtype(value) is not None
    if base == "Device":
        return is_device_like(value)
    if base == "MemoryFormat":
        return value.__class__ is memory_format
    return True  # Layout, Generator: checked by kernels


def _collapse_varargs(op, args: tuple, varargs: bool) -> bool:
    """Whether ``x.view(2, 3)`` must be read as ``x.view((2, 3))``: as in PyTorch, only
    when the int list is the method's one positional argument (``x.sum(1, True)`` is a dim
    and a keepdim)."""
    positional = op._positional
    return (
        varargs
        and len(positional) == 2
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
    kwargs = dict(_spread_out_tuple(op, kwargs))
    numbers_as_tensors = op._numbers_as_tensors
    for index, arg in enumerate(schema_args):
        if index < len(args) and not arg.kwarg_only:
            value = args[index]
        elif arg.name in kwargs:
            value = kwargs.pop(arg.name)
        elif (index == 0 or _is_tensor_self(arg)) and "input" in kwargs:
            value = kwargs.pop("input")
        elif arg.has_default:
            bound.append(arg.default_value)
            continue
        else:
            return None
        if not _accepts(arg, value, lenient, numbers_as_tensors):
            return None
        bound.append(value)
    if kwargs:
        return None
    return tuple(bound)


def _spread_out_tuple(op, kwargs: dict) -> dict:
    """``out=(values, indices)`` given to an out= overload that writes several tensors, as
    the schema's own arguments (``max``, ``max_values``); anything else as given."""
    if "out" not in kwargs or not op._schema.is_out:
        return kwargs
    writes = [a.name for a in op._schema.arguments if a.is_write and a.kwarg_only]
    out = kwargs["out"]
    if len(writes) < 2 or not isinstance(out, (tuple, list)) or len(out) != len(writes):
        return kwargs
    spread = {k: v for k, v in kwargs.items() if k != "out"}
    spread.update(zip(writes, out))
    return spread


def resolve_overload(overloads, args: tuple, kwargs: dict, varargs: bool = False):
    """The first overload whose schema accepts the call, and the bound arguments."""
    for lenient in (False, True):
        for op in overloads:
            bound = _bind(op, args, kwargs, lenient, varargs)
            if bound is not None:
                return op, bound
    # a method (varargs) is described without its self, as PyTorch's method parser does
    raise TypeError(_no_match_message(overloads, args, kwargs, method=varargs))


# ---- PyTorch's texts for calls no overload takes --------------------------------------

_PY_TYPES = {
    "Tensor": "Tensor",
    "Scalar": "Number",
    "ScalarType": "opgrad.dtype",
    "Device": "opgrad.device",
    "Layout": "opgrad.layout",
    "MemoryFormat": "opgrad.memory_format",
    "Generator": "opgrad.Generator",
}


def _py_type(t) -> str:
    if t.is_list:
        return "tuple of Tensors" if t.base == "Tensor" else f"tuple of {t.base}s"
    return _PY_TYPES.get(t.base, t.base)


def _py_default(arg) -> str:
    text = arg.default_text
    return {"True": "True", "False": "False", "None": "None", "[]": "None"}.get(text, text)


def _signatures(overloads) -> list:
    """PyTorch's Python signatures, as (op, params, has_out): an out= overload folds into
    the functional overload with the same other arguments, as a keyword-only ``out``."""

    def params(op) -> list:
        return [a for a in op._schema.arguments if not (a.is_write and a.kwarg_only)]

    def names(op) -> tuple:
        return tuple(a.name for a in params(op))

    functional = {names(op) for op in overloads if not op._schema.is_out}
    with_out = {names(op) for op in overloads if op._schema.is_out}
    return [
        (op, params(op), names(op) in with_out)
        for op in overloads
        if not (op._schema.is_out and names(op) in functional)
    ]


def _is_tensor_self(arg) -> bool:
    """Python signatures call a Tensor ``self`` "input", wherever it stands
    (``polygamma(int n, Tensor input)``)."""
    return arg.name == "self" and arg.type.base == "Tensor"


def _render(params, has_out: bool) -> str:
    parts, star = [], False
    for index, a in enumerate(params):
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        name = "input" if _is_tensor_self(a) else a.name
        text = f"{_py_type(a.type)} {name}"
        if a.has_default:
            text += f" = {_py_default(a)}"
        parts.append(text)
    if has_out:
        if not star:
            parts.append("*")
        parts.append("Tensor out = None")
    return "(" + ", ".join(parts) + ")"


def _plausible(params, has_out: bool, args: tuple, kwargs: dict) -> bool:
    """PyTorch's test of a signature for naming it alone in the error: only the number of
    arguments counts (from its required ones to all of them, out= included)."""
    count = len(args) + len(kwargs)
    required = sum(1 for a in params if not a.has_default)
    return required <= count <= len(params) + has_out


def arg_type_name(value) -> str:
    """How PyTorch's argument errors name a value's type (``Tensor``, ``opgrad.dtype``)."""
    if isinstance(value, Tensor):
        return "Tensor"
    if value.__class__ is dtypes.dtype:
        return "opgrad.dtype"
    if value.__class__ is memory_format:
        return "opgrad.memory_format"
    return py_type_name(value)


def _no_match_message(overloads, args: tuple, kwargs: dict, method: bool = False) -> str:
    name = overloads[0]._opname
    signatures = _signatures(overloads)
    if method:
        args = args[1:]
        signatures = [
            (op, params[1:] if params and params[0].name == "self" else params, has_out)
            for op, params, has_out in signatures
        ]
    plausible = [s for s in signatures if _plausible(s[1], s[2], args, kwargs)]
    if len(plausible) == 1:
        return _argument_error(*plausible[0][:2], args, kwargs)
    if len(signatures) == 1:
        return _argument_error(*signatures[0][:2], args, kwargs)
    given = ", ".join(
        [arg_type_name(a) for a in args]
        + [f"{k}={arg_type_name(v)}" for k, v in kwargs.items() if v is not None]
    )
    if kwargs and not args:
        given += ", "  # PyTorch's text has this trailing separator
    lines = "".join(f" * {_render(params, has_out)}\n" for _, params, has_out in signatures)
    return (
        f"{name}() received an invalid combination of arguments - got ({given}), but expected "
        f"one of:\n{lines}"
    )


def _argument_error(op, params, args: tuple, kwargs: dict) -> str:
    """The one signature's complaint about the call, as PyTorch words it."""
    name = op._opname
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        count = len(positional)
        plural = "argument" if count == 1 else "arguments"
        return f"{name}() takes {count} positional {plural} but {len(args)} were given"
    for key in kwargs:
        if key not in {a.name for a in params} | {"input", "out"}:
            return f"{name}() got an unexpected keyword argument '{key}'"
    for index, a in enumerate(params):
        py_name = "input" if (index == 0 and a.name == "self") or _is_tensor_self(a) else a.name
        if index < len(args) and not a.kwarg_only:
            value, where = args[index], f" (position {index + 1})"
        elif a.name in kwargs or py_name in kwargs:
            value, where = kwargs.get(a.name, kwargs.get(py_name)), ""
        elif a.has_default:
            continue
        else:
            missing = [
                f'"{("input" if (i == 0 and p.name == "self") or _is_tensor_self(p) else p.name)}"'
                for i, p in enumerate(params)
                if not p.has_default
                and i >= len(args)
                and p.name not in kwargs
                and not (_is_tensor_self(p) and "input" in kwargs)
            ]
            return f"{name}() missing {len(missing)} required positional arguments: " + ", ".join(
                missing
            )
        if not _accepts(a, value, True, op._numbers_as_tensors):
            return (
                f"{name}(): argument '{py_name}'{where} must be {_py_type(a.type)}, not "
                f"{arg_type_name(value)}"
            )
    return f"{name}() received an invalid combination of arguments"


_JIT_TYPES = {"Tensor": "Tensor", "Scalar": "number", "ScalarType": "int", "SymInt": "int"}


def _jit_type(t) -> str:
    text = _JIT_TYPES.get(t.base, t.base)
    if t.is_list:
        text = f"List[{text}]"
    return f"Optional[{text}]" if t.optional else text


def schema_mismatch(op, args: tuple, kwargs: dict) -> str:
    """Why ``op``'s schema does not take this call, as PyTorch's opgrad.ops calls say."""
    schema, base = op._schema, op._schema.base_name
    if len(args) + len(kwargs) > len(schema.arguments):
        return (
            f"aten::{base}() expected at most {len(schema.arguments)} argument(s) but received "
            f"{len(args) + len(kwargs)} argument(s). Declaration: {schema}"
        )
    for index, arg in enumerate(schema.arguments):
        if index < len(args) and not arg.kwarg_only:
            value = args[index]
        elif arg.name in kwargs:
            value = kwargs[arg.name]
        elif arg.has_default:
            continue
        else:
            return (
                f"aten::{base}() is missing value for argument '{arg.name}'. Declaration: {schema}"
            )
        if not _accepts(arg, value, True, op._numbers_as_tensors):
            target = "Tensor" if arg.type.base == "Tensor" else "number"
            return (
                f"aten::{base}() Expected a value of type '{_jit_type(arg.type)}' for argument "
                f"'{arg.name}' but instead found type '{arg_type_name(value)}'.\n"
                f"Position: {index}\n"
                f"Value: {value!r}\nDeclaration: {schema}\nCast error details: Unable to cast "
                f"{value} to {target}"
            )
    return f"aten::{base}() does not take these arguments. Declaration: {schema}"


def _tensor_for_scalar(op, bound: tuple) -> bool:
    return any(
        a.type.base == "Scalar" and isinstance(v, Tensor)
        for a, v in zip(op._schema.arguments, bound)
    )


def call_bound(op, bound: tuple, entry: Optional[Callable] = None):
    n = len(op._positional)
    kw = {a.name: v for a, v in zip(op._kwarg_only, bound[n:])}
    return (entry or op._entry)(*bound[:n], **kw)


def _named_results(op) -> Optional[type]:
    """The named tuple PyTorch's Python surface returns for ``op``'s results (the schema
    names every one of several: ``max.dim -> (Tensor values, Tensor indices)``), or None."""
    if not declares_several_returns(op):  # known without parsing the schema
        return None
    returns = op._schema.returns
    if len(returns) < 2 or not all(r.name for r in returns):
        return None
    name = op._schema.base_name + ("_out" if op._schema.is_out else "")
    return return_types.struct_seq(name, tuple(r.name for r in returns))


def surface_entry(op, name: str, qualname: str, site=None) -> Callable:
    """``public_entry``, returning the op's named tuple where PyTorch's surface does."""
    named = _named_results(op)
    if named is None:
        return public_entry(op, name, qualname, site)
    own = site is None
    site = site or Site()
    entry = public_entry(op, name, qualname, site)

    def call(*args, **kwargs):
        result = entry(*args, **kwargs)
        return named(result) if result.__class__ is tuple else result

    call.__name__ = name
    call.__qualname__ = qualname
    if own:
        site.func = call
    return call


def function(name: str, overloads: tuple) -> Callable:
    """``opgrad.<name>``: a copy of the entry for one overload, else a resolving wrapper."""
    if len(overloads) == 1:
        return surface_entry(overloads[0], name, name)
    return _overloaded(name, name, overloads, varargs=False)


def _tensor_first(overloads: tuple) -> tuple:
    """PyTorch's order for trying overloads: one that takes a Tensor goes before one that
    takes a Scalar at the same place (``clamp(x)`` reaches clamp.Tensor); otherwise the
    declared order stays."""

    def before(a, b) -> bool:
        x, y = a._schema.arguments, b._schema.arguments
        if len(x) != len(y):
            return False
        kinds = [(p.type.base, q.type.base) for p, q in zip(x, y) if p.type.base != q.type.base]
        return bool(kinds) and all(k == ("Tensor", "Scalar") for k in kinds)

    remaining, ordered = list(overloads), []
    while remaining:
        first = next(o for o in remaining if not any(before(p, o) for p in remaining))
        remaining.remove(first)
        ordered.append(first)
    return tuple(ordered)


class _SurfaceEntries(dict):
    """An overloaded name's entry for each overload, made when first called."""

    __slots__ = ("name", "qualname", "site")

    def __init__(self, name: str, qualname: str, site: Site) -> None:
        super().__init__()
        self.name, self.qualname, self.site = name, qualname, site

    def __missing__(self, op) -> Callable:
        entry = self[op] = surface_entry(op, self.name, self.qualname, self.site)
        return entry


def _overloaded(name: str, qualname: str, overloads: tuple, varargs: bool, site=None) -> Callable:
    # Calls with the same argument classes and keyword names pick the same
    # overload: remember it, and call its entry with the arguments as given.
    # The entries are copies that name this wrapper to __torch_function__ handlers.
    # Both made on first use, not at import: the order reads the overloads' schemas, and
    # most names are never called in a process (each object made now is one more that
    # every garbage collection walks).
    ordered: list = []
    cache: Dict[tuple, tuple] = {}
    own = site is None
    site = site or Site()
    entries = _SurfaceEntries(name, qualname, site)

    def call(*args, **kwargs):
        if _tls.include & TORCH_FUNCTION:  # a mode sees the call as given
            return dispatch(site, flatten_relevant(args + tuple(kwargs.values())), args, kwargs)
        classes = (args[0].__class__,) if len(args) == 1 else tuple([a.__class__ for a in args])
        # keyword values' classes count too: clamp(x, min=0) and clamp(x, min=t) differ
        key = (classes, tuple([(k, v.__class__) for k, v in kwargs.items()]) if kwargs else ())
        hit = cache.get(key)
        if hit is None:
            try:
                if not ordered:
                    ordered.append(_tensor_first(overloads))
                op, bound = resolve_overload(ordered[0], args, kwargs, varargs)
            except TypeError:
                relevant = flatten_relevant(args + tuple(kwargs.values()))
                if has_torch_function(relevant):  # tensor-likes that are not Tensors
                    return dispatch(site, relevant, args, kwargs)
                raise
            overriding = any([c not in TENSOR_CLASSES and class_overrides(c) for c in classes])
            if "input" in kwargs or _spread_out_tuple(op, kwargs) is not kwargs:
                # renamed arguments (input=, an out= tuple): call with the bound ones, uncached
                if overriding and not _tls.tf_state:
                    return dispatch(
                        site, flatten_relevant(args + tuple(kwargs.values())), args, kwargs
                    )
                return call_bound(op, bound, entries[op])
            hit = (entries[op], _collapse_varargs(op, args, varargs), overriding)
            if not _tensor_for_scalar(op, bound):  # that choice depends on the tensor's dim
                cache[key] = hit
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


def method(name: str, overloads: tuple, site=None, varargs: bool = False) -> Callable:
    """A Tensor method: as ``function``, also accepting ``x.view(2, 3)`` varargs when it
    has several overloads, or one and ``varargs`` (PyTorch's rule, which codegen applies:
    its one positional argument after self is an int list). ``site`` names the method to
    __torch_function__ handlers (default: itself)."""
    qualname = f"Tensor.{name}"
    takes_varargs = varargs
    if len(overloads) == 1 and not takes_varargs:
        return surface_entry(overloads[0], name, qualname, site)
    if len(overloads) == 1:
        own = site is None
        site = site or Site()
        entry = surface_entry(overloads[0], name, qualname, site)

        def varargs_method(self, *args, **kwargs):
            # x.view(2, 3) means x.view((2, 3)): only when every argument is an int
            if args and args[0].__class__ is int and all([a.__class__ is int for a in args]):
                args = (args,)
            return entry(self, *args, **kwargs)

        varargs_method.__name__ = name
        varargs_method.__qualname__ = qualname
        if own:
            site.func = varargs_method
        return varargs_method
    return _overloaded(name, qualname, overloads, varargs=True, site=site)
