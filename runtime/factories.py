"""Tensor factories: ``opgrad.tensor``, ``zeros``, ``randn`` ... as in torch."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from . import dtypes
from ._tls import state as _tls
from .generated import ops as aten
from .python_arg_parser import int_list
from .tensor import Size, Tensor, _make


def _size(size) -> tuple:
    if len(size) == 1 and not isinstance(size[0], (int, np.integer)):
        return int_list(size[0])
    return int_list(size)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


def _infer_dtype(data) -> np.dtype:
    """torch.tensor's inference: bools, then ints (int64), then the default float."""
    kinds = set()

    def visit(item):
        if isinstance(item, Tensor):
            kinds.add(item._data.dtype.kind)
        elif isinstance(item, np.ndarray):
            kinds.add(item.dtype.kind)
        elif isinstance(item, (list, tuple)):
            for sub in item:
                visit(sub)
        elif isinstance(item, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(item, (numbers.Integral,)):
            kinds.add("i")
        elif isinstance(item, numbers.Real):
            kinds.add("f")
        else:
            raise TypeError(f"Could not infer dtype of {type(item).__name__}")

    visit(data)
    if "f" in kinds:
        return dtypes.get_default_dtype().np
    if "i" in kinds or "u" in kinds:
        return np.dtype(np.int64)
    if "b" in kinds:
        return np.dtype(np.bool_)
    return dtypes.get_default_dtype().np  # empty lists


def _to_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_nested(d) for d in data]
    return data


def tensor(
    data,
    dtype: Optional[dtypes.dtype] = None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data``."""
    if isinstance(data, np.ndarray):
        np_dtype = dtypes.from_numpy_dtype(data.dtype).np if dtype is None else dtype.np
        array = np.array(data, dtype=np_dtype, copy=True)
    elif isinstance(data, Tensor):
        array = np.array(data._data, dtype=dtype.np if dtype else data._data.dtype, copy=True)
    else:
        np_dtype = _infer_dtype(data) if dtype is None else dtype.np
        try:
            array = np.array(_to_nested(data), dtype=np_dtype)
        except ValueError as exc:
            raise ValueError(f"expected sequence of equal length: {exc}") from None
    return _finish(_lift_fresh(_make(array)), requires_grad)


def _lift_fresh(t: Tensor) -> Tensor:
    """A new tensor made from Python data, as a dispatch mode sees it (aten.lift_fresh)."""
    return aten.lift_fresh(t) if _tls.mode_stack else t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.np):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype not in dtypes.FROM_NUMPY:
        dtypes.from_numpy_dtype(array.dtype)  # raises for unsupported types
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype}")
    return _lift_fresh(_make(array))


def _factory(op_entry):
    def factory(
        *size,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
        memory_format=None,
    ):
        return _finish(op_entry(_size(size), dtype=dtype), requires_grad)

    return factory


zeros = _factory(aten.zeros)
ones = _factory(aten.ones)
empty = _factory(aten.empty_memory_format)
rand = _factory(aten.rand)
randn = _factory(aten.randn)
zeros.__name__, ones.__name__, empty.__name__, rand.__name__, randn.__name__ = (
    "zeros",
    "ones",
    "empty",
    "rand",
    "randn",
)


def full(
    size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    return _finish(aten.full(int_list(size), fill_value, dtype=dtype), requires_grad)


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
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    # The overload follows the arguments given, as in PyTorch: arange(end), arange.start,
    # arange.start_step.
    if end is None:
        result = aten.arange(start, dtype=dtype)
    elif step is None:
        result = aten.arange_start(start, end, dtype=dtype)
    else:
        result = aten.arange_start_step(start, end, step, dtype=dtype)
    return _finish(result, requires_grad)


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
    result = aten.eye(n, dtype=dtype) if m is None else aten.eye_m(n, m, dtype=dtype)
    return _finish(result, requires_grad)


def _like(op_entry):
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
        return _finish(op_entry(input, dtype=dtype), requires_grad)

    return like


zeros_like = _like(aten.zeros_like)
ones_like = _like(aten.ones_like)
empty_like = _like(aten.empty_like)


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
    return _finish(aten.full_like(input, fill_value, dtype=dtype), requires_grad)


rand_like = _like(aten.rand_like)
randn_like = _like(aten.randn_like)
rand_like.__name__, randn_like.__name__ = "rand_like", "randn_like"


def _route_through_torch_function() -> None:
    """The public factories reach TorchFunctionModes (and, for ``*_like``, subclasses)."""
    from .overrides import overridable

    names = (
        "tensor as_tensor from_numpy zeros ones empty rand randn full arange eye "
        "zeros_like ones_like empty_like full_like rand_like randn_like"
    ).split()
    module = globals()
    for name in names:
        module[name] = overridable(module[name], name=name, qualname=name)


_route_through_torch_function()
