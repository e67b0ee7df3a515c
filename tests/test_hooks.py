"""Backward hooks on tensors and graph nodes, and their relative order, against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_hooks,
test_hook_with_no_name, test_tensor_hooks_inplace, test_grad_nonleaf_register_hook,
test_retain_grad, test_retain_grad_inplace, test_retains_grad_can_always_observe_tensor_prehook,
test_tensor_grad_warnings, test_retain_grad_cycle, test_post_accumulate_grad_hook_on_non_leaf,
test_post_accumulate_grad_hook_multiple_hooks, test_post_accumulate_grad_hook_multiple_tensors,
test_post_accumulate_grad_hook_returns_not_None, test_post_accumulate_grad_hook_e2e (handle
removal), test_post_accumulate_grad_hook_ordering, test_grad_fn_prehooks,
test_grad_fn_prehooks_remove_hooks, test_prehook_ordering,
test_accumulate_grad_posthooks_can_observe_tensor_prehook,
test_accumulate_grad_posthooks_should_not_execute, test_hook_edge_case_when_called_with_grad,
test_backward_hook_relative_ordering (without nn.Module) and test_hook_closure_cycle.
``register_multi_grad_hook`` has no test in the reference copy: its cases follow the
examples of its docstring in ``torch.autograd.graph``.

Every test runs one scenario with ``lib = opgrad`` and ``lib = torch`` and compares
plain Python results (lists of floats, logs of hook names, error type and text).
"""

import gc
import importlib
import warnings
import weakref

import pytest

from torch_oracle import vals, assert_same, assert_same_error

# ---------------------------------------------------------------------------
# Helpers


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(list(values), requires_grad=True)


# ---------------------------------------------------------------------------
# Tensor.register_hook


def test_tensor_hook_receives_the_gradient_of_a_non_leaf(torch):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        y = x * 2
        y.register_hook(lambda g: seen.append(vals(g)))
        (y * y).sum().backward()
        return seen

    assert_same(torch, scenario)


