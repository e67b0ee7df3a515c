"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_no_grad,
test_enable_grad_decorator_no_paren, test_set_grad_generator_functions,
test_set_grad_generator_functions_recursive, test_set_grad_coroutines,
test_set_grad_coroutines_benign_exceptions, test_set_grad_coroutines_critical_exceptions,
test_set_grad_coroutines_exit, test_set_grad_enabled, test_set_grad_enabled_wraps,
test_grad_mode_class_decoration, test_increment_version (its inference-mode half) and
test_grad_mode_restored_reentrant (with a tensor hook in place of a custom Function).
The inference-mode and thread-local cases have no test in the reference copy (PyTorch keeps
them in TestAutogradInferenceMode and TestMultithreadAutograd): they pin torch 2.13's
behaviour and error texts directly.

Every test runs one scenario with ``lib = opgrad`` and ``lib = torch`` and compares
plain Python results.
"""

import threading
import warnings

import pytest

from torch_oracle import assert_same, assert_same_error

# ---------------------------------------------------------------------------
# Helpers


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def leaf(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


# ---------------------------------------------------------------------------
# no_grad / enable_grad / set_grad_enabled as context managers


def test_no_grad_context_records_no_graph(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            inside = lib.is_grad_enabled()
            w = x * 2
        return inside, lib.is_grad_enabled(), w.requires_grad, w.grad_fn is None

    assert_same(torch, scenario)


def test_enable_grad_context_records_inside_no_grad(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            with lib.enable_grad():
                inside = lib.is_grad_enabled()
                y = x * 2
            after = lib.is_grad_enabled()
        return inside, after, y.requires_grad, type(y.grad_fn).__name__

    assert_same(torch, scenario)


@pytest.mark.parametrize("mode", [False, True])
def test_set_grad_enabled_context_sets_the_mode_and_restores_it(torch, mode):
    def scenario(lib):
        x = leaf(lib)
        results = []
        for outer in (lib.no_grad, lib.enable_grad):
            with outer():
                before = lib.is_grad_enabled()
                with lib.set_grad_enabled(mode):
                    results.append(lib.is_grad_enabled())
                    results.append((x * 2).requires_grad)
                results.append(lib.is_grad_enabled() == before)
        return results

    assert_same(torch, scenario)


def test_set_grad_enabled_called_as_a_function_changes_the_mode_at_once(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.set_grad_enabled(False):
            lib.set_grad_enabled(True)
            y = x * 2
        with lib.enable_grad():
            lib.set_grad_enabled(False)
            inside = lib.is_grad_enabled()
        restored = lib.is_grad_enabled()
        return y.requires_grad, inside, restored

    assert_same(torch, scenario)


def test_set_grad_enabled_rejects_a_non_bool(torch):
    assert_same_error(
        torch,
        lambda lib: lib.set_grad_enabled(None),
        TypeError,
        "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not NoneType",
    )


def test_grad_modes_restore_the_mode_when_the_block_raises(torch):
    def scenario(lib):
        seen = []
        for make in (lib.no_grad, lambda: lib.set_grad_enabled(False), lib.inference_mode):
            try:
                with make():
                    raise KeyError("boom")
            except KeyError:
                pass
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        return seen

    assert_same(torch, scenario)


def test_nested_no_grad_and_enable_grad_restore_each_level(torch):
    def scenario(lib):
        seen = []
        with lib.no_grad():
            seen.append(lib.is_grad_enabled())
            with lib.enable_grad():
                seen.append(lib.is_grad_enabled())
                with lib.no_grad():
                    seen.append(lib.is_grad_enabled())
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen

    assert_same(torch, scenario)


def test_grad_mode_functions_are_exported_under_autograd(torch):
    def scenario(lib):
        names = ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode")
        return [getattr(lib.autograd, n) is getattr(lib, n) for n in names] + [
            lib.autograd.grad_mode.no_grad is lib.no_grad
        ]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# ... as decorators


def test_no_grad_decorator_with_and_without_parentheses(torch):
    def scenario(lib):
        x = leaf(lib)

        def adder(a, b):
            return a + b

        results = []
        for wrapped in (lib.no_grad()(adder), lib.no_grad(adder)):
            z = wrapped(x, x)
            results.append((z.requires_grad, z.grad_fn is None, lib.is_grad_enabled()))
        return results

    assert_same(torch, scenario)


def test_bare_no_grad_decorator_keeps_the_function_name(torch):
    def scenario(lib):
        @lib.no_grad
        def compute():
            """Doc."""
            return lib.is_grad_enabled()

        return compute(), compute.__name__, compute.__doc__

    assert_same(torch, scenario)


def test_enable_grad_decorator_without_parentheses(torch):
    def scenario(lib):
        x = leaf(lib)

        @lib.enable_grad
        def doubler(t):
            return t * 2

        with lib.no_grad():
            z = doubler(x)
            still_off = lib.is_grad_enabled()
        return z.requires_grad, still_off

    assert_same(torch, scenario)


def test_set_grad_enabled_decorator_does_not_change_the_callers_mode(torch):
    def scenario(lib):
        x = leaf(lib)

        @lib.set_grad_enabled(False)
        def inner(t):
            return t * 2

        after_decoration = lib.is_grad_enabled()
        out = inner(x)
        return after_decoration, out.requires_grad, lib.is_grad_enabled()

    assert_same(torch, scenario)


def test_set_grad_enabled_object_applied_later_consumes_its_global_change(torch):
    def scenario(lib):
        x = leaf(lib)

        def inner(t):
            return t * 2

        with lib.enable_grad():
            obj = lib.set_grad_enabled(False)
            right_after = lib.is_grad_enabled()
            inner = obj(inner)
            after_wrapping = lib.is_grad_enabled()
            out = inner(x)
            return right_after, after_wrapping, out.requires_grad, lib.is_grad_enabled()

    assert_same(torch, scenario)


def test_decorated_functions_restore_the_callers_mode_when_recursing(torch):
    def scenario(lib):
        seen = []

        @lib.enable_grad()
        def on(depth):
            seen.append(lib.is_grad_enabled())
            if depth > 0:
                off(depth - 1)
                seen.append(lib.is_grad_enabled())

        @lib.no_grad()
        def off(depth):
            seen.append(lib.is_grad_enabled())
            if depth > 0:
                on(depth - 1)
                seen.append(lib.is_grad_enabled())

        with lib.no_grad():
            on(4)
            seen.append(lib.is_grad_enabled())
        with lib.enable_grad():
            off(4)
            seen.append(lib.is_grad_enabled())
        return seen

    assert_same(torch, scenario)


def test_decorating_a_class_is_deprecated_and_applies_to_construction_only(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Foo:
                def __init__(self):
                    self.at_init = lib.is_grad_enabled()

                def method(self):
                    return lib.is_grad_enabled()

            foo = Foo()
        kinds = [(w.category.__name__, str(w.message)[:40]) for w in caught]
        return kinds, foo.at_init, foo.method()

    assert_same(torch, scenario)


def test_decorating_functions_and_methods_does_not_warn(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            class Foo:
                @lib.no_grad()
                def __init__(self):
                    self.at_init = lib.is_grad_enabled()

                @lib.no_grad()
                def method(self):
                    return lib.is_grad_enabled()

            foo = Foo()
            in_method = foo.method()
        return len(caught), foo.at_init, in_method

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# ... wrapping generators and generator-based coroutines


@pytest.mark.parametrize("inner", ["no_grad", "enable_grad"])
def test_decorated_generator_holds_the_mode_only_while_it_runs(torch, inner):
    def scenario(lib):
        seen = []

        @getattr(lib, inner)()
        def gen():
            for i in range(3):
                seen.append(("gen", lib.is_grad_enabled()))
                yield i

        outer = lib.enable_grad if inner == "no_grad" else lib.no_grad
        with outer():
            for _ in gen():
                seen.append(("caller", lib.is_grad_enabled()))
        return seen

    assert_same(torch, scenario)


def test_decorated_coroutine_holds_the_mode_across_send(torch):
    def scenario(lib):
        seen = []

        @lib.no_grad()
        def coro(n):
            seen.append(("start", lib.is_grad_enabled()))
            for i in range(n):
                received = yield i
                seen.append(("resumed", received, lib.is_grad_enabled()))

        with lib.enable_grad():
            c, r = coro(3), None
            try:
                while True:
                    r = c.send(r)
                    seen.append(("caller", lib.is_grad_enabled()))
            except StopIteration:
                pass
        return seen

    assert_same(torch, scenario)


def test_decorated_coroutine_keeps_the_mode_when_an_exception_is_thrown_in(torch):
    class Recoverable(Exception):
        pass

    def scenario(lib):
        seen = []

        @lib.enable_grad()
        def coro():
            raised = False
            for i in range(4):
                try:
                    yield (-i if raised else i)
                except Recoverable:
                    seen.append(("handler", lib.is_grad_enabled()))
                    raised = True

        with lib.no_grad():
            c = coro()
            values = [next(c)]
            try:
                while True:
                    values.append(c.throw(Recoverable))
                    seen.append(("caller", lib.is_grad_enabled()))
            except StopIteration:
                pass
        return seen, values

    assert_same(torch, scenario)


def test_decorated_coroutine_propagates_an_exception_raised_from_its_handler(torch):
    class Fatal(Exception):
        pass

    class Secondary(Exception):
        pass

    def scenario(lib):
        seen = []

        @lib.no_grad()
        def coro():
            for i in range(4):
                try:
                    yield i
                except Fatal:
                    seen.append(lib.is_grad_enabled())
                    raise Secondary from None

        with lib.enable_grad():
            c = coro()
            next(c)
            with pytest.raises(Secondary):
                c.throw(Fatal)
            seen.append(lib.is_grad_enabled())
        return seen

    assert_same(torch, scenario)


def test_closing_a_decorated_coroutine_runs_its_exit_under_the_mode(torch):
    def scenario(lib):
        seen = []

        @lib.no_grad()
        def coro():
            for i in range(10):
                try:
                    yield i
                except GeneratorExit:
                    seen.append(("exit", lib.is_grad_enabled()))
                    raise

        with lib.enable_grad():
            c = coro()
            for _ in range(3):
                next(c)
            c.close()
            seen.append(("caller", lib.is_grad_enabled()))
        return seen

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Grad mode during backward


def test_backward_computes_gradients_when_called_under_no_grad(torch):
    def scenario(lib):
        x = leaf(lib)
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
        return x.grad.tolist()

    assert_same(torch, scenario)


def test_grad_mode_is_off_in_hooks_unless_create_graph(torch):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        y = x * x
        y.register_hook(lambda g: seen.append(lib.is_grad_enabled()))
        lib.autograd.grad(y.sum(), x, retain_graph=True)
        lib.autograd.grad(y.sum(), x, create_graph=True)
        return seen

    assert_same(torch, scenario)


def test_grad_mode_is_restored_after_a_reentrant_backward_in_a_hook(torch):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        y = x * 3

        def hook(g):
            original = lib.is_grad_enabled()
            with lib.enable_grad():
                foo = lib.tensor([2.0, 3.0], requires_grad=True)
                (inner,) = lib.autograd.grad(foo**3, foo, grad_outputs=g)
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled() == original)
            return inner

        y.register_hook(hook)
        y.sum().backward()
        return seen, x.grad.tolist(), lib.is_grad_enabled()

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# inference_mode


def test_inference_mode_disables_grad_and_reports_itself(torch):
    def scenario(lib):
        before = lib.is_inference_mode_enabled()
        with lib.inference_mode():
            inside = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        after = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        return before, inside, after

    assert_same(torch, scenario)


def test_no_grad_is_not_inference_mode(torch):
    def scenario(lib):
        with lib.no_grad():
            return lib.is_inference_mode_enabled(), lib.ones(1).is_inference()

    assert_same(torch, scenario)


def test_tensors_made_in_inference_mode_are_inference_tensors(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.inference_mode():
            fresh = lib.ones(2)
            computed = x * 2
            wants_grad = lib.ones(2, requires_grad=True)
        return [
            (t.is_inference(), t.requires_grad, t.grad_fn is None)
            for t in (fresh, computed, wants_grad)
        ] + [x.is_inference()]

    assert_same(torch, scenario)


def test_views_of_normal_tensors_made_in_inference_mode_are_normal(torch):
    def scenario(lib):
        x = lib.ones(3)
        with lib.inference_mode():
            view = x[:2]
        return view.is_inference(), view._base is x

    assert_same(torch, scenario)


def test_inplace_on_a_normal_tensor_in_inference_mode_bumps_its_version(torch):
    def scenario(lib):
        x = lib.ones(3)
        with lib.inference_mode():
            x.add_(1)
        return x._version, x.is_inference(), x.tolist()

    assert_same(torch, scenario)


def test_inference_mode_false_restores_normal_behaviour_inside_inference_mode(torch):
    def scenario(lib):
        x = leaf(lib)
        with lib.inference_mode():
            with lib.inference_mode(False):
                state = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
                y = x * 2
                fresh = lib.ones(1)
            back = lib.is_inference_mode_enabled()
        return state, y.requires_grad, fresh.is_inference(), back

    assert_same(torch, scenario)


def test_inference_mode_as_a_decorator(torch):
    def scenario(lib):
        @lib.inference_mode
        def bare():
            return lib.is_inference_mode_enabled()

        @lib.inference_mode()
        def called():
            return lib.is_inference_mode_enabled()

        @lib.inference_mode(False)
        def disabled():
            return lib.is_inference_mode_enabled()

        with lib.inference_mode():
            inside = disabled()
        return bare(), called(), inside, lib.is_inference_mode_enabled()

    assert_same(torch, scenario)


def test_inplace_on_an_inference_tensor_inside_inference_mode_is_allowed(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
            t.add_(1)
        return t.tolist()

    assert_same(torch, scenario)


@pytest.mark.parametrize("target", ["tensor", "view"])
def test_inplace_on_an_inference_tensor_outside_inference_mode_raises(torch, target):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        (t if target == "tensor" else t[0:1]).mul_(2)

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "Inplace update to inference tensor outside InferenceMode is not allowed.",
    )


def test_inference_tensor_saved_for_backward_raises(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        w = lib.ones(2, requires_grad=True)
        (w * t).sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "Inference tensors cannot be saved for backward."
    )


def test_inference_tensor_in_an_op_that_saves_nothing_is_allowed(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        w = lib.ones(2, requires_grad=True)
        out = w + t
        out.sum().backward()
        return out.is_inference(), out.requires_grad, w.grad.tolist()

    assert_same(torch, scenario)


def test_requires_grad_on_an_inference_tensor_outside_inference_mode_raises(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        t.requires_grad_()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    )


def test_version_of_an_inference_tensor_raises(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        return t._version

    assert_same_error(
        torch, scenario, RuntimeError, "Inference tensors do not track version counter."
    )


def test_increment_version_of_an_inference_tensor_does_nothing(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
            lib.autograd.graph.increment_version(t)
        lib.autograd.graph.increment_version(t)
        return t.is_inference()

    assert_same(torch, scenario)


def test_clone_of_an_inference_tensor_is_a_normal_tensor(torch):
    def scenario(lib):
        with lib.inference_mode():
            t = lib.ones(2)
        c = t.clone()
        before = c._version
        c.add_(1)  # allowed: c is a normal tensor
        return c.is_inference(), c._version - before, c.tolist()

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Thread-local state


def _in_thread(fn):
    result = {}

    def run():
        result["value"] = fn()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result["value"]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_a_grad_mode_does_not_leak_into_a_new_thread(torch, mode):
    def scenario(lib):
        enter = {
            "no_grad": lib.no_grad,
            "inference_mode": lib.inference_mode,
            "set_grad_enabled": lambda: lib.set_grad_enabled(False),
        }[mode]
        with enter():
            here = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
            there = _in_thread(
                lambda: (
                    lib.is_grad_enabled(),
                    lib.is_inference_mode_enabled(),
                    (leaf(lib) * 2).requires_grad,
                )
            )
        return here, there

    assert_same(torch, scenario)


def test_a_grad_mode_set_in_another_thread_does_not_change_this_one(torch):
    def scenario(lib):
        entered, release = threading.Event(), threading.Event()

        def worker():
            with lib.no_grad():
                entered.set()
                release.wait(10)

        thread = threading.Thread(target=worker)
        thread.start()
        entered.wait(10)
        while_other_is_inside = (lib.is_grad_enabled(), (leaf(lib) * 2).requires_grad)
        lib.set_grad_enabled(True)
        release.set()
        thread.join()
        return while_other_is_inside, lib.is_grad_enabled()

    assert_same(torch, scenario)


def test_set_grad_enabled_function_in_a_thread_affects_only_that_thread(torch):
    def scenario(lib):
        def worker():
            lib.set_grad_enabled(False)
            return lib.is_grad_enabled()

        there = _in_thread(worker)
        return there, lib.is_grad_enabled()

    assert_same(torch, scenario)
