"""The graph API: ``autograd.graph.Node``, ``GradientEdge``, ``increment_version`` and the
engine queries, against PyTorch.

Follows these tests of PyTorch's test_autograd.py (TestAutograd): test_autograd_node_isinstance,
test_grad_to_node, test_grad_to_node_set (the edge half), test_grad_to_node_inplace,
test_grad_to_node_multi, test_grad_to_node_materialize, test_backward_to_node,
test_gradient_edge_output, test_gradient_edge_graph_ownership, test_grad_fn_input_metadata,
test_grad_fn_badcalls, test_increment_version, test_current_graph_task_id, test_current_node,
test_will_engine_execute_node and test_anomaly_assign_parent_cleanup (metadata lifetime).

PyTorch exposes the engine queries only as ``torch._C._current_graph_task_id``,
``torch._C._current_autograd_node`` and ``torch._C._will_engine_execute_node``; opgrad spells
them ``opgrad._C.<same name>``. Every test runs one scenario with ``lib = opgrad`` and
``lib = torch`` and compares plain Python results.
"""

import gc
import weakref

import pytest

import opgrad as og
from torch_oracle import vals, outcome, assert_same, assert_same_error
from torch_oracle import dispatch_module

# ---------------------------------------------------------------------------
# Helpers


# grad mode on and anomaly mode off around every test, in both libraries
pytestmark = pytest.mark.usefixtures("fresh_global_modes")


def leaf(lib, values=(0.5, 1.0, 2.0)):
    return lib.tensor(list(values), requires_grad=True)


def spelled(lib, text):
    """PyTorch's node names say ``torch::``; opgrad's say ``opgrad::``."""
    return text.replace(lib.__name__ + "::", "LIB::")


# ---------------------------------------------------------------------------
# Node


def test_every_grad_fn_is_a_node(torch):
    def scenario(lib):
        Node = lib.autograd.graph.Node
        a = leaf(lib)
        b = a.exp()
        c = a.clone()
        c[0] = 5.0
        nodes = [b.grad_fn, b.grad_fn.next_functions[0][0], c.grad_fn, (b * a).sum().grad_fn]
        return [isinstance(n, Node) for n in nodes] + [issubclass(type(b.grad_fn), Node)]

    assert_same(torch, scenario)


def test_non_nodes_are_not_nodes(torch):
    def scenario(lib):
        Node = lib.autograd.graph.Node
        return isinstance(None, Node), isinstance(1, Node), isinstance(Node, Node)

    assert_same(torch, scenario)


def test_node_name_is_the_class_name_for_generated_nodes(torch):
    def scenario(lib):
        a = leaf(lib)
        return [t.grad_fn.name() for t in (a.exp(), a * 2, a.sum(), a[1:], a.clone())]

    assert_same(torch, scenario)


def test_accumulate_grad_node_name_is_namespaced(torch):
    def scenario(lib):
        acc = leaf(lib).exp().grad_fn.next_functions[0][0]
        return spelled(lib, acc.name()), type(acc).__name__

    assert_same(torch, scenario)


def test_copy_slices_node_name_is_namespaced(torch):
    def scenario(lib):
        c = leaf(lib).clone()
        c[0] = 5.0
        return spelled(lib, c.grad_fn.name()), type(c.grad_fn).__name__

    assert_same(torch, scenario)


def test_node_repr_names_its_class(torch):
    def scenario(lib):
        text = repr(leaf(lib).exp().grad_fn)
        return text.split(" object at ")[0]

    assert_same(torch, scenario)