def test_tensor_hook_returning_none_leaves_the_gradient_unchanged(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        y.register_hook(lambda g: None)
        (y * y).sum().backward()
        return vals(x.grad)

    assert_same(torch, scenario)


def test_tensor_hook_return_value_replaces_the_gradient_of_a_non_leaf(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return vals(x.grad)

    assert_same(torch, scenario)


def test_tensor_hook_on_a_leaf_changes_what_is_accumulated(torch):
    def scenario(lib):
        x = leaf(lib)
        x.register_hook(lambda g: g + 100)
        (x * 3).sum().backward()
        return vals(x.grad)

    assert_same(torch, scenario)


def test_tensor_hooks_run_in_registration_order_each_seeing_the_previous_result(torch):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        y = x * 1

        def first(g):
            seen.append(("first", vals(g)))
            return g + 1

        def second(g):
            seen.append(("second", vals(g)))
            return g * 3

        y.register_hook(first)
        y.register_hook(second)
        y.sum().backward()
        return seen, vals(x.grad)

    assert_same(torch, scenario)


def test_tensor_hook_runs_once_per_backward(torch):
    def scenario(lib):
        counter = [0]
        x = leaf(lib)
        z = x**2 + x * 2
        z.register_hook(lambda g: counter.__setitem__(0, counter[0] + 1))
        z.backward(lib.ones(3), retain_graph=True)
        z.backward(lib.ones(3), retain_graph=True)
        return counter[0]

    assert_same(torch, scenario)


def test_tensor_hook_on_a_leaf_and_a_non_leaf_both_modify_the_result(torch):
    def scenario(lib):
        x = lib.ones(2, 2, requires_grad=True)
        y = (lib.ones(2, 2) * 4).requires_grad_(True)
        z = x**2 + x * 2 + x * y + y
        z.register_hook(lambda g: g.mul(2))
        y.register_hook(lambda g: g.mul(2))
        z.backward(lib.ones(2, 2))
        return vals(x.grad), vals(y.grad)

    assert_same(torch, scenario)


def test_removed_tensor_hook_no_longer_runs(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)
        y = x * 2
        keep = y.register_hook(lambda g: log.append("kept"))
        gone = y.register_hook(lambda g: log.append("removed"))
        y.sum().backward(retain_graph=True)
        gone.remove()
        gone.remove()  # removing twice is harmless
        y.sum().backward()
        return log, keep is not gone

    assert_same(torch, scenario)


def test_hook_handles_are_removable_handles(torch):
    def scenario(lib):
        hooks = importlib.import_module(lib.__name__ + ".utils.hooks")
        x = leaf(lib)
        y = x * 2
        handles = [
            x.register_hook(lambda g: None),
            y.register_hook(lambda g: None),
            x.register_post_accumulate_grad_hook(lambda t: None),
            y.grad_fn.register_hook(lambda gi, go: None),
            y.grad_fn.register_prehook(lambda go: None),
        ]
        return [isinstance(h, hooks.RemovableHandle) for h in handles]

    assert_same(torch, scenario)


def test_removable_handle_used_as_a_context_manager_removes_the_hook_on_exit(torch):
    def scenario(lib):
        log = []
        x = leaf(lib)
        y = x * 2
        with y.register_hook(lambda g: log.append("inside")):
            y.sum().backward(retain_graph=True)
        y.sum().backward()
        return log

    assert_same(torch, scenario)


def test_register_hook_on_a_tensor_that_does_not_require_grad_raises(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(2).register_hook(lambda g: g),
        RuntimeError,
        "cannot register a hook on a tensor that doesn't require gradient",
    )


@pytest.mark.parametrize("where", ["leaf", "non_leaf"])
def test_hook_returning_a_wrong_shaped_gradient_raises(torch, where):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2

        def bad_hook(g):
            return lib.ones(2)

        (x if where == "leaf" else y).register_hook(bad_hook)
        y.sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "hook 'bad_hook' has changed the size of value"
    )


def test_hook_returning_a_gradient_of_another_dtype_raises(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2

        def double_hook(g):
            return g.double()

        y.register_hook(double_hook)
        y.sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "hook 'double_hook' has changed the type of value"
    )


def test_hook_returning_a_non_tensor_raises_type_error(torch):
    def scenario(lib):
        x = leaf(lib)
        x.register_hook(lambda g: 3)
        (x * 2).sum().backward()

    assert_same_error(torch, scenario, TypeError, "expected Variable, but hook returned 'int'")


def test_callable_object_without_a_name_can_be_a_hook(torch):
    class Doubler:
        def __call__(self, grad):
            return grad * 2

    def scenario(lib):
        x = leaf(lib)
        y = x.clone()
        y.register_hook(Doubler())
        y.sum().backward()
        return vals(x.grad)

    assert_same(torch, scenario)


def test_hook_on_one_element_runs_only_when_that_element_is_backpropagated(torch):
    def scenario(lib):
        seen = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        parts = [x[i] for i in range(3)]
        parts[0].register_hook(lambda g: seen.append(vals(g)))
        grads = []
        for p in parts:
            p.backward()
            grads.append(vals(x.grad))
        return seen, grads

    assert_same(torch, scenario)


def test_hook_registered_before_an_inplace_op_sees_the_gradient_of_the_old_version(torch):
    def scenario(lib):
        seen = []
        a = lib.tensor([1.0], requires_grad=True)
        b = a.clone()

        def old_version(g):
            seen.append(("old", vals(g)))
            return g * 2

        def new_version(g):
            seen.append(("new", vals(g)))
            return g * 2

        b.register_hook(old_version)
        b.mul_(2)
        b.register_hook(new_version)
        b.sum().backward()
        return seen, vals(a.grad)

    assert_same(torch, scenario)


def test_tensor_hook_does_not_keep_the_graph_alive_after_the_tensor_is_gone(torch):
    class Sentinel:
        pass

    def scenario(lib):
        count = [0]

        def build():
            a = lib.tensor(1.0, requires_grad=True)
            b = a.clone()
            grad_fn_b = b.grad_fn
            obj = Sentinel()

            def hook(*args):
                grad_fn_b, obj  # the closure holds the node and the sentinel
                count[0] += 1

            b.register_hook(hook)
            return b.clone(), weakref.ref(obj)

        out, ref = build()
        out.backward(retain_graph=True)
        gc.collect()
        out.backward(retain_graph=True)
        alive_while_graph_lives = ref() is not None
        del out
        gc.collect()
        return count[0], alive_while_graph_lives, ref() is None

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# retain_grad / retains_grad


def test_retain_grad_populates_the_grad_of_a_non_leaf(torch):
    def scenario(lib):
        x = leaf(lib)
        h = x * 3
        h.retain_grad()
        (h * h).sum().backward()
        return vals(h.grad)

    assert_same(torch, scenario)


def test_retained_grad_accumulates_over_backward_calls(torch):
    def scenario(lib):
        x = leaf(lib)
        h = x * 3
        h.retain_grad()
        h.retain_grad()  # a second call is allowed
        out = (h * h).sum()
        out.backward(retain_graph=True)
        first = vals(h.grad)
        out.backward()
        return first, vals(h.grad)

    assert_same(torch, scenario)


def test_retain_grad_on_a_leaf_is_a_no_op(torch):
    def scenario(lib):
        x = leaf(lib)
        x.retain_grad()
        x.retain_grad()
        (x * x).sum().backward()
        return vals(x.grad), x.retains_grad

    assert_same(torch, scenario)


def test_retains_grad_is_true_only_for_non_leaves_after_retain_grad(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        before = y.retains_grad
        y.retain_grad()
        return before, y.retains_grad, x.retains_grad, lib.ones(2).retains_grad

    assert_same(torch, scenario)


def test_retain_grad_on_a_tensor_without_grad_raises(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(2).retain_grad(),
        RuntimeError,
        "can't retain_grad on Tensor that has requires_grad=False",
    )


def test_reading_grad_of_a_non_leaf_warns_unless_it_retains_grad(torch):
    def scenario(lib):
        counts = []
        x = lib.ones(1).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x.grad
            counts.append(len(caught))
            y = x.clone()
            y.grad
            counts.append(len(caught))
            y.retain_grad()
            y.grad
            counts.append(len(caught))
        text = str(caught[0].message) if caught else ""
        return counts, caught[0].category.__name__ if caught else None, text[:60]

    assert_same(torch, scenario)


def test_retained_grad_is_the_gradient_of_the_latest_version_after_an_inplace_op(torch):
    def scenario(lib):
        a = lib.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        a.mul_(2)
        a.mul_(2)
        a.sum().backward()
        return vals(a.grad)

    assert_same(torch, scenario)


def test_retained_grad_of_a_view_modified_in_place_is_kept(torch):
    def scenario(lib):
        base = lib.tensor([1.0], requires_grad=True).clone()
        view = base[:]
        view2 = base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        return vals(view.grad), vals(view2.grad)

    assert_same(torch, scenario)


@pytest.mark.parametrize("retain_first", [True, False], ids=["retain_between", "retain_first"])
def test_retained_grad_sees_the_result_of_every_tensor_hook(torch, retain_first):
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        if retain_first:
            b.register_hook(lambda g: g * 2)
            b.retain_grad()
            b.register_hook(lambda g: g * 2)
        else:
            b.retain_grad()
            b.register_hook(lambda g: g * 2)
        b.clone().backward()
        return b.grad.item()

    assert_same(torch, scenario)


def test_tensor_hook_registered_after_retain_grad_still_sees_no_grad(torch):
    def scenario(lib):
        seen = []
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 1
        b.retain_grad()
        b.register_hook(lambda g: seen.append(b.grad is None))
        b.backward()
        return seen

    assert_same(torch, scenario)


def test_retain_grad_does_not_keep_the_tensor_alive(torch):
    def scenario(lib):
        x = lib.ones(5, 5, requires_grad=True)

        def run():
            y = x * 2
            y.retain_grad()
            return y / 2, weakref.ref(y)

        z, ref = run()
        dead = ref() is None
        z.sum().backward()
        return dead, vals(x.grad)[0][0]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# register_post_accumulate_grad_hook


def test_post_accumulate_grad_hook_sees_the_accumulated_grad(torch):
    def scenario(lib):
        seen = []
        x = leaf(lib)
        x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, vals(t.grad))))
        (x * 4).sum().backward()
        return seen

    assert_same(torch, scenario)


