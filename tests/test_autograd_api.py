"""``autograd.grad`` and ``autograd.backward`` / ``Tensor.backward``, complete, against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_grad,
test_hessian_vector, test_grad_nonleaf, test_grad_nonleaf_many_outputs,
test_grad_materialize_grads, test_grad_badcalls, test_grad_empty_inputs, test_grad_unreachable,
test_grad_unreachable_discovery (pruning, without a custom Function), test_backward,
test_backward_badcalls, test_multi_backward, test_multi_backward_no_grad,
test_backward_with_inputs, test_backward_with_scalar_input, test_backward_with_nonleaf_inputs,
test_dependent_backward, test_duplicate_backward_root, test_backward_no_grad,
test_backward_twice_with_saved_values, test_backward_twice_retained_graph_with_saved_values,
test_backward_twice_without_saved_values, test_backward_create_graph_warns,
test_accumulate_grad, test_sharded_grad and test_input_buffer_accum. Where torch 2.13 differs
from the reference copy (empty ``inputs`` is a RuntimeError now), torch 2.13 wins.

Every test runs one scenario with ``lib = opgrad`` and ``lib = torch`` and compares
plain Python results (lists of floats, error type and text).
"""

import inspect
import warnings

import numpy as np
import pytest

from torch_oracle import vals, outcome, assert_same, assert_same_error

# ---------------------------------------------------------------------------
# Helpers


