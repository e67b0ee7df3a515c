"""An exception raised at any point of a mode's call (a KeyboardInterrupt from a
signal handler) leaves the mode stacks and the dispatch keys as they were, and
modes exited out of order behave as torch's.

Python runs signal handlers where the interpreter checks for pending events: on
entering a function, on a backward jump, and after a call returns. The harness
raises KeyboardInterrupt at each such point of opgrad's code in turn, through a
trace function, until the call completes without one.
"""

from __future__ import annotations

import dis
import os
import sys

import pytest

import opgrad
from opgrad._tls import state as tls
from opgrad.overrides import TorchFunctionMode
from opgrad.utils._python_dispatch import TorchDispatchMode
from torch_oracle import assert_same, dispatch_module

_OPGRAD_FILES = (
    os.path.dirname(opgrad.__file__),
    os.path.dirname(opgrad.generated.__file__),
)
_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION_EX", "CALL_FUNCTION", "CALL_METHOD"}
_CHECKS = {"RESUME", "JUMP_BACKWARD"}


class _InterruptAt:
    """A trace function raising KeyboardInterrupt at the ``at``-th point of opgrad's code
    where the interpreter may run a signal handler."""

    _opnames: dict = {}

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0
        self.previous: dict = {}

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename.startswith(_OPGRAD_FILES):
            frame.f_trace_opcodes = True
            return self._step
        return None

    def _opname(self, code, offset):
        table = self._opnames.get(code)
        if table is None:
            table = self._opnames[code] = {i.offset: i.opname for i in dis.get_instructions(code)}
        return table.get(offset)

    def _step(self, frame, event, arg):
        if event != "opcode":
            return self._step
        here = self._opname(frame.f_code, frame.f_lasti)
        after = self.previous.get(id(frame))
        self.previous[id(frame)] = here
        if here in _CHECKS or after in _CALLS:
            self.seen += 1
            if self.seen == self.at:
                raise KeyboardInterrupt
        return self._step


def _mode_state():
    return (
        list(tls.mode_stack),
        id(tls.mode_stack),
        list(tls.tf_modes),
        id(tls.tf_modes),
        tls.include,
        tls.keep,
        tls.tf_state,
        tls.grad_enabled,
        len(tls.graph_tasks),
        tls.__dict__.get("fw_active"),  # a thread's own forward-AD switch
    )


def _interrupt_everywhere(call) -> int:
    """Run ``call`` once per interruption point; after each, the state must be as before.
    Returns how many points were tried."""
    before = _mode_state()
    at = 1
    while True:
        trace = _InterruptAt(at)
        sys.settrace(trace)
        try:
            call()
            completed = True
        except KeyboardInterrupt:
            completed = False
        finally:
            sys.settrace(None)
        assert _mode_state() == before, f"interrupted at point {at}"
        if completed:
            return at - 1
        at += 1


class _Passes(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _PassesFunctions(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.fixture
def no_trace():
    previous = sys.gettrace()
    sys.settrace(None)
    yield
    sys.settrace(previous)


def test_an_interrupted_dispatch_mode_call_restores_stack_and_keys(no_trace):
    x = opgrad.ones(2)
    with _Passes():
        assert _interrupt_everywhere(lambda: x + 1) > 20


def test_an_interrupted_call_through_two_dispatch_modes_restores_both(no_trace):
    x = opgrad.ones(2, requires_grad=True)
    with _Passes(), _Passes():
        assert _interrupt_everywhere(lambda: (x * 2).sum()) > 40


def test_an_interrupted_backward_under_a_dispatch_mode_restores_modes_and_grad_mode(no_trace):
    x = opgrad.ones(2, requires_grad=True)
    with _Passes():
        assert _interrupt_everywhere(lambda: (x * 2).sum().backward()) > 100


def test_an_interrupted_torch_function_mode_call_restores_stack_and_keys(no_trace):
    x = opgrad.ones(2)
    with _PassesFunctions():
        assert _interrupt_everywhere(lambda: opgrad.add(x, 1)) > 20


def test_an_interrupted_custom_function_restores_grad_mode_and_forward_ad(no_trace):
    import opgrad.autograd.forward_ad as fwAD

    class Double(opgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    x = opgrad.ones(2, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, opgrad.ones(2))
        assert _interrupt_everywhere(lambda: Double.apply(dual)) > 40


def test_dispatch_modes_still_see_calls_after_the_interruptions(no_trace):
    x = opgrad.ones(2)
    seen = []

    class Logs(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Logs():
        _interrupt_everywhere(lambda: x + 1)
        seen.clear()
        x * 3
    assert seen == ["aten.mul.Tensor"]
    assert not tls.mode_stack


def test_exiting_nested_dispatch_modes_out_of_order_pops_the_innermost(torch):
    def scenario(lib):
        dispatch = dispatch_module(lib)
        logs = {}

        class Named(dispatch.TorchDispatchMode):
            def __init__(self, name):
                super().__init__()
                self.name = name
                logs[name] = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                logs[self.name].append(str(func))
                return func(*args, **(kwargs or {}))

        outer, inner = Named("outer"), Named("inner")
        outer.__enter__()
        inner.__enter__()
        steps = []
        for mode in (outer, inner, outer):
            try:
                mode.__exit__(None, None, None)
                steps.append("exited")
            except (IndexError, RuntimeError) as exc:
                steps.append((type(exc).__name__, str(exc)))
            steps.append(
                [m.name for m in dispatch._get_current_dispatch_mode_stack()]
                + [dispatch.is_in_torch_dispatch_mode()]
            )
            lib.ones(2) + 1
        return steps, logs

    assert_same(torch, scenario)