def test_post_accumulate_grad_hooks_run_in_registration_order(torch):
    def scenario(lib):
        x = leaf(lib)

        def step(t):
            t.sub_(t.grad)

        def scale(t):
            t.mul_(4.0)

        x.register_post_accumulate_grad_hook(step)
        x.register_post_accumulate_grad_hook(scale)
        x.sum().backward()
        return vals(x)

    assert_same(torch, scenario)


def test_post_accumulate_grad_hook_can_be_shared_by_several_leaves(torch):
    def scenario(lib):
        def step(t):
            t.sub_(t.grad)

        a, b = leaf(lib), leaf(lib, (5.0, 6.0))
        a.register_post_accumulate_grad_hook(step)
        b.register_post_accumulate_grad_hook(step)
        a.sum().backward()
        b.sum().backward()
        return vals(a), vals(b)

    assert_same(torch, scenario)


def test_removed_post_accumulate_grad_hook_no_longer_runs(torch):
    def scenario(lib):
        calls = []
        x = leaf(lib)
        handle = x.register_post_accumulate_grad_hook(lambda t: calls.append(vals(t.grad)))
        x.sum().backward()
        handle.remove()
        x.sum().backward()
        return calls, vals(x.grad)

    assert_same(torch, scenario)


def test_post_accumulate_grad_hook_does_not_run_for_autograd_grad(torch):
    def scenario(lib):
        calls = []
        x = leaf(lib)
        x.register_post_accumulate_grad_hook(lambda t: calls.append(1))
        lib.autograd.grad((x * 2).sum(), x)
        return calls, x.grad

    assert_same(torch, scenario)


