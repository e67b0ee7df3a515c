"""The backward engine: accumulation, graph freeing, errors, saved tensors.

Each test pins one behaviour PyTorch users rely on; the expected values and
error phrases are PyTorch 2.13's (reference notes §3, §6).
"""

from __future__ import annotations

import gc
import re
import weakref

import numpy as np
import pytest

import opgrad as og
from torch_oracle import node_type_name

FREED = "Trying to backward through the graph a second time"


def leaf(values, dtype=og.float64):
    return og.tensor(values, dtype=dtype, requires_grad=True)


def values(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# Accumulation into .grad


def test_backward_accumulates_into_the_same_grad_object():
    x = leaf([1.0, 2.0, 3.0])
    (x * 2).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    assert x.grad is first


def test_backward_adds_new_gradient_to_existing_grad():
    x = leaf([1.0, 2.0, 3.0])
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [5.0, 5.0, 5.0])


def test_leaf_grad_is_none_before_backward():
    x = leaf([1.0, 2.0])
    assert x.grad is None


def test_accumulated_grad_is_a_leaf_without_history():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    assert x.grad.requires_grad is False
    assert x.grad.grad_fn is None


def test_input_used_twice_receives_summed_gradient():
    x = leaf([1.0, -2.0])
    (x * 3 + x.exp()).sum().backward()
    np.testing.assert_allclose(values(x.grad), 3 + np.exp([1.0, -2.0]))


def test_explicit_gradient_argument_weights_the_backward():
    x = leaf([1.0, 2.0, 3.0])
    (x * 2).backward(og.tensor([1.0, 10.0, 100.0], dtype=og.float64))
    np.testing.assert_array_equal(values(x.grad), [2.0, 20.0, 200.0])


def test_backward_inputs_accumulates_only_into_listed_tensors():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_array_equal(values(x.grad), [3.0, 4.0])
    assert w.grad is None


def test_autograd_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = og.autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(values(g), [2.0, 4.0])
    assert x.grad is None


# ---------------------------------------------------------------------------
# retain_graph and freeing saved tensors


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(values(x.grad), [4.0, 8.0])


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


def test_autograd_grad_frees_the_graph_too():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    og.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        og.autograd.grad(y, x)


def test_saved_tensor_access_after_backward_raises():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._saved_self


def test_saved_output_access_after_backward_raises():
    x = leaf([1.0, 2.0])
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._saved_result


def test_saved_non_tensor_fields_survive_backward():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = x.sum(dim=1)
    y.sum().backward()
    assert y.grad_fn._saved_dim == (1,)
    assert y.grad_fn._saved_self_sym_sizes == (2, 3)


def test_saved_tensor_readable_after_backward_with_retain_graph():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_self is x


def test_graph_without_saved_tensors_can_backward_twice():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, 4.0])
    s = (x + y).sum()
    s.backward()
    s.backward()
    np.testing.assert_array_equal(values(x.grad), [2.0, 2.0])


# ---------------------------------------------------------------------------
# Errors of bad calls


def test_non_scalar_backward_without_gradient_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (x * 2).backward()


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(
        RuntimeError,
        match="element 0 of tensors does not require grad and does not have a grad_fn",
    ):
        og.ones(3).sum().backward()


def test_backward_with_gradient_of_wrong_shape_raises():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(og.ones(2, dtype=og.float64))


