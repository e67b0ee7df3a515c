"""Saved tensors: saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks,
allow_mutation_on_saved_tensors, the version check and graph lifetime, against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd):
test_get_data_and_hooks_from_raw_saved_variable,
test_saved_variable_packing_unpacking_saved_original_with_hooks (its default-hooks analogue),
test_saved_tensor_hooks_extra_exit_during_bw_no_crash (hooks stack left clean),
test_node_post_hook_registered_during_unpack_hook (subclassing saved_tensors_hooks),
test_saved_variable_saved_original_inplace_detach, test_anomaly_grad_warnings (the version
error text), test_no_unnecessary_unwrapping, test_retain_grad_cycle and test_custom_function_cycle
(lifetime without ``gc.collect()``). ``save_on_cpu``, ``disable_saved_tensors_hooks`` and
``allow_mutation_on_saved_tensors`` have no test in the reference copy (PyTorch keeps them in
TestAutogradSavedTensorHooks / TestAllowMutationOnSaved): those cases pin torch 2.13 directly,
following the docstrings in ``torch.autograd.graph``.

Every test runs one scenario with ``lib = opgrad`` and ``lib = torch`` and compares
plain Python results (lists of floats, logs, error type and text).
"""

import gc
import weakref

import pytest

from torch_oracle import vals, outcome, assert_same, assert_same_error

# ---------------------------------------------------------------------------
# Helpers


def rounded(t, digits=5):
    return [round(v, digits) for v in vals(t)]


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def leaf(lib, values=(1.0, 2.0, 3.0), dtype=None):
    """A float64 leaf (float64 so that exp/sin agree with PyTorch to the digits compared)."""
    return lib.tensor(list(values), requires_grad=True, dtype=dtype or lib.float64)


def hooks_of(lib):
    return lib.autograd.graph.saved_tensors_hooks