def test_post_accumulate_grad_hook_on_a_non_leaf_raises(torch):
    assert_same_error(
        torch,
        lambda lib: (2.0 * leaf(lib)).register_post_accumulate_grad_hook(lambda t: None),
        RuntimeError,
        "post accumulate grad hooks cannot be registered on non-leaf tensors",
    )


def test_post_accumulate_grad_hook_on_a_tensor_without_grad_raises(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda t: None),
        RuntimeError,
        "cannot register a hook on a tensor that doesn't require gradient",
    )


def test_post_accumulate_grad_hook_returning_a_value_raises(torch):
    def scenario(lib):
        x = lib.ones(2, 3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad)
        x.sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "hooks should return None.")


def test_post_accumulate_grad_hook_runs_between_accumulate_grad_pre_and_post_hooks(torch):
    def scenario(lib):
        x = leaf(lib)
        acc = x.view_as(x).grad_fn.next_functions[0][0]

        def node_post(grad_inputs, grad_outputs):
            x.grad = grad_outputs[0].mul(10)

        def post_accumulate(t):
            t.grad.add_(0.5)

        x.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda grad_outputs: (grad_outputs[0].div(5.0),))
        x.register_post_accumulate_grad_hook(post_accumulate)
        acc.register_hook(node_post)
        x.sum().backward()
        # ((1 - 2) / 5 + 0.5) * 10 in PyTorch's order
        return vals(x.grad)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Node.register_prehook / Node.register_hook


def test_node_prehook_replaces_the_grad_outputs(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a * a
        b.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 3,))
        b.sum().backward()
        return vals(a.grad)

    assert_same(torch, scenario)


def test_node_prehook_returning_none_keeps_the_grad_outputs(torch):
    def scenario(lib):
        calls = []
        a = lib.ones(3, 3, requires_grad=True)
        b = a * 2
        b.grad_fn.register_prehook(lambda grad_outputs: calls.append(len(grad_outputs)))
        b.sum().backward()
        return calls, vals(a.grad)

    assert_same(torch, scenario)


