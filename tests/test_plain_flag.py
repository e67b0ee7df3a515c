"""The plain flag (``opgrad._tls.state.plain``) is exact.

It is True exactly when nothing can observe an op's aten calls: no dispatch or
torch-function mode, no saved-tensor hooks, no excluded or extra included dispatch key
(inference mode excludes Autograd) on this thread, and no forward-AD level, anomaly mode
or user kernel on an aten op in the process. Every state that makes it False must give
it back on exit, also when the block raises. Grad mode does not take part: the kernels
read it themselves.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
import threading
import warnings

import pytest

import opgrad as og
import opgrad.autograd.forward_ad as fwAD
from opgrad import _tls
from opgrad import dispatch_keys as K
from opgrad import dispatcher
from opgrad.autograd.graph import save_on_cpu, saved_tensors_hooks
from opgrad.overrides import TorchFunctionMode
from opgrad.utils._python_dispatch import TorchDispatchMode

# Under OPGRAD_PLAIN=0 the flag is False throughout, by design: these tests need a process
# that starts plain (the last one runs a child process with OPGRAD_PLAIN=0).
pytestmark = pytest.mark.skipif(
    os.environ.get("OPGRAD_PLAIN") == "0", reason="OPGRAD_PLAIN=0: the flag is always False"
)


def plain() -> bool:
    return _tls.state.plain


class PassThroughMode(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.flags = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.flags.append(plain())
        return func(*args, **(kwargs or {}))


class PassThroughFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def quiet_detect_anomaly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled ..."
        mode = og.autograd.detect_anomaly()
    with mode:
        yield


def _copying_mul(a, b):
    return og.tensor(a.detach().numpy() * b.detach().numpy())


@contextlib.contextmanager
def user_kernel_on_aten_mul():
    lib = og.library.Library("aten", "IMPL")
    lib.impl("mul.Tensor", _copying_mul, "CPU")
    try:
        yield
    finally:
        lib._destroy()


#: every state that makes the flag False, as a context-manager factory
NOT_PLAIN = {
    "dispatch mode": PassThroughMode,
    "torch function mode": PassThroughFunctionMode,
    "saved_tensors_hooks": lambda: saved_tensors_hooks(lambda t: t, lambda t: t),
    "save_on_cpu": save_on_cpu,
    "forward-AD level": fwAD.dual_level,
    "detect_anomaly": quiet_detect_anomaly,
    "set_detect_anomaly(True)": lambda: og.autograd.set_detect_anomaly(True),
    "inference_mode": og.inference_mode,
    "ExcludeDispatchKeyGuard(Autograd)": lambda: dispatcher.ExcludeDispatchKeyGuard(K.AUTOGRAD),
    "ExcludeDispatchKeyGuard(ADInplaceOrView)": lambda: dispatcher.ExcludeDispatchKeyGuard(
        K.AD_INPLACE_OR_VIEW
    ),
    "AutoDispatchBelowAutograd": dispatcher.AutoDispatchBelowAutograd,
    "AutoDispatchBelowADInplaceOrView": dispatcher.AutoDispatchBelowADInplaceOrView,
    "IncludeDispatchKeyGuard(Python)": lambda: dispatcher.IncludeDispatchKeyGuard(K.PYTHON),
    "user kernel on aten::mul.Tensor": user_kernel_on_aten_mul,
    "tests: full path": lambda: full_path(),
}

#: the states that concern only the thread that enters them
THREAD_LOCAL = [
    "dispatch mode",
    "torch function mode",
    "saved_tensors_hooks",
    "inference_mode",
    "ExcludeDispatchKeyGuard(Autograd)",
    "IncludeDispatchKeyGuard(Python)",
]
#: the states that concern every thread of the process
PROCESS_WIDE = [
    "forward-AD level",
    "detect_anomaly",
    "set_detect_anomaly(True)",
    "user kernel on aten::mul.Tensor",
    "tests: full path",
]


@contextlib.contextmanager
def full_path():
    """What the equivalence tests use to switch the plain path off for a block."""
    _tls.set_process_flag("tests: full path", True)
    try:
        yield
    finally:
        _tls.set_process_flag("tests: full path", False)


def test_the_default_state_is_plain():
    assert plain() is True


@pytest.mark.parametrize("state", NOT_PLAIN)
def test_not_plain_inside(state):
    with NOT_PLAIN[state]():
        assert plain() is False
    assert plain() is True


@pytest.mark.parametrize("state", NOT_PLAIN)
def test_plain_again_after_the_block_raises(state):
    with pytest.raises(ZeroDivisionError):
        with NOT_PLAIN[state]():
            assert plain() is False
            1 / 0
    assert plain() is True


@pytest.mark.parametrize("state", NOT_PLAIN)
def test_ops_inside_leave_the_flag_as_they_found_it(state):
    x = og.tensor([1.0, 2.0], requires_grad=True)
    with NOT_PLAIN[state]():
        y = (x * 2).sum()
        if y.requires_grad:
            y.backward()
        assert plain() is False
    assert plain() is True


@pytest.mark.parametrize("outer", ["dispatch mode", "saved_tensors_hooks", "forward-AD level"])
@pytest.mark.parametrize("inner", ["inference_mode", "ExcludeDispatchKeyGuard(Autograd)"])
def test_nested_states_keep_the_flag_false_until_the_last_exits(outer, inner):
    with NOT_PLAIN[outer]():
        with NOT_PLAIN[inner]():
            assert plain() is False
        assert plain() is False
    assert plain() is True


def test_a_dispatch_mode_handler_runs_not_plain():
    mode = PassThroughMode()
    with mode:
        og.ones(2) * 2
    assert mode.flags and not any(mode.flags)
    assert plain() is True


def test_nested_dispatch_modes_stay_not_plain_until_the_outer_exits():
    with PassThroughMode():
        with PassThroughMode():
            pass
        assert plain() is False
    assert plain() is True


def test_a_torch_dispatch_subclass_handler_runs_not_plain():
    flags = []

    class Wrapper(og.Tensor):
        __torch_function__ = og._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            return og.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            flags.append(plain())
            args = [a.elem if isinstance(a, Wrapper) else a for a in args]
            return Wrapper(func(*args, **(kwargs or {})))

    w = Wrapper(og.ones(2))
    assert plain() is True  # a subclass instance alone changes nothing: the tensor check does
    w * 2
    assert flags and not any(flags)
    assert plain() is True


def test_a_raising_dispatch_mode_handler_leaves_the_flag_true():
    class Refuse(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        with Refuse():
            og.ones(2) * 2
    assert plain() is True


def test_inference_mode_false_nested_inside_inference_mode_is_plain():
    with og.inference_mode():
        assert plain() is False
        with og.inference_mode(False):
            assert plain() is True
        assert plain() is False
    assert plain() is True


def test_set_detect_anomaly_called_as_a_function():
    og.autograd.set_detect_anomaly(True)
    try:
        assert plain() is False
    finally:
        og.autograd.set_detect_anomaly(False)
    assert plain() is True


def test_a_user_aten_kernel_keeps_the_flag_false_until_its_library_goes():
    lib = og.library.Library("aten", "IMPL")
    lib.impl("mul.Tensor", _copying_mul, "CPU")
    lib.impl("add.Tensor", lambda a, b, alpha=1: og.tensor(a.numpy() + b.numpy()), "CPU")
    assert plain() is False
    del lib
    gc.collect()
    assert plain() is True


def test_two_libraries_on_aten_each_count():
    first = og.library.Library("aten", "IMPL")
    first.impl("mul.Tensor", _copying_mul, "CPU")
    second = og.library.Library("aten", "IMPL")
    second.impl("neg", lambda x: og.tensor(-x.numpy()), "CPU")
    first._destroy()
    assert plain() is False
    second._destroy()
    assert plain() is True


def test_a_kernel_on_a_new_namespace_leaves_the_flag_true():
    lib = og.library.Library("plainflagtest", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: og.tensor(x.numpy() * 2), "CPU")
        assert plain() is True
    finally:
        lib._destroy()


@pytest.mark.parametrize(
    "grad_mode",
    [og.no_grad, og.enable_grad, lambda: og.set_grad_enabled(False)],
    ids=["no_grad", "enable_grad", "set_grad_enabled(False)"],
)
def test_grad_mode_leaves_the_flag_true(grad_mode):
    with grad_mode():
        assert plain() is True
    assert plain() is True


def _flag_in_another_thread(state):
    """The flag another thread reads while this one is inside ``state``."""
    seen = {}
    with NOT_PLAIN[state]():
        worker = threading.Thread(target=lambda: seen.setdefault("flag", plain()))
        worker.start()
        worker.join()
    return seen["flag"]


@pytest.mark.parametrize("state", PROCESS_WIDE)
def test_process_wide_states_make_every_thread_not_plain(state):
    assert _flag_in_another_thread(state) is False


@pytest.mark.parametrize("state", THREAD_LOCAL)
def test_thread_local_states_leave_other_threads_plain(state):
    assert _flag_in_another_thread(state) is True


def test_a_thread_that_enters_a_mode_does_not_change_this_thread():
    entered, release = threading.Event(), threading.Event()

    def hold_a_mode():
        with PassThroughMode():
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=hold_a_mode)
    worker.start()
    try:
        entered.wait(10)
        assert plain() is True
    finally:
        release.set()
        worker.join()


def test_opgrad_plain_0_switches_the_flag_off_for_the_process():
    code = (
        "import opgrad, opgrad._tls as t\n"
        "t.set_process_flag('tests: full path', True)\n"
        "t.set_process_flag('tests: full path', False)\n"
        "print(t.state.plain, (opgrad.ones(2) * 2).tolist())\n"
    )
    env = dict(os.environ, OPGRAD_PLAIN="0")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(None, 1) == ["False", "[2.0, 2.0]\n"]
