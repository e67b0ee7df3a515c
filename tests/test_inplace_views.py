"""In-place ops on views: CopySlices, history rewriting and the view errors, against PyTorch.

Every scenario builds a small graph with ``lib`` (opgrad or torch), makes an
in-place change on a view (or on a base that has views), and returns its
leaves, a scalar loss and the tensors to watch. Both libraries run the same
scenario; the tests compare the leaves' gradients, the watched tensors'
values, ``_version``, grad_fn class names and ``next_functions``.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import as_numpy, message, next_function_names, node_type_name, rng_for

# ---------------------------------------------------------------------------
# Helpers shared by the scenarios


def leaf(lib, key, *shape, positive=False):
    """A float64 leaf that requires grad, the same numbers in both libraries."""
    rng = rng_for("leaf", key, shape)
    data = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    return lib.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def const(lib, key, *shape):
    """A float64 tensor that does not require grad."""
    return lib.tensor(np.asarray(rng_for("const", key, shape).standard_normal(shape)))


def wsum(lib, t, key):
    """A weighted sum, so every element's gradient is distinct."""
    return (t * const(lib, ("w", key), *t.shape)).sum()


def mask(lib, key, *shape):
    return lib.tensor(rng_for("mask", key, shape).random(shape) > 0.5)


def both(torch):
    return ((og, "opgrad"), (torch, "torch"))


# ---------------------------------------------------------------------------
# Scenarios: each returns (leaves, loss, watched) where watched maps a name to
# a tensor whose grad_fn / _version / values are compared after the in-place op.

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