def test_node_prehooks_chain_and_post_hooks_see_their_result(torch):
    def scenario(lib):
        log = []
        a = lib.tensor([1.0], requires_grad=True)
        b = a * 2

        def prehook(grad_outputs):
            log.append(("pre", vals(grad_outputs[0])))
            return (grad_outputs[0] * 2,)

        def posthook(grad_inputs, grad_outputs):
            log.append(("post", [vals(g) for g in grad_inputs], vals(grad_outputs[0])))

        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(lambda grad_outputs: None)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(lambda grad_outputs: grad_outputs)
        b.sum().backward()
        return log, vals(a.grad)

    assert_same(torch, scenario)


def test_node_post_hook_receives_grad_inputs_and_grad_outputs(torch):
    def scenario(lib):
        seen = []
        a = leaf(lib)
        c = lib.tensor([4.0, 5.0, 6.0])
        b = a * c
        b.grad_fn.register_hook(
            lambda grad_inputs, grad_outputs: seen.append(
                ([vals(g) for g in grad_inputs], [vals(g) for g in grad_outputs])
            )
        )
        (b * 2).sum().backward()
        return seen

    assert_same(torch, scenario)


def test_node_post_hook_return_value_replaces_the_grad_inputs(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a.clone()
        b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_outputs[0] * 2,))
        b.sum().backward(retain_graph=True)
        return vals(a.grad)

    assert_same(torch, scenario)


def test_removed_node_prehook_no_longer_runs(torch):
    def scenario(lib):
        counter = [0]
        a = lib.rand(3, 3, requires_grad=True)
        b = a * 2

        def prehook(grad_outputs):
            counter[0] += 1

        handle = b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(prehook)
        handle.remove()
        b.sum().backward()
        return counter[0], vals(a.grad)

    assert_same(torch, scenario)


def test_removed_node_post_hook_no_longer_runs(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a.clone()
        handle = b.grad_fn.register_hook(lambda gi, go: (go[0] * 2,))
        b.sum().backward(retain_graph=True)
        first = vals(a.grad)
        handle.remove()
        a.grad = None
        b.sum().backward()
        return first, vals(a.grad)

    assert_same(torch, scenario)


def test_node_prehook_removed_by_an_earlier_prehook_during_backward_does_not_run(torch):
    def scenario(lib):
        counter = [0]
        a = lib.ones(3, 3, requires_grad=True)
        b = a * 2

        def remover(grad_outputs):
            second.remove()
            third.remove()  # already removed: harmless

        def counting(grad_outputs):
            counter[0] += 1

        b.grad_fn.register_prehook(remover)
        second = b.grad_fn.register_prehook(counting)
        third = b.grad_fn.register_prehook(counting)
        third.remove()
        b.sum().backward()
        return counter[0], vals(a.grad)

    assert_same(torch, scenario)


def test_node_prehook_returning_a_wrong_shaped_gradient_raises(torch):
    def scenario(lib):
        b = leaf(lib).exp()

        def bad_prehook(grad_outputs):
            return (lib.ones(2),)

        b.grad_fn.register_prehook(bad_prehook)
        b.sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "hook 'bad_prehook' has changed the size of value"
    )


def test_node_prehook_returning_too_many_gradients_raises(torch):
    def scenario(lib):
        b = leaf(lib).exp()

        def greedy(grad_outputs):
            return (grad_outputs[0], grad_outputs[0])

        b.grad_fn.register_prehook(greedy)
        b.sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "hook 'greedy' has returned an incorrect number of values (got 2, but expected 1)",
    )


def test_node_post_hook_returning_too_few_gradients_raises(torch):
    def scenario(lib):
        b = leaf(lib) * 2  # MulBackward0 has two inputs; the constant's is None

        def short(grad_inputs, grad_outputs):
            return (grad_inputs[0],)

        b.grad_fn.register_hook(short)
        b.sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "hook 'short' has returned an incorrect number of values (got 1, but expected 2)",
    )


def test_node_post_hook_cannot_fill_in_a_none_gradient(torch):
    def scenario(lib):
        b = leaf(lib) * 2

        b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0],) * 2)
        b.sum().backward()

    assert_same_error(
        torch, scenario, RuntimeError, "can't replace a None gradient with a non-None value"
    )


