"""``__torch_function__``: the Python-level override, compared with torch.

Subclasses and TorchFunctionModes see public calls (``opgrad.mul``,
``Tensor.mul`` for ``x * y``, ``Tensor.backward``, property getters, factories,
``opgrad.ops`` overloads) before the dispatcher and autograd. Every scenario
runs with ``lib`` = opgrad and torch and must give the same result.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, outcome


def overrides(lib):
    return importlib.import_module(lib.__name__ + ".overrides")


def log_mode(lib, name=None, shared=None):
    """A TorchFunctionMode appending ``func.__name__`` (prefixed with ``name``)."""

    class Log(overrides(lib).TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.log = shared if shared is not None else []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            label = func.__name__
            self.log.append(f"{name}:{label}" if name else label)
            return func(*args, **(kwargs or {}))

    return Log()


def leaf(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(np.array(values), requires_grad=True)


# ---------------------------------------------------------------------------
# What a mode sees


def test_documented_mode_log(torch):
    """(x*x).sum().backward(); randn — torch's verified log without F.linear."""

    def scenario(lib):
        x = leaf(lib)
        with log_mode(lib) as mode:
            (x * x).sum().backward()
            lib.randn(3, 2)
        return mode.log

    assert scenario(og) == ["mul", "sum", "backward", "randn"]
    assert_same(torch, scenario)