def test_wrong_shape_gradient_error_names_both_shapes():
    x = leaf([1.0, 2.0, 3.0])
    expected = (
        "Mismatch in shape: grad_output[0] has a shape of opgrad.Size([2]) "
        "and output[0] has a shape of opgrad.Size([3])."
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        (x * 2).backward(og.ones(2, dtype=og.float64))


def test_autograd_grad_of_unused_input_raises():
    x = leaf([1.0, 2.0])
    unused = leaf([3.0, 4.0])
    expected = (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        og.autograd.grad((x * 2).sum(), [x, unused])


def test_autograd_grad_allow_unused_returns_none():
    x = leaf([1.0, 2.0])
    unused = leaf([3.0, 4.0])
    gx, gu = og.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    np.testing.assert_array_equal(values(gx), [2.0, 2.0])
    assert gu is None


def test_autograd_grad_wrt_tensor_not_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors does not require grad"
    ):
        og.autograd.grad((x * 2).sum(), [og.ones(2)])


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: og.tensor([1, 2], requires_grad=True), id="tensor_int64"),
        pytest.param(lambda: og.zeros(3, dtype=og.int64, requires_grad=True), id="zeros_int64"),
        pytest.param(
            lambda: og.tensor([1, 2], dtype=og.int32, requires_grad=True),
            id="tensor_int32",
        ),
        pytest.param(lambda: og.tensor([True], requires_grad=True), id="tensor_bool"),
    ],
)
def test_integer_and_bool_tensors_cannot_require_grad(make):
    with pytest.raises(
        RuntimeError,
        match="Only Tensors of floating point and complex dtype can require gradients",
    ):
        make()


def test_setting_requires_grad_on_integer_tensor_raises():
    t = og.tensor([1, 2])
    with pytest.raises(
        RuntimeError,
        match="only Tensors of floating point and complex dtype can require gradients",
    ):
        t.requires_grad = True


# ---------------------------------------------------------------------------
# Higher order


def test_create_graph_gives_differentiable_gradient():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = og.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad
    assert g.grad_fn is not None
    np.testing.assert_allclose(values(g), [3.0, 12.0, 27.0])


def test_create_graph_second_derivative_is_correct():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = og.autograd.grad((x**3).sum(), x, create_graph=True)
    (gg,) = og.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(values(gg), [6.0, 12.0, 18.0])


def test_third_derivative_through_nested_create_graph():
    x = leaf([0.5, -1.0])
    (g1,) = og.autograd.grad(x.sin().sum(), x, create_graph=True)
    (g2,) = og.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = og.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(values(g3), -np.cos([0.5, -1.0]))


def test_gradient_without_create_graph_has_no_history():
    x = leaf([1.0, 2.0])
    (g,) = og.autograd.grad((x**3).sum(), x)
    assert g.requires_grad is False
    assert g.grad_fn is None


# ---------------------------------------------------------------------------
# Deep graphs

CHAIN_LENGTH = 100_000


def test_long_chain_backward_has_no_recursion_error():
    x0 = leaf([1.0])
    x = x0
    for _ in range(CHAIN_LENGTH):
        x = x * 1.0001
    x.sum().backward()
    np.testing.assert_allclose(values(x0.grad), [1.0001**CHAIN_LENGTH], rtol=1e-9)


def _chain_with_middle_node_ref():
    x = leaf([1.0])
    ref = None
    for i in range(CHAIN_LENGTH):
        x = x * 1.0001
        if i == CHAIN_LENGTH // 2:
            ref = weakref.ref(x.grad_fn)
    return x, ref


def test_long_chain_graph_is_freed_after_del():
    out, ref = _chain_with_middle_node_ref()
    out.sum().backward()
    assert ref() is not None  # still reachable from out.grad_fn
    del out
    gc.collect()
    assert ref() is None


def test_long_chain_graph_is_freed_by_refcounting_alone():
    """No reference cycles: the graph dies on del, without the cycle collector."""
    gc.disable()
    try:
        out, ref = _chain_with_middle_node_ref()
        out.sum().backward()
        del out
        assert ref() is None
    finally:
        gc.enable()


def test_graph_is_freed_without_backward():
    """A saved intermediate dies with the graph: no cycle through its saved output."""
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        e = (x * x).exp()  # ExpBackward0 saves e's value as its result
        y = e.sin()  # SinBackward0 saves e itself
        ref = weakref.ref(e)
        del e
        assert ref() is not None
        del y
        assert ref() is None
    finally:
        gc.enable()


# ---------------------------------------------------------------------------
# Graph structure and saved tensors