def test_next_functions_lists_the_input_edges(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a * 2
        c = b * a + lib.ones(3)
        names = []
        for node in (b.grad_fn, c.grad_fn, c.grad_fn.next_functions[0][0]):
            names.append([(None if n is None else n.name(), nr) for n, nr in node.next_functions])
        return [[(None if n is None else spelled(lib, n), nr) for n, nr in e] for e in names]

    assert_same(torch, scenario)


def test_next_functions_of_a_leaf_edge_is_the_cached_accumulate_grad(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a * 2
        c = a.exp()
        acc_b = b.grad_fn.next_functions[0][0]
        acc_c = c.grad_fn.next_functions[0][0]
        return acc_b is acc_c, acc_b.variable is a, acc_b.next_functions

    assert_same(torch, scenario)


def test_node_metadata_is_one_persistent_dict(torch):
    def scenario(lib):
        node = leaf(lib).exp().grad_fn
        meta = node.metadata
        meta["tag"] = 7
        return type(meta).__name__, node.metadata is meta, node.metadata["tag"]

    assert_same(torch, scenario)


def test_node_metadata_dies_with_the_graph(torch):
    class Payload:
        pass

    def scenario(lib):
        def build():
            x = lib.ones(2, 2, requires_grad=True)
            t = x.exp()
            obj = Payload()
            t.grad_fn.metadata[0] = obj
            return t, weakref.ref(obj)

        t, ref = build()
        alive = ref() is not None
        del t
        return alive, ref() is None

    assert_same(torch, scenario)


def test_sequence_numbers_grow_with_creation_and_accumulate_grad_is_last_to_wait(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a * 2
        c = b.exp()
        acc = b.grad_fn.next_functions[0][0]
        return c.grad_fn._sequence_nr() > b.grad_fn._sequence_nr(), acc._sequence_nr()

    assert_same(torch, scenario)


def test_node_input_metadata_describes_each_output(torch):
    def scenario(lib):
        x = lib.ones(2, 3, requires_grad=True, dtype=lib.float64)
        meta = (x * 2).grad_fn._input_metadata
        return len(meta), tuple(meta[0].shape), str(meta[0].dtype).split(".")[-1]

    assert_same(torch, scenario)


def test_calling_a_node_applies_its_backward_formula(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x**2
        return vals(y.grad_fn(lib.ones(3)))

    assert_same(torch, scenario)


@pytest.mark.parametrize("count", [0, 2])
def test_calling_a_node_with_the_wrong_number_of_gradients_raises(torch, count):
    def scenario(lib):
        x = lib.ones(1, requires_grad=True)
        y = x**2
        y.grad_fn(*[x.detach()] * count)

    assert_same_error(torch, scenario, TypeError, f"expected 1 arguments, got {count} instead")


# ---------------------------------------------------------------------------
# GradientEdge / get_gradient_edge


def test_gradient_edge_is_a_named_tuple(torch):
    def scenario(lib):
        GradientEdge = lib.autograd.graph.GradientEdge
        a = leaf(lib)
        edge = GradientEdge(a.exp().grad_fn, 0)
        return GradientEdge._fields, isinstance(edge, tuple), edge.output_nr, edge[1]

    assert_same(torch, scenario)


def test_gradient_edge_of_a_leaf_is_its_accumulate_grad(torch):
    def scenario(lib):
        a = leaf(lib)
        acc = (a * 2).grad_fn.next_functions[0][0]
        edge = lib.autograd.graph.get_gradient_edge(a)
        return edge.node is acc, edge.output_nr

    assert_same(torch, scenario)


def test_gradient_edge_of_a_non_leaf_is_its_grad_fn_and_output_nr(torch):
    def scenario(lib):
        b = leaf(lib).exp()
        edge = lib.autograd.graph.get_gradient_edge(b)
        return edge.node is b.grad_fn, edge.output_nr

    assert_same(torch, scenario)


def test_gradient_edge_of_a_tensor_without_grad_raises(torch):
    assert_same_error(
        torch,
        lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(2)),
        RuntimeError,
        "It is not possible to get the gradient edge for a Tensor that does not require gradients",
    )


@pytest.mark.parametrize("kind", ["leaf", "non_leaf"])
def test_grad_to_a_gradient_edge_matches_grad_to_the_tensor(torch, kind):
    def scenario(lib):
        x = leaf(lib)
        if kind == "non_leaf":
            x = x.clone()
        out = x.clone() * x
        by_tensor = lib.autograd.grad(out.sum(), x, retain_graph=True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        by_edge = lib.autograd.grad(out.sum(), edge)
        return [vals(g) for g in by_tensor], [vals(g) for g in by_edge]

    assert_same(torch, scenario)


def test_gradient_edge_taken_before_an_inplace_op_gives_the_old_versions_gradient(torch):
    def scenario(lib):
        x = leaf(lib).clone()
        old = lib.autograd.graph.get_gradient_edge(x)
        x *= 2
        g_old, g_new = lib.autograd.grad(x.sum(), (old, x))
        return vals(g_old), vals(g_new)

    assert_same(torch, scenario)


def test_grad_to_gradient_edges_built_by_hand(torch):
    def scenario(lib):
        GradientEdge = lib.autograd.graph.GradientEdge
        x = leaf(lib).clone()
        y = leaf(lib, (3.0, 4.0, 5.0)).clone()
        out = x * y
        ref = lib.autograd.grad(out.sum(), (x, y), retain_graph=True)
        edges = (GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr))
        new = lib.autograd.grad(out.sum(), edges)
        return [vals(g) for g in ref], [vals(g) for g in new]

    assert_same(torch, scenario)


def test_grad_to_an_unused_gradient_edge_with_allow_unused_gives_none(torch):
    def scenario(lib):
        x = leaf(lib).clone()
        y = leaf(lib).clone()
        edge_y = lib.autograd.graph.get_gradient_edge(y)
        gx, gy = lib.autograd.grad(x.clone().sum(), (x, edge_y), allow_unused=True)
        return vals(gx), gy

    assert_same(torch, scenario)


def test_materialize_grads_with_a_gradient_edge_input_raises(torch):
    def scenario(lib):
        x = leaf(lib).clone()
        y = leaf(lib).clone()
        edge_y = lib.autograd.graph.get_gradient_edge(y)
        lib.autograd.grad(x.clone().sum(), (x, edge_y), allow_unused=True, materialize_grads=True)

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "materialize_grads cannot be used when the given input is a GradientEdge",
    )


def test_backward_inputs_may_be_gradient_edges(torch):
    def scenario(lib):
        x = leaf(lib)
        y = leaf(lib, (3.0, 4.0, 5.0))
        out = (x * y).sum()
        edge_x = lib.autograd.graph.get_gradient_edge(x)
        lib.autograd.backward(out, inputs=(edge_x, y))
        return vals(x.grad), vals(y.grad)

    assert_same(torch, scenario)


def test_gradient_edge_as_an_output_continues_a_split_backward(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)

        def fn():
            tmp = x.sin().exp().sum()
            out = tmp.exp().clone().sin().sum()
            return out, lib.autograd.graph.get_gradient_edge(tmp)

        out, tmp_edge = fn()
        (tmp_grad,) = lib.autograd.grad(out, (tmp_edge,))
        (x_grad,) = lib.autograd.grad(tmp_edge, (x,), grad_outputs=(tmp_grad,))
        out, _ = fn()
        (x_grad_ref,) = lib.autograd.grad(out, (x,))
        return [round(v, 5) for v in vals(x_grad)], [round(v, 5) for v in vals(x_grad_ref)]

    assert_same(torch, scenario)


def test_backward_from_a_gradient_edge_output_accumulates_into_leaves(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tmp = (x * x).sum()
        edge = lib.autograd.graph.get_gradient_edge(tmp)
        lib.autograd.backward((edge,), retain_graph=True)
        first = vals(x.grad)
        x.grad = None
        lib.autograd.backward((edge, (x * 3).sum()))
        return first, vals(x.grad)

    assert_same(torch, scenario)


def test_non_scalar_gradient_edge_output_without_grad_outputs_raises(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x.sin().cos())
        lib.autograd.grad(edge, (x,))

    assert_same_error(
        torch, scenario, RuntimeError, "grad can be implicitly created only for scalar outputs"
    )


def test_gradient_edge_output_with_wrong_shaped_grad_outputs_raises(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x.sin().cos())
        lib.autograd.grad(edge, (x,), grad_outputs=lib.ones(4))

    assert_same_error(torch, scenario, RuntimeError, "Mismatch in shape")


def test_gradient_edge_keeps_its_graph_alive(torch):
    def scenario(lib):
        inp = lib.tensor([2.0], requires_grad=True)
        mid = inp.clone()
        out = mid.clone()
        edge = lib.autograd.graph.get_gradient_edge(out)
        lib.autograd.backward(edge)
        del out, mid
        gc.collect()
        lib.autograd.backward(edge)
        return vals(inp.grad)

    assert_same(torch, scenario)


# ---------------------------------------------------------------------------
# increment_version


def test_increment_version_bumps_the_counter_of_a_tensor(torch):
    def scenario(lib):
        a = lib.ones(5, requires_grad=True)
        n = lib.zeros(5, dtype=lib.int32)
        lib.autograd.graph.increment_version(a)
        lib.autograd.graph.increment_version(n)
        return a._version, n._version

    assert_same(torch, scenario)


def test_increment_version_accepts_a_list_and_bumps_shared_counters(torch):
    def scenario(lib):
        t = lib.ones(3)
        view = t[1:]
        other = lib.ones(2)
        lib.autograd.graph.increment_version([t, other])
        return t._version, view._version, other._version

    assert_same(torch, scenario)


def test_increment_version_makes_a_saved_tensor_stale(torch):
    def scenario(lib):
        a = leaf(lib)
        b = a * 1
        c = b.exp()
        lib.autograd.graph.increment_version(c)
        c.sum().backward()

    assert_same_error(
        torch,
        scenario,
        RuntimeError,
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation",
    )


# ---------------------------------------------------------------------------
# Engine queries (torch._C._current_graph_task_id and friends)


def test_current_graph_task_id_is_minus_one_outside_backward(torch):
    assert_same(torch, lambda lib: lib._C._current_graph_task_id())


def test_current_graph_task_id_grows_by_one_per_backward(torch):
    def scenario(lib):
        ids = []
        t = lib.tensor(1.0, requires_grad=True).clone()
        t.register_hook(lambda g: ids.append(lib._C._current_graph_task_id()))
        for _ in range(3):
            t.backward(retain_graph=True)
        return [i - ids[0] for i in ids], ids[0] >= 0, lib._C._current_graph_task_id()

    assert_same(torch, scenario)


def test_current_autograd_node_is_none_outside_backward(torch):
    assert_same(torch, lambda lib: lib._C._current_autograd_node())


def test_current_autograd_node_inside_hooks_is_the_node_being_run(torch):
    def scenario(lib):
        seen = []

        def record(where):
            node = lib._C._current_autograd_node()
            seen.append((where, None if node is None else type(node).__name__))

        x = leaf(lib)
        y = x**2
        z = y * 2
        z.register_hook(lambda g: record("tensor hook of z"))
        y.grad_fn.register_prehook(lambda go: record("pre hook of y's node"))
        y.grad_fn.register_hook(lambda gi, go: record("post hook of y's node"))
        z.sum().backward()
        return seen

    assert_same(torch, scenario)


def test_current_autograd_node_seen_by_a_dispatch_mode_during_backward(torch):
    def scenario(lib):
        base = dispatch_module(lib).TorchDispatchMode
        log = []

        class NodeMode(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                node = lib._C._current_autograd_node()
                log.append((str(func), type(node).__name__ if node else "None"))
                return func(*args, **(kwargs or {}))

        with NodeMode():
            a = lib.ones(4, requires_grad=True)
            log.clear()
            b = a.mul(2).div(3).sum()
            log.append(("BW", ""))
            b.backward()
        return log

    assert_same(torch, scenario)


def test_will_engine_execute_node_tells_which_nodes_backward_will_run(torch):
    def scenario(lib):
        seen = []
        a = lib.ones(2, 3, requires_grad=True)
        a2 = lib.ones(2, 3, requires_grad=True)
        b = a * a2
        b2 = b.exp()
        c = b * 2
        acc_a = b.grad_fn.next_functions[0][0]
        acc_a2 = b.grad_fn.next_functions[1][0]
        nodes = [acc_a, acc_a2, b.grad_fn, b2.grad_fn, c.grad_fn]

        def hook(g):
            seen.append([lib._C._will_engine_execute_node(n) for n in nodes])

        c.register_hook(hook)
        out = c.sum()
        lib.autograd.backward(out, inputs=(a, b), retain_graph=True)
        lib.autograd.backward(out, retain_graph=True)
        return seen

    assert_same(torch, scenario)


def test_will_engine_execute_node_outside_backward_raises(torch):
    def scenario(lib):
        lib._C._will_engine_execute_node(leaf(lib).exp().grad_fn)

    assert_same_error(
        torch, scenario, RuntimeError, "should only be called during the backward pass"
    )


def test_will_engine_execute_node_given_a_tensor_raises(torch):
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        errors = []

        def hook(g):
            errors.append(outcome(lambda: lib._C._will_engine_execute_node(y)))

        y.register_hook(hook)
        y.sum().backward()
        return errors

    expected = scenario(torch)
    assert expected == [
        ("RuntimeError", "_will_engine_execute_node expects an grad_fn, but got Tensor")
    ]
    assert scenario(og) == expected
