"""``Tensor.__setitem__`` against PyTorch: values, versions, grad_fn names and gradients.

Basic indices (ints, slices, None, Ellipsis) write through a view (CopySlices,
or Fill/Copy on the whole tensor); masks and index tensors go through
``index_put_`` (IndexPutBackward0). Values may be Python scalars, tensors
that broadcast, or tensors that require grad, whose gradient is the slice of
the incoming gradient they were written to.
"""

import numpy as np
import pytest

import opgrad as og
from torch_oracle import as_numpy, message, node_type_name, rng_for


def both(torch):
    return (og, torch)


MASK_3x4 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]

# (id, shape of the tensor written to, index built for lib)
INDICES = [
    ("int", (3, 4), lambda L: 1),
    ("negative_int", (3, 4), lambda L: -1),
    ("two_ints", (3, 4), lambda L: (1, 2)),
    ("slice", (3, 4), lambda L: slice(1, 3)),
    ("step_slice", (3, 4), lambda L: (slice(None), slice(None, None, 2))),
    ("negative_slice_bounds", (3, 4), lambda L: slice(-2, None)),
    ("full_slice", (3, 4), lambda L: slice(None)),
    ("none", (3, 4), lambda L: None),
    ("ellipsis", (3, 4), lambda L: Ellipsis),
    ("ellipsis_int", (3, 4), lambda L: (Ellipsis, 1)),
    ("none_int_slice", (3, 4), lambda L: (None, 1, slice(1, None))),
    ("zero_dim_int_tensor", (3, 4), lambda L: L.tensor(1)),
    ("bool_mask", (3, 4), lambda L: L.tensor(MASK_3x4)),
    ("row_mask", (3, 4), lambda L: L.tensor([True, False, True])),
    ("empty_mask", (3, 4), lambda L: L.zeros(3, 4, dtype=L.bool)),
    ("index_tensor", (3, 4), lambda L: L.tensor([0, 2])),
    ("index_list", (3, 4), lambda L: [0, 2]),
    ("negative_index_tensor", (3, 4), lambda L: L.tensor([-1])),
    ("two_index_tensors", (3, 4), lambda L: (L.tensor([0, 1]), L.tensor([1, 0]))),
    ("slice_and_index_tensor", (3, 4), lambda L: (slice(None), L.tensor([1, 3]))),
    ("3d_last_dim_list", (5, 5, 5), lambda L: (slice(None), slice(None), [1, 3])),
    ("3d_middle_dim_list", (5, 5, 5), lambda L: (slice(None), [1, 3], slice(None))),
    ("3d_first_dim_list", (5, 5, 5), lambda L: ([1, 3], slice(None), slice(None))),
    ("3d_two_lists_last", (5, 5, 5), lambda L: (slice(None), [2, 4], [1, 3])),
    ("3d_two_lists_first", (5, 5, 5), lambda L: ([1, 3], [2, 4], slice(None))),
    ("3d_tensor_and_list", (5, 5, 5), lambda L: (L.tensor([1, 3]), [2, 4], slice(None))),
    ("2d_lists", (5, 5), lambda L: ([0, 4], [2, 2])),
]
INDEX_IDS = [c[0] for c in INDICES]
BY_ID = {c[0]: c for c in INDICES}


def target_shape(torch, shape, index):
    return tuple(torch.zeros(shape)[index(torch)].shape)


def broadcast_shape(target):
    return (1,) + target[1:] if target else ()


