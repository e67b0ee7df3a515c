"""Tensor factories: ``opgrad.tensor``, ``zeros``, ``randn`` ... as in torch."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from . import dtypes
from . import numpy_kernels as k
from ._tls import state as _tls
from .generated import ops as aten
from .device import check_target_device
from .numpy_interop import checked_array
from .python_arg_parser import (
    PY_NUMBERS,
    factory_argument_error,
    int_list,
    memory_format_arg,
    py_type_name,
    python_device,
    python_dtype,
)
from .autograd.inplace import bump_version
from .cpu_support import copy_into
from .scalar_fit import check_array_fits, check_integer_data
from .tensor import Size, Tensor, _make
from .user_warnings import warn_user


def _is_size_int(value) -> bool:
    """An int PyTorch takes in a size: an int (not a bool) or a 0-dim tensor."""
    if isinstance(value, Tensor):
        return value._data.ndim == 0
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def _first_non_int(values):
    """(position, value) of the first value that is no size int, else None."""
    return next(((i, v) for i, v in enumerate(values) if not _is_size_int(v)), None)


def _size_sequence(name: str, size) -> tuple:
    """``size`` given as one sequence (PyTorch's "tuple of ints")."""
    bad = _first_non_int(size)
    if bad is not None:
        raise TypeError(
            f"{name}(): argument 'size' (position 1) must be tuple of ints, but found element "
            f"of type {type(bad[1]).__name__} at pos {bad[0]}"
        )
    return int_list(size)


def _size(name: str, args: tuple, size) -> tuple:
    """A factory's size, given as ``zeros(2, 3)``, ``zeros((2, 3))`` or ``size=``."""
    if size is not None:
        args = (size,) + args
    if not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(args) == 1:
        (only,) = args
        if _is_size_int(only):
            return int_list(only)
        if not isinstance(only, (list, tuple, Size)):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type(only).__name__}"
            )
        args = tuple(only)
    elif isinstance(args[0], (list, tuple, Size)):
        raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
    bad = _first_non_int(args)
    if bad is not None:
        raise TypeError(
            f"{name}(): argument 'size' failed to unpack the object at pos {bad[0] + 1} with "
            f'error "type must be tuple of ints,but got {type(bad[1]).__name__}"'
        )
    return int_list(args)


_NO_VALUE = object()


def _checked_options(
    function: str, args: tuple, dtype, device, kernel: str = "empty.memory_format"
):
    """A factory's dtype (as an opgrad dtype) after checking it and the device, refused
    with PyTorch's text naming the call (what was passed) when the factory takes neither."""
    call = (args, {"dtype": dtype, "device": device})
    dtype = python_dtype(function, dtype, call)
    python_device(function, device, call, kernel)
    return dtype


def _is_number(value) -> bool:
    """What PyTorch takes for a Number argument: a number or a one-element tensor."""
    if value.__class__ in PY_NUMBERS:
        return True
    if isinstance(value, Tensor):
        return value._data.size == 1
    return isinstance(value, (numbers.Number, np.number, np.bool_))


def _check_number(function: str, name: str, position: int, value) -> None:
    if not _is_number(value):
        raise TypeError(
            f"{function}(): argument '{name}' (position {position}) must be Number, not "
            f"{py_type_name(value)}"
        )


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


def _out_dtype(name: str, out, dtype):
    """The dtype a factory writes into ``out``: out's own, which an explicit ``dtype`` must
    equal; ``out`` must not require grad while grad mode is on (nothing would record it)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {py_type_name(out)}")
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(
            f"dtype {dtypes.scalar_type_name(dtype.np)} does not match dtype of out parameter "
            f"({dtypes.scalar_type_name(out._data.dtype)})"
        )
    if out.requires_grad and name == "empty":  # empty only resizes, which is refused
        raise RuntimeError("cannot resize variables that require grad")
    if out.requires_grad and _tls.grad_enabled:
        raise RuntimeError(
            f"aten::{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    return out.dtype


def _into_out(out: Tensor, result: Tensor, requires_grad: bool, fill: bool = True) -> Tensor:
    """``result`` written into ``out``, which is first resized (without a warning, as
    PyTorch's factories resize) when its shape differs; ``empty`` only resizes."""
    resized = out._data.shape != result._data.shape
    if resized:
        out._data = np.empty(result._data.shape, out._data.dtype)
    if fill:
        copy_into(out, result._data)
    if fill or resized:
        bump_version(out)
    if requires_grad or out.requires_grad:  # the flag is set either way, as PyTorch's binding
        out._set_requires_grad(requires_grad, "Only Tensors of floating point and complex dtype")
    return out


def _scalar_dtype(item) -> dtypes.dtype:
    """The dtype torch.tensor gives one leaf of its data."""
    if isinstance(item, Tensor):
        return dtypes.from_numpy_dtype(item._data.dtype)
    if isinstance(item, (np.ndarray, np.generic)):  # numpy values keep their dtype
        return dtypes.from_numpy_dtype(item.dtype)
    if isinstance(item, bool):
        return dtypes.bool
    if isinstance(item, numbers.Integral):
        return dtypes.int64
    if isinstance(item, numbers.Real):
        return dtypes.get_default_dtype()
    if isinstance(item, str):
        raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def _is_sequence(item) -> bool:
    return isinstance(item, (list, tuple))


def _sizes(data) -> list:
    """Sizes read along the first elements, as torch.tensor reads them."""
    sizes = []
    while _is_sequence(data):
        sizes.append(len(data))
        if not data:
            break
        data = data[0]
        if isinstance(data, str):  # a string is a sequence too, and it has no length to take
            raise ValueError("too many dimensions 'str'")
    return sizes


def _infer_dtype(data, sizes: list, dim: int = 0) -> Optional[dtypes.dtype]:
    """The promoted dtype of every leaf, checking that the data is rectangular (None for
    no leaves)."""
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if dim == len(sizes):
        if _is_sequence(data):
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
        return _scalar_dtype(data)
    if not _is_sequence(data):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(data)})")
    result = None
    for item in data:
        found = _infer_dtype(item, sizes, dim + 1)
        if found is not None:
            result = found if result is None else dtypes.promote_types(result, found)
    return result


