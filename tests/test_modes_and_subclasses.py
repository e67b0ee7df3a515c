"""TorchDispatchModes and ``__torch_dispatch__`` subclasses, compared with torch.

Nested modes and modes entered inside a handler, precedence of modes over
subclasses and NotImplemented chains, the func objects handlers receive, the
backward pass as modes see it, autograd on top of wrapper subclasses, and the
``_python_dispatch`` helpers. Each scenario runs with ``lib`` = opgrad and
torch and must give the same result.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, outcome


def pd(lib):
    return importlib.import_module(lib.__name__ + ".utils._python_dispatch")


def tree_map(lib):
    return importlib.import_module(lib.__name__ + ".utils._pytree").tree_map


def named_mode(lib, name, log, decline=(), decline_subclasses=False):
    """A mode logging ``(name, op)``; returns NotImplemented for ops named in ``decline``
    (or, with ``decline_subclasses``, for calls involving a subclass)."""

    class Named(pd(lib).TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append((name, str(func), [t.__name__ for t in types]))
            if str(func) in decline or (decline_subclasses and types):
                return NotImplemented
            return func(*args, **(kwargs or {}))

        def __repr__(self):
            return f"<mode {name}>"

    return Named()


def wrapper_class(lib, log, name="W", decline=()):
    """A wrapper subclass holding ``elem``; logs ``(name, op)`` and rewraps results."""
    tmap = tree_map(lib)

    class W(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            return lib.Tensor._make_wrapper_subclass(
                cls, elem.shape, dtype=elem.dtype, requires_grad=elem.requires_grad
            )

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append((name, str(func), [t.__name__ for t in types]))
            if str(func) in decline:
                return NotImplemented

            def unwrap(t):
                return t.elem if isinstance(t, W) else t

            def wrap(t):
                return cls(t) if isinstance(t, lib.Tensor) and not isinstance(t, W) else t

            out = func(*tmap(unwrap, args), **tmap(unwrap, kwargs or {}))
            return tmap(wrap, out)

    W.__name__ = W.__qualname__ = name
    return W


def leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(np.array(values), requires_grad=True)


# ---------------------------------------------------------------------------
# Modes


def test_nested_modes_inner_first_each_sees_the_next_calls(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)
        with named_mode(lib, "outer", log):
            with named_mode(lib, "middle", log):
                with named_mode(lib, "inner", log):
                    (x * x).sum().backward()
        return log

    assert_same(torch, scenario)


def test_mode_entered_inside_another_mode_s_handler(torch):
    def scenario(lib):
        log = []

        class Outer(pd(lib).TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("outer", str(func)))
                with named_mode(lib, "late", log):
                    out = func(*args, **(kwargs or {}))
                    lib.neg(out)
                return out

        x = leaf(lib)
        with Outer():
            x.exp()
        return log

    assert_same(torch, scenario)


def dispatch_failure(lib, fn):
    """``fn()``'s outcome, the op's module path normalised (torch._ops / opgrad.dispatcher)."""
    kind, text = outcome(fn)
    return kind, text.replace("LIB._ops.", "OPS.").replace("LIB.dispatcher.", "OPS.")


def test_mode_returning_not_implemented_is_an_error_for_plain_tensors(torch):
    """Unlike the next mode, nothing else is tried for plain tensors: TypeError (which a
    binary operator turns into Python's own)."""

    def scenario(lib):
        log = []
        x = lib.ones(2)
        with named_mode(lib, "outer", log):
            with named_mode(lib, "inner", log, decline=("aten.add.Tensor",)):
                results = [dispatch_failure(lib, lambda: lib.add(x, x))]
                results.append(outcome(lambda: x + x))
                x * x
        return log, results

    got = scenario(og)
    assert got[1][0][0] == "TypeError" and "Multiple dispatch failed for" in got[1][0][1]
    assert_same(torch, scenario)


def test_mode_stack_helpers(torch):
    def scenario(lib):
        m = pd(lib)
        out = [m._get_current_dispatch_mode(), m._get_current_dispatch_mode_stack()]
        out.append(m.is_in_torch_dispatch_mode())
        seen = []

        class Probe(m.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(
                    (
                        m._get_current_dispatch_mode() is outer,
                        len(m._get_current_dispatch_mode_stack()),
                        m.is_in_torch_dispatch_mode(),
                    )
                )
                return func(*args, **(kwargs or {}))

        outer, inner = Probe(), Probe()
        with outer:
            with inner:
                out.append(len(m._get_current_dispatch_mode_stack()))
                out.append(m._get_current_dispatch_mode() is inner)
                out.append(m.is_in_torch_dispatch_mode())
                lib.ones(1).neg()
            out.append(m._get_current_dispatch_mode() is outer)
        out.append(m.is_in_torch_dispatch_mode())
        out.append(m._get_current_dispatch_mode_stack())
        return out, seen

    assert_same(torch, scenario)


def test_mode_exits_cleanly_after_an_error(torch):
    def scenario(lib):
        m = pd(lib)

        class Boom(m.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                raise ValueError(str(func))

        result = None
        try:
            with Boom():
                lib.ones(1).neg()
        except ValueError as exc:
            result = str(exc)
        return result, m._get_current_dispatch_mode_stack(), m.is_in_torch_dispatch_mode()

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# The func objects handlers receive


def test_func_objects(torch):
    def scenario(lib):
        facts = []

        class Inspect(pd(lib).TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                facts.append(
                    (
                        str(func),
                        func.name(),
                        func.__name__,
                        str(func.overloadpacket),
                        func.overloadpacket.__name__,
                        func._schema.name,
                        func._schema.overload_name,
                        [a.name for a in func._schema.arguments],
                        str(func._schema),
                        func.namespace,
                        func._overloadname,
                        func.overloadpacket is getattr(lib.ops.aten, func._opname),
                        func is getattr(func.overloadpacket, func._overloadname),
                    )
                )
                return func(*args, **(kwargs or {}))

        x = leaf(lib)
        with Inspect():
            (x * 2).sum(0, keepdim=True).exp_()
        return facts

    assert_same(torch, scenario)


def test_backward_calls_reach_the_mode_with_their_types(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)
        y = (x.sigmoid() * x).mean()
        with named_mode(lib, "m", log):
            y.backward()
        # (torch reports types=[Tensor] for the detach of a saved output; not compared)
        return [op for _, op, _ in log], np.round(x.grad.tolist(), 12).tolist()

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Subclasses


def test_wrapper_subclass_sees_forward_and_backward(torch):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(leaf(lib))
        y = (x * x).sum()
        out = [type(y).__name__, type(y.grad_fn).__name__, y.requires_grad]
        y.backward()
        out += [type(x.grad).__name__, x.grad.elem.tolist(), x.grad.requires_grad]
        return out, log

    assert_same(torch, scenario)


def test_wrapper_subclass_second_backward_and_create_graph(torch):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(leaf(lib))
        (x * x).sum().backward()
        log.clear()
        (x * 3).sum().backward()
        first = list(log)
        log.clear()
        (g,) = lib.autograd.grad((x * x).sum(), x, create_graph=True)
        return first, log, type(g).__name__, type(g.grad_fn).__name__, g.elem.tolist()

    assert_same(torch, scenario)


def test_mode_comes_before_the_subclass(torch):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(lib.ones(2))
        with named_mode(lib, "mode", log):
            r = x + x
        return log, type(r).__name__

    assert_same(torch, scenario)


def test_mode_not_implemented_falls_to_the_subclass(torch):
    """The subclass handler runs with the mode still pushed: its own inner call goes to
    the mode again."""

    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(lib.ones(2))
        with named_mode(lib, "mode", log, decline=("aten.add.Tensor",)):
            result = dispatch_failure(lib, lambda: lib.add(x, x))
            r = x * x
        return log, result, type(r).__name__

    assert_same(torch, scenario)


def test_mode_not_implemented_then_subclass_handles(torch):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(lib.ones(2))
        with named_mode(lib, "mode", log, decline_subclasses=True):
            r = x.neg()
        return log, type(r).__name__, r.elem.tolist()

    assert_same(torch, scenario)


def test_two_subclasses_in_one_call_order_by_position(torch):
    def scenario(lib):
        log = []
        A = wrapper_class(lib, log, "A", decline=("aten.add.Tensor",))
        B = wrapper_class(lib, log, "B")
        a, b = A(lib.ones(2)), B(lib.ones(2) * 2)
        log.clear()
        r1 = dispatch_failure(lib, lambda: type(lib.add(a, b)).__name__)
        r2 = outcome(lambda: type(b + a).__name__)
        return log, r1, r2

    assert_same(torch, scenario)


def test_subclass_of_a_subclass_goes_first(torch):
    def scenario(lib):
        log = []
        A = wrapper_class(lib, log, "A")

        class B(A):
            pass

        a, b = A(lib.ones(2)), B(lib.ones(2))
        log.clear()
        a.mul(b)
        return log

    assert_same(torch, scenario)


def test_every_subclass_declines(torch):
    def scenario(lib):
        W = wrapper_class(lib, [], "W", decline=("aten.add.Tensor",))
        x = W(lib.ones(2))
        return outcome(lambda: x + x), dispatch_failure(lib, lambda: x.add(x))

    assert_same(torch, scenario)


def test_every_mode_and_subclass_declines(torch):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log, "W", decline=("aten.add.Tensor",))
        x = W(lib.ones(2))
        with named_mode(lib, "mode", log, decline=("aten.add.Tensor",)):
            result = dispatch_failure(lib, lambda: lib.add(x, x))
        return log, result

    assert_same(torch, scenario)


def test_plain_tensor_mode_declines_everything(torch):
    def scenario(lib):
        x = lib.ones(2)
        with named_mode(lib, "mode", [], decline=("aten.add.Tensor",)):
            return outcome(lambda: x + x), dispatch_failure(lib, lambda: x.add(x))

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# AccumulateGrad as a mode sees it


ACCUMULATE_PROGRAMS = {
    "fresh grad": lambda lib, x: (x * 2).sum().backward(),
    "broadcast grad": lambda lib, x: x.sum().backward(),
    "grad used twice": lambda lib, x: (x + x).sum().backward(),
    "user gradient": lambda lib, x: (x * 1).backward(lib.ones(3)),
    "leaf is root": lambda lib, x: x.backward(lib.ones(3)),
    "retain_graph": lambda lib, x: (x * 2).sum().backward(retain_graph=True),
    "create_graph": lambda lib, x: lib.autograd.backward((x * x).sum(), create_graph=True),
}


@pytest.mark.parametrize("program", list(ACCUMULATE_PROGRAMS))
def test_accumulate_grad_log_matches_torch(torch, program):
    def scenario(lib):
        log = []
        x = leaf(lib)
        with named_mode(lib, "m", log):
            ACCUMULATE_PROGRAMS[program](lib, x)
        return [op for _, op, _ in log]

    assert_same(torch, scenario)


@pytest.mark.parametrize("program", list(ACCUMULATE_PROGRAMS))
def test_accumulate_grad_log_on_a_wrapper_subclass(torch, program):
    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(leaf(lib))
        log.clear()
        ACCUMULATE_PROGRAMS[program](lib, x)
        return [op for _, op, _ in log], type(x.grad).__name__

    assert_same(torch, scenario)


def test_wrapper_subclass_answers_item_and_data(torch):
    """item(), float(), bool() and .data of a wrapper reach its __torch_dispatch__ (as
    _local_scalar_dense and detach): its own array is metadata only."""

    def scenario(lib):
        log = []
        W = wrapper_class(lib, log)
        x = W(lib.tensor([2.5, -1.0]))
        total = x.sum()
        values = [total.item(), float(total), bool(total > 0), type(x.data).__name__]
        return values, [op for _, op, _ in log]

    assert_same(torch, scenario)