# (id, value for (lib, target shape); value kinds that require grad end in _grad)
VALUES = {
    "float_scalar": lambda L, s: 0.5,
    "int_scalar": lambda L, s: 3,
    "tensor": lambda L, s: L.tensor(rng_for("value", s).standard_normal(s)),
    "broadcast_tensor": lambda L, s: L.tensor(
        rng_for("value", broadcast_shape(s)).standard_normal(broadcast_shape(s))
    ),
    "tensor_grad": lambda L, s: L.tensor(
        rng_for("value", s).standard_normal(s), requires_grad=True
    ),
    "broadcast_grad": lambda L, s: L.tensor(
        rng_for("value", broadcast_shape(s)).standard_normal(broadcast_shape(s)),
        requires_grad=True,
    ),
    "zero_dim_grad": lambda L, s: L.tensor(0.25, dtype=L.float64, requires_grad=True),
}
GRAD_VALUES = [k for k in VALUES if k.endswith("_grad")]

ALL_CASES = [(i, v) for i in INDEX_IDS for v in VALUES]
ALL_IDS = [f"{i}-{v}" for i, v in ALL_CASES]


def base_data(shape):
    return rng_for("base", shape).standard_normal(shape)


def weights(lib, shape):
    return lib.tensor(rng_for("weights", shape).standard_normal(shape))


def run_on_non_leaf(lib, torch, index_id, value_id):
    """``b = x * 1; b[index] = value``: the facts to compare, and the grads."""
    _, shape, index = BY_ID[index_id]
    value = VALUES[value_id](lib, target_shape(torch, shape, index))
    x = lib.tensor(base_data(shape), requires_grad=True)
    b = x * 1
    b[index(lib)] = value
    facts = (node_type_name(b.grad_fn), b._version, as_numpy(b).copy())
    (b * weights(lib, shape)).sum().backward()
    value_grad = value.grad if isinstance(value, lib.Tensor) else None
    return facts, x.grad, value_grad


def run_on_plain(lib, torch, index_id, value_id):
    """``base[index] = value`` on a tensor that does not require grad."""
    _, shape, index = BY_ID[index_id]
    value = VALUES[value_id](lib, target_shape(torch, shape, index))
    base = lib.tensor(base_data(shape))
    base[index(lib)] = value
    return base, value


# ---------------------------------------------------------------------------
# Values and versions


@pytest.mark.parametrize("index_id, value_id", ALL_CASES, ids=ALL_IDS)
def test_setitem_values_and_version_match_torch(torch, index_id, value_id):
    (got, _), (expected, _) = (run_on_plain(lib, torch, index_id, value_id) for lib in both(torch))
    np.testing.assert_array_equal(as_numpy(got), as_numpy(expected))
    assert got._version == expected._version == 1
    assert got.dtype == og.float64


@pytest.mark.parametrize("index_id, value_id", ALL_CASES, ids=ALL_IDS)
def test_setitem_returns_none(torch, index_id, value_id):
    _, shape, index = BY_ID[index_id]
    base = og.zeros(shape, dtype=og.float64)
    value = VALUES[value_id](og, target_shape(torch, shape, index))
    assert base.__setitem__(index(og), value) is None


# ---------------------------------------------------------------------------
# Autograd on a non-leaf


@pytest.mark.parametrize("index_id, value_id", ALL_CASES, ids=ALL_IDS)
def test_setitem_on_non_leaf_grad_fn_name_matches_torch(torch, index_id, value_id):
    (got, _, _), (expected, _, _) = (
        run_on_non_leaf(lib, torch, index_id, value_id) for lib in both(torch)
    )
    assert got[0] == expected[0]
    assert got[1] == expected[1] == 1
    np.testing.assert_array_equal(got[2], expected[2])


@pytest.mark.parametrize("index_id, value_id", ALL_CASES, ids=ALL_IDS)
def test_setitem_on_non_leaf_gradients_match_torch(torch, index_id, value_id):
    (_, x_grad, v_grad), (_, t_x_grad, t_v_grad) = (
        run_on_non_leaf(lib, torch, index_id, value_id) for lib in both(torch)
    )
    np.testing.assert_allclose(as_numpy(x_grad), as_numpy(t_x_grad), rtol=1e-12)
    if t_v_grad is None:
        assert v_grad is None
    else:
        assert v_grad is not None, "no gradient reached the value"
        assert tuple(v_grad.shape) == tuple(t_v_grad.shape)
        np.testing.assert_allclose(as_numpy(v_grad), as_numpy(t_v_grad), rtol=1e-12)


