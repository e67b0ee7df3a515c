"""The one thread-local state object the dispatcher reads per call."""

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
