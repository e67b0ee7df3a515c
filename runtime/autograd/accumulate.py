"""AccumulateGrad's rule for storing a gradient into ``leaf.grad``."""

from __future__ import annotations

import threading
from sys import getrefcount

import numpy as np

from .._tls import state as _tls
from ..dispatch_keys import PYTHON
from ..generated import ops as aten
from ..device import device
from ..layouts import strided
from ..memory_formats import contiguous_format
from ..numpy_kernels import memory_order
from ..tensor import TENSOR_CLASSES, _make, version_counter

_CPU = device("cpu")


def references(items: list) -> int:
    """How many references ``items[0]`` has, counted as a function that holds ``items``
    sees them (AccumulateGrad.apply asks the same way)."""
    return getrefcount(items[0])


#: The count when the list is the gradient's only holder, measured once, since
#: interpreters differ in the references a call adds. More means someone else holds
#: the gradient (a hook that kept it, a ctx attribute, a saved tensor, a global, another
#: edge's buffer, the root): PyTorch's use_count test for stealing it.
ONLY_THE_LIST = references([object()])


def _obeys_layout_contract(grad, variable) -> bool:
    """PyTorch's gradient layout contract: strides as the leaf's when the leaf is dense
    (no stride 0 even in a size-1 dim), else row-major contiguous. A wrapper
    subclass's array is metadata only: its layout is the contiguous one it declares."""
    if grad._keys & PYTHON and grad.__class__ not in TENSOR_CLASSES:
        return True
    g = grad._data
    if not g.flags.writeable:
        return False
    v = variable._data
    if not (v.flags.c_contiguous or v.flags.f_contiguous or memory_order(v) is not None):
        return g.flags.c_contiguous
    if g.strides == v.strides:
        return 0 not in g.strides
    for size, g_stride, v_stride in zip(g.shape, g.strides, v.strides):
        if (g_stride != v_stride) if size != 1 else (g_stride == 0):
            return False
    return True


def _copy_for(variable, grad):
    """PyTorch's clone_obey_contract: a copy laid out like the leaf when the leaf is dense
    (made with new_empty_strided + copy_, what a mode sees), else a contiguous clone."""
    data = variable._data
    wrapper = variable._keys & PYTHON and variable.__class__ not in TENSOR_CLASSES
    unobserved = not _tls.grad_enabled and not (grad._keys | _tls.include) & PYTHON
    if unobserved and data.flags.c_contiguous and not wrapper:
        # The common case, and nobody observes the calls nor records history: a row-major
        # copy is the one new_empty_strided + copy_ would make.
        return _make(np.array(grad._data, order="C"))
    if not wrapper and not (
        data.flags.c_contiguous or data.flags.f_contiguous or memory_order(data) is not None
    ):
        return aten.clone(grad, memory_format=contiguous_format)
    if unobserved and not wrapper:
        # copied straight into an array laid out as the (dense) leaf's
        out = np.empty_like(data, dtype=grad._data.dtype)
        out[...] = grad._data
        return _make(out)
    if wrapper:
        strides = _contiguous_strides(data.shape)
    else:
        strides = tuple(s // data.itemsize for s in data.strides)
    # PyTorch's new_empty_strided call names the gradient's dtype (the leaf's, unless its
    # grad_dtype says otherwise), layout and device
    empty = aten.new_empty_strided(
        grad, data.shape, strides, dtype=grad.dtype, layout=strided, device=_CPU
    )
    return aten.copy_(empty, grad)


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
    if grad._base is None and not grad._rg and grad._meta is None:
        # A gradient nobody else holds, with no history, hooks or base: its detached
        # alias would be indistinguishable from itself.
        return grad
    alias = _make(grad._data)
    vc = grad._vc
    alias._vc = vc if vc is not None else version_counter(grad)
    return alias


_lock = threading.Lock()


def accumulate_grad(variable, new_grad, stealable: bool) -> None:
    """Store ``new_grad`` into ``variable.grad`` (adding to a gradient already there).
    ``stealable``: nobody but the engine holds ``new_grad``, so it may become the
    stored gradient without a copy."""
    # Backward may run in several threads on graphs that share leaves.
    with _lock:
        grad = variable._grad
        if grad is None:
            if stealable and not _tls.grad_enabled:
                g, v = new_grad._data, variable._data
                if (
                    g.strides == v.strides
                    and new_grad.__class__ in TENSOR_CLASSES
                    and v.flags.c_contiguous
                    and g.flags.writeable
                    and 0 not in g.strides
                ):
                    # _keeps_layout's common case, decided in this frame, and _detach's:
                    # a plain gradient without base or history becomes leaf.grad itself.
                    if (
                        new_grad._base is None
                        and not new_grad._rg
                        and new_grad._meta is None
                        and not (new_grad._keys | _tls.include) & PYTHON
                    ):
                        variable._grad = new_grad
                    else:
                        variable._grad = _detach(new_grad)
                elif _keeps_layout(new_grad, variable):
                    variable._grad = _detach(new_grad)
                else:
                    variable._grad = _copy_for(variable, new_grad)
            else:
                variable._grad = _copy_for(variable, new_grad)
        elif _tls.grad_enabled:
            # create_graph: keep the history of the sum.
            variable._grad = aten.add_Tensor(grad, new_grad)
        else:
            aten.add__Tensor(grad, new_grad)


def _keeps_layout(grad, variable) -> bool:
    """_obeys_layout_contract, with its common case (a writable gradient strided as a
    row-major leaf, no stride 0) decided without a call."""
    g, v = grad._data, variable._data
    if g.strides == v.strides and v.flags.c_contiguous and g.flags.writeable:
        if 0 not in g.strides and grad.__class__ in TENSOR_CLASSES:
            return True
    return _obeys_layout_contract(grad, variable)