@pytest.mark.parametrize("kind", ["prehook", "posthook"])
def test_node_hook_returning_a_tensor_instead_of_a_tuple_raises_type_error(torch, kind):
    def scenario(lib):
        b = leaf(lib).exp()
        if kind == "prehook":
            b.grad_fn.register_prehook(lambda grad_outputs: grad_outputs[0])
        else:
            b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: grad_inputs[0])
        b.sum().backward()

    assert_same_error(torch, scenario, TypeError, "expected tuple, but hook returned 'Tensor'")


def test_accumulate_grad_node_hooks_see_the_gradient_changed_by_tensor_hooks(torch):
    def scenario(lib):
        seen = []
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(
            lambda grad_inputs, grad_outputs: seen.append(
                ("post", len(grad_inputs), [vals(g) for g in grad_outputs])
            )
        )
        acc.register_prehook(
            lambda grad_outputs: seen.append(("pre", [vals(g) for g in grad_outputs]))
        )
        a.register_hook(lambda g: g * 2)
        b.backward()
        return seen

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Relative order of the hooks


def test_tensor_hooks_run_before_node_prehooks_whatever_the_registration_order(torch):
    def scenario(lib):
        log = []

        def tensor_hook(g):
            log.append("tensor")
            return g * 3

        def node_prehook(grad_outputs):
            log.append("node")
            return tuple(g * 2 for g in grad_outputs)

        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(node_prehook)
        b.register_hook(tensor_hook)
        b.grad_fn.register_prehook(node_prehook)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(tensor_hook)
        acc.register_prehook(node_prehook)
        a.register_hook(tensor_hook)
        b.sum().backward()
        return log, a.grad.item()

    assert_same(torch, scenario)


def test_autograd_grad_runs_the_input_tensor_hooks_but_not_its_accumulate_grad(torch):
    def scenario(lib):
        log = []
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(lambda go: log.append("b node pre"))
        b.register_hook(lambda g: log.append("b tensor"))
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(lambda g: log.append("a tensor"))
        acc.register_prehook(lambda go: log.append("a accumulate pre"))
        acc.register_hook(lambda gi, go: log.append("a accumulate post"))
        (grad,) = lib.autograd.grad(b.sum(), inputs=(a,))
        return log, grad.item(), a.grad

    assert_same(torch, scenario)


def test_backward_with_a_non_leaf_input_stops_after_its_tensor_hooks(torch):
    def scenario(lib):
        log = []

        def tensor_hook(g):
            log.append("tensor")
            return g * 3

        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(lambda go: log.append("node"))
        b.register_hook(tensor_hook)
        a.register_hook(lambda g: log.append("leaf"))
        b.sum().backward(inputs=(b,))
        # retains_grad runs after every tensor hook, so b.grad sees the * 3
        return log, b.grad.item(), a.grad

    assert_same(torch, scenario)


def test_full_hook_order_of_a_small_graph(torch):
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y.exp()
        out = z.sum()
        acc = y.grad_fn.next_functions[0][0]
        for name, t in (("out", out), ("z", z), ("y", y)):
            t.grad_fn.register_prehook(lambda go, n=name: log.append(n + " node pre"))
            t.grad_fn.register_hook(lambda gi, go, n=name: log.append(n + " node post"))
        z.register_hook(lambda g: log.append("z tensor"))
        y.register_hook(lambda g: log.append("y tensor"))
        x.register_hook(lambda g: log.append("x tensor"))
        acc.register_prehook(lambda go: log.append("accumulate pre"))
        acc.register_hook(lambda gi, go: log.append("accumulate post"))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post accumulate"))
        out.backward()
        return log

    assert_same(torch, scenario)


def test_hook_order_follows_the_reverse_creation_order_of_independent_branches(torch):
    def scenario(lib):
        log = []
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        e = x.exp()
        s = x.sin()
        e.grad_fn.register_prehook(lambda go: log.append("exp"))
        s.grad_fn.register_prehook(lambda go: log.append("sin"))
        (e + s).sum().backward()
        return log

    assert_same(torch, scenario)