@pytest.fixture
def no_gc():
    """Run the test with the cycle collector off: only reference counting frees memory."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Payload:
    """An object stored in a node's metadata, to observe the node's lifetime."""


def watch_node(node):
    payload = Payload()
    node.metadata["watch"] = payload
    return weakref.ref(payload)


VERSION_PHRASE = (
    "one of the variables needed for gradient computation has been modified by an "
    "inplace operation"
)

# ---------------------------------------------------------------------------
# saved_tensors_hooks


def test_pack_hook_runs_in_forward_once_per_saved_tensor(torch):
    def scenario(lib):
        log = []
        a = leaf(lib)
        b = a * 1

        def pack(t):
            log.append(("pack", rounded(t)))
            return t

        with hooks_of(lib)(pack, lambda p: p):
            y = a * b  # saves a and b
            z = y.exp()  # saves its result
            log.append("forward done")
        packs = log[: log.index("forward done")]
        return len(packs), sorted(str(p) for p in packs), log[-1]

    assert_same(torch, scenario)


def test_pack_hook_receives_saved_inputs_and_outputs_themselves(torch):
    def scenario(lib):
        got = []
        a = leaf(lib)
        b = a * 1
        with hooks_of(lib)(lambda t: got.append(t) or t, lambda p: p):
            e = a.exp()
            a * b
        return [[g is t for t in (a, b, e)] for g in got[:1]], sorted(
            [[g is t for t in (a, b, e)] for g in got[1:]]
        )

    assert_same(torch, scenario)


def test_unpack_hook_runs_in_backward_with_what_pack_returned(torch):
    def scenario(lib):
        log = []
        a = leaf(lib)
        b = a * 1

        def pack(t):
            return ("packed", t)

        def unpack(packed):
            log.append((packed[0], rounded(packed[1])))
            return packed[1]

        with hooks_of(lib)(pack, unpack):
            y = (a * b).exp()
        log.append("backward starts")
        y.sum().backward()
        return log[0], sorted(log[1:]), rounded(a.grad)

    assert_same(torch, scenario)


def test_unpack_hook_result_is_what_the_formula_uses(torch):
    def scenario(lib):
        a = leaf(lib)
        with hooks_of(lib)(lambda t: t * 2, lambda t: t):
            y = a * a
        y.sum().backward()
        return vals(a.grad)

    assert_same(torch, scenario)


def test_unpack_hook_runs_again_for_each_backward_through_a_retained_graph(torch):
    def scenario(lib):
        count = [0]
        a = leaf(lib)

        def unpack(t):
            count[0] += 1
            return t

        with hooks_of(lib)(lambda t: t, unpack):
            y = (a * a).sum()
        y.backward(retain_graph=True)
        y.backward()
        return count[0]

    assert_same(torch, scenario)


def test_reading_a_saved_field_runs_the_unpack_hook(torch):
    def scenario(lib):
        log = []
        a = leaf(lib)
        with hooks_of(lib)(lambda t: t, lambda t: log.append("unpack") or t):
            y = a.exp()
        saved = y.grad_fn._saved_result
        return log, rounded(saved)

    assert_same(torch, scenario)


def test_saved_output_read_through_hooks_keeps_its_grad_fn(torch):
    def scenario(lib):
        a = leaf(lib)
        with hooks_of(lib)(lambda t: t, lambda t: t):
            y = a.exp()
        return y.grad_fn._saved_result.grad_fn is y.grad_fn

    assert_same(torch, scenario)


def test_hooks_apply_only_to_tensors_saved_inside_the_context(torch):
    def scenario(lib):
        log = []
        a = leaf(lib)
        with hooks_of(lib)(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
            inside = a * a
        outside = a.exp()
        (inside.sum() + outside.sum()).backward()
        return log

    assert_same(torch, scenario)


def test_nested_hooks_use_the_innermost_pair(torch):
    def scenario(lib):
        log = []
        a = leaf(lib)
        with hooks_of(lib)(lambda t: log.append("outer") or t, lambda t: t):
            with hooks_of(lib)(lambda t: log.append("inner") or t, lambda t: t):
                a * a
            a * a
        return log

    assert_same(torch, scenario)


def test_saved_tensors_hooks_can_be_subclassed(torch):
    def scenario(lib):
        log = []

        class Recording(hooks_of(lib)):
            def __init__(self):
                super().__init__(self.pack, self.unpack)

            def pack(self, t):
                log.append("pack")
                return t

            def unpack(self, t):
                log.append("unpack")
                return t

        a = leaf(lib)
        with Recording():
            y = a.exp()
        y.sum().backward()
        return log

    assert_same(torch, scenario)


def test_entering_and_leaving_the_context_leaves_no_hooks_behind(torch):
    def scenario(lib):
        a = leaf(lib)
        for _ in range(3):
            with hooks_of(lib)(lambda t: t, lambda t: t):
                a.sin().sum().backward()
        y = a.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        return rounded(y.grad_fn._saved_result)

    assert_same(torch, scenario)


def test_unpack_hook_returning_a_non_tensor_raises_type_error(torch):
    def scenario(lib):
        a = leaf(lib)
        with hooks_of(lib)(lambda t: t, lambda t: 1):
            y = a * a
        y.sum().backward()

    assert_same_error(
        torch, scenario, TypeError, "Output of saved tensor unpack_hook expected to be a Tensor"
    )


def test_pack_hook_modifying_its_input_in_place_raises(torch):
    def scenario(lib):
        c = leaf(lib) * 1

        def inplace_double(t):
            t.mul_(2)
            return t

        with hooks_of(lib)(inplace_double, lambda t: t):
            c * c

    assert_same_error(
        torch, scenario, RuntimeError, "A saved tensor pack hook is modifying its input in place."
    )


def test_exception_in_a_pack_hook_propagates(torch):
    def scenario(lib):
        def failing(t):
            raise ValueError("pack failed")

        with hooks_of(lib)(failing, lambda t: t):
            leaf(lib) * leaf(lib)

    assert_same_error(torch, scenario, ValueError, "pack failed")


def test_register_hooks_on_a_tensor_saved_under_default_hooks_raises(torch):
    def scenario(lib):
        a = leaf(lib)
        with hooks_of(lib)(lambda t: t, lambda t: t):
            y = a.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "Calling register_hooks on a saved tensor whose hooks have already been set.",
    )


# ---------------------------------------------------------------------------
# save_on_cpu


def test_save_on_cpu_is_a_saved_tensors_hooks(torch):
    def scenario(lib):
        return isinstance(lib.autograd.graph.save_on_cpu(), hooks_of(lib))

    assert_same(torch, scenario)


def test_save_on_cpu_gives_the_same_gradients(torch):
    def scenario(lib):
        a = leaf(lib)
        b = leaf(lib, (0.5, -1.0, 2.0))
        with lib.autograd.graph.save_on_cpu():
            y = (a * b).exp() * a
        y.sum().backward()
        return rounded(a.grad), rounded(b.grad)

    assert_same(torch, scenario)


def test_save_on_cpu_saved_fields_read_back_the_values(torch):
    def scenario(lib):
        a = leaf(lib)
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            y = a * leaf(lib, (4.0, 5.0, 6.0))
            z = a.exp()
        return vals(y.grad_fn._saved_self), rounded(z.grad_fn._saved_result)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# disable_saved_tensors_hooks


@pytest.mark.parametrize("kind", ["saved_tensors_hooks", "save_on_cpu"])
def test_hooks_entered_while_disabled_raise_the_given_message(torch, kind):
    def scenario(lib):
        graph = lib.autograd.graph
        with graph.disable_saved_tensors_hooks("no saved tensor hooks here"):
            if kind == "save_on_cpu":
                ctx = graph.save_on_cpu()
            else:
                ctx = graph.saved_tensors_hooks(lambda t: t, lambda t: t)
            with ctx:
                pass

    assert_same_error(torch, scenario, RuntimeError, "no saved tensor hooks here")


def test_nested_disable_uses_the_inner_message_then_the_outer_one(torch):
    def scenario(lib):
        graph = lib.autograd.graph
        seen = []

        def try_enter():
            seen.append(
                outcome(lambda: graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__())
            )

        with graph.disable_saved_tensors_hooks("outer"):
            with graph.disable_saved_tensors_hooks("inner"):
                try_enter()
            try_enter()
        return seen

    assert_same(torch, scenario)


def test_hooks_work_again_after_disable_exits(torch):
    def scenario(lib):
        graph = lib.autograd.graph
        log = []
        with graph.disable_saved_tensors_hooks("disabled"):
            pass
        with graph.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: t):
            leaf(lib).exp()
        return log

    assert_same(torch, scenario)


def test_disabling_while_hooks_are_active_raises(torch):
    def scenario(lib):
        graph = lib.autograd.graph
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with graph.disable_saved_tensors_hooks("cannot disable now"):
                pass

    assert_same_error(torch, scenario, RuntimeError, "cannot disable now")


# ---------------------------------------------------------------------------
# allow_mutation_on_saved_tensors


def test_inplace_change_of_a_saved_tensor_fails_without_allow_mutation(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()

    assert_same_error(torch, scenario, RuntimeError, VERSION_PHRASE)


def test_allow_mutation_lets_backward_see_the_saved_value(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            out.backward()
        return vals(a.grad), rounded(b)

    assert_same(torch, scenario)


def test_allow_mutation_keeps_the_first_saved_value_over_several_changes(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            b = a.clone()
            out = b.exp().sum()
            b.add_(1)
            b.add_(1)
            out.backward()
        return rounded(a.grad)

    assert_same(torch, scenario)


def test_allow_mutation_covers_a_saved_output(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib, (0.0, 1.0))
            e = a.exp()
            out = (e * 1).sum()
            e.zero_()
            out.backward()
        return rounded(a.grad)

    assert_same(torch, scenario)


def test_allow_mutation_covers_a_leaf_changed_under_no_grad(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            out = (a * a).sum()
            with lib.no_grad():
                a.mul_(2)
            out.backward()
        return vals(a.grad), vals(a)

    assert_same(torch, scenario)


def test_allow_mutation_after_backward_is_plain_inplace(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            b = a.clone()
            (b**2).sum().backward()
            b.mul_(3)
        return vals(a.grad), vals(b)

    assert_same(torch, scenario)


@pytest.mark.parametrize("mutated", [True, False], ids=["mutated", "untouched"])
def test_backward_after_leaving_allow_mutation_raises(torch, mutated):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            b = a.clone()
            out = (b**2).sum()
            if mutated:
                b.sin_()
        out.backward()

    assert_same_error(
        torch,
        scenario,
        AssertionError,
        "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context",
    )


def test_allow_mutation_contexts_cannot_be_nested(torch):
    def scenario(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    assert_same_error(
        torch, scenario, RuntimeError, "allow_mutation_on_saved_tensors contexts cannot be nested"
    )


def test_allow_mutation_works_again_after_a_nesting_error(torch):
    def scenario(lib):
        graph = lib.autograd.graph
        try:
            with graph.allow_mutation_on_saved_tensors():
                with graph.allow_mutation_on_saved_tensors():
                    pass
        except RuntimeError:
            pass
        with graph.allow_mutation_on_saved_tensors():
            a = leaf(lib)
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            out.backward()
        return vals(a.grad)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# The version check on saved tensors


def test_saved_leaf_changed_in_place_reports_its_versions(torch):
    def scenario(lib):
        a = leaf(lib)
        out = (a * a).sum()
        with lib.no_grad():
            a.add_(1)
        out.backward()

    assert_same_error(torch, scenario, RuntimeError, "is at version 1; expected version 0 instead")


def test_saved_tensor_changed_twice_reports_version_two_and_its_producer(torch):
    def scenario(lib):
        b = leaf(lib) * 1
        out = (b * b).sum()
        b.add_(1)
        b.add_(1)
        out.backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "which is output 0 of Add, is at version 2; expected version 0",
    )


def test_saved_tensor_changed_through_a_view_names_copy_slices(torch):
    def scenario(lib):
        b = leaf(lib) * 1
        out = (b * b).sum()
        b[0:1].mul_(3)
        out.backward()

    assert_same_error(torch, scenario, RuntimeError, "autograd::CopySlices, is at version 1")


def test_saved_double_output_changed_in_place_names_its_type_and_node(torch):
    def scenario(lib):
        e = leaf(lib, dtype=lib.float64).exp()
        out = (e * 1).sum()
        e.add_(1)
        out.backward()

    assert_same_error(torch, scenario, RuntimeError, "DoubleTensor [3]], which is output 0 of Exp")


def test_saved_output_changed_through_a_view_raises(torch):
    def scenario(lib):
        a = lib.tensor([[1.0, 2.0]], requires_grad=True)
        c = a.sigmoid().t()
        out = (c * 1).sum()
        c.mul_(2)
        out.backward()

    assert_same_error(torch, scenario, RuntimeError, "[1, 2]], which is output 0 of Sigmoid")


def test_unused_saved_slot_does_not_trip_the_version_check(torch):
    def scenario(lib):
        mu = lib.ones(1, requires_grad=True)
        x = lib.empty(1)
        loss = 0
        for i in range(3):
            x.detach_()
            x.copy_(mu + i)
            loss = loss + (x * lib.tensor([float(i)])).sum()
        loss.backward()
        return vals(mu.grad)

    assert_same(torch, scenario)


def test_saved_tensor_detached_in_place_raises(torch):
    def scenario(lib):
        a = lib.tensor(1.0, requires_grad=True).clone()
        b = a.sin()
        a.detach_()
        b.backward()

    assert_same_error(
        torch, scenario, RuntimeError, "Trying to use a saved tensor that has been detached"
    )


# ---------------------------------------------------------------------------
# No reference cycle between outputs and their grad_fn


def test_output_and_its_node_are_freed_without_gc(torch, no_gc):
    def scenario(lib):
        def build():
            y = leaf(lib).exp()  # ExpBackward0 saves its own output
            return weakref.ref(y), watch_node(y.grad_fn)

        return [r() is None for r in build()]

    assert_same(torch, scenario)


def test_a_chain_of_saved_intermediates_is_freed_without_gc(torch, no_gc):
    def scenario(lib):
        def build():
            a = leaf(lib) * 2
            b = a.exp()
            c = b.sin()
            d = (c * b).sum()
            return [weakref.ref(t) for t in (a, b, c, d)] + [
                watch_node(t.grad_fn) for t in (a, b, c, d)
            ]

        return [r() is None for r in build()]

    assert_same(torch, scenario)


@pytest.mark.parametrize("retain_graph", [False, True])
def test_graph_is_freed_without_gc_after_backward(torch, no_gc, retain_graph):
    def scenario(lib):
        def build():
            a = leaf(lib) * 2
            b = a.exp()
            d = (b * a).sum()
            d.backward(retain_graph=retain_graph)
            return [weakref.ref(t) for t in (a, b, d)] + [watch_node(t.grad_fn) for t in (a, b)]

        return [r() is None for r in build()]

    assert_same(torch, scenario)


def test_reading_a_saved_output_does_not_create_a_cycle(torch, no_gc):
    def scenario(lib):
        def build():
            y = leaf(lib).exp()
            saved = y.grad_fn._saved_result
            return weakref.ref(y), weakref.ref(saved)

        return [r() is None for r in build()]

    assert_same(torch, scenario)


def test_graph_under_saved_tensors_hooks_is_freed_without_gc(torch, no_gc):
    def scenario(lib):
        def build():
            with hooks_of(lib)(lambda t: t.detach(), lambda t: t):
                y = leaf(lib).exp()
            return weakref.ref(y)

        return build()() is None

    assert_same(torch, scenario)


def test_a_saved_input_lives_exactly_as_long_as_the_graph(torch, no_gc):
    def scenario(lib):
        a = leaf(lib) * 2
        b = a * a
        ref = weakref.ref(a)
        del a
        alive_with_graph = ref() is not None
        del b
        return alive_with_graph, ref() is None

    assert_same(torch, scenario)


def test_an_input_the_formula_does_not_need_is_not_kept(torch, no_gc):
    def scenario(lib):
        a = leaf(lib) * 2
        b = a.exp()  # saves only its result
        ref = weakref.ref(a)
        del a
        return ref() is None, b.requires_grad

    assert_same(torch, scenario)


def test_pack_hook_never_sees_a_wrapped_number(torch):
    """``z * 2`` saves ``other`` (the wrapped number 2) without packing it."""

    def scenario(lib):
        x = leaf(lib)
        packed = []
        with hooks_of(lib)(lambda t: packed.append(list(t.shape)) or t, lambda t: t):
            out = x.sin() * 2
        other = vals(out.grad_fn._saved_other)
        out.sum().backward()
        return packed, other, rounded(x.grad)

    assert_same(torch, scenario)


def test_unpack_through_hooks_gives_a_new_tensor_and_a_mode_sees_its_detach(torch):
    from torch_oracle import aten_log

    def scenario(lib):
        a = leaf(lib)
        b = a * 1
        with hooks_of(lib)(lambda t: t, lambda t: t):
            y = a.exp()
            w = b.sin()
        identities = [y.grad_fn._saved_result is y, w.grad_fn._saved_self is b]

        c = leaf(lib)

        def backward():
            with hooks_of(lib)(lambda t: t, lambda t: t):
                out = c.sin().exp()
            out.sum().backward()

        return identities, aten_log(lib, backward)

    assert_same(torch, scenario)
