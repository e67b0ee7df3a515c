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
    #: a forward-AD level is active: ops compute the tangents of their outputs
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
