"""Version counters against PyTorch: who bumps them, who shares them, what they catch.

A tensor, all its views and its ``detach()`` results share one counter; every
in-place or out= op bumps it once; ``x.data`` gets a counter of its own. A
tensor saved for backward remembers its version, and backward refuses a
tensor that changed since, naming both versions.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import as_numpy, message, node_type_name


def both(torch):
    return (og, torch)


def row(lib):
    return lib.tensor([1.0, -2.0, 3.0])


# ---------------------------------------------------------------------------
# What bumps the counter

BUMPS = [
    ("add_", lambda L, t: t.add_(1)),
    ("add_tensor", lambda L, t: t.add_(L.ones(3), alpha=2)),
    ("sub_", lambda L, t: t.sub_(1)),
    ("mul_", lambda L, t: t.mul_(2)),
    ("div_", lambda L, t: t.div_(2)),
    ("neg_", lambda L, t: t.neg_()),
    ("exp_", lambda L, t: t.exp_()),
    ("pow_", lambda L, t: t.pow_(2)),
    ("clamp_", lambda L, t: t.clamp_(-1, 1)),
    ("relu_", lambda L, t: t.relu_()),
    ("sigmoid_", lambda L, t: t.sigmoid_()),
    ("tanh_", lambda L, t: t.tanh_()),
    ("zero_", lambda L, t: t.zero_()),
    ("fill_", lambda L, t: t.fill_(4.0)),
    ("copy_", lambda L, t: t.copy_(L.zeros(3))),
    ("masked_fill_", lambda L, t: t.masked_fill_(L.tensor([True, False, True]), 0.0)),
    ("index_put_", lambda L, t: t.index_put_((L.tensor([0, 2]),), L.tensor([5.0, 6.0]))),
    ("setitem_int", lambda L, t: t.__setitem__(1, 7.0)),
    ("setitem_slice", lambda L, t: t.__setitem__(slice(0, 2), L.tensor([8.0, 9.0]))),
    ("setitem_mask", lambda L, t: t.__setitem__(t > 0, 0.0)),
    ("iadd", lambda L, t: t.__iadd__(1)),
    ("imul", lambda L, t: t.__imul__(3)),
    ("isub", lambda L, t: t.__isub__(L.ones(3))),
    ("itruediv", lambda L, t: t.__itruediv__(4)),
    ("unsqueeze_", lambda L, t: t.unsqueeze_(0)),
    ("squeeze_", lambda L, t: t.unsqueeze(0).squeeze_(0)),
    ("t_", lambda L, t: t.t_()),
    ("transpose_", lambda L, t: t.transpose_(0, 0)),
    ("out", lambda L, t: L.add(L.ones(3), 1, out=t)),
]


@pytest.mark.parametrize("name, op", BUMPS, ids=[c[0] for c in BUMPS])
def test_inplace_op_bumps_the_version_once_like_torch(torch, name, op):
    results = []
    for lib in both(torch):
        t = row(lib)
        op(lib, t)
        results.append((t._version, as_numpy(t).copy()))
    assert results[0][0] == results[1][0]
    # float32 values: within one ulp of torch (exp and the like differ in the last bit)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=2e-7)


def test_fresh_tensors_are_at_version_zero(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        made = [x, lib.zeros(2), lib.ones(2, 3), x * 2, x.clone(), x.detach(), x[0], x.exp()]
        assert [t._version for t in made] == [0] * len(made)


def test_chained_inplace_ops_each_bump(torch):
    for lib in both(torch):
        x = lib.randn(1, 2)
        x.add_(1).add_(1)
        x[0] = 5
        assert x._version == 3


def test_inplace_under_no_grad_still_bumps(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            x.mul_(2)
            x[0] = 1.0
        assert x._version == 2


def test_out_of_place_ops_do_not_bump(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x * 2, x.exp(), x[0], x.view(2, 1), x.detach(), x.sum()
        assert x._version == 0


FAILING = [
    ("add_broadcast", lambda L, t: t.add_(L.ones(2, 3))),
    ("copy_shape", lambda L, t: t.copy_(L.ones(2))),
    ("mul_dtype", lambda L, t: t.long().mul_(1.5)),
    ("index_put_bounds", lambda L, t: t.index_put_((L.tensor([5]),), L.tensor(1.0))),
    ("setitem_bounds", lambda L, t: t.__setitem__(5, 1.0)),
    ("setitem_shape", lambda L, t: t.__setitem__(slice(0, 2), L.ones(3))),
    ("squeeze_dim", lambda L, t: t.squeeze_(3)),
    ("transpose_dim", lambda L, t: t.transpose_(0, 2)),
]


@pytest.mark.parametrize("name, op", FAILING, ids=[c[0] for c in FAILING])
def test_failed_inplace_op_raises_like_torch_and_changes_nothing(torch, name, op):
    errors = []
    for lib in both(torch):
        t = row(lib)
        with pytest.raises(Exception) as info:
            op(lib, t)
        errors.append((type(info.value).__name__, message(info.value)))
        assert t._version == 0 and t.tolist() == [1.0, -2.0, 3.0] and tuple(t.shape) == (3,)
    assert errors[0] == errors[1]


def test_failed_inplace_on_a_view_leaves_the_base_history_alone(torch):
    for lib in both(torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        b = x * 1
        v = b[0]
        with pytest.raises(RuntimeError):
            v.add_(lib.ones(2, 3))
        assert b._version == v._version == 0
        assert node_type_name(b.grad_fn) == "MulBackward0"
        assert node_type_name(v.grad_fn) == "SelectBackward0"
        b.sum().backward()
        assert x.grad.tolist() == [[1.0] * 3] * 2


# ---------------------------------------------------------------------------
# Who shares the counter


def test_reference_version_counter_sequence(torch):
    # PyTorch's test_version_counter, step by step, in both libraries.
    for lib in both(torch):
        x = lib.randn(1, 2)
        x.add_(1).add_(1)
        assert x._version == 2
        xz = x[:]
        assert xz._version == x._version == 2
        xz.add_(1)
        assert xz._version == x._version == 3
        x.data = lib.randn(2, 3)
        assert x._version == 3
        x.add_(1)
        assert x._version == xz._version == 4
        xz.add_(1)
        assert x._version == xz._version == 5


def test_views_of_views_share_the_root_counter(torch):
    for lib in both(torch):
        base = lib.zeros(2, 3, 4)
        a, b = base[0], base[1][1:]
        c = a.t()
        c.add_(1)
        b.mul_(2)
        assert base._version == a._version == b._version == c._version == 2


def test_detach_shares_the_counter(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        d.add_(1)
        assert x._version == d._version == 1
        with lib.no_grad():
            x.add_(1)
        assert x._version == d._version == 2
        assert x.tolist() == d.tolist() == [3.0, 4.0]


def test_data_does_not_share_the_counter(torch):
    results = []
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        d.add_(1)
        with lib.no_grad():
            x.mul_(2)
        results.append((x._version, d._version, x.data._version, x.tolist(), d.tolist()))
    assert results[0] == results[1] == (1, 1, 0, [4.0, 6.0], [4.0, 6.0])


def test_data_of_a_view_is_not_a_view(torch):
    for lib in both(torch):
        x = lib.zeros(2, 3)
        d = x[1].data
        assert not d._is_view() and d._base is None
        d.fill_(1)
        assert x._version == 0 and x.tolist() == [[0.0] * 3, [1.0] * 3]


def test_saved_result_shares_the_counter_of_the_output(torch):
    # PyTorch's test_saved_variable_version_counter
    for lib in both(torch):
        a = lib.tensor([0.5, 1.5], requires_grad=True)
        b = lib.exp(a)
        unpacked = b.grad_fn._saved_result
        assert unpacked._version == b._version == 0
        with lib.no_grad():
            b += 1
        assert unpacked._version == b._version == 1
        assert unpacked.tolist() == b.tolist()


def test_increment_version_bumps_the_shared_counter(torch):
    for lib in both(torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        v = a[1:]
        lib.autograd.graph.increment_version(a)
        assert a._version == v._version == 1
        i = lib.zeros(3, dtype=lib.int32)
        lib.autograd.graph.increment_version(i)
        assert i._version == 1


def test_inference_tensors_have_no_version(torch):
    messages = []
    for lib in both(torch):
        with lib.inference_mode():
            t = lib.ones(2)
        with pytest.raises(RuntimeError) as info:
            t._version
        messages.append(message(info.value))
    assert messages[0] == messages[1] == "Inference tensors do not track version counter."


# ---------------------------------------------------------------------------
# What the counter catches at backward


def saved_exp_output(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    return y.sum()


def saved_input_made_by_mul_then_changed_by_add(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    z = a * a
    a.add_(1)
    return z.sum()


def saved_leaf_changed_twice_in_no_grad(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x * x).sum()
    with L.no_grad():
        x.mul_(2)
        x.mul_(2)
    return z


def saved_constant_changed(L):
    w = L.tensor([1.0, 2.0, 3.0])
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x * w).sum()
    w.add_(1)
    return z


def saved_tanh_output_float64_matrix(L):
    x = L.ones(2, 3, dtype=L.float64, requires_grad=True)
    y = x.tanh()
    y.mul_(2)
    return y.sum()


def saved_view_changed_through_its_base(L):
    x = L.ones(2, 3, requires_grad=True)
    b = x * 1
    v = b[0]
    z = v * v
    b.add_(1)
    return z.sum()


def saved_sigmoid_output_changed_by_setitem(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = x.sigmoid()
    s[0] = 2.0
    return s.sum()


def saved_leaf_changed_through_detach(L):
    x = L.tensor(2.0, requires_grad=True)
    y = x**2
    x.detach().zero_()
    return y


def saved_leaf_changed_through_a_view_in_no_grad(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.exp() * x).sum()
    with L.no_grad():
        x[1:].mul_(3)
    return y


CAUGHT = [
    saved_exp_output,
    saved_input_made_by_mul_then_changed_by_add,
    saved_leaf_changed_twice_in_no_grad,
    saved_constant_changed,
    saved_tanh_output_float64_matrix,
    saved_view_changed_through_its_base,
    saved_sigmoid_output_changed_by_setitem,
    saved_leaf_changed_through_detach,
    saved_leaf_changed_through_a_view_in_no_grad,
]


@pytest.mark.parametrize("build", CAUGHT, ids=[f.__name__ for f in CAUGHT])
def test_modified_saved_tensor_raises_at_backward_like_torch(torch, build):
    messages = []
    for lib in both(torch):
        loss = build(lib)
        with pytest.raises(RuntimeError) as info:
            loss.backward()
        messages.append(message(info.value))
    assert messages[0].startswith(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: "
    )
    assert messages[0].split(" Hint:")[0] == messages[1].split(" Hint:")[0]


def test_version_error_hint_matches_torch(torch):
    messages = []
    for lib in both(torch):
        with pytest.raises(RuntimeError) as info:
            saved_exp_output(lib).backward()
        messages.append(message(info.value))
    assert messages[0].split(" Hint:")[1] == messages[1].split(" Hint:")[1]


def test_version_error_names_the_versions_and_the_producing_node():
    # the message shapes, spelled out once
    x = og.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert (
        "[opgrad.FloatTensor [3]], which is output 0 of Exp, is at version 2; "
        "expected version 0 instead. Hint:" in str(info.value)
    )


def modified_but_not_saved_by_add(L):
    x = L.ones(2, 2, requires_grad=True)
    y = L.ones(2, 2, requires_grad=True)
    z = x * y
    q = z + y
    z.add_(2)
    return [x, y], q.sum()


def modified_tensor_is_the_output(L):
    x = L.ones(2, 2, requires_grad=True)
    y = L.ones(2, 2, requires_grad=True) * 4
    z = x * y
    w = z.add_(y)
    return [x], w.sum()


def saved_other_view_region_not_affected(L):
    # sigmoid saves its result, not the view it read; changing the base is fine
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    s = b[0:2].sigmoid()
    b.zero_()
    return [x], s.sum()


def data_changes_are_not_caught(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.data.add_(1)
    return [x], y.sum()


def leaf_data_changes_are_not_caught(L):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x**2
    x.data.mul_(10)
    return [x], y.sum()


NOT_CAUGHT = [
    modified_but_not_saved_by_add,
    modified_tensor_is_the_output,
    saved_other_view_region_not_affected,
    data_changes_are_not_caught,
    leaf_data_changes_are_not_caught,
]


@pytest.mark.parametrize("build", NOT_CAUGHT, ids=[f.__name__ for f in NOT_CAUGHT])
def test_backward_succeeds_when_nothing_saved_was_modified_and_matches_torch(torch, build):
    grads = []
    for lib in both(torch):
        leaves, loss = build(lib)
        loss.backward()
        grads.append([as_numpy(leaf.grad) for leaf in leaves])
    for got, exp in zip(*grads):
        np.testing.assert_allclose(got, exp, rtol=1e-6)


def test_reference_inplace_exp_sequence(torch):
    # PyTorch's test_inplace, third part: z.exp_() bumps the version; r and w
    # still backward, q (which saved z) does not.
    results = []
    for lib in both(torch):
        x = lib.ones(5, 5, requires_grad=True)
        y = lib.ones(5, 5, requires_grad=True) * 4
        m = x / 2
        z = m + y / 8
        q = z * y
        r = z + y
        before = z._version
        w = z.exp_()
        assert w is z and z._version == before + 1
        r.backward(lib.ones(5, 5), retain_graph=True)
        first = as_numpy(x.grad).copy()
        w.backward(lib.ones(5, 5), retain_graph=True)
        second = as_numpy(x.grad).copy()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            q.backward(lib.ones(5, 5))
        results.append((first, second))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
