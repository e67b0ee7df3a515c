"""``opgrad.autograd.graph``: the graph API (Node and friends)."""

from __future__ import annotations

import threading
from typing import Any, Callable, NamedTuple, Optional, Sequence

from .node import Node, gradient_edge

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
]


class GradientEdge(NamedTuple):
    """An edge of the backward graph: gradients flowing into ``node`` at ``output_nr``."""

    node: Node
    output_nr: int
    ownership_token: Optional[Any] = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient is computed (its grad_fn or AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (shared with its views), as an in-place op would."""
    from ..tensor import Tensor, version_counter

    tensors = [tensor] if isinstance(tensor, Tensor) else list(tensor)
    for t in tensors:
        if not t.is_inference():
            version_counter(t)[0] += 1


class _MultiHandle:
    def __init__(self, handles) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *, mode: str = "all"):
    """Call ``fn`` once per backward when the gradients of ``tensors`` are computed.

    ``mode="all"``: ``fn(grads)`` after every tensor that takes part in this
    backward got its gradient (None for the others). ``mode="any"``: ``fn(grad)``
    with the first gradient computed.
    """
    from .engine import current_graph_task

    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    # per running graph task: the gradients seen so far, and whether fn ran
    state: dict = {}

    if mode == "any":

        def make_hook(index):
            def hook(grad):
                task = current_graph_task()
                with lock:
                    if state.get(task.id):
                        return
                    state[task.id] = True
                    _forget_when_done(task, state)
                fn(grad)

            return hook

    else:

        def make_hook(index):
            def hook(grad):
                task = current_graph_task()
                with lock:
                    entry = state.get(task.id)
                    if entry is None:
                        expected = sum(
                            1
                            for t in tensors
                            if t.requires_grad and task.will_execute(gradient_edge(t)[0])
                        )
                        entry = state[task.id] = [[None] * len(tensors), expected]
                        _forget_when_done(task, state)
                    entry[0][index] = grad
                    entry[1] -= 1
                    done = entry[1] == 0
                if done:
                    fn(tuple(entry[0]))

            return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


def _forget_when_done(task, state: dict) -> None:
    key = task.id
    task.callbacks.append(lambda: state.pop(key, None))


class saved_tensors_hooks:
    """Pack every tensor saved for backward inside the block with ``pack_hook``; unpack
    it with ``unpack_hook`` when backward (or ``_saved_*``) needs it."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        from .._tls import state

        if state.saved_hooks_disabled is not None:
            raise RuntimeError(state.saved_hooks_disabled)
        state.plain = False
        state.saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        from .._tls import refresh_plain, state

        state.saved_hooks.pop()
        refresh_plain()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in host memory (a copy), and bring them back on unpack."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        from ..tensor import _make

        def pack(tensor):
            return _make(tensor._data.copy())

        def unpack(packed):
            return packed

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside the block, using saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        from .._tls import state

        self.prev = state.saved_hooks_disabled
        if state.saved_hooks:
            raise RuntimeError(self.error_message)
        state.saved_hooks_disabled = self.error_message

    def __exit__(self, *exc: Any) -> None:
        from .._tls import state

        state.saved_hooks_disabled = self.prev


# ---- allow_mutation_on_saved_tensors -------------------------------------------------------

_mutation_allowed = False
_OUTSIDE_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


class _Handle:
    """What a saved tensor is packed into: the key of its original or its clone."""


def _storage_id(tensor) -> int:
    from ..numpy_kernels import memory_owner

    return memory_owner(tensor._data).__array_interface__["data"][0]


def _tensor_id(tensor) -> tuple:
    return (id(tensor), tensor._data.__array_interface__["data"][0], tensor._version)


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors block."""

    def __init__(self) -> None:
        import weakref
        from collections import defaultdict

        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):
    """Saved tensors are packed into handles; unpack returns the clone if one was made."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack(tensor):
            tid, sid = _tensor_id(tensor), _storage_id(tensor)
            ctx.sid_to_tid[sid].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack(handle):
            if not _mutation_allowed:
                raise AssertionError(_OUTSIDE_CONTEXT)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(_OUTSIDE_CONTEXT)
            return ctx.original[handle]

        super().__init__(pack, unpack)


def _clone_before_mutate_mode(ctx: _AllowMutationOnSavedContext):
    from ..utils._python_dispatch import TorchDispatchMode

    class CloneArgBeforeMutate(TorchDispatchMode):
        """Before an op writes a tensor whose memory holds a saved tensor, clone that one."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            for index, arg in enumerate(func._schema.arguments):
                if arg.is_write:
                    value = kwargs.get(arg.name) if arg.kwarg_only else args[index]
                    if value is not None:
                        self._maybe_clone(value)
            return func(*args, **kwargs)

        @staticmethod
        def _maybe_clone(tensor) -> None:
            for tid in ctx.sid_to_tid.get(_storage_id(tensor), ()):
                handle = ctx.tid_to_weakhandle.get(tid)
                if handle is None or handle in ctx.cloned:
                    continue  # freed by a backward already, or cloned before
                ctx.cloned[handle] = ctx.original[handle].clone()
                del ctx.original[handle]

    return CloneArgBeforeMutate()


class allow_mutation_on_saved_tensors:
    """Inside the block, mutating a tensor saved for backward first clones it, so backward
    still sees the saved value. Run forward and backward inside the same block."""

    def __enter__(self) -> _AllowMutationOnSavedContext:
        global _mutation_allowed
        if _mutation_allowed:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self.ctx = _AllowMutationOnSavedContext()
        self.hooks = _swap_with_cloned(self.ctx)
        self.mode = _clone_before_mutate_mode(self.ctx)
        self.hooks.__enter__()
        self.mode.__enter__()
        _mutation_allowed = True
        return self.ctx

    def __exit__(self, *exc: Any) -> None:
        global _mutation_allowed
        try:
            self.mode.__exit__(*exc)
            self.hooks.__exit__(*exc)
        finally:
            self.ctx.clear()
            _mutation_allowed = False
