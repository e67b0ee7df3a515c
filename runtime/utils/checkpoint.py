"""``opgrad.utils.checkpoint``: activation checkpointing (trade compute for memory).

A checkpointed function keeps its inputs, not the tensors its ops save for
backward; backward recomputes those by running the function again. Two
implementations, chosen by ``use_reentrant`` as in PyTorch:

* reentrant (``use_reentrant=True``): the function runs under no_grad inside
  an autograd.Function, whose backward reruns it with grad on and calls
  ``autograd.backward`` on the result (a nested, "reentrant" backward). Works
  only with ``.backward()`` without ``inputs``.
* non-reentrant (``use_reentrant=False``): the function runs with grad on
  under saved-tensor hooks that keep a small placeholder instead of each saved
  tensor. The first unpack in a backward reruns the function under other hooks
  that collect the recomputed tensors (stopping as soon as the last needed one
  exists), then hands them out one by one. Checks that the recomputation
  saved the same number of tensors with the same metadata.

PyTorch's device (CUDA) state and autocast handling have no counterpart here;
the RNG state that is saved and restored is opgrad's own generator.
"""

from __future__ import annotations

import contextlib
import os
import traceback
import uuid
import warnings
import weakref
from collections import defaultdict
from typing import Any, Callable, ContextManager, Dict, Iterable, List, Optional, Tuple

from .. import random as _random
from .._tls import state as _tls
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.saved_variable import SavedVariable
from ..tensor import Tensor

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "set_checkpoint_debug_enabled",
    "GraphExecGroup",
]

_DEFAULT_DETERMINISM_MODE = "default"


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


# ---- global switches -----------------------------------------------------------------------

_checkpoint_debug_enabled: Optional[bool] = None
_enable_checkpoint_early_stop: Optional[bool] = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: Optional[bool]):
    """Inside the block, ``checkpoint``'s ``debug`` flag is overridden by ``enabled``
    (None: each call's own flag counts)."""
    global _checkpoint_debug_enabled
    previous = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = previous


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints made inside the block stop recomputing as soon as
    every needed tensor is back (the default). Only the forward needs to be inside."""
    global _enable_checkpoint_early_stop
    previous = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = previous


# ---- small helpers (public in PyTorch) -----------------------------------------------------


def detach_variable(inputs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Tensors detached (keeping their requires_grad flag); other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            detached = inp.detach()
            detached.requires_grad = inp.requires_grad
            inp = detached
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


def noop_context_fn() -> Tuple[ContextManager, ContextManager]:
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def _rng_state(state):
    """Run the block from the generator state ``state`` (None: as it is), and give the
    generator back its surrounding state afterwards."""
    if state is None:
        yield
        return
    outside = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(outside)


def _is_checkpoint_valid() -> bool:
    """False while a backward that was given ``inputs`` (autograd.grad, backward(inputs=))
    runs: it would not run the nested backward's leaves' accumulation that reentrant
    checkpointing relies on."""
    return all(task.needed is None for task in _tls.graph_tasks)


# ---- reentrant -----------------------------------------------------------------------------


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward recomputes and backprops."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        # Tensors go through save_for_backward (version checks); the rest stays in ctx.
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[index] = tensor
        with _rng_state(ctx.rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (out, grad)
            for out, grad in zip(outputs, grad_outputs)
            if isinstance(out, Tensor) and out.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None) + grads


# ---- non-reentrant: the frame of one checkpointed call -------------------------------------


class _Handle:
    """The key under which one recomputed tensor waits to be unpacked."""


class _Holder:
    """What the forward packs instead of a saved tensor: per backward (graph task id),
    the handle of its recomputed value (None once unpacked). Dies with the
    SavedVariable, which drops the recomputed value too."""

    def __init__(self) -> None:
        self.handles: Dict[Any, Optional[_Handle]] = {}


class _StopRecomputation(Exception):
    """Raised by the recomputation hook once every needed tensor is back (early stop)."""


def _internal_assert(condition: bool) -> None:
    if not condition:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. Please report this "
            "bug by filing an issue to PyTorch."
        )


_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n"  # PyTorch's non-breaking hyphen
)


class _CheckpointFrame:
    """One non-reentrant checkpointed call: its inputs, a way to rerun it, and what each
    recomputation (per graph task) produced."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args: List[Any] = []
        # one weak reference per tensor saved in the forward, in order
        self.weak_holders: List[weakref.ref] = []
        self.x_metadatas: List[Any] = []
        # per graph task: handle -> recomputed tensor; entries go with their handles
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: Dict[Any, int] = defaultdict(int)
        self.is_recomputed: Dict[Any, bool] = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args) -> None:
        # As saved tensors, so that an enclosing checkpoint manages them (nesting).
        self.saved_args = [SavedVariable(a, False) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedVariable) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_DEBUG_TIP}"
            )
        mismatches = []
        for index, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue  # freed by an earlier backward: nothing to compare
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed = self.recomputed[gid][holder.handles[gid]]
            saved_meta, new_meta = self.x_metadatas[index], self.metadata_fn(recomputed)
            if saved_meta != new_meta:
                mismatches.append((index, saved_meta, new_meta))
        if mismatches:
            listing = "".join(
                f"tensor at position {index}:\nsaved metadata: {saved}\n"
                f"recomputed metadata: {new}\n"
                for index, saved, new in mismatches
            )
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{listing}.\n{_DEBUG_TIP}"
            )


