"""Leaves, ``.data``, ``detach_()``, ``requires_grad_()``, ``.grad`` and the in-place view ops.

Compared with PyTorch: values, flags (``is_leaf``, ``requires_grad``,
``grad_fn``), versions and error types and texts.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import as_numpy, message, node_type_name


def both(torch):
    return (og, torch)


def same_error(torch, act, error=RuntimeError):
    """``act(lib)`` raises the same error type and text in both libraries."""
    texts = []
    for lib in both(torch):
        with pytest.raises(error) as info:
            act(lib)
        texts.append(message(info.value))
    assert texts[0] == texts[1]
    return texts[1]


NON_LEAF_MSG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)

# ---------------------------------------------------------------------------
# .data


def test_data_is_a_leaf_without_grad_that_shares_memory(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        assert not d._is_view() and d._base is None
        d[0] = 10.0
        assert x.tolist() == [10.0, 2.0, 3.0]


def test_data_of_a_non_leaf_drops_the_history(torch):
    for lib in both(torch):
        y = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        d = y.data
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        assert node_type_name(y.grad_fn) == "MulBackward0"


def test_data_returns_a_new_tensor_each_time(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert x.data is not x.data


def test_assigning_data_keeps_identity_flags_and_version(torch):
    for lib in both(torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            a.add_(1)
        ident = id(a)
        a.data = lib.zeros(3, 2, dtype=lib.float64)
        assert id(a) == ident
        assert tuple(a.shape) == (3, 2) and a.dtype == lib.float64
        assert a.requires_grad and a.is_leaf and a._version == 1


def test_assigned_data_shares_memory_but_not_the_version_counter(torch):
    for lib in both(torch):
        src = lib.tensor([1.0, 2.0])
        a = lib.zeros(2)
        a.data = src
        src.add_(1)
        assert a.tolist() == [2.0, 3.0]
        assert a._version == 0 and src._version == 1


def test_assigning_data_of_a_non_leaf_changes_the_values_backward_sees(torch):
    grads = []
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.data = lib.tensor([5.0, 6.0])
        assert node_type_name(y.grad_fn) == "MulBackward0"
        (y * y).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [20.0, 24.0]


def test_assigning_integer_data_to_a_tensor_that_requires_grad_raises(torch):
    def act(lib):
        a = lib.tensor(1.0, requires_grad=True)
        a.data = lib.tensor(2.0)
        a.data = lib.tensor(3, dtype=lib.int64)

    text = same_error(torch, act)
    assert (
        text
        == "data set to a tensor that requires gradients must be floating point or complex dtype"
    )


def test_assigning_a_non_tensor_to_data_raises_type_error(torch):
    def act(lib):
        lib.tensor([1.0, 2.0]).data = [1.0, 2.0]

    assert same_error(torch, act, TypeError) == "Variable data has to be a tensor, but got list"


def test_changes_through_data_escape_the_version_check(torch):
    grads = []
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        y.data.mul_(2)
        y.sum().backward()
        grads.append(as_numpy(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


# ---------------------------------------------------------------------------
# detach_()


def test_detach_inplace_turns_a_non_leaf_into_a_leaf(torch):
    for lib in both(torch):
        b = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        assert b.detach_() is b
        assert not b.requires_grad and b.grad_fn is None and b.is_leaf
        assert b._version == 0


def test_detach_inplace_cuts_the_graph(torch):
    # PyTorch's test_detach, in-place part
    results = []
    for lib in both(torch):
        x = lib.ones(3, 3, requires_grad=True)
        y = lib.ones(3, 3, requires_grad=True)
        a = x * 2
        (y + a).sum().backward(retain_graph=True)
        a.detach_()
        (y + a).sum().backward()
        results.append((x.grad.tolist(), y.grad.tolist()))
    assert results[0] == results[1]


VIEWS = [
    ("narrow_of_leaf", lambda L: L.tensor([1.0, 2.0, 3.0], requires_grad=True).narrow(0, 1, 2)),
    ("slice_of_non_leaf", lambda L: (L.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1)[1:]),
    ("select_of_plain", lambda L: L.zeros(2, 3)[0]),
    ("transpose", lambda L: L.zeros(2, 3).t()),
]


@pytest.mark.parametrize("name, make", VIEWS, ids=[c[0] for c in VIEWS])
def test_detach_inplace_on_a_view_raises(torch, name, make):
    def act(lib):
        make(lib).detach_()

    text = same_error(torch, act)
    assert text.startswith("Can't detach views in-place. Use detach() instead.")


def test_detach_inplace_on_a_view_leaves_it_attached(torch):
    for lib in both(torch):
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        v = b[1:]
        with pytest.raises(RuntimeError):
            v.detach_()
        assert v.requires_grad and node_type_name(v.grad_fn) == "SliceBackward0"
        assert v._base is b


def test_detach_inplace_on_the_base_does_not_detach_its_views(torch):
    # PyTorch's test_detach_base
    for lib in both(torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        view = x.narrow(0, 1, 1)
        x.detach_()
        assert not x.requires_grad
        assert view.requires_grad and node_type_name(view.grad_fn) == "SliceBackward0"
        assert view._base is x


# ---------------------------------------------------------------------------
# requires_grad_() and the requires_grad setter


def test_requires_grad_false_on_a_non_leaf_raises(torch):
    def act(lib):
        (lib.tensor([1.0], requires_grad=True) * 2).requires_grad_(False)

    assert same_error(torch, act) == NON_LEAF_MSG


def test_requires_grad_setter_false_on_a_non_leaf_raises(torch):
    def act(lib):
        y = lib.tensor([1.0], requires_grad=True) * 2
        y.requires_grad = False

    assert same_error(torch, act) == NON_LEAF_MSG


def test_requires_grad_false_on_a_view_of_a_leaf_raises(torch):
    def act(lib):
        lib.tensor([1.0, 2.0], requires_grad=True)[1:].requires_grad_(False)

    assert same_error(torch, act) == NON_LEAF_MSG


def test_requires_grad_true_on_a_non_leaf_is_a_no_op(torch):
    for lib in both(torch):
        y = lib.tensor([1.0], requires_grad=True) * 2
        assert y.requires_grad_(True) is y
        assert y.requires_grad and node_type_name(y.grad_fn) == "MulBackward0"


def test_requires_grad_on_an_integer_tensor_raises(torch):
    text = same_error(torch, lambda lib: lib.tensor([1, 2]).requires_grad_())
    assert text.startswith("only Tensors of floating point")


def test_requires_grad_false_on_an_integer_tensor_is_allowed(torch):
    for lib in both(torch):
        t = lib.tensor([1, 2])
        assert t.requires_grad_(False) is t and not t.requires_grad


def test_view_of_a_plain_tensor_can_be_made_a_leaf_that_requires_grad(torch):
    for lib in both(torch):
        a = lib.zeros(3)
        v = a[1:]
        v.requires_grad_()
        assert v.requires_grad and v.is_leaf and v.grad_fn is None
        assert not a.requires_grad and v._base is a


def test_detached_tensor_can_require_grad_without_touching_the_original(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0])
        d = x.detach().requires_grad_()
        assert d.requires_grad and not x.requires_grad


def test_inplace_before_requires_grad_then_backward(torch):
    # PyTorch's test_no_requires_grad_inplace, first part
    for lib in both(torch):
        a = lib.zeros(2, 3)
        a.add_(5)
        a.requires_grad = True
        a.sum().backward()
        assert a.grad.tolist() == [[1.0] * 3] * 2


def test_inplace_with_a_value_requiring_grad_makes_the_result_require_grad(torch):
    # PyTorch's test_requires_grad_inplace
    for lib in both(torch):
        b = lib.ones(2, 2, requires_grad=True)
        a = lib.zeros(2, 2)
        a += b
        assert a.requires_grad and not a.is_leaf
        assert node_type_name(a.grad_fn) == "AddBackward0"
        c = lib.zeros(2, 2) + 0
        c += b
        assert c.requires_grad


# ---------------------------------------------------------------------------
# Assigning .grad


def test_assigning_a_matching_grad_stores_that_tensor(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        g = lib.ones(3)
        x.grad = g
        assert x.grad is g
        (x * 2).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_assigning_none_clears_the_grad(torch):
    for lib in both(torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.sum().backward()
        x.grad = None
        assert x.grad is None
        (x * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]


BAD_GRADS = [
    ("shape", lambda L: L.zeros(2), RuntimeError),
    ("extra_dim", lambda L: L.zeros(3, 1), RuntimeError),
    ("dtype", lambda L: L.zeros(3, dtype=L.float64), RuntimeError),
    ("integer", lambda L: L.zeros(3, dtype=L.int64), RuntimeError),
    ("list", lambda L: [1.0, 2.0, 3.0], TypeError),
]


@pytest.mark.parametrize("name, make, error", BAD_GRADS, ids=[c[0] for c in BAD_GRADS])
def test_assigning_a_mismatched_grad_raises_like_torch(torch, name, make, error):
    def act(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        try:
            x.grad = make(lib)
        finally:
            assert x.grad is None

    same_error(torch, act, error)


def test_grad_of_a_tensor_that_does_not_require_grad_can_be_assigned(torch):
    for lib in both(torch):
        y = lib.ones(3)
        y.grad = lib.ones(3)
        assert y.grad.tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------------
# In-place view ops: squeeze_, unsqueeze_, t_, transpose_

INPLACE_VIEW_OPS = [
    ("squeeze_dim", lambda t: t.squeeze_(1), (3, 1)),
    ("squeeze_all", lambda t: t.squeeze_(), (1, 3, 1)),
    ("unsqueeze_", lambda t: t.unsqueeze_(0), (3, 2)),
    ("unsqueeze_negative", lambda t: t.unsqueeze_(-1), (3, 2)),
    ("t_", lambda t: t.t_(), (3, 2)),
    ("transpose_", lambda t: t.transpose_(0, 1), (3, 2)),
    ("transpose_3d", lambda t: t.transpose_(0, 2), (2, 1, 3)),
]
IV_IDS = [c[0] for c in INPLACE_VIEW_OPS]


def _values(lib, shape):
    return lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1)


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_changes_shape_and_values_like_torch(torch, name, op, shape):
    results = []
    for lib in both(torch):
        t = _values(lib, shape)
        assert op(t) is t
        results.append((tuple(t.shape), tuple(t.stride()), as_numpy(t).copy(), t._version))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_array_equal(results[0][2], results[1][2])
    assert results[0][3] == results[1][3]


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_non_leaf_grad_fn_and_gradient_match_torch(torch, name, op, shape):
    results = []
    for lib in both(torch):
        x = _values(lib, shape).requires_grad_()
        b = x * 1
        op(b)
        facts = (node_type_name(b.grad_fn), b._version, b._is_view(), b.is_leaf)
        weight = lib.arange(float(b.numel()), dtype=lib.float64).view(b.shape)
        (b * weight).sum().backward()
        results.append((facts, as_numpy(x.grad)))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_view_keeps_it_a_view_of_the_base(torch, name, op, shape):
    results = []
    for lib in both(torch):
        x = _values(lib, (2,) + shape).requires_grad_()
        b = x * 1
        v = b[0]
        op(v)
        assert v._is_view() and v._base is b
        facts = (node_type_name(v.grad_fn), node_type_name(b.grad_fn), v._version, b._version)
        weight = lib.arange(float(v.numel()), dtype=lib.float64).view(v.shape)
        (v * weight).sum().backward()
        results.append((facts, as_numpy(x.grad)))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_leaf_that_requires_grad_raises(torch, name, op, shape):
    def act(lib):
        x = _values(lib, shape).requires_grad_()
        try:
            op(x)
        finally:
            assert tuple(x.shape) == shape and x._version == 0

    text = same_error(torch, act)
    assert text == "a leaf Variable that requires grad is being used in an in-place operation."


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_leaf_under_no_grad_is_allowed(torch, name, op, shape):
    results = []
    for lib in both(torch):
        x = _values(lib, shape).requires_grad_()
        with lib.no_grad():
            op(x)
        results.append((tuple(x.shape), x.requires_grad, x.is_leaf, x.grad_fn, x._version))
    assert results[0] == results[1]


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_multi_output_view_raises(torch, name, op, shape):
    def act(lib):
        b = _values(lib, (2,) + shape).requires_grad_() * 1
        part = b.unbind(0)[1]
        try:
            op(part)
        finally:
            assert tuple(part.shape) == shape

    text = same_error(torch, act)
    assert text.startswith("Output 1 of Unbind is a view and is being modified inplace.")


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_no_grad_view_raises(torch, name, op, shape):
    def act(lib):
        b = _values(lib, (2,) + shape).requires_grad_() * 1
        with lib.no_grad():
            v = b[0]
        op(v)

    text = same_error(torch, act)
    assert text.startswith("A view was created in no_grad mode and is being modified inplace")


@pytest.mark.parametrize("name, op, shape", INPLACE_VIEW_OPS, ids=IV_IDS)
def test_inplace_view_op_on_a_view_of_a_leaf_raises(torch, name, op, shape):
    def act(lib):
        op(_values(lib, (2,) + shape).requires_grad_()[0])

    text = same_error(torch, act)
    assert text == (
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )


# ---------------------------------------------------------------------------
# matmul with a 1-D operand: the squeeze at the end

MATMUL = [
    ("vector_matrix", (3,), (3, 4)),
    ("vector_batch", (3,), (2, 3, 4)),
    ("matrix_vector", (4, 3), (3,)),
    ("batch_vector", (2, 4, 3), (3,)),
    ("vector_vector", (3,), (3,)),
]


@pytest.mark.parametrize("name, left, right", MATMUL, ids=[c[0] for c in MATMUL])
def test_matmul_with_a_vector_grad_fn_and_gradients_match_torch(torch, name, left, right):
    results = []
    for lib in both(torch):
        a = _values(lib, left).requires_grad_()
        b = _values(lib, right).requires_grad_()
        out = lib.matmul(a, b)
        results.append((node_type_name(out.grad_fn), tuple(out.shape)))
        out.sum().backward()
        results[-1] += (as_numpy(a.grad), as_numpy(b.grad))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-12)
