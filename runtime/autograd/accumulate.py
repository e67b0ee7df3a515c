"""AccumulateGrad's rule for storing a gradient into ``leaf.grad``."""

from __future__ import annotations

import threading

from .._tls import state as _tls
from ..dispatch_keys import PYTHON
from ..generated import ops as aten
from ..tensor import _make, version_counter


def _can_steal(grad) -> bool:
    # PyTorch stores an incoming gradient without a copy when nobody else holds
    # it and its layout is dense: here, when the engine saw it go to this leaf
    # only (not the caller's own gradient, not also sent elsewhere) and it is
    # no broadcast view.
    data = grad._data
    return data.flags.c_contiguous and data.flags.writeable and id(grad) not in _tls.shared_grads


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
            variable._grad = aten.clone(new_grad)
    elif _tls.grad_enabled:
        # create_graph: keep the history of the sum.
        variable._grad = aten.add_Tensor(grad, new_grad)
    else:
        aten.add__Tensor(grad, new_grad)