@scenario
def select_mul_scalar(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[1]
    v.mul_(2)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def slice_add_tensor_with_alpha(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 3, 2)
    b = x.clone()
    v = b[:, 1:3]
    v.add_(y, alpha=2)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def narrow_exp(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b.narrow(1, 1, 2)
    v.exp_()
    return [x], wsum(L, b, "b") + wsum(L, v, "v"), {"base": b, "view": v}


@scenario
def select_copy_from_tensor_requiring_grad(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b.select(0, 2)
    v.copy_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def slice_copy_broadcasts_the_source(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b[1:]
    v.copy_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def column_zero(L):
    x = leaf(L, "x", 3, 4)
    b = x * 2
    v = b[:, 2]
    v.zero_()
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def diagonal_fill_scalar(L):
    x = leaf(L, "x", 3, 3)
    b = x * 1
    v = b.diagonal()
    v.fill_(0.5)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def select_fill_with_tensor_requiring_grad(L):
    x, s = leaf(L, "x", 3, 4), leaf(L, "s")
    b = x * 1
    v = b[1]
    v.fill_(s)
    return [x, s], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def unsqueeze_mul_broadcast_tensor(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b.unsqueeze(0)
    v.mul_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def flat_view_add(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 12)
    b = x * 1
    v = b.view(12)
    v.add_(y)
    return [x, y], wsum(L, b, "b") + wsum(L, v * v, "v"), {"base": b, "view": v}


@scenario
def reshape_view_sub(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2, 6)
    b = x * 1
    v = b.reshape(2, 6)
    v.sub_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def permute_neg(L):
    x = leaf(L, "x", 2, 3, 4)
    b = x * 1
    v = b.permute(2, 0, 1)
    v.neg_()
    return [x], wsum(L, b, "b") + wsum(L, v, "v"), {"base": b, "view": v}


@scenario
def transpose_mul_tensor(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4, 3)
    b = x * 1
    v = b.transpose(0, 1)
    v.mul_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def view_of_a_view(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2)
    b = x * 1
    v = b[1:]
    w = v[:, 0]
    w.mul_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v, "view_of_view": w}


@scenario
def three_level_view_exp(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    w = b.t()[1].narrow(0, 0, 2)
    w.exp_()
    return [x], wsum(L, b, "b") + wsum(L, w, "w"), {"base": b, "view": w}


@scenario
def two_overlapping_views(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2, 4)
    b = x * 1
    v1, v2 = b[0:2], b[1:3]
    v1.mul_(2)
    v2.add_(y)
    loss = wsum(L, b, "b") + wsum(L, v1, "v1")
    return [x, y], loss, {"base": b, "first": v1, "second": v2}


@scenario
def base_modified_then_old_view_used(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 3, 4)
    b = x * 1
    v = b[1]
    b.mul_(y)
    return [x, y], wsum(L, v, "v") + wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def base_modified_then_old_transposed_view_used(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 3, 4)
    b = x * 1
    v = b.t()
    b.add_(y)
    return [x, y], wsum(L, v * v, "v"), {"base": b, "view": v}


@scenario
def setitem_int_with_tensor_requiring_grad(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    b[1] = y
    return [x, y], wsum(L, b, "b"), {"base": b}


@scenario
def setitem_slice_with_scalar(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    b[:, ::2] = 0.5
    return [x], wsum(L, b, "b"), {"base": b}


@scenario
def setitem_mask_with_scalar(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    b[mask(L, "m", 3, 4)] = 0.0
    return [x], wsum(L, b, "b"), {"base": b}


@scenario
def setitem_index_tensor_with_tensor(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2, 4)
    b = x * 1
    b[L.tensor([0, 2])] = y
    return [x, y], wsum(L, b, "b"), {"base": b}


@scenario
def more_ops_on_the_view_after_inplace(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b[0]
    v.mul_(y)
    w = v.exp()
    return [x, y], wsum(L, w, "w") + wsum(L, b, "b"), {"base": b, "view": v, "after": w}


@scenario
def relu_on_slice(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[:, 1:]
    v.relu_()
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def sigmoid_on_select(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[2]
    v.sigmoid_()
    return [x], wsum(L, b, "b") + wsum(L, v, "v"), {"base": b, "view": v}


@scenario
def tanh_on_transposed_slice(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b.t()[1:3]
    v.tanh_()
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def pow_on_select(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[0]
    v.pow_(3)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def clamp_on_slice(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[1:]
    v.clamp_(-0.3, 0.4)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def div_by_tensor_requiring_grad(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4, positive=True)
    b = x * 1
    v = b[2]
    v.div_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def masked_fill_on_slice(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b[1:]
    v.masked_fill_(mask(L, "m", 2, 4), 0.0)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def index_put_on_transpose(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2, 3)
    b = x * 1
    v = b.t()
    v.index_put_((L.tensor([0, 2]),), y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def view_of_plain_tensor_gets_a_value_requiring_grad(L):
    y = leaf(L, "y", 3)
    base = L.zeros(2, 3, dtype=L.float64)
    v = base[0]
    v.copy_(y)
    return [y], wsum(L, base, "base"), {"base": base, "view": v}


@scenario
def rows_of_plain_tensor_assigned_from_two_leaves(L):
    y, z = leaf(L, "y", 4), leaf(L, "z", 4)
    base = L.zeros(3, 4, dtype=L.float64)
    base[0] = y
    base[1] = 2 * z
    return [y, z], wsum(L, base, "base"), {"base": base}


@scenario
def transposed_view_of_plain_tensor_mul(L):
    y = leaf(L, "y", 4, 3)
    base = L.ones(3, 4, dtype=L.float64)
    v = base.t()
    v.mul_(y)
    return [y], wsum(L, base, "base"), {"base": base, "view": v}


@scenario
def several_inplace_ops_on_one_view(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 2, 4)
    b = x * 1
    v = b[1:]
    v.mul_(2)
    v.add_(y)
    v.exp_()
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def inplace_on_view_then_on_base(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b[0]
    v.mul_(y)
    b.add_(1)
    return [x, y], wsum(L, v, "v") + wsum(L, b * b, "b"), {"base": b, "view": v}


@scenario
def unfold_windows_mul(L):
    x, y = leaf(L, "x", 2, 6), leaf(L, "y", 2, 3, 2)
    b = x * 1
    v = b.unfold(1, 2, 2)
    v.mul_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def as_strided_mul(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v = b.as_strided((2, 2), (4, 1), 1)
    v.mul_(3)
    return [x], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def older_view_of_the_base_sees_a_nested_inplace(L):
    x = leaf(L, "x", 3, 4)
    b = x * 1
    v1 = b[0]
    v2 = v1[1:]
    v2.mul_(2)
    return [x], wsum(L, v1, "v1"), {"base": b, "outer": v1, "inner": v2}


@scenario
def squeeze_view_sub(L):
    x, y = leaf(L, "x", 3, 1, 4), leaf(L, "y", 3, 4)
    b = x * 1
    v = b.squeeze(1)
    v.sub_(y)
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def iadd_on_select(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * 1
    v = b[1]
    v += y
    return [x, y], wsum(L, b, "b"), {"base": b, "view": v}


@scenario
def reference_no_requires_grad_then_view_inplace(L):
    # The reference's test_no_requires_grad_inplace, view variant.
    a = L.tensor(rng_for("a").standard_normal((2, 3)))
    v = a[:]
    v.add_(5)
    a.requires_grad = True
    return [a], wsum(L, a, "a"), {"base": a, "view": v}


def run(lib, name):
    leaves, loss, watched = SCENARIOS[name](lib)
    facts = {
        key: (
            node_type_name(t.grad_fn),
            t._version,
            as_numpy(t).copy(),
            None if t.grad_fn is None else next_function_names(t.grad_fn),
        )
        for key, t in sorted(watched.items())
    }
    loss.backward()
    return facts, [leaf_.grad for leaf_ in leaves]


@pytest.fixture(scope="module")
def torch_results(torch):
    return {name: run(torch, name) for name in SCENARIOS}


NAMES = sorted(SCENARIOS)


def test_there_are_at_least_25_scenarios():
    assert len(SCENARIOS) >= 25


@pytest.mark.parametrize("name", NAMES)
def test_leaf_gradients_match_torch(torch_results, name):
    _, grads = run(og, name)
    _, expected = torch_results[name]
    assert len(grads) == len(expected)
    for i, (got, exp) in enumerate(zip(grads, expected)):
        assert exp is not None
        assert got is not None, f"leaf {i} got no gradient"
        np.testing.assert_allclose(as_numpy(got), as_numpy(exp), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_grad_fn_names_after_inplace_match_torch(torch_results, name):
    facts, _ = run(og, name)
    expected, _ = torch_results[name]
    assert {k: f[0] for k, f in facts.items()} == {k: f[0] for k, f in expected.items()}


@pytest.mark.parametrize("name", NAMES)
def test_versions_after_inplace_match_torch(torch_results, name):
    facts, _ = run(og, name)
    expected, _ = torch_results[name]
    assert {k: f[1] for k, f in facts.items()} == {k: f[1] for k, f in expected.items()}


@pytest.mark.parametrize("name", NAMES)
def test_values_after_inplace_match_torch(torch_results, name):
    facts, _ = run(og, name)
    expected, _ = torch_results[name]
    assert facts.keys() == expected.keys()
    for key in facts:
        np.testing.assert_allclose(facts[key][2], expected[key][2], rtol=1e-12, err_msg=key)


@pytest.mark.parametrize("name", NAMES)
def test_next_functions_after_inplace_match_torch(torch_results, name):
    facts, _ = run(og, name)
    expected, _ = torch_results[name]
    assert {k: f[3] for k, f in facts.items()} == {k: f[3] for k, f in expected.items()}


# ---------------------------------------------------------------------------
# The in-place ops this issue adds, on a non-leaf itself and on a view of it

NEW_INPLACE = [
    ("zero_", lambda L, t, v: t.zero_()),
    ("fill_scalar", lambda L, t, v: t.fill_(0.5)),
    ("fill_tensor_requiring_grad", lambda L, t, v: t.fill_(v.sum())),
    ("copy_", lambda L, t, v: t.copy_(v.expand(t.shape) * 2)),
    ("copy_broadcast", lambda L, t, v: t.copy_(v[0])),
    ("copy_float32_source", lambda L, t, v: t.copy_(L.ones(t.shape[-1], dtype=L.float32))),
    ("masked_fill_", lambda L, t, v: t.masked_fill_(mask(L, "mf", *t.shape), -1.0)),
    ("masked_fill_zero_dim_value", lambda L, t, v: t.masked_fill_(t > 0, v.sum())),
    ("index_put_", lambda L, t, v: t.index_put_((L.tensor([0, 1]),), v.expand(2, t.shape[1]))),
    (
        "index_put_accumulate",
        lambda L, t, v: t.index_put_((L.tensor([1, 1]),), v.expand(2, t.shape[1]), accumulate=True),
    ),
]


def run_new_inplace(lib, op, on_view):
    x, v = leaf(lib, "x", 3, 4), leaf(lib, "v", 1, 4)
    b = x * 1
    target = b[1:] if on_view else b
    assert op(lib, target, v) is target
    facts = (
        node_type_name(b.grad_fn),
        next_function_names(b.grad_fn),
        node_type_name(target.grad_fn),
        b._version,
        as_numpy(b).copy(),
    )
    wsum(lib, b, "b").backward()
    return facts, as_numpy(x.grad), None if v.grad is None else as_numpy(v.grad)


@pytest.mark.parametrize("on_view", [False, True], ids=["on_tensor", "on_view"])
@pytest.mark.parametrize("name, op", NEW_INPLACE, ids=[c[0] for c in NEW_INPLACE])
def test_new_inplace_op_grad_fn_and_values_match_torch(torch, name, op, on_view):
    got, _, _ = run_new_inplace(og, op, on_view)
    expected, _, _ = run_new_inplace(torch, op, on_view)
    assert got[:4] == expected[:4]
    np.testing.assert_allclose(got[4], expected[4], rtol=1e-12)


@pytest.mark.parametrize("on_view", [False, True], ids=["on_tensor", "on_view"])
@pytest.mark.parametrize("name, op", NEW_INPLACE, ids=[c[0] for c in NEW_INPLACE])
def test_new_inplace_op_gradients_match_torch(torch, name, op, on_view):
    _, x_grad, v_grad = run_new_inplace(og, op, on_view)
    _, t_x_grad, t_v_grad = run_new_inplace(torch, op, on_view)
    np.testing.assert_allclose(x_grad, t_x_grad, rtol=1e-10, atol=1e-12)
    if t_v_grad is None:
        assert v_grad is None
    else:
        assert v_grad is not None
        np.testing.assert_allclose(v_grad, t_v_grad, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------
# Double backward through CopySlices


def double_select_mul_by_leaf_element(L):
    x = leaf(L, "x", 3, 4)
    b = x * x
    b[0].mul_(x[1])
    return [x], wsum(L, b, "b")


def double_slice_exp(L):
    x = leaf(L, "x", 3, 4)
    b = x.clone()
    b[1:].exp_()
    return [x], wsum(L, b * b, "b")


def double_transposed_row_mul_by_other_leaf(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 3)
    b = x * 1
    b.t()[0].mul_(y)
    return [x, y], wsum(L, b * b, "b")


def double_setitem_tensor(L):
    x, y = leaf(L, "x", 3, 4), leaf(L, "y", 4)
    b = x * x
    b[2] = y * y
    return [x, y], wsum(L, b * b, "b")


DOUBLE = [
    double_select_mul_by_leaf_element,
    double_slice_exp,
    double_transposed_row_mul_by_other_leaf,
    double_setitem_tensor,
]


def second_derivatives(lib, fn):
    leaves, out = fn(lib)
    firsts = lib.autograd.grad(out, leaves, create_graph=True)
    total = sum(wsum(lib, g, ("g", i)) for i, g in enumerate(firsts))
    seconds = lib.autograd.grad(total, leaves, allow_unused=True)
    return [as_numpy(g) for g in firsts], [None if g is None else as_numpy(g) for g in seconds]


@pytest.mark.parametrize("fn", DOUBLE, ids=[f.__name__ for f in DOUBLE])
def test_double_backward_through_copyslices_matches_torch(torch, fn):
    firsts, seconds = second_derivatives(og, fn)
    t_firsts, t_seconds = second_derivatives(torch, fn)
    for got, exp in zip(firsts, t_firsts):
        np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)
    for got, exp in zip(seconds, t_seconds):
        if exp is None:
            assert got is None
        else:
            assert got is not None
            np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------
# CopySlices as an object


def _copyslices_base(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = x * 1
    v = b[0]
    v.mul_(2)
    return b, v


def test_copyslices_name_says_autograd_namespace(torch):
    b, _ = _copyslices_base(og)
    t_b, _ = _copyslices_base(torch)
    assert t_b.grad_fn.name() == "torch::autograd::CopySlices"
    assert b.grad_fn.name() == "opgrad::autograd::CopySlices"


def test_reprs_name_copyslices_and_the_regenerated_view_node(torch):
    for lib, _ in both(torch):
        b, v = _copyslices_base(lib)
        assert repr(b).endswith("grad_fn=<CopySlices>)")
        assert repr(v).endswith("grad_fn=<AsStridedBackward0>)")


def test_inplace_on_view_returns_the_view_itself(torch):
    for lib, _ in both(torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 1
        v = b[1]
        assert v.add_(1) is v
        assert v._base is b


def test_view_grad_fn_is_regenerated_only_once_per_version(torch):
    for lib, _ in both(torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 1
        v = b[1]
        before = v.grad_fn
        b.mul_(2)
        after = v.grad_fn
        assert after is not before
        assert v.grad_fn is after


def test_copyslices_first_next_function_is_the_base_old_grad_fn(torch):
    for lib, _ in both(torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 1
        old = b.grad_fn
        b[0].mul_(3)
        assert b.grad_fn.next_functions[0][0] is old


# ---------------------------------------------------------------------------
# Errors: the view kinds that refuse in-place ops (CreationMeta), and the leaf


NO_GRAD_VIEWS = [
    ("select", lambda t: t[0]),
    ("slice", lambda t: t[:, 1:]),
    ("view", lambda t: t.view(6)),
    ("transpose", lambda t: t.t()),
    ("view_as", lambda t: t.view_as(t)),
    ("unsqueeze", lambda t: t.unsqueeze(0)),
]


def _expect_same_error(torch, build, act):
    """Run ``act(*build(lib))`` in both libraries, expect the same RuntimeError.

    ``build`` returns the tensors to check; after the error every one of them
    must hold its old values and version.
    """
    messages = []
    for lib, _ in both(torch):
        tensors = build(lib)
        before = [(as_numpy(t).copy(), t._version) for t in tensors]
        with pytest.raises(RuntimeError) as info:
            act(*tensors)
        messages.append(message(info.value))
        for t, (values, version) in zip(tensors, before):
            np.testing.assert_array_equal(as_numpy(t), values)
            assert t._version == version
    assert messages[0] == messages[1]
    return messages[1]


@pytest.mark.parametrize("name, make_view", NO_GRAD_VIEWS, ids=[c[0] for c in NO_GRAD_VIEWS])
def test_view_made_in_no_grad_modified_with_grad_mode_raises(torch, name, make_view):
    def build(lib):
        b = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        with lib.no_grad():
            v = make_view(b)
        return b, v

    text = _expect_same_error(torch, build, lambda b, v: v.mul_(2))
    assert text.startswith("A view was created in no_grad mode and is being modified inplace")


def test_view_of_a_leaf_made_in_no_grad_raises_the_no_grad_error_not_the_leaf_one(torch):
    def build(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            v = x[1:]
        return x, v

    text = _expect_same_error(torch, build, lambda x, v: v.add_(1))
    assert "A view was created in no_grad mode" in text


def test_view_made_in_no_grad_keeps_requires_grad_and_has_no_grad_fn(torch):
    for lib, _ in both(torch):
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        with lib.no_grad():
            v = b[1:]
        assert v._is_view() and v._base is b
        assert v.requires_grad and v.grad_fn is None and v.is_leaf


def test_view_made_and_modified_in_no_grad_is_not_tracked(torch):
    results = []
    for lib, _ in both(torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        b = x * 1
        with lib.no_grad():
            v = b[0]
            v.mul_(2)
        results.append((node_type_name(b.grad_fn), b._version, v._version, as_numpy(b).copy()))
        b.sum().backward()
        results[-1] += (as_numpy(x.grad),)
    got, exp = results
    assert got[:3] == exp[:3] == ("MulBackward0", 1, 1)
    np.testing.assert_array_equal(got[3], exp[3])
    np.testing.assert_array_equal(got[4], exp[4])


def test_grad_fn_of_no_grad_view_after_base_modified_raises(torch):
    messages = []
    for lib, _ in both(torch):
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        with lib.no_grad():
            v = b[1:]
        b.mul_(2)
        with pytest.raises(RuntimeError) as info:
            v.grad_fn
        messages.append(message(info.value))
    assert messages[0] == messages[1]
    assert messages[1].startswith(
        "A view was created in no_grad mode and its base or another view of its base "
        "has been modified inplace with grad mode enabled."
    )


def test_repr_of_no_grad_view_modified_in_no_grad_shows_invalid_grad_fn(torch):
    for lib, _ in both(torch):
        a = lib.ones(1, requires_grad=True)
        with lib.no_grad():
            b = a[:]
            b *= 2
        assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"


MULTI_OUTPUT = [
    ("unbind", lambda t: t.unbind(0)[1], "Output 1 of Unbind"),
    ("split", lambda t: t.split(1)[0], "Output 0 of Split"),
    ("chunk", lambda t: t.chunk(3, dim=1)[2], "Output 2 of Split"),
    ("split_with_sizes", lambda t: t.split([1, 2], dim=1)[0], "Output 0 of SplitWithSizes"),
    ("view_of_unbind", lambda t: t.unbind(0)[0][1:], "Output 0 of Slice"),
]


@pytest.mark.parametrize("name, make_view, head", MULTI_OUTPUT, ids=[c[0] for c in MULTI_OUTPUT])
def test_inplace_on_output_of_multi_output_view_op_raises(torch, name, make_view, head):
    def build(lib):
        b = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        return b, make_view(b)

    text = _expect_same_error(torch, build, lambda b, v: v.mul_(2))
    assert text.startswith(head + " is a view and is being modified inplace.")
    assert "This view is the output of a function that returns multiple views." in text


@pytest.mark.parametrize(
    "name, make_view, head", MULTI_OUTPUT[:4], ids=[c[0] for c in MULTI_OUTPUT[:4]]
)
def test_multi_output_views_may_be_modified_when_nothing_requires_grad(
    torch, name, make_view, head
):
    results = []
    for lib, _ in both(torch):
        b = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        make_view(b).mul_(2)
        results.append((as_numpy(b).copy(), b._version))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1] == 1


@pytest.mark.parametrize(
    "name, make_view, head", MULTI_OUTPUT[:4], ids=[c[0] for c in MULTI_OUTPUT[:4]]
)
def test_multi_output_views_may_be_modified_in_no_grad(torch, name, make_view, head):
    results = []
    for lib, _ in both(torch):
        b = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        with lib.no_grad():
            make_view(b).mul_(2)
        results.append((as_numpy(b).copy(), b._version, node_type_name(b.grad_fn)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:] == (1, "MulBackward0")


def test_multi_output_view_used_after_base_modified_raises(torch):
    messages = []
    for lib, _ in both(torch):
        b = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        first = b.unbind(0)[0]
        b.add_(1)
        with pytest.raises(RuntimeError) as info:
            (first * 1).sum().backward()
        messages.append(message(info.value))
    assert messages[0] == messages[1]
    assert messages[1].startswith(
        "Output 0 of Unbind is a view and its base or another view of its base has been "
        "modified inplace."
    )


LEAF_VIEWS = [
    ("select", lambda t: t[0]),
    ("slice", lambda t: t[:, 1:]),
    ("view_as", lambda t: t.view_as(t)),
    ("transpose", lambda t: t.transpose(0, 1)),
    ("diagonal", lambda t: t.diagonal()),
    ("view_of_view", lambda t: t[1][1:]),
]


@pytest.mark.parametrize("name, make_view", LEAF_VIEWS, ids=[c[0] for c in LEAF_VIEWS])
def test_inplace_on_view_of_leaf_requiring_grad_raises(torch, name, make_view):
    def build(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        return x, make_view(x)

    text = _expect_same_error(torch, build, lambda x, v: v.add_(1))
    assert (
        text
        == "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )


@pytest.mark.parametrize("name, make_view", LEAF_VIEWS, ids=[c[0] for c in LEAF_VIEWS])
def test_view_of_leaf_may_be_modified_in_no_grad(torch, name, make_view):
    results = []
    for lib, _ in both(torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        v = make_view(x)
        with lib.no_grad():
            v.mul_(10)
        results.append((as_numpy(x).copy(), x._version, v._version, x.grad_fn, x.is_leaf))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:] == (1, 1, None, True)


def test_inplace_on_leaf_with_existing_view_raises_and_changes_nothing(torch):
    def build(lib):
        a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = a[:]
        a.requires_grad = True
        return a, b

    text = _expect_same_error(torch, build, lambda a, b: a.add_(5))
    assert text == "a leaf Variable that requires grad is being used in an in-place operation."
    text = _expect_same_error(torch, build, lambda a, b: b.add_(5))
    assert (
        text
        == "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )
