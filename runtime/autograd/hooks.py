"""Tensor and node hooks, and the order the engine runs them in (PyTorch's):

tensor pre-hooks of an input slot, then its retains_grad hook, then the
node's pre-hooks, then the node, then its post-hooks. A leaf's tensor hooks
run on its AccumulateGrad node; its post-accumulate-grad hooks run right
after the gradient is stored.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Callable

from ..utils.hooks import RemovableHandle

#: TensorMeta.grad_dtype's default: the tensor's own dtype, whatever it becomes
SAME_AS_TENSOR = "same as the tensor"


class TensorMeta:
    """Rarely used per-tensor autograd state (PyTorch's AutogradMeta extras)."""

    __slots__ = ("hooks", "post_accumulate_hooks", "retains_grad", "retains_grad_at", "grad_dtype")

    def __init__(self) -> None:
        # the dtype a leaf's gradient must have: SAME_AS_TENSOR (its own), another, or None
        # (any), as Tensor.grad_dtype sets it
        self.grad_dtype = SAME_AS_TENSOR
        self.retains_grad_at = None  # (node, output_nr) holding the retains_grad hook
        # OrderedDicts, not dicts: handles keep weak references to them
        self.hooks: dict = OrderedDict()
        self.post_accumulate_hooks: dict = OrderedDict()
        self.retains_grad = False


def grad_numpy_dtype(tensor):
    """The numpy dtype a leaf's gradient is cast to (None: kept as it comes)."""
    meta = tensor._meta
    if meta is None or meta.grad_dtype is SAME_AS_TENSOR:
        return tensor._data.dtype
    return None if meta.grad_dtype is None else meta.grad_dtype.np


def tensor_meta(tensor) -> TensorMeta:
    meta = tensor._meta
    if meta is None:
        meta = tensor._meta = TensorMeta()
    return meta


def _node_dict(node, name: str) -> dict:
    table = node.__dict__.get(name)
    if table is None:
        table = node.__dict__[name] = OrderedDict()
    node._hooks = True
    return table


def _hook_name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


# ---- registration --------------------------------------------------------------------------


def register_tensor_hook(tensor, fn: Callable) -> RemovableHandle:
    if not tensor._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = tensor._grad_fn
    if node is None:
        hooks = tensor_meta(tensor).hooks
        _mark_accumulator(tensor)
    else:
        hooks = _node_dict(node, "_tensor_pre_hooks").setdefault(tensor._output_nr, OrderedDict())
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def register_post_accumulate_grad_hook(tensor, fn: Callable) -> RemovableHandle:
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not tensor._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    hooks = tensor_meta(tensor).post_accumulate_hooks
    _mark_accumulator(tensor)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def _mark_accumulator(tensor) -> None:
    ref = tensor._grad_acc
    node = ref() if ref is not None else None
    if node is not None:
        node._hooks = True


def retain_grad(tensor) -> None:
    if not tensor._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node = tensor._grad_fn
    if node is None:
        return  # a leaf already gets its .grad
    meta = tensor_meta(tensor)
    if meta.retains_grad:
        return
    meta.retains_grad = True
    _install_retains_grad(tensor, node)


def _install_retains_grad(tensor, node) -> None:
    meta = tensor._meta
    if meta.retains_grad_at is not None:
        old_node, old_nr = meta.retains_grad_at
        old = old_node.__dict__.get("_retains_grad_hooks")
        if old is not None:
            old.pop(old_nr, None)
    meta.retains_grad_at = (node, tensor._output_nr)
    ref = weakref.ref(tensor)

    def retain(grad) -> None:
        owner = ref()
        if owner is None or grad is None:
            return
        from ..generated import ops as aten

        if owner._grad is None:
            owner._grad = aten.clone(grad)
        else:
            owner._grad = owner._grad + grad

    _node_dict(node, "_retains_grad_hooks")[tensor._output_nr] = retain


def move_retains_grad(tensor, new_node) -> None:
    """An in-place op gave ``tensor`` a new grad_fn: its retains_grad hook follows it."""
    meta = tensor._meta
    if meta is not None and meta.retains_grad:
        _install_retains_grad(tensor, new_node)


def register_node_hook(node, fn: Callable) -> RemovableHandle:
    hooks = _node_dict(node, "_post_hooks")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def register_node_prehook(node, fn: Callable) -> RemovableHandle:
    hooks = _node_dict(node, "_pre_hooks")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


# ---- running ------------------------------------------------------------------------------


def _checked(fn, value, old) -> object:
    """A hook's replacement gradient, checked as PyTorch checks it."""
    if value is None:
        return old
    if not hasattr(value, "_data"):
        raise TypeError(f"expected Variable, but hook returned '{type(value).__name__}'")
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if value._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    if value._data.dtype != old._data.dtype:
        from ..dtypes import legacy_tensor_type

        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was "
            f"{legacy_tensor_type(old._data.dtype)} got {legacy_tensor_type(value._data.dtype)})"
        )
    return value


def _checked_tuple(fn, result, expected: int) -> tuple:
    if not isinstance(result, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != expected:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got "
            f"{len(result)}, but expected {expected})"
        )
    return tuple(result)


def tensor_pre_hooks(node) -> dict:
    """The tensor hooks of each input slot of ``node`` (a leaf's, for AccumulateGrad)."""
    variable = getattr(node, "variable", None)
    if variable is not None:
        meta = variable._meta
        return {0: meta.hooks} if meta is not None and meta.hooks else {}
    return node.__dict__.get("_tensor_pre_hooks") or {}


def run_tensor_pre_hooks(node, grads: list) -> list:
    for nr, hooks in tensor_pre_hooks(node).items():
        for fn in list(hooks.values()):
            if grads[nr] is not None:
                grads[nr] = _checked(fn, fn(grads[nr]), grads[nr])
    for nr, fn in (node.__dict__.get("_retains_grad_hooks") or {}).items():
        fn(grads[nr])
    return grads


def run_pre_hooks(node, grads: list) -> list:
    for fn in list((node.__dict__.get("_pre_hooks") or {}).values()):
        result = fn(tuple(grads))
        if result is None:
            continue
        result = _checked_tuple(fn, result, len(grads))
        grads = [_checked(fn, new, old) for new, old in zip(result, grads)]
    return grads


def run_post_hooks(node, outputs: tuple, grads: list) -> tuple:
    for fn in list((node.__dict__.get("_post_hooks") or {}).values()):
        result = fn(tuple(outputs), tuple(grads))
        if result is None:
            continue
        result = _checked_tuple(fn, result, len(outputs))
        outputs = tuple(_checked(fn, new, old) for new, old in zip(result, outputs))
    return tuple(outputs)


def run_post_accumulate_hooks(variable) -> None:
    meta = variable._meta
    if meta is not None:
        for fn in list(meta.post_accumulate_hooks.values()):
            if fn(variable) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