def _metadata(x: Tensor) -> Dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_DETERMINISM_CHECKS: Dict[str, Callable[[Tensor], Any]] = {
    _DEFAULT_DETERMINISM_MODE: _metadata,
    "none": lambda _: None,
}


class GraphExecGroup:
    """Backward calls inside one group recompute each checkpointed region at most once
    (they must not need the same saved activation)."""

    _current: Optional["GraphExecGroup"] = None

    def __enter__(self) -> "GraphExecGroup":
        if GraphExecGroup._current is not None:
            raise RuntimeError(
                "GraphExecGroup contexts cannot be nested. Already inside group "
                f"{GraphExecGroup._current}"
            )
        GraphExecGroup._current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> Optional["GraphExecGroup"]:
        return cls._current


def _current_backward_id():
    """Which backward an unpack belongs to: the exec group, else the running graph task,
    else (an unpack outside backward) a fresh id."""
    group = GraphExecGroup._get_current_group()
    if group is not None:
        return group
    tasks = _tls.graph_tasks
    if tasks:
        return tasks[-1].id
    return uuid.uuid4().int


class _recomputation_hook(saved_tensors_hooks):
    """While the function reruns: route each saved tensor to the holder of the tensor the
    forward saved at the same position."""

    def __init__(self, frame_ref: weakref.ref, gid) -> None:
        def pack(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            _internal_assert(frame is not None)
            index = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if index >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # A backward inside the checkpointed function, without early stop:
                    # the forward has not saved everything yet, so counts cannot match.
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    f"than during the original forward pass.\n{_DEBUG_TIP}"
                )
            holder = frame.weak_holders[index]()
            if holder is not None:  # else freed by an earlier backward: not needed
                _internal_assert(holder.handles.get(gid) is None)
                handle = holder.handles[gid] = _Handle()
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x  # the recomputed graph stays usable (a backward inside the function)

        super().__init__(pack, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """While the checkpointed function runs: save a holder, not the tensor."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack(holder):
            gid = _current_backward_id()
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = (
                        "Performing two backward calls that overlap (i.e. require the same "
                        "saved activation in order to compute gradients) is not allowed while "
                        "under the torch.utils.checkpoint.GraphExecGroup context. "
                    )
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue "
                    "with details on your use case."
                )
            handle = holder.handles[gid]
            _internal_assert(handle in frame.recomputed[gid])
            value = frame.recomputed[gid][handle]
            holder.handles[gid] = None  # recomputed tensors live until unpacked, no longer
            return value

        if frame.unpack_error_cb is not None:
            plain_unpack = unpack

            def unpack(holder):  # noqa: F811 - the same, with the debug report on errors
                try:
                    return plain_unpack(holder)
                except CheckpointError as error:
                    frame.unpack_error_cb(error)

        super().__init__(pack, unpack)


# ---- debug mode: op logs of the forward and the recomputation ------------------------------


def _is_user_frame(frame: traceback.FrameSummary) -> bool:
    """Not a frame of opgrad itself (the runtime and generated packages)."""
    from .. import generated

    own = (os.path.dirname(os.path.dirname(__file__)), os.path.dirname(generated.__file__))
    return not frame.filename.startswith(own)


def _debug_context_and_callback():
    """A context_fn that logs the ops of the forward and of the recomputation (with the
    user's stack for each), and an error callback that raises with both logs."""
    from ._python_dispatch import TorchDispatchMode

    class _OpLog(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: List[str] = []
            self.stacks: List[List[str]] = []

        def __enter__(self):
            self.ops, self.stacks = [], []  # a recomputation starts a fresh log
            return super().__enter__()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            frames = traceback.extract_stack()[:-1]
            self.stacks.append(
                [f"{f.filename}:{f.lineno}:{f.name}" for f in frames if _is_user_frame(f)]
            )
            return func(*args, **(kwargs or {}))

    forward_log, recompute_log = _OpLog(), _OpLog()

    def traces(log: _OpLog, label: str) -> str:
        lines = []
        for index, (op, stack) in enumerate(zip(log.ops, log.stacks)):
            lines.append(f"{op}   ({index + 1} of {len(log.ops)} in {label})\n")
            lines.extend(stack)
            lines.append("\n")
        return "\n".join(lines)

    def on_error(error: CheckpointError):
        raise CheckpointError(
            _DEBUG_REPORT.format(
                forward_traces=traces(forward_log, "original"),
                recompute_traces=traces(recompute_log, "recompute"),
                forward_ops="\n".join(forward_log.ops),
                recompute_ops="\n".join(recompute_log.ops),
            )
        ) from error

    def context_fn():
        return forward_log, recompute_log

    return context_fn, on_error


_DEBUG_REPORT = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+------------------------------------------------------------------------------+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+------------------------------------------------------------------------------+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+------------------------------------------------------------------------------+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.
 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


# ---- the entry points ----------------------------------------------------------------------

_FORWARD_CONTEXT_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
    "exception raised during the checkpointed forward. This is not supported because "
    "checkpoint cannot return a value for a failed forward."
)


def _checkpoint_without_reentrant(
    fn, preserve_rng_state, context_fn, determinism_check, debug, early_stop, args, kwargs
):
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_callback()
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
            f"{determinism_check}"
        )
    metadata_fn = _DETERMINISM_CHECKS[determinism_check]
    forward_context, recompute_context = context_fn()
    rng_state = _random.get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs) -> None:
        with _rng_state(rng_state), recompute_context:
            fn(*inputs, **kwargs)

    if not is_grad_enabled():
        return fn(*args, **kwargs)  # nothing is saved, so nothing to recompute
    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        unpack_error_cb,
        metadata_fn,
    )
    frame.save_inputs(*args)
    finished = False
    with _checkpoint_hook(frame), forward_context:
        result = fn(*args, **kwargs)
        finished = True
    if not finished:
        raise RuntimeError(_FORWARD_CONTEXT_SUPPRESSED)
    frame.forward_completed = True
    return result


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: Optional[bool] = None,
    context_fn: Callable[[], Tuple[ContextManager, ContextManager]] = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
):
    """``function(*args, **kwargs)``, keeping only the inputs for backward and recomputing
    the rest when backward needs it. See the module docstring for the two variants.

    ``context_fn`` returns two context managers: the forward runs in the first, every
    recomputation in the second. ``determinism_check="none"`` turns off the comparison of
    the recomputed tensors' shapes and dtypes with the forward's; ``debug=True`` adds op
    logs of both runs to that error. ``early_stop`` (or set_checkpoint_early_stop) lets the
    recomputation stop once it has rebuilt what backward needs.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(
        function,
        preserve_rng_state,
        context_fn,
        determinism_check,
        debug,
        early_stop,
        args,
        kwargs,
    )


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: Optional[bool] = None, **kwargs
):
    """Run ``functions`` (a sequence of callables, or an object with ``children()``) one
    after the other on ``input``, checkpointing all of them but the last of ``segments``
    chunks (the last chunk's activations are needed right away by backward)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if callable(getattr(functions, "children", None)):
        functions = list(functions.children())

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