def close(values, digits=6):
    """Nested lists of floats rounded, so float32 results compare across libraries."""
    if values is None:
        return None
    return np.round(np.asarray(values, dtype=np.float64), digits).tolist()


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def t64(lib, values, requires_grad=False):
    return lib.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def pair(lib):
    """Two float64 leaves with the same numbers in both libraries."""
    x = t64(lib, [[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    y = t64(lib, [[1.5, 0.75], [-0.5, 3.0]], requires_grad=True)
    return x, y


def quad(x, y):
    return x**2 + y * x + y**2


# ---------------------------------------------------------------------------
# Signatures


@pytest.mark.parametrize(
    "path", ["autograd.grad", "autograd.backward", "Tensor.backward"], ids=lambda p: p
)
def test_signature_matches_torch(torch, path):
    def scenario(lib):
        obj = lib
        for part in path.split("."):
            obj = getattr(obj, part)
        params = inspect.signature(obj).parameters.values()
        return [(p.name, p.kind.name, p.default) for p in params]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# autograd.grad: results, unused inputs, materialize_grads


def test_grad_returns_a_tuple_even_for_a_single_input(torch):
    def scenario(lib):
        x, y = pair(lib)
        result = lib.autograd.grad(quad(x, y).sum(), x)
        return type(result).__name__, len(result), vals(result[0])

    assert_same(torch, scenario)


def test_grad_with_a_dict_of_inputs_returns_a_dict(torch):
    def scenario(lib):
        x, y = pair(lib)
        result = lib.autograd.grad(quad(x, y).sum(), {"x": x, "y": y})
        return type(result).__name__, {k: vals(v) for k, v in result.items()}

    assert_same(torch, scenario)


def test_grad_leaves_dot_grad_untouched(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad(quad(x, y).sum(), [x, y])
        return x.grad, y.grad

    assert_same(torch, scenario)


def test_grad_of_an_unused_input_raises(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad((x * 2).sum(), [x, y])

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "The differentiated Tensor at index 1 appears to not have been used in the graph.",
    )


def test_grad_allow_unused_gives_none_for_an_unused_input(torch):
    def scenario(lib):
        x, y = pair(lib)
        y * 2  # y gets a grad accumulator, but not on this graph
        z = t64(lib, [1.0], requires_grad=True)  # z has none at all
        gx, gy, gz = lib.autograd.grad((x * 2).sum(), [x, y, z], allow_unused=True)
        return vals(gx), gy, gz

    assert_same(torch, scenario)


def test_materialize_grads_gives_zeros_for_an_unused_input(torch):
    def scenario(lib):
        x, y = pair(lib)
        gx, gy = lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        return vals(gx), vals(gy), str(gy.dtype).split(".")[-1]

    assert_same(torch, scenario)


def test_materialize_grads_makes_higher_order_zero_derivatives_tensors(torch):
    def scenario(lib):
        x = t64(lib, 0.5, requires_grad=True)
        a = t64(lib, 1.0, requires_grad=True)
        y = x * a
        dydx = lib.autograd.grad(y, x, create_graph=True)
        none = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        d2 = lib.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        d3 = lib.autograd.grad(d2, x, materialize_grads=True)
        return none[0], d2[0].item(), d3[0].item()

    assert_same(torch, scenario)


def test_materialize_grads_with_allow_unused_false_raises_value_error(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad((x * y).sum(), x, allow_unused=False, materialize_grads=True)

    assert_same_error(
        torch,
        scenario,
        ValueError,
        "Expected allow_unused to be True or not passed when materialize_grads=True",
    )


def test_grad_with_no_inputs_raises(torch):
    def scenario(lib):
        x, _ = pair(lib)
        lib.autograd.grad((2 * x).sum(), [])

    assert_same_error(
        torch, scenario, RuntimeError, "`inputs` argument to `grad()` cannot be empty."
    )


def test_grad_of_an_output_that_does_not_require_grad_raises(torch):
    def scenario(lib):
        x = lib.ones(1)
        lib.autograd.grad(x**2, x, grad_outputs=lib.ones(1))

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "element 0 of tensors does not require grad and does not have a grad_fn",
    )


def test_grad_of_a_second_output_that_does_not_require_grad_raises(torch):
    def scenario(lib):
        x, _ = pair(lib)
        lib.autograd.grad([(x * 2).sum(), lib.ones(())], x)

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "element 1 of tensors does not require grad and does not have a grad_fn",
    )


def test_grad_wrt_a_tensor_that_does_not_require_grad_raises(torch):
    def scenario(lib):
        x, _ = pair(lib)
        lib.autograd.grad((x * 2).sum(), lib.ones(2, 2))

    assert_same_error(
        torch, scenario, RuntimeError, "One of the differentiated Tensors does not require grad"
    )


def test_grad_of_a_leaf_with_respect_to_itself_is_grad_outputs(torch):
    def scenario(lib):
        x, _ = pair(lib)
        (g,) = lib.autograd.grad(x, x, grad_outputs=lib.ones_like(x) * 3)
        return vals(g)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# autograd.grad: grad_outputs


def test_grad_outputs_weight_the_gradient(torch):
    def scenario(lib):
        x, y = pair(lib)
        go = t64(lib, [[1.0, 2.0], [3.0, 4.0]])
        return [vals(g) for g in lib.autograd.grad(quad(x, y), [x, y], grad_outputs=go)]

    assert_same(torch, scenario)


def test_grad_outputs_none_entry_seeds_a_scalar_output_with_one(torch):
    def scenario(lib):
        x, y = pair(lib)
        outs = [(x * y).sum(), (x * 2).sum()]
        return vals(lib.autograd.grad(outs, [x], grad_outputs=[None, None])[0])

    assert_same(torch, scenario)


def test_grad_outputs_mixing_a_tensor_and_none(torch):
    def scenario(lib):
        x, y = pair(lib)
        outs = [x * y, (x * 2).sum()]
        go = [t64(lib, [[1.0, -1.0], [2.0, 0.5]]), None]
        return vals(lib.autograd.grad(outs, [x], grad_outputs=go)[0])

    assert_same(torch, scenario)


def test_grad_outputs_none_entry_for_a_non_scalar_output_raises(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad([x * y], [x], grad_outputs=[None])

    assert_same_error(
        torch, scenario, RuntimeError, "grad can be implicitly created only for scalar outputs"
    )


def test_non_scalar_output_without_grad_outputs_raises(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad(x * y, x)

    assert_same_error(
        torch, scenario, RuntimeError, "grad can be implicitly created only for scalar outputs"
    )


def test_grad_outputs_of_the_wrong_shape_raise(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad(x * y, x, grad_outputs=lib.ones(2))

    assert_same_error(
        torch, scenario, RuntimeError, "Mismatch in shape: grad_output[0] has a shape of"
    )


def test_grad_outputs_of_another_float_dtype_are_accepted(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(x * 3, x, grad_outputs=lib.ones(2, dtype=lib.float64))
        return str(g.dtype).split(".")[-1], vals(g)

    assert_same(torch, scenario)


def test_grad_outputs_that_are_not_tensors_raise_type_error(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.grad(x * y, x, grad_outputs=[[1.0, 1.0]])

    assert_same_error(
        torch, scenario, TypeError, "gradients can be either Tensors or None, but got list"
    )


# ---------------------------------------------------------------------------
# autograd.grad: non-leaf inputs, several roots, pruning, retain_graph


def test_grad_wrt_a_non_leaf_runs_nothing_behind_it(torch):
    def scenario(lib):
        log = []
        x, _ = pair(lib)
        m = x * 2
        n = m.exp()
        m.grad_fn.register_prehook(lambda go: log.append("mul node"))
        x.register_hook(lambda g: log.append("leaf hook"))
        (g,) = lib.autograd.grad(n.sum(), m)
        return log, close(vals(g)), x.grad

    assert_same(torch, scenario)


def test_grad_wrt_two_views_of_one_leaf(torch):
    def scenario(lib):
        calls = []
        x = t64(lib, np.arange(8.0).reshape(4, 2), requires_grad=True)
        a, b = x[:2], x[2:]
        x.register_hook(lambda g: calls.append(1))
        go = t64(lib, [[1.0, 2.0], [3.0, 4.0]])
        ga, gb = lib.autograd.grad(a + 2 * b, [a, b], grad_outputs=go, create_graph=True)
        return vals(ga), vals(gb), calls, x.grad

    assert_same(torch, scenario)


def test_grad_wrt_a_non_leaf_can_drive_an_iterative_update(torch):
    def scenario(lib):
        x0, y = pair(lib)
        x = x0
        for _ in range(3):
            (gx,) = lib.autograd.grad(quad(x, y), x, grad_outputs=lib.ones(2, 2), create_graph=True)
            x = x + 0.05 * gx
        before = (x0.grad, y.grad)
        x.backward(lib.ones(2, 2))
        return before, close(vals(x0.grad)), close(vals(y.grad))

    assert_same(torch, scenario)


def test_grad_prunes_branches_that_do_not_lead_to_the_inputs(torch):
    def scenario(lib):
        log = []
        a, b = pair(lib)
        p = a.exp()
        q = b.sin()
        p.grad_fn.register_prehook(lambda go: log.append("exp"))
        q.grad_fn.register_prehook(lambda go: log.append("sin"))
        b.register_hook(lambda g: log.append("b"))
        lib.autograd.grad((p * q).sum(), a)
        return log

    assert_same(torch, scenario)


def test_grad_of_several_outputs_sums_their_contributions(torch):
    def scenario(lib):
        x, y = pair(lib)
        s = x * y
        grads = lib.autograd.grad([s.sum(), (s * x).sum(), (y**3).sum()], [x, y])
        return [vals(g) for g in grads]

    assert_same(torch, scenario)


def test_grad_with_create_graph_returns_a_differentiable_gradient(torch):
    def scenario(lib):
        x, y = pair(lib)
        z = quad(x, y)
        z.backward(lib.ones(2, 2), create_graph=True)
        grad_sum = 2 * x.grad + y.grad
        (x_hv,) = lib.autograd.grad(grad_sum, x, grad_outputs=lib.ones(2, 2), create_graph=True)
        result = vals(x_hv), vals(x.grad), x_hv.requires_grad
        x.grad = None
        y.grad = None
        return result

    assert_same(torch, scenario)


def test_grad_frees_the_graph_unless_retain_graph(torch):
    def scenario(lib):
        x, y = pair(lib)
        out = (x * y).sum()
        lib.autograd.grad(out, x, retain_graph=True)
        lib.autograd.grad(out, x)
        lib.autograd.grad(out, x)

    assert_same_error(
        torch, scenario, RuntimeError, "Trying to backward through the graph a second time"
    )


def test_grad_retain_graph_defaults_to_create_graph(torch):
    def scenario(lib):
        x, _ = pair(lib)
        out = (x * x).sum()
        lib.autograd.grad(out, x, create_graph=True)
        second = vals(lib.autograd.grad(out, x)[0])
        third = outcome(lambda: lib.autograd.grad(out, x))
        return second, third[0], "Specify retain_graph=True" in third[1]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# Tensor.backward / autograd.backward


def test_backward_with_an_explicit_gradient(torch):
    def scenario(lib):
        v = t64(lib, [1.0, 2.0], requires_grad=True)
        x, y = pair(lib)
        z = t64(lib, [[0.5, 1.0], [1.5, 2.0]], requires_grad=True)
        go = t64(lib, [[1.0, -2.0], [0.5, 3.0]])
        v.backward(t64(lib, [4.0, 5.0]))
        a = x + (y * z) + 4 * z**2 * x / y
        a.backward(go)
        return vals(v.grad), close(vals(x.grad)), close(vals(y.grad)), close(vals(z.grad))

    assert_same(torch, scenario)


def test_backward_of_a_tensor_that_does_not_require_grad_raises(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(1).backward(),
        RuntimeError,
        "element 0 of tensors does not require grad and does not have a grad_fn",
    )


def test_autograd_backward_with_several_roots_and_grad_tensors(torch):
    def scenario(lib):
        x, y = pair(lib)
        q, a = pair(lib)
        b = t64(lib, [[2.0, 1.0], [0.5, -1.0]], requires_grad=True)
        q2 = q * 2
        z = x + y + q2
        c = a * b + q2
        gz = t64(lib, [[1.0, 2.0], [3.0, 4.0]])
        gc = t64(lib, [[-1.0, 0.5], [2.0, 1.0]])
        lib.autograd.backward([z, c], [gz, gc])
        return [vals(t.grad) for t in (x, y, q, a, b)]

    assert_same(torch, scenario)


def test_autograd_backward_with_a_root_that_depends_on_another(torch):
    def scenario(lib):
        x = t64(lib, [0.5, -1.0, 2.0], requires_grad=True)
        y = x**2
        z = y**3
        lib.autograd.backward([y, z], [t64(lib, [1.0, 2.0, 3.0]), t64(lib, [0.5, 0.25, 1.0])])
        return close(vals(x.grad))

    assert_same(torch, scenario)


def test_autograd_backward_with_the_same_root_twice_counts_it_twice(torch):
    def scenario(lib):
        a, b = pair(lib)
        x = a * b
        go = t64(lib, [[1.0, 2.0], [3.0, 4.0]])
        lib.autograd.backward([x, x], [go, go])
        return vals(a.grad), vals(b.grad)

    assert_same(torch, scenario)


def test_autograd_backward_with_a_root_that_does_not_require_grad_raises(torch):
    def scenario(lib):
        x = lib.ones(2, 2, requires_grad=True)
        y = lib.ones(2, 2)
        lib.autograd.backward([x + y, y * 2], [lib.ones(2, 2), lib.ones(2, 2)])

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "element 1 of tensors does not require grad and does not have a grad_fn",
    )


def test_autograd_backward_with_none_for_a_non_scalar_root_raises(torch):
    def scenario(lib):
        a = lib.ones(2, 2, requires_grad=True)
        lib.autograd.backward([a + 2], [None])

    assert_same_error(
        torch, scenario, RuntimeError, "grad can be implicitly created only for scalar outputs"
    )


def test_autograd_backward_accepts_a_tensor_and_keyword_grad_tensors(torch):
    def scenario(lib):
        x = t64(lib, [1.0, 2.0], requires_grad=True)
        lib.autograd.backward(x * 3, grad_tensors=t64(lib, [1.0, 10.0]))
        first = vals(x.grad)
        lib.autograd.backward(tensors=[x * 3], grad_tensors=[t64(lib, [1.0, 10.0])])
        return first, vals(x.grad)

    assert_same(torch, scenario)


def test_autograd_backward_of_a_scalar_needs_no_grad_tensors(torch):
    def scenario(lib):
        x, y = pair(lib)
        lib.autograd.backward(quad(x, y).sum())
        return vals(x.grad), vals(y.grad)

    assert_same(torch, scenario)


def test_backward_does_not_modify_the_given_gradients(torch):
    def scenario(lib):
        leaf = t64(lib, [[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        out1 = leaf.clone()
        out2 = leaf * 1
        g1 = t64(lib, [[0.5, 0.5], [0.5, 0.5]])
        g2 = t64(lib, [[2.0, 2.0], [2.0, 2.0]])
        lib.autograd.backward((out1, out2), (g1, g2))
        return vals(g1), vals(g2), vals(leaf.grad)

    assert_same(torch, scenario)


def test_backward_of_sharded_intermediate_gradients(torch):
    def scenario(lib):
        leaves = [t64(lib, np.full((2, 2), 0.1 * i), requires_grad=True) for i in range(6)]
        inter = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
        loss = sum(v * i for i, v in enumerate(inter)).sum()
        d_inter = []
        for k in range(0, len(inter), 2):
            d_inter.extend(lib.autograd.grad(loss, inter[k : k + 2], retain_graph=True))
        lib.autograd.backward(inter, d_inter)
        return [close(vals(leaf.grad)) for leaf in leaves]

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# backward(inputs=...)


@pytest.mark.parametrize("which", ["x", "y", "both", "y_bare"])
def test_backward_inputs_accumulates_only_into_the_listed_tensors(torch, which):
    def scenario(lib):
        x, y = pair(lib)
        inputs = {"x": [x], "y": [y], "both": [x, y], "y_bare": y}[which]
        lib.autograd.backward(quad(x, y), lib.ones(2, 2), inputs=inputs)
        return vals(x.grad), vals(y.grad)

    assert_same(torch, scenario)


def test_backward_inputs_on_a_zero_dim_leaf(torch):
    def scenario(lib):
        x = t64(lib, 1.5, requires_grad=True)
        (x**2).backward(inputs=x)
        return x.grad.item()

    assert_same(torch, scenario)


@pytest.mark.parametrize("api", ["Tensor.backward", "autograd.backward"])
def test_backward_with_empty_inputs_raises(torch, api):
    def scenario(lib):
        x, y = pair(lib)
        out = quad(x, y).sum()
        if api == "Tensor.backward":
            out.backward(inputs=[])
        else:
            lib.autograd.backward(out, inputs=[])

    assert_same_error(
        torch, scenario, RuntimeError, "`inputs` argument to `backward()` cannot be empty."
    )


def test_backward_inputs_with_a_non_leaf_fills_its_grad_and_stops_there(torch):
    def scenario(lib):
        x, y = pair(lib)
        xn = x * 1
        out = xn**2 + y * xn + y**2
        out.backward(lib.ones(2, 2), inputs=[y, xn])
        return vals(xn.grad), vals(y.grad), x.grad, xn.retains_grad

    assert_same(torch, scenario)


def test_backward_inputs_with_leaves_and_a_non_leaf_under_create_graph(torch):
    def scenario(lib):
        x, y = pair(lib)
        xn = x * 1
        out = xn**2 + y * xn + y**2
        out.backward(lib.ones(2, 2, dtype=lib.float64), create_graph=True, inputs=[x, y, xn])
        result = vals(x.grad), vals(y.grad), vals(xn.grad)
        x.grad = y.grad = xn.grad = None
        return result

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(torch, scenario)


def test_backward_inputs_not_in_the_graph_keep_grad_none(torch):
    def scenario(lib):
        x, y = pair(lib)
        z = lib.ones(2, 2, requires_grad=True)
        (x * y).sum().backward(inputs=[z])
        return z.grad, x.grad

    assert_same(torch, scenario)


def test_backward_inputs_that_do_not_require_grad_raise(torch):
    def scenario(lib):
        x, y = pair(lib)
        (x * y).sum().backward(inputs=[lib.ones(2)])

    assert_same_error(
        torch, scenario, RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"
    )


# ---------------------------------------------------------------------------
# retain_graph, create_graph and accumulation into .grad


def test_backward_twice_through_saved_values_raises(torch):
    def scenario(lib):
        b = t64(lib, [1.0, 2.0, 3.0], requires_grad=True)
        c = lib.zeros(3, dtype=lib.float64)
        c[[1, 2]] = b[[1, 1]]
        c.backward(t64(lib, [1.0, 1.0, 1.0]))
        c.backward(t64(lib, [1.0, 1.0, 1.0]))

    assert_same_error(torch, scenario, RuntimeError, "Specify retain_graph=True")


def test_backward_twice_with_retain_graph_accumulates(torch):
    def scenario(lib):
        b = t64(lib, [1.0, 2.0, 3.0], requires_grad=True)
        c = lib.zeros(3, dtype=lib.float64)
        c[[1, 2]] = b[[1, 1]]
        c.backward(t64(lib, [1.0, 1.0, 1.0]), retain_graph=True)
        c.backward(t64(lib, [1.0, 1.0, 1.0]))
        return vals(b.grad)

    assert_same(torch, scenario)


def test_backward_twice_without_saved_values_needs_no_retain_graph(torch):
    def scenario(lib):
        b = t64(lib, [1.0, 2.0, 3.0], requires_grad=True)
        c = b + 1
        c.backward(t64(lib, [1.0, 1.0, 1.0]))
        c.backward(t64(lib, [1.0, 1.0, 1.0]))
        return vals(b.grad)

    assert_same(torch, scenario)


def test_backward_with_create_graph_warns_about_a_reference_cycle(torch):
    def scenario(lib):
        # PyTorch warns once per process unless warn-always is on.
        set_warn_always = getattr(lib, "set_warn_always", lambda flag: None)
        is_warn_always = getattr(lib, "is_warn_always_enabled", lambda: False)
        previous = is_warn_always()
        set_warn_always(True)
        try:
            return record_warnings(lib)
        finally:
            set_warn_always(previous)

    def record_warnings(lib):
        b = t64(lib, [1.0, 2.0, 3.0], requires_grad=True)
        c = b * b
        with warnings.catch_warnings(record=True) as backward_warnings:
            warnings.simplefilter("always")
            c.backward(lib.ones_like(c), create_graph=True)
        b.grad = None
        with warnings.catch_warnings(record=True) as grad_warnings:
            warnings.simplefilter("always")
            lib.autograd.grad(c, b, lib.ones_like(c), create_graph=True)
        phrase = "Using backward() with create_graph=True"
        return (
            [w.category.__name__ for w in backward_warnings if phrase in str(w.message)],
            [w.category.__name__ for w in grad_warnings if phrase in str(w.message)],
        )

    assert_same(torch, scenario)


def test_backward_accumulates_into_the_same_grad_object_without_create_graph(torch):
    def scenario(lib):
        x = t64(lib, [1.0, 2.0], requires_grad=True)
        y = x + 2
        y.backward(lib.ones(2), retain_graph=True)
        first = x.grad
        y.backward(lib.ones(2))
        return first is x.grad, vals(first)

    assert_same(torch, scenario)


def test_backward_accumulates_out_of_place_with_create_graph(torch):
    def scenario(lib):
        x = t64(lib, [1.0, 2.0], requires_grad=True)
        y = x + 2
        y.backward(lib.ones(2), retain_graph=True)
        first = x.grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.backward(lib.ones(2), create_graph=True)
        result = first is x.grad, vals(first), vals(x.grad)
        x.grad = None
        return result

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# is_grads_batched (test_grad_batched_grad): one backward per row, rows stacked


def _batched_scenario(build):
    def scenario(lib):
        lib.manual_seed(0)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        z = lib.tensor([0.5, 0.25], requires_grad=True)
        outputs, inputs, grad_outputs, kwargs = build(lib, x, z)
        result = lib.autograd.grad(outputs, inputs, grad_outputs, is_grads_batched=True, **kwargs)
        return [
            (
                None
                if g is None
                else (close(vals(g)), list(g.shape), str(g.dtype)[-7:], g.requires_grad)
            )
            for g in result
        ]

    return scenario


BATCHED = {
    "clone": lambda T, x, z: (
        x.clone(),
        (x,),
        (T.arange(3).expand(2, 2, 3).transpose(0, 2),),
        {},
    ),
    "scalar_output": lambda T, x, z: (x.sum(), (x,), (T.arange(3),), {}),
    "two_outputs": lambda T, x, z: (
        (x * z, (x * x).sum()),
        (x, z),
        (T.tensor([[[1.0, 0.0], [0.0, 1.0]]] * 2), T.tensor([1.0, 2.0])),
        {},
    ),
    "unused_allowed": lambda T, x, z: (x * 2, (x, z), (T.ones(4, 2, 2),), {"allow_unused": True}),
    "unused_materialized": lambda T, x, z: (
        x * 2,
        (x, z),
        (T.ones(4, 2, 2),),
        {"materialize_grads": True},
    ),
    "create_graph": lambda T, x, z: (
        (x**3).sum(),
        (x,),
        (T.tensor([1.0, 2.0]),),
        {"create_graph": True},
    ),
}


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_grad_batched_matches_torch(torch, name):
    assert_same(torch, _batched_scenario(BATCHED[name]))


@pytest.mark.parametrize(
    "grad_output",
    [
        lambda T: T.ones(2, 2),  # no batch dimension
        lambda T: T.ones(2, 2, 1),
        lambda T: T.ones(3, 2, 3),
    ],
)
def test_grad_batched_shape_mismatch_errors(torch, grad_output):
    def scenario(lib):
        x = lib.ones(2, 2, requires_grad=True)
        lib.autograd.grad(x.clone(), (x,), (grad_output(lib),), is_grads_batched=True)

    assert_same_error(torch, scenario, RuntimeError, "If `is_grads_batched=True`, we interpret")


def test_grad_batched_scalar_vs_size_one_is_a_mismatch(torch):
    def scenario(lib):
        x = lib.ones(2, 2, requires_grad=True)
        lib.autograd.grad(x.sum(), (x,), (lib.ones(2).unsqueeze(1),), is_grads_batched=True)

    assert_same_error(torch, scenario, RuntimeError, "If `is_grads_batched=True`, we interpret")


def test_grad_batched_unused_input_error(torch):
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        lib.autograd.grad(x * 2, (x, z), (lib.ones(3, 2),), is_grads_batched=True)

    assert_same_error(torch, scenario, RuntimeError, "appears to not have been used")


def test_grad_batched_frees_the_graph_after_the_last_row(torch):
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        lib.autograd.grad(y, (x,), (lib.ones(3, 2),), is_grads_batched=True)
        return outcome(lambda: lib.autograd.grad(y, (x,), (lib.ones(2),)))

    assert_same(torch, scenario)


def test_grad_of_create_graph_backward_is_a_namespaced_copy_node(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
        return x.grad.grad_fn.name().replace(lib.__name__, "LIB")

    assert_same(torch, scenario)