def test_saved_self_is_none_when_only_self_requires_grad():
    x = leaf([1.0, 2.0])
    z = og.tensor([3.0, 4.0], dtype=og.float64)
    y = x * z
    assert y.grad_fn._saved_self is None


def test_saved_other_is_the_input_itself():
    x = leaf([1.0, 2.0])
    z = og.tensor([3.0, 4.0], dtype=og.float64)
    y = x * z
    assert y.grad_fn._saved_other is z


def test_saved_output_is_a_new_tensor_with_the_node_as_grad_fn():
    x = leaf([1.0, 2.0])
    y = x.exp()
    saved = y.grad_fn._saved_result
    assert saved is not y
    assert saved.grad_fn is y.grad_fn
    np.testing.assert_array_equal(values(saved), values(y))


def test_next_functions_has_none_edge_for_constant_input():
    x = leaf([1.0, 2.0])
    z = og.tensor([3.0, 4.0], dtype=og.float64)
    assert (x * z).grad_fn.next_functions[1] == (None, 0)


def test_next_functions_points_to_accumulate_grad_of_leaf():
    x = leaf([1.0, 2.0])
    node, nr = (x * 2).grad_fn.next_functions[0]
    assert node_type_name(node) == "AccumulateGrad"
    assert nr == 0


def test_accumulate_grad_node_holds_the_leaf():
    x = leaf([1.0, 2.0])
    node, _ = (x * 2).grad_fn.next_functions[0]
    assert node.variable is x


def test_next_functions_points_to_producer_node():
    x = leaf([1.0, 2.0])
    y = x.exp()
    node, nr = y.sum().grad_fn.next_functions[0]
    assert node is y.grad_fn
    assert nr == 0


def test_no_grad_records_no_graph():
    x = leaf([1.0, 2.0])
    with og.no_grad():
        y = x * 2
    assert y.requires_grad is False
    assert y.grad_fn is None


def test_detach_returns_leaf_without_grad():
    x = leaf([1.0, 2.0])
    d = (x * 2).detach()
    assert d.requires_grad is False
    assert d.grad_fn is None
    assert d.is_leaf


def test_op_output_is_not_a_leaf():
    x = leaf([1.0, 2.0])
    assert x.is_leaf
    assert not (x * 2).is_leaf


# ---------------------------------------------------------------------------
# Saved-tensor hooks on _raw_saved_*


def test_raw_saved_is_a_saved_tensor_object():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    raw = (x * z).grad_fn._raw_saved_self
    assert type(raw).__name__ == "SavedTensor"


def test_register_hooks_runs_pack_immediately():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    y = x * z
    calls = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: calls.append(t) or "packed", lambda p: x)
    assert len(calls) == 1
    np.testing.assert_array_equal(values(calls[0]), [1.0, 2.0])


def test_register_hooks_runs_unpack_in_backward():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    y = x * z
    calls = []
    y.grad_fn._raw_saved_self.register_hooks(
        lambda t: "packed",
        lambda p: calls.append(p) or og.full((2,), 5.0, dtype=og.float64),
    )
    assert calls == []
    y.sum().backward()
    assert calls == ["packed"]


def test_unpack_hook_result_is_used_by_the_formula():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    y = x * z
    y.grad_fn._raw_saved_self.register_hooks(
        lambda t: "packed", lambda p: og.full((2,), 5.0, dtype=og.float64)
    )
    y.sum().backward()
    np.testing.assert_array_equal(values(z.grad), [5.0, 5.0])
    np.testing.assert_array_equal(values(x.grad), [3.0, 4.0])


def test_register_hooks_twice_raises():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    raw = (x * z).grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        raw.register_hooks(lambda t: t, lambda t: t)


def test_register_hooks_after_free_raises():
    x = leaf([1.0, 2.0])
    z = leaf([3.0, 4.0])
    y = x * z
    y.sum().backward()
    with pytest.raises(
        RuntimeError,
        match="Calling register_hooks on a saved tensor after it has been freed",
    ):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
