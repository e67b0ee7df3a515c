"""The one thread-local state object the dispatcher reads per call, and the plain flag.

``state.plain`` says that nothing can observe the aten calls of an op on plain tensors:
no dispatch or torch-function mode, no excluded or extra included dispatch key
(inference mode excludes Autograd), no saved-tensor hooks on this thread, and no
forward-AD level, anomaly mode or user kernel on an aten op in the process. While it
holds, generated entries may compute an op in one frame (the plain path) and the engine
may run its common case inline; when it does not, every call takes the full path.

It is one attribute read. The class attribute carries the process-wide conditions; a
thread whose own state is not plain shadows it with False on its instance. Whoever
changes that state calls ``refresh_plain`` after the change (and stores False before
it when the change may make the state impure), so an exception between the two leaves
the flag False, never wrongly True.
"""

import os
import threading

from . import dispatch_keys as K


class _DispatchState(threading.local):
    # Class attributes are the defaults every new thread starts from.
    grad_enabled = True
    inference_mode = False
    #: keys added to every call's key set (Python while a mode is pushed)
    include = K.CPU
    #: mask applied to every call's key set (clears thread-locally excluded keys)
    keep = K.ALL
    #: ops compute the tangents of their outputs. The class attribute says whether a
    #: forward-AD level exists, for every thread (levels are global, as PyTorch's); a
    #: thread switches forward AD off for itself only by setting False on its own
    #: state (see forward_ad_off), never True.
    fw_active = False
    #: __torch_function__ handling: 0 enabled, 1 subclasses disabled, 2 all disabled
    tf_state = 0
    #: nothing can observe aten calls (see the module docstring): the plain path may run
    plain = True

    def __init__(self) -> None:
        self.mode_stack = []
        #: saved_tensors_hooks: the (pack, unpack) pairs in force, innermost last
        self.saved_hooks = []
        #: disable_saved_tensors_hooks: the error message while disabled, else None
        self.saved_hooks_disabled = None
        #: the backward calls running on this thread, innermost last
        self.graph_tasks = []
        #: TorchFunctionModes, innermost last (``include`` holds TORCH_FUNCTION while one is live)
        self.tf_modes = []


state = _DispatchState()


def set_forward_ad_level(active: bool) -> None:
    """A forward-AD level was entered or exited: every thread sees it."""
    _DispatchState.fw_active = active
    set_process_flag("forward AD level", active)


def forward_ad_off_here() -> bool:
    """Whether this thread has switched forward AD off for itself. Read it before calling
    forward_ad_off, and hand it to forward_ad_restore in a finally."""
    return "fw_active" in state.__dict__


def forward_ad_off() -> None:
    """Switch forward AD off on this thread (a single store: safe inside a try)."""
    state.fw_active = False


def forward_ad_restore(was_off_here: bool) -> None:
    """Undo forward_ad_off: unless it was off here before, this thread follows the global
    level again (also when forward_ad_off never ran, interrupted before it)."""
    if not was_off_here:
        state.__dict__.pop("fw_active", None)


#: why the process as a whole is not plain (each reason counted: levels, kernels ...)
_process_reasons: dict = {}


def set_process_reason(reason: str, active: bool) -> None:
    """Count a process-wide reason in (``active``) or out, and update the class flag."""
    count = _process_reasons.get(reason, 0) + (1 if active else -1)
    if count > 0:
        _process_reasons[reason] = count
    else:
        _process_reasons.pop(reason, None)
    _DispatchState.plain = not _process_reasons


def set_process_flag(reason: str, active: bool) -> None:
    """A process-wide reason that is either in force or not (no nesting to count)."""
    if active:
        _process_reasons[reason] = 1
    else:
        _process_reasons.pop(reason, None)
    _DispatchState.plain = not _process_reasons


def refresh_plain() -> None:
    """Recompute this thread's part of the flag from its state (call after changing it)."""
    if state.include == K.CPU and state.keep == K.ALL and not state.saved_hooks:
        state.__dict__.pop("plain", None)  # plain here: the process-wide flag decides
    else:
        state.plain = False


# OPGRAD_PLAIN=0 switches the plain path off for the whole process (CI runs the op and
# autograd tests once more that way: both paths must give the same results).
if os.environ.get("OPGRAD_PLAIN", "1") == "0":
    set_process_flag("OPGRAD_PLAIN=0", True)