def _to_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_nested(d) for d in data]
    return data


def _array_from_data(data, np_dtype: np.dtype) -> np.ndarray:
    """The values of nested Python data as an array of ``np_dtype``. Float and bool tensors
    take any number (a float overflows to inf); integer tensors refuse what overflows, as
    torch.tensor does, checked on the array the data makes (no loop over the values).
    Values are converted as PyTorch stores them: floats through float64 (float16 then
    rounds through float32, and numpy warns of no overflow), negative ints wrap into an
    unsigned dtype, floats truncate toward zero."""
    nested = _to_nested(data)
    if np_dtype.kind == "f":
        return k.cast(np.array(nested, dtype=np.float64), np_dtype)
    if np_dtype.kind not in "iu":
        return np.array(nested, dtype=np_dtype)
    check_integer_data(data)
    values = np.array(nested)
    check_array_fits(values, np_dtype)
    return k.cast(values, np_dtype)


def tensor(
    data,
    dtype: Optional[dtypes.dtype] = None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data``."""
    dtype = python_dtype("tensor", dtype)
    python_device("tensor", device, kernel=None)
    if device is not None:
        check_target_device(device)
    if isinstance(data, np.ndarray):
        # as PyTorch: a tensor sharing the array's memory, then a copy of it
        shared = _lift_fresh(_make(checked_array(data, warn_if_not_writable=False)))
        return _finish(aten._to_copy(shared, dtype=dtype), requires_grad)
    if isinstance(data, Tensor):
        array = np.array(k.cast(data._data, dtype.np if dtype else data._data.dtype), copy=True)
    else:
        inferred = _infer_dtype(data, _sizes(data))
        if dtype is None:
            dtype = inferred or dtypes.get_default_dtype()
        array = _array_from_data(data, dtype.np)
    return _finish(_lift_fresh(_make(array)), requires_grad)


def _lift_fresh(t: Tensor) -> Tensor:
    """A new tensor made from Python data, as a dispatch mode sees it (aten.lift_fresh)."""
    return aten.lift_fresh(t) if _tls.mode_stack else t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    dtype = python_dtype("as_tensor", dtype)
    python_device("as_tensor", device, kernel=None)
    if device is not None:
        check_target_device(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    if isinstance(data, np.ndarray):
        shared = from_numpy(data)
        if dtype is None or shared._data.dtype is dtype.np:
            return shared
        return aten._to_copy(shared, dtype=dtype)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {py_type_name(array)})")
    return _lift_fresh(_make(checked_array(array, warn_if_not_writable=True)))


def _factory(op_entry, name: str):
    def factory(
        *args,
        size=None,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
    ):
        shape = _size(name, args, size)
        if dtype is not None or device is not None:
            dtype = _checked_options(name, args, dtype, device)
        if out is not None:
            dtype = _out_dtype(name, out, dtype)
            return _into_out(out, op_entry(shape, dtype=dtype, device=device), requires_grad)
        return _finish(op_entry(shape, dtype=dtype, device=device), requires_grad)

    factory.__name__ = factory.__qualname__ = name  # as Python's argument errors name it
    return factory


def empty(
    *args,
    size=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
) -> Tensor:
    shape = _size("empty", args, size)
    if dtype is not None or device is not None:
        dtype = _checked_options("empty", args, dtype, device)
    if memory_format is not None:
        memory_format_arg("empty", memory_format)
    if out is not None:
        dtype = _out_dtype("empty", out, dtype)
    result = aten.empty_memory_format(
        shape, dtype=dtype, device=device, memory_format=memory_format
    )
    if out is not None:
        return _into_out(out, result, requires_grad, fill=False)
    return _finish(result, requires_grad)


zeros = _factory(aten.zeros, "zeros")
ones = _factory(aten.ones, "ones")
rand = _factory(aten.rand, "rand")
randn = _factory(aten.randn, "randn")


def full(
    size,
    fill_value,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    if not isinstance(size, (list, tuple, Size)):
        raise TypeError(
            f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}"
        )
    size = _size_sequence("full", size)
    _check_number("full", "fill_value", 2, fill_value)
    if dtype is not None or device is not None:
        dtype = python_dtype("full", dtype)
        python_device("full", device)
    if out is not None:
        dtype = _out_dtype("full", out, dtype)
        return _into_out(out, aten.full(size, fill_value, dtype=dtype), requires_grad)
    return _finish(aten.full(size, fill_value, dtype=dtype, device=device), requires_grad)


def scalar_tensor(
    s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    _check_number("scalar_tensor", "s", 1, s)
    if dtype is not None or device is not None:
        dtype = python_dtype("scalar_tensor", dtype)
        python_device("scalar_tensor", device)
    return _finish(aten.scalar_tensor(s, dtype=dtype, device=device), requires_grad)


def arange(
    start,
    end=None,
    step=None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    bounds = tuple(v for v in (start, end, step) if v is not None)
    bad = next((v for v in bounds if not _is_number(v)), _NO_VALUE)
    if bad is not _NO_VALUE:
        if len(bounds) == 1:
            _check_number("arange", "end", 1, bad)
        raise factory_argument_error(
            "arange", "end", "Number", bad, (bounds, {"dtype": dtype, "device": device})
        )
    if dtype is not None or device is not None:
        dtype = _checked_options("arange", bounds, dtype, device)
    if out is not None:
        dtype = _out_dtype("arange", out, dtype)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    # The overload follows the arguments given, as in PyTorch: arange(end), arange.start,
    # arange.start_step.
    if end is None:
        result = aten.arange(start, dtype=dtype, device=device)
    elif step is None:
        result = aten.arange_start(start, end, dtype=dtype, device=device)
    else:
        result = aten.arange_start_step(start, end, step, dtype=dtype, device=device)
    if out is None:
        return _finish(result, requires_grad)
    if out._data.size != result._data.size:
        warn_user(
            f"The number of elements in the out tensor of shape {list(out._data.shape)} is "
            f"{out._data.size} which does not match the computed number of elements "
            f"{result._data.size}. Note that this may occur as a result of rounding error. The "
            f"out tensor will be resized to a tensor of shape ({result._data.size},)."
        )
    return _into_out(out, result, requires_grad)


def eye(
    n,
    m=None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    if dtype is not None or device is not None:
        dtype = _checked_options("eye", (n,) if m is None else (n, m), dtype, device)
    if out is not None:
        dtype = _out_dtype("eye", out, dtype)
    if m is None:
        result = aten.eye(n, dtype=dtype, device=device)
    else:
        result = aten.eye_m(n, m, dtype=dtype, device=device)
    return _finish(result, requires_grad) if out is None else _into_out(out, result, requires_grad)


def _like(op_entry, name: str):
    def like(
        input,
        *,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        memory_format=None,
        pin_memory=None,
    ):
        if not isinstance(input, Tensor):
            raise factory_argument_error(
                name, "input", "Tensor", input, ((input,), {"dtype": dtype, "device": device})
            )
        if dtype is not None or device is not None:
            dtype = _checked_options(name, (input,), dtype, device, "empty_strided")
        if memory_format is not None:
            memory_format_arg(name, memory_format)
        result = op_entry(input, dtype=dtype, device=device, memory_format=memory_format)
        return _finish(result, requires_grad)

    return like


zeros_like = _like(aten.zeros_like, "zeros_like")
ones_like = _like(aten.ones_like, "ones_like")
empty_like = _like(aten.empty_like, "empty_like")


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=None,
) -> Tensor:
    if not isinstance(input, Tensor):
        raise factory_argument_error("full_like", "input", "Tensor", input, None)
    _check_number("full_like", "fill_value", 2, fill_value)
    if dtype is not None or device is not None:
        dtype = python_dtype("full_like", dtype)
        python_device("full_like", device, kernel="empty_strided")
    if memory_format is not None:
        memory_format_arg("full_like", memory_format)
    result = aten.full_like(
        input, fill_value, dtype=dtype, device=device, memory_format=memory_format
    )
    return _finish(result, requires_grad)


rand_like = _like(aten.rand_like, "rand_like")
randn_like = _like(aten.randn_like, "randn_like")
rand_like.__name__, randn_like.__name__ = "rand_like", "randn_like"


def _route_through_torch_function() -> None:
    """The public factories reach TorchFunctionModes (and, for ``*_like``, subclasses)."""
    from .overrides import overridable

    names = (
        "tensor as_tensor from_numpy zeros ones empty rand randn full scalar_tensor arange eye "
        "zeros_like ones_like empty_like full_like rand_like randn_like"
    ).split()
    module = globals()
    for name in names:
        module[name] = overridable(module[name], name=name, qualname=name)


_route_through_torch_function()