def test_autograd_grad_runs_node_hooks_only_on_the_path_to_its_inputs(torch):
    def scenario(lib):
        counts = {}

        def count(kind):
            def hook(*args):
                counts[kind] = counts.get(kind, 0) + 1

            return hook

        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        a.register_hook(count("tensor"))
        b.register_hook(count("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        for node in (acc, b.grad_fn):
            node.register_hook(count("post"))
            node.register_prehook(count("pre"))

        runs = []
        for call in (
            lambda: lib.autograd.grad(c, inputs=(b,), retain_graph=True),
            lambda: lib.autograd.grad(c, inputs=(a, b), retain_graph=True),
            lambda: c.backward(retain_graph=True),
            lambda: c.backward(inputs=(a, b), retain_graph=True),
        ):
            counts.clear()
            call()
            runs.append(dict(counts))
        return runs

    assert_same(torch, scenario)


def test_hooks_of_a_leaf_outside_backward_inputs_do_not_run(torch):
    def scenario(lib):
        def explode(*args):
            raise RuntimeError("this hook must not run")

        a = lib.tensor(1.0, requires_grad=True)
        a.register_hook(explode)
        b = lib.tensor(1.0, requires_grad=True)
        c = a.clone()
        c.grad_fn.next_functions[0][0].register_hook(explode)
        (a + b + c).sum().backward(inputs=[b])
        return a.grad, b.grad.item()

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# autograd.graph.register_multi_grad_hook


def test_multi_grad_hook_all_gets_every_gradient_once_in_tensor_order(torch):
    def scenario(lib):
        calls = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        lib.autograd.graph.register_multi_grad_hook(
            (a, b, c), lambda grads: calls.append([vals(g) for g in grads])
        )
        (c * 2).sum().backward()
        return calls

    assert_same(torch, scenario)


def test_multi_grad_hook_all_passes_none_for_tensors_outside_the_graph(torch):
    def scenario(lib):
        calls = []
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: calls.append([g is not None for g in grads])
        )
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        return calls

    assert_same(torch, scenario)


def test_multi_grad_hook_all_runs_once_per_backward_call(torch):
    def scenario(lib):
        calls = []
        a = leaf(lib)
        b = a * 2
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: calls.append(len(grads)))
        out = (b * b).sum()
        out.backward(retain_graph=True)
        out.backward(retain_graph=True)
        return calls

    assert_same(torch, scenario)


def test_multi_grad_hook_any_gets_only_the_first_gradient_computed(torch):
    def scenario(lib):
        calls = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        e = a * 3
        f = b * 5  # created later, so its gradient is computed first
        lib.autograd.graph.register_multi_grad_hook(
            (e, f), lambda grad: calls.append(vals(grad)), mode="any"
        )
        out = e.sum() + (f * 2).sum()
        out.backward(retain_graph=True)
        out.backward()
        return calls

    assert_same(torch, scenario)


def test_multi_grad_hook_any_ignores_tensors_that_do_not_require_grad(torch):
    def scenario(lib):
        calls = []
        a = leaf(lib)
        lib.autograd.graph.register_multi_grad_hook(
            (lib.ones(3), a), lambda grad: calls.append(vals(grad)), mode="any"
        )
        (a * 2).sum().backward()
        return calls

    assert_same(torch, scenario)


@pytest.mark.parametrize("mode", ["all", "any"])
def test_removed_multi_grad_hook_no_longer_runs(torch, mode):
    def scenario(lib):
        calls = []
        a = leaf(lib)
        b = a * 2
        handle = lib.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g: calls.append(1), mode=mode
        )
        out = (b * b).sum()
        out.backward(retain_graph=True)
        handle.remove()
        out.backward()
        return calls

    assert_same(torch, scenario)


def test_multi_grad_hook_with_an_unknown_mode_raises_value_error(torch):
    assert_same_error(
        torch,
        lambda lib: lib.autograd.graph.register_multi_grad_hook(
            (leaf(lib),), lambda g: None, mode="bad"
        ),
        ValueError,
        "Expects mode to be one of ('all', 'any') but got bad",
    )