PROGRAMS = {
    "operators": lambda lib, x: [x + 1, 1 + x, x - 1, 1 - x, 2 * x, x / 2, 2 / x, -x, abs(x)],
    "powers": lambda lib, x: [x**2, 2**x],
    "comparisons": lambda lib, x: [x == x, x < 1, x >= 0],
    "functions": lambda lib, x: [lib.add(x, x), lib.mul(x, 2), lib.exp(x), lib.stack([x, x])],
    "methods": lambda lib, x: [x.sum(), x.mean(), x.view(3), x.reshape(3, 1), x.clone(), x.t()],
    "conversions": lambda lib, x: [x.float(), x.to(lib.float64), x.detach(), x.tolist()],
    "indexing": lambda lib, x: [x[0], x[1:], len(x)],
    "properties": lambda lib, x: [x.grad, x.requires_grad, x.is_leaf, x.grad_fn, x.T],
    "autograd": lambda lib, x: [
        x.requires_grad_(),
        lib.autograd.grad((x * 2).sum(), x),
        lib.autograd.backward((x * 3).sum()),
    ],
    "factories": lambda lib, x: [lib.zeros(2), lib.ones_like(x), lib.tensor([1.0])],
    "in-place": lambda lib, x: [x.detach().add_(1), x.detach().__iadd__(1)],
    "ops overload": lambda lib, x: [lib.ops.aten.mul.Tensor(x, x)],
    "split": lambda lib, x: [x.split(1), lib.split(x, 2)],
    "metadata": lambda lib, x: [x.shape, x.dtype, x.ndim, x.device, x.dim(), x.numel(), x.size()],
    "item": lambda lib, x: [x.sum().item(), float(x[0]), bool(x[1] > 0)],
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_mode_log_matches_torch(torch, program):
    def scenario(lib):
        x = leaf(lib)
        with log_mode(lib) as mode:
            PROGRAMS[program](lib, x)
        return mode.log

    assert_same(torch, scenario)


def test_mode_receives_the_public_callable(torch):
    def scenario(lib):
        x = leaf(lib)
        seen = []

        class Record(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func)
                return func(*args, **(kwargs or {}))

        with Record():
            x * x
            x.mul(x)
            lib.mul(x, x)
            x.backward
            x.grad
            lib.ops.aten.mul.Tensor(x, x)
        return [
            seen[0] is lib.Tensor.mul,
            seen[1] is lib.Tensor.mul,
            seen[2] is lib.mul,
            seen[3] == lib.Tensor.grad.__get__,
            seen[4] is lib.ops.aten.mul.Tensor,
            len(seen),
        ]

    assert scenario(og) == [True] * 5 + [5]
    assert_same(torch, scenario)


def test_mode_args_and_types(torch):
    def scenario(lib):
        x = leaf(lib)
        calls = []

        class Record(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                calls.append((func.__name__, types, [type(a).__name__ for a in args], kwargs))
                return func(*args, **(kwargs or {}))

        with Record():
            x * 2
            x.sum(dim=0)
            lib.add(x, x, alpha=2)
        return calls

    assert_same(torch, scenario)


def test_mode_is_popped_inside_its_handler_and_restored(torch):
    def scenario(lib):
        ov = overrides(lib)
        x = leaf(lib)
        inside = []

        class Probe(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                inside.append(len(ov._get_current_function_mode_stack()))
                return func(*args, **(kwargs or {}))

        mode = Probe()
        with mode:
            x + x
            after = ov._get_current_function_mode() is mode
        return inside, after, ov._get_current_function_mode()

    assert scenario(og) == ([0], True, None)
    assert_same(torch, scenario)


def test_nested_modes_inner_first_outer_sees_inner_handler_calls(torch):
    def scenario(lib):
        x = leaf(lib)
        log = []
        with log_mode(lib, "outer", log):
            with log_mode(lib, "inner", log):
                (x * x).sum()
        return log

    assert scenario(og) == ["inner:mul", "outer:mul", "inner:sum", "outer:sum"]
    assert_same(torch, scenario)


def test_mode_entered_inside_a_handler(torch):
    def scenario(lib):
        ov = overrides(lib)
        x = leaf(lib)
        log = []

        class Outer(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(f"outer:{func.__name__}")
                with log_mode(lib, "late", log):
                    return func(*args, **(kwargs or {}))

        with Outer():
            x.exp()
        return log

    assert_same(torch, scenario)


def test_backward_internals_are_invisible(torch):
    """Formulas and the engine's own calls never reach a TorchFunctionMode."""

    def scenario(lib):
        x = leaf(lib)
        y = (x * x.exp()).sum()
        with log_mode(lib) as mode:
            lib.autograd.grad(y, x, create_graph=True)
        return mode.log

    assert scenario(og) == ["grad"]
    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Subclasses: the default handler keeps the subclass


def plain_subclass(lib):
    class S(lib.Tensor):
        pass

    return S


def test_results_keep_the_subclass(torch):
    def scenario(lib):
        S = plain_subclass(lib)
        a = lib.tensor(np.array([1.0, 2.0, 3.0])).as_subclass(S).requires_grad_()
        b = (a * a).sum()
        out = {
            "b": type(b).__name__,
            "b.grad_fn": type(b.grad_fn).__name__,
            "ops": [type(t).__name__ for t in (a + 1, a.detach(), a.sum(0), a.T, a[0], -a)],
            "split": [type(t).__name__ for t in a.split(1)],
            "stack": type(lib.stack([a, a])).__name__,
            "shape": type(a.shape).__name__,
            "is_leaf": a.is_leaf,
        }
        b.backward()
        out["grad"] = type(a.grad).__name__
        out["grad values"] = a.grad.tolist()
        (g,) = lib.autograd.grad((a * a).sum(), a)
        out["autograd.grad"] = type(g).__name__
        return out

    got = scenario(og)
    assert got["b"] == "S" and got["b.grad_fn"] == "AliasBackward0" and got["grad"] == "Tensor"
    assert_same(torch, scenario)


def test_as_subclass_is_an_alias_with_history(torch):
    def scenario(lib):
        S = plain_subclass(lib)
        x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        s = x.as_subclass(S)
        out = [type(s).__name__, type(s.grad_fn).__name__, s.is_leaf, s.requires_grad]
        out.append(s._base is x)
        (s * 2).sum().backward()
        return out + [x.grad.tolist(), s.grad]

    assert_same(torch, scenario)


def logging_subclass(lib, log, name="L", base=None):
    class L(base or lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((name, func.__name__, [t.__name__ for t in types]))
            return super().__torch_function__(func, types, args, kwargs)

    L.__name__ = L.__qualname__ = name
    return L


def test_subclass_handler_sees_each_public_call_once(torch):
    def scenario(lib):
        log = []
        L = logging_subclass(lib, log)
        a = lib.tensor(np.array([1.0, 2.0])).as_subclass(L).requires_grad_()
        log.clear()
        y = (a * a).sum()
        y.backward()
        a.grad
        return log

    assert_same(torch, scenario)


def test_subclass_before_superclass_then_left_to_right(torch):
    def scenario(lib):
        log = []
        A = logging_subclass(lib, log, "A")
        B = logging_subclass(lib, log, "B", base=A)
        C = logging_subclass(lib, log, "C")
        a = lib.tensor(np.array([1.0])).as_subclass(A)
        b = lib.tensor(np.array([2.0])).as_subclass(B)
        c = lib.tensor(np.array([3.0])).as_subclass(C)
        log.clear()
        lib.add(a, b)  # B is a subclass of A: B first
        first = list(log)
        log.clear()
        try:
            lib.add(c, a)  # unrelated: left to right; C's default handler declines A
        except TypeError as exc:
            first.append(type(exc).__name__)
        return first, log

    assert_same(torch, scenario)


def not_implemented_subclass(lib, log, name):
    class N(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(name)
            return NotImplemented

    N.__name__ = N.__qualname__ = name
    return N


def handling_subclass(lib, log, name):
    """A subclass whose handler takes every call and runs it with the protocol off."""

    class H(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((name, func.__name__, [t.__name__ for t in types]))
            with lib._C.DisableTorchFunction():
                return func(*args, **(kwargs or {}))

    H.__name__ = H.__qualname__ = name
    return H


def test_not_implemented_passes_to_the_next_handler(torch):
    def scenario(lib):
        log = []
        N = not_implemented_subclass(lib, log, "N")
        P = handling_subclass(lib, log, "P")
        n = lib.Tensor._make_subclass(N, lib.tensor([1.0]))
        p = lib.Tensor._make_subclass(P, lib.tensor([2.0]))
        result = lib.add(n, p)
        return log, result.tolist()

    assert_same(torch, scenario)


def test_mode_not_implemented_falls_to_the_subclass(torch):
    def scenario(lib):
        log = []
        P = handling_subclass(lib, log, "P")
        p = lib.Tensor._make_subclass(P, lib.tensor([2.0]))

        class Decline(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(("mode", func.__name__, [t.__name__ for t in types]))
                return NotImplemented

        with Decline():
            p.neg()
        return log

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Everything returned NotImplemented: PyTorch's errors


ALL_DECLINE = {
    "function": lambda lib, n: lib.add(n, n),
    "method": lambda lib, n: n.sum(),
    "getitem": lambda lib, n: n[0],
    "property": lambda lib, n: n.grad,
    "list argument": lambda lib, n: lib.stack([n, n]),
    "requires_grad_": lambda lib, n: n.requires_grad_(),
    "python method": lambda lib, n: n.backward(),
    "python method split": lambda lib, n: n.split(1),
    "autograd.grad": lambda lib, n: lib.autograd.grad(n, n),
    "binary operator": lambda lib, n: n + n,
    "reflected operator": lambda lib, n: 2 * n,
}


@pytest.mark.parametrize("case", list(ALL_DECLINE))
def test_all_handlers_decline_error(torch, case):
    def scenario(lib):
        N = not_implemented_subclass(lib, [], "N")
        n = lib.Tensor._make_subclass(N, lib.tensor([1.0]))
        return ALL_DECLINE[case](lib, n)

    expected = outcome(lambda: scenario(torch))
    got = outcome(lambda: scenario(og))
    assert got[0] == expected[0] == "TypeError"
    # Same text, but for the module a Python-defined method lives in (torch._tensor).
    assert got[1].replace("LIB.tensor.", "LIB._tensor.") == expected[1]


def test_mode_declines_error(torch):
    def scenario(lib):
        class Decline(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

            def __repr__(self):
                return "<Decline>"

        with Decline():
            return [outcome(lambda: lib.add(lib.ones(1), 1)), outcome(lambda: lib.randn(2))]

    assert_same(torch, scenario)


def test_mode_declines_operator_gives_python_s_error(torch):
    def scenario(lib):
        x = lib.ones(1)

        class Decline(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        with Decline():
            return outcome(lambda: x * x)

    assert_same(torch, scenario)


def test_handler_errors_propagate(torch):
    def scenario(lib):
        class Boom(overrides(lib).TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                raise ValueError(f"no {func.__name__}")

        with Boom():
            return outcome(lambda: lib.ones(1).exp())

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Guards and queries


def test_disable_torch_function_subclass_keeps_modes(torch):
    def scenario(lib):
        log = []
        L = logging_subclass(lib, log)
        a = lib.tensor([1.0]).as_subclass(L)
        with log_mode(lib) as mode:
            with lib._C.DisableTorchFunctionSubclass():
                r = a + a
                flags = (
                    lib._C._is_torch_function_enabled(),
                    lib._C._is_torch_function_mode_enabled(),
                )
        return log, mode.log, type(r).__name__, flags

    assert_same(torch, scenario)


def test_disable_torch_function_disables_modes_too(torch):
    def scenario(lib):
        x = lib.ones(1)
        with log_mode(lib) as mode:
            with lib._C.DisableTorchFunction():
                x * x
                inner = (
                    lib._C._is_torch_function_enabled(),
                    lib._C._is_torch_function_mode_enabled(),
                )
                with lib._C.DisableTorchFunctionSubclass():
                    nested = lib._C._is_torch_function_mode_enabled()
            x + x
        return mode.log, inner, nested

    assert scenario(og) == (["add"], (False, False), False)
    assert_same(torch, scenario)


def test_disabled_torch_function_impl_opts_out(torch):
    def scenario(lib):
        class Quiet(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

        q = lib.Tensor._make_subclass(Quiet, lib.tensor([1.0]))
        ov = overrides(lib)
        return type(q + q).__name__, ov.has_torch_function((q,))

    assert_same(torch, scenario)


def test_has_torch_function_queries(torch):
    def scenario(lib):
        ov = overrides(lib)
        S = plain_subclass(lib)
        x = lib.ones(1)
        s = x.as_subclass(S)
        out = [
            ov.has_torch_function((x,)),
            ov.has_torch_function((s,)),
            ov.has_torch_function_unary(s),
            ov.has_torch_function_variadic(x, s),
            ov.is_tensor_like(x),
            ov.is_tensor_like(1),
            ov.is_tensor_method_or_property(lib.Tensor.add),
            ov.is_tensor_method_or_property(lib.add),
        ]
        with log_mode(lib):
            out += [ov.has_torch_function((x,)), ov.has_torch_function(())]
            with lib._C.DisableTorchFunction():
                out.append(ov.has_torch_function((x,)))
        with lib._C.DisableTorchFunctionSubclass():
            out.append(ov.has_torch_function((s,)))
        return out

    assert_same(torch, scenario)


def test_handle_torch_function_for_user_functions(torch):
    def scenario(lib):
        ov = overrides(lib)
        log = []

        def scaled(a, b):
            if ov.has_torch_function((a, b)):
                return ov.handle_torch_function(scaled, (a, b), a, b)
            return a * b + 1

        L = logging_subclass(lib, log)
        a = lib.tensor([3.0]).as_subclass(L)
        result = scaled(a, lib.tensor([4.0]))
        with log_mode(lib) as mode:
            scaled(lib.ones(1), lib.ones(1))
        return log, type(result).__name__, result.tolist(), mode.log

    assert_same(torch, scenario)


def test_tensor_likes_that_are_not_tensors(torch):
    def scenario(lib):
        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return f"like {func.__name__}"

        return lib.add(Like(), 1), lib.exp(Like())

    assert_same(torch, scenario)


def test_state_is_restored_after_errors(torch):
    def scenario(lib):
        ov = overrides(lib)

        class Boom(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                raise RuntimeError("boom")

        try:
            with Boom():
                lib.ones(1)
        except RuntimeError:
            pass
        try:
            with lib._C.DisableTorchFunction():
                raise KeyError("x")
        except KeyError:
            pass
        return (
            ov._get_current_function_mode_stack(),
            lib._C._is_torch_function_enabled(),
            lib._C._is_torch_function_mode_enabled(),
        )

    assert scenario(og) == ([], True, False)
    assert_same(torch, scenario)


def test_custom_op_through_opgrad_library_reaches_the_mode():
    lib = og.library.Library("tftest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    x = og.ones(2)
    with log_mode(og) as mode:
        y = og.ops.tftest.twice.default(x)
    assert mode.log == ["twice.default"]
    assert y.tolist() == [2.0, 2.0]


def test_assigning_none_to_grad_is_seen_by_a_mode_and_clears_it(torch):
    """``x.grad = None`` stores without the setter only when nobody overrides it."""

    def scenario(lib):
        x = leaf(lib)
        x.grad = lib.ones(3, dtype=lib.float64)
        with log_mode(lib) as mode:
            x.grad = None
        return mode.log, x.grad

    assert scenario(og) == (["__set__"], None)
    assert_same(torch, scenario)


def test_assigning_none_to_grad_reaches_a_subclass_handler(torch):
    def scenario(lib):
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return super().__torch_function__(func, types, args, kwargs or {})

        x = leaf(lib).detach().as_subclass(Logged).requires_grad_()
        seen.clear()
        x.grad = None
        return seen, x.grad is None

    assert scenario(og) == (["__set__", "__get__"], True)  # the read of x.grad too
    assert_same(torch, scenario)


def _power_operands(lib):
    """``**`` with a subclass on either side, and with an operand nobody takes."""
    seen = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = lib.tensor([1.0, 2.0])
    s = lib.tensor([3.0, 4.0]).as_subclass(Logged)
    values = [(x**s).tolist(), (s**2).tolist(), (2**s).tolist()]
    try:
        x ** "a"
    except TypeError:
        values.append("TypeError")
    return seen, values


def test_power_operator_finds_a_subclass_on_either_side(torch):
    seen, values = _power_operands(og)
    assert (seen, values) == _power_operands(torch)
    assert seen and values[-1] == "TypeError"