GRAD_CASES = [(i, v) for i in INDEX_IDS for v in GRAD_VALUES]


@pytest.mark.parametrize("index_id, value_id", GRAD_CASES, ids=[f"{i}-{v}" for i, v in GRAD_CASES])
def test_value_requiring_grad_makes_a_plain_tensor_require_grad_like_torch(
    torch, index_id, value_id
):
    results = []
    for lib in both(torch):
        base, value = run_on_plain(lib, torch, index_id, value_id)
        facts = (base.requires_grad, base.is_leaf, node_type_name(base.grad_fn))
        (base * weights(lib, tuple(base.shape))).sum().backward()
        results.append((facts, as_numpy(value.grad)))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


# ---------------------------------------------------------------------------
# Leaves


@pytest.mark.parametrize("index_id", INDEX_IDS)
def test_setitem_on_leaf_under_no_grad_changes_values_only(torch, index_id):
    results = []
    _, shape, index = BY_ID[index_id]
    for lib in both(torch):
        x = lib.tensor(base_data(shape), requires_grad=True)
        with lib.no_grad():
            x[index(lib)] = 0.5
        assert x.requires_grad and x.is_leaf and x.grad_fn is None
        results.append((x._version, as_numpy(x).copy()))
    assert results[0][0] == results[1][0] == 1
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("index_id", INDEX_IDS)
def test_setitem_on_leaf_requiring_grad_raises_like_torch_and_changes_nothing(torch, index_id):
    messages = []
    _, shape, index = BY_ID[index_id]
    for lib in both(torch):
        data = base_data(shape)
        x = lib.tensor(data, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            x[index(lib)] = 0.5
        messages.append(message(info.value))
        np.testing.assert_array_equal(as_numpy(x), data)
        assert x._version == 0
    assert messages[0] == messages[1]
    assert "leaf Variable that requires grad is being used in an in-place operation." in messages[1]


def test_value_requiring_grad_assigned_under_no_grad_is_not_tracked(torch):
    # PyTorch's test_no_grad_assignment
    for lib in both(torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = lib.tensor([7.0, 8.0, 9.0], requires_grad=True)
        b = lib.zeros(2, 3)
        with lib.no_grad():
            x[0] = y
            b[1] = y
        assert x.requires_grad and x.grad_fn is None
        assert not b.requires_grad and b.grad_fn is None
        assert x.tolist()[0] == b.tolist()[1] == [7.0, 8.0, 9.0]


def test_leaf_assignment_rows_from_two_leaves(torch):
    # PyTorch's test_leaf_assignment
    results = []
    for lib in both(torch):
        x = lib.zeros(5, 5)
        y = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
        z = lib.tensor([5.0, 4.0, 3.0, 2.0, 1.0], requires_grad=True)
        x[0] = y
        x[1] = 2 * z
        assert x.requires_grad and x.grad_fn is not None
        x.sum().backward()
        results.append((y.grad.tolist(), z.grad.tolist(), x._version))
    assert results[0] == results[1] == ([1.0] * 5, [2.0] * 5, 2)


# ---------------------------------------------------------------------------
# dtypes and sources


def test_float_scalar_into_integer_tensor_truncates_like_torch(torch):
    results = []
    for lib in both(torch):
        t = lib.zeros(3, dtype=lib.int64)
        t[0] = 2.7
        t[1] = lib.tensor(-1.9)
        t[2] = True
        results.append((t.tolist(), t.dtype == lib.int64, t._version))
    assert results[0] == results[1] == ([2, -1, 1], True, 3)


def test_float64_value_into_float32_tensor_through_a_view_is_cast(torch):
    results = []
    for lib in both(torch):
        t = lib.zeros(3)
        t[0] = lib.tensor(1 / 3, dtype=lib.float64)
        results.append((t.dtype == lib.float32, t.tolist()))
    assert results[0] == results[1]


def test_value_that_is_a_view_of_the_same_tensor(torch):
    results = []
    for lib in both(torch):
        a = lib.arange(5.0)
        a[1] = a[0] + 10
        a[0:2] = a[3:]
        results.append((a.tolist(), a._version))
    assert results[0] == results[1]


def test_repeated_setitem_accumulates_versions_and_gradients(torch):
    results = []
    for lib in both(torch):
        x = lib.tensor(base_data((3, 4)), requires_grad=True)
        y = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        b = x * 2
        b[0] = y
        b[:, 1] = 0.0
        b[lib.tensor([2])] = y * y
        names = node_type_name(b.grad_fn)
        (b * weights(lib, (3, 4))).sum().backward()
        results.append((names, b._version, as_numpy(x.grad), as_numpy(y.grad)))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-12)


# ---------------------------------------------------------------------------
# Errors

ERRORS = [
    ("value_shape", lambda L, t: t.__setitem__(0, L.ones(3))),
    ("slice_value_shape", lambda L, t: t.__setitem__(slice(0, 2), L.ones(3, 4))),
    ("mask_shape", lambda L, t: t.__setitem__(L.ones(2, 2, dtype=L.bool), 0.0)),
    ("row_mask_shape", lambda L, t: t.__setitem__(L.tensor([True, False]), 1.0)),
    ("int_out_of_range", lambda L, t: t.__setitem__(5, 0.0)),
    ("index_tensor_out_of_range", lambda L, t: t.__setitem__(L.tensor([5]), 0.0)),
    ("too_many_indices", lambda L, t: t.__setitem__((0, 0, 0), 1.0)),
    ("float_index", lambda L, t: t.__setitem__(1.5, 0.0)),
    ("float_index_tensor", lambda L, t: t.__setitem__(L.tensor([0.5]), 1.0)),
    ("list_value", lambda L, t: t.__setitem__(0, [1.0, 2.0, 3.0, 4.0])),
    ("string_value", lambda L, t: t.__setitem__(0, "x")),
    (
        "index_put_dtype",
        lambda L, t: t.__setitem__(L.tensor([0, 1]), L.ones(2, 4, dtype=L.float64)),
    ),
    ("overlapping_source", lambda L, t: t.view(12).__setitem__(slice(1, None), t.view(12)[:-1])),
]


@pytest.mark.parametrize("name, act", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_setitem_raises_like_torch_and_changes_nothing(torch, name, act):
    errors = []
    for lib in both(torch):
        t = lib.zeros(3, 4)
        with pytest.raises(Exception) as info:
            act(lib, t)
        errors.append((type(info.value).__name__, message(info.value)))
        assert t._version == 0 and t.tolist() == [[0.0] * 4] * 3
    assert errors[0] == errors[1]


# ---------------------------------------------------------------------------
# Python indexing's own errors (checked before select, naming the index position)

INDEX_ERRORS = {
    "row_past_end": lambda T: T.ones(2, 3)[2],
    "column_past_end": lambda T: T.ones(2, 3)[:, 3],
    "negative_past_start": lambda T: T.ones(2, 3)[-3],
    "second_int": lambda T: T.ones(2, 3)[1, 5],
    "after_ellipsis": lambda T: T.ones(2, 3)[..., -4],
    "after_none": lambda T: T.ones(2, 3)[None, 5],
    "after_slice": lambda T: T.ones(4, 3)[1:3, 7],
    "zero_dim_int": lambda T: T.ones(())[0],
    "zero_dim_tuple": lambda T: T.ones(())[(0,)],
    "zero_dim_slice": lambda T: T.ones(())[:],
    "zero_dim_setitem": lambda T: T.ones(()).__setitem__(0, 1.0),
    "setitem_second_int": lambda T: T.ones(2, 3).__setitem__((1, 5), 1.0),
    "setitem_after_none": lambda T: T.ones(2, 3).__setitem__((None, 1, 5), 1.0),
    "select_method": lambda T: T.ones(2, 3).select(0, 2),
}


@pytest.mark.parametrize("name", sorted(INDEX_ERRORS))
def test_indexing_errors_match_torch(torch, name):
    from torch_oracle import outcome

    import opgrad as og

    expected = outcome(lambda: INDEX_ERRORS[name](torch))
    assert expected[0] == "IndexError"
    assert outcome(lambda: INDEX_ERRORS[name](og)) == expected


# ---------------------------------------------------------------------------
# One mask and a one-element value: PyTorch fills through masked_fill_ with the value's
# number, so the value may have any dtype (converted, or refused if it does not fit)

ONE_MASK_TARGETS = {
    "1-d mask": ((3,), lambda L: L.tensor([True, False, True])),
    "row mask": ((2, 3), lambda L: L.tensor([True, False])),
    "mask after a full slice": ((2, 3), lambda L: (slice(None), L.tensor([True, False, True]))),
    "mask then an int": ((2, 3), lambda L: (L.tensor([True, False]), 0)),
}
ONE_MASK_VALUES = {
    "float64 0-dim": lambda L: L.tensor(3.0, dtype=L.float64),
    "int64 0-dim": lambda L: L.tensor(3),
    "float16 [1]": lambda L: L.tensor([3.0], dtype=L.float16),
    "bool [1, 1]": lambda L: L.tensor([[True]]),
    "float32 3.7": lambda L: L.tensor(3.7),
    "float64 -1": lambda L: L.tensor(-1.0, dtype=L.float64),
    "float64 1e6": lambda L: L.tensor(1e6, dtype=L.float64),
    "float64 1e40": lambda L: L.tensor(1e40, dtype=L.float64),
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("value", list(ONE_MASK_VALUES))
@pytest.mark.parametrize("target", list(ONE_MASK_TARGETS))
def test_mask_setitem_takes_a_one_element_value_of_any_dtype_as_torch(torch, target, value, dtype):
    from torch_oracle import outcome

    def scenario(L):
        shape, index = ONE_MASK_TARGETS[target]
        x = L.zeros(shape, dtype=getattr(L, dtype))
        kind, text = outcome(lambda: x.__setitem__(index(L), ONE_MASK_VALUES[value](L)))
        return kind, text, x.tolist(), x._version

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_one_mask_takes_another_dtype_unless_accumulating(torch, accumulate):
    from torch_oracle import outcome

    def scenario(L):
        x = L.zeros(3)
        mask, value = L.tensor([True, False, True]), L.tensor(3.0, dtype=L.float64)
        kind, text = outcome(lambda: x.index_put_((mask,), value, accumulate=accumulate))
        return kind, text if kind != "ok" else None, x.tolist()

    assert scenario(og) == scenario(torch)


def test_index_tensor_setitem_still_requires_the_same_dtype(torch):
    from torch_oracle import outcome

    def scenario(L):
        x = L.zeros(3)
        return outcome(lambda: x.__setitem__(L.tensor([0, 2]), L.tensor(3.0, dtype=L.float64)))

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("x_dtype, v_dtype", [("float32", "float64"), ("float64", "float32")])
def test_mask_setitem_of_another_dtype_differentiates_as_torch(torch, x_dtype, v_dtype):
    def scenario(L):
        x = L.zeros(3, dtype=getattr(L, x_dtype), requires_grad=True)
        v = L.tensor([2.0], dtype=getattr(L, v_dtype), requires_grad=True)
        y = x.clone()
        y[L.tensor([True, False, True])] = v
        (y * L.tensor([1.0, 2.0, 3.0], dtype=y.dtype)).sum().backward()
        return y.grad_fn.name(), x.grad.tolist(), v.grad.tolist(), str(v.grad.dtype)[-7:]

    assert scenario(og) == scenario(torch)
