"""AccumulateGrad's rule for storing a gradient into ``leaf.grad``."""

from __future__ import annotations

import threading

from .._tls import state as _tls
from ..dispatch_keys import PYTHON
from ..generated import ops as aten
from ..tensor import TENSOR_CLASSES, _make, version_counter


def _can_steal(grad) -> bool:
    # PyTorch stores an incoming gradient without a copy when nobody else holds
    # it and its layout is dense: here, when the engine saw it go to this leaf
    # only (not the caller's own gradient, not also sent elsewhere) and it is
    # no broadcast view. A wrapper subclass's array is metadata only: its
    # layout is the contiguous one it declares.
    if id(grad) in _tls.shared_grads:
        return False
    if grad._keys & PYTHON and grad.__class__ not in TENSOR_CLASSES:
        return True
    data = grad._data
    return data.flags.c_contiguous and data.flags.writeable


def _copy_for(variable, grad):
    """PyTorch's clone_obey_contract: a copy laid out like the (dense) leaf, made with
    new_empty_strided + copy_ (what a mode sees), else a contiguous clone."""
    if not _tls.grad_enabled and not (grad._keys | _tls.include) & PYTHON:
        # Nobody observes the calls and no history is recorded: one clone does.
        return aten.clone(grad)
    data = variable._data
    if variable._keys & PYTHON and variable.__class__ not in TENSOR_CLASSES:
        strides = _contiguous_strides(data.shape)
    elif data.flags.c_contiguous or data.flags.f_contiguous:
        strides = tuple(s // data.itemsize for s in data.strides)
    else:
        return aten.clone(grad)
    # the variable's dtype passed explicitly, as PyTorch passes its options
    return aten.copy_(aten.new_empty_strided(grad, data.shape, strides, dtype=variable.dtype), grad)


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _detach(grad):
    # Without a Python key in play nobody can observe the aten.detach call,
    # so make its result directly.
    if (grad._keys | _tls.include) & PYTHON:
        return aten.detach(grad)
    alias = _make(grad._data)
    alias._vc = version_counter(grad)
    return alias


_lock = threading.Lock()


def accumulate_grad(variable, new_grad) -> None:
    # Backward may run in several threads on graphs that share leaves.
    with _lock:
        _accumulate(variable, new_grad)


def _accumulate(variable, new_grad) -> None:
    grad = variable._grad
    if grad is None:
        if not _tls.grad_enabled and _can_steal(new_grad):
            variable._grad = _detach(new_grad)
        else:
            variable._grad = _copy_for(variable, new_grad)
    elif _tls.grad_enabled:
        # create_graph: keep the history of the sum.
        variable._grad = aten.add_Tensor(grad, new_grad)
    else:
        aten.add__Tensor(grad, new_grad)
