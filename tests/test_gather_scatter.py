"""gather, take_along_dim, the scatter family and the index_* ops against torch: values
(duplicate indices, include_self, integer means, 0-dim tensors, negative dims), gradients,
second derivatives, tangents, node names, saved fields, the aten calls a mode sees, and
every check torch makes (its exception type and text)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same, assert_same_error, result_scenario


def _x(lib, rg=False, dtype="float64"):
    data = np.arange(12.0).reshape(3, 4) - 4
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=rg)


def _s(lib, rg=False, dtype="float64"):
    data = np.arange(100.0, 112.0).reshape(3, 4) * np.array([1, -1, 1, 0])
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=rg)


def _i(lib, *rows):
    return lib.tensor(list(rows) or [[0, 1, 2, 0], [2, 1, 0, 1]])


def _v(lib):
    return lib.tensor([0, 2, 2])


# ---- values ----------------------------------------------------------------------------------

VALUES = {
    "gather": lambda lib, T: _x(lib).gather(1, _i(lib)[:, :3]),
    "gather_negative_dim": lambda lib, T: _x(lib).gather(-2, _i(lib)),
    "gather_int32_index": lambda lib, T: _x(lib).gather(0, _i(lib).int()),
    "gather_index_longer_along_dim": lambda lib, T: _x(lib).gather(1, T([[0, 3, 3, 1, 2, 0]])),
    "gather_0dim": lambda lib, T: T(2.0).gather(0, T(0)),
    "gather_0dim_self_vector_index": lambda lib, T: T(2.0).gather(0, T([0, 0])),
    "gather_empty_index_any_dtype": lambda lib, T: _x(lib).gather(0, T([], dtype=lib.uint8)),
    "gather_int": lambda lib, T: _x(lib).long().gather(1, _i(lib)),
    "gather_bool": lambda lib, T: _x(lib).bool().gather(1, _i(lib)),
    "take_along_dim": lambda lib, T: lib.take_along_dim(_x(lib), _i(lib), 0),
    "take_along_dim_wraps_indices": lambda lib, T: lib.take_along_dim(_x(lib), _i(lib) - 4, 0),
    "take_along_dim_broadcasts": lambda lib, T: lib.take_along_dim(_x(lib), T([[0], [3]]), 1),
    "take_along_dim_flat": lambda lib, T: lib.take_along_dim(_x(lib), T([0, 11, 5])),
    "scatter": lambda lib, T: _x(lib).scatter(0, _i(lib), _s(lib)),
    "scatter_duplicates_last_wins": lambda lib, T: T([0.0] * 5).scatter(
        0, T([1, 1, 1, 3, 1]), T([1.0, 2, 3, 4, 5])
    ),
    "scatter_src_larger_than_index": lambda lib, T: _x(lib).scatter(
        0, _i(lib), T(np.arange(30.0).reshape(5, 6))
    ),
    "scatter_value": lambda lib, T: _x(lib).scatter(1, _i(lib), 7),
    "scatter_value_float_into_int": lambda lib, T: _x(lib).long().scatter(0, _i(lib), 2.5),
    "scatter_value_index_past_self_along_dim": lambda lib, T: _x(lib).scatter(
        0, T([[0] * 4] * 4), 1.0
    ),
    "scatter_reduce_add": lambda lib, T: _x(lib).scatter(0, _i(lib), _s(lib), reduce="add"),
    "scatter_reduce_multiply": lambda lib, T: _x(lib).scatter(
        0, _i(lib), _s(lib), reduce="multiply"
    ),
    "scatter_value_reduce_add": lambda lib, T: _x(lib).scatter(0, _i(lib), 2.0, reduce="add"),
    "scatter_0dim": lambda lib, T: T(1.0).scatter(0, T(0), T(5.0)),
    "scatter_empty_index": lambda lib, T: _x(lib).scatter(0, T([], dtype=lib.uint8), _s(lib)),
    "scatter_add_duplicates_accumulate": lambda lib, T: _x(lib).scatter_add(
        0, T([[0] * 4] * 3), _s(lib)
    ),
    "scatter_add_bool": lambda lib, T: _x(lib).bool().scatter_add(0, _i(lib), _s(lib).bool()),
    "scatter_reduce_max_alias": lambda lib, T: _x(lib).scatter_reduce(0, _i(lib), _s(lib), "max"),
    "scatter_reduce_min_alias": lambda lib, T: _x(lib).scatter_reduce(0, _i(lib), _s(lib), "min"),
    "scatter_reduce_mean_int_floors": lambda lib, T: (-_x(lib).long()).scatter_reduce(
        0, T([[0, 0, 2, 2], [0, 0, 0, 0]]), -_s(lib).long()[:2], "mean"
    ),
    "scatter_reduce_bool_prod": lambda lib, T: _x(lib)
    .bool()
    .scatter_reduce(0, _i(lib), _s(lib).bool(), "prod"),
    "scatter_reduce_amax_int_exclude_self": lambda lib, T: _x(lib)
    .long()
    .scatter_reduce(0, _i(lib), _s(lib).long(), "amax", include_self=False),
    "scatter_reduce_float16_mean": lambda lib, T: _x(lib)
    .half()
    .scatter_reduce(0, _i(lib), _s(lib).half(), "mean"),
    "index_select": lambda lib, T: _x(lib).index_select(0, _v(lib)),
    "index_select_negative_dim": lambda lib, T: _x(lib).index_select(-1, T([3, 0])),
    "index_select_0dim_index": lambda lib, T: _x(lib).index_select(0, T(1)),
    "index_select_0dim_both": lambda lib, T: T(1.0).index_select(0, T(0)),
    "index_add_duplicates_accumulate": lambda lib, T: _x(lib).index_add(
        0, T([1, 1, 1]), _s(lib), alpha=2
    ),
    "index_add_float_alpha": lambda lib, T: _x(lib).index_add(0, _v(lib), _s(lib), alpha=2.5),
    "index_add_int_float_alpha_truncates": lambda lib, T: _x(lib)
    .long()
    .index_add(0, _v(lib), _s(lib).long(), alpha=2.5),
    "index_add_bool": lambda lib, T: _x(lib).bool().index_add(0, _v(lib), _s(lib).bool()),
    "index_add_0dim": lambda lib, T: T(1.0).index_add(0, T([0]), T(5.0)),
    "index_add_0dim_index": lambda lib, T: T([1.0, 2]).index_add(0, T(1), T([5.0])),
    "index_copy_duplicates_last_wins": lambda lib, T: _x(lib).index_copy(0, T([1, 1, 1]), _s(lib)),
    "index_copy_0dim_source": lambda lib, T: T([1.0, 2]).index_copy(0, T([0]), T(5.0)),
    "index_fill": lambda lib, T: _x(lib).index_fill(1, T([0, 3]), -1.5),
    "index_fill_negative_index": lambda lib, T: _x(lib).index_fill(0, T([-1]), 9),
    "index_fill_tensor_value": lambda lib, T: _x(lib).index_fill(0, _v(lib), T(2)),
    "index_fill_float_into_int": lambda lib, T: _x(lib).long().index_fill(0, _v(lib), T(2.5)),
    "index_fill_0dim_index": lambda lib, T: T([1.0, 2]).index_fill(0, T(1), 5.0),
}


@pytest.mark.parametrize("name", VALUES)
def test_values_match_torch(torch, name):
    assert_same(torch, result_scenario(VALUES[name]))


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_values_match_torch(torch, reduce, include_self):
    assert_same(
        torch,
        result_scenario(
            lambda lib, T: _x(lib).scatter_reduce(
                0, T([[0, 0, 2, 2], [1, 0, 2, 0]]), _s(lib)[:2], reduce, include_self=include_self
            )
        ),
    )


def test_in_place_variants_write_self_and_bump_its_version(torch):
    def scenario(lib):
        out = []
        for fn in (
            lambda y: y.scatter_(0, _i(lib), _s(lib)),
            lambda y: y.scatter_(0, _i(lib), 3.0),
            lambda y: y.scatter_(0, _i(lib), _s(lib), reduce="add"),
            lambda y: y.scatter_(0, _i(lib), 2.0, reduce="multiply"),
            lambda y: y.scatter_add_(0, _i(lib), _s(lib)),
            lambda y: y.scatter_reduce_(0, _i(lib), _s(lib), "amin", include_self=False),
            lambda y: y.index_add_(0, _v(lib), _s(lib), alpha=-1),
            lambda y: y.index_copy_(0, _v(lib), _s(lib)),
            lambda y: y.index_fill_(0, _v(lib), 1.0),
            lambda y: y.index_fill_(0, _v(lib), lib.tensor(2.0, dtype=lib.float64)),
        ):
            y = _x(lib)
            before = y._version
            r = fn(y)
            out.append((r is y, y._version - before, y.tolist()))
        return out

    assert_same(torch, scenario)


def test_out_variants_write_out(torch):
    def scenario(lib):
        outs = []
        for fn in (
            lambda o: lib.gather(_x(lib), 1, _i(lib), out=o),
            lambda o: lib.scatter(_x(lib), 0, _i(lib), _s(lib), out=o),
            lambda o: lib.scatter(_x(lib), 0, _i(lib), 2.0, out=o),
            lambda o: lib.scatter(_x(lib), 0, _i(lib), _s(lib), reduce="multiply", out=o),
            lambda o: lib.scatter(_x(lib), 0, _i(lib), 2.0, reduce="add", out=o),
            lambda o: lib.scatter_add(_x(lib), 0, _i(lib), _s(lib), out=o),
            lambda o: lib.scatter_reduce(_x(lib), 0, _i(lib), _s(lib), "prod", out=o),
            lambda o: lib.index_add(_x(lib), 0, _v(lib), _s(lib), out=o),
            lambda o: lib.index_copy(_x(lib), 0, _v(lib), _s(lib), out=o),
        ):
            o = lib.empty(0, dtype=lib.float64)
            fn(o)
            outs.append(o.tolist())
        return outs

    assert_same(torch, scenario)


# ---- gradients, second derivatives, tangents, nodes ------------------------------------------

GRADS = {
    "gather": lambda lib, x, s: x.gather(1, _i(lib)[:, :3]),
    "gather_duplicates": lambda lib, x, s: x.gather(0, lib.tensor([[0, 0, 0, 0]] * 3)),
    "take_along_dim": lambda lib, x, s: lib.take_along_dim(x, _i(lib) - 4, 0),
    "take_along_dim_flat": lambda lib, x, s: lib.take_along_dim(x, lib.tensor([0, 11, 11])),
    "scatter": lambda lib, x, s: x.scatter(0, _i(lib), s[:2]),
    "scatter_value": lambda lib, x, s: x.scatter(0, _i(lib), 2.0),
    "scatter_add": lambda lib, x, s: x.scatter_add(0, _i(lib), s[:2]),
    "index_select": lambda lib, x, s: x.index_select(0, _v(lib)),
    "index_select_0dim_index": lambda lib, x, s: x.index_select(1, lib.tensor(2)),
    "index_add": lambda lib, x, s: x.index_add(0, _v(lib), s, alpha=-2),
    "index_copy": lambda lib, x, s: x.index_copy(0, _v(lib), s),
    "index_fill": lambda lib, x, s: x.index_fill(1, lib.tensor([1, 1]), 3.0),
    "index_fill_tensor": lambda lib, x, s: x.index_fill(0, _v(lib), s[0, 1]),
}
for _r in REDUCTIONS:
    for _inc in (True, False):
        GRADS[f"scatter_reduce_{_r}_{_inc}"] = (
            lambda r, inc: lambda lib, x, s: x.scatter_reduce(
                0, lib.tensor([[0, 0, 2, 2], [1, 0, 2, 0]]), s[:2], r, include_self=inc
            )
        )(_r, _inc)


def _ties_and_zeros(lib):
    """self and src with ties (amax/amin) and zeros (prod)."""
    x = lib.tensor([[1.0, 0.0, 2.0, 3.0], [5.0, 5.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    s = lib.tensor([[5.0, 0.0, 2.0, 3.0], [5.0, 1.0, 0.0, 3.0], [0.0, 4.0, 2.0, 3.0]])
    return x.double().requires_grad_(), s.double().requires_grad_()


def _grads(lib, name, ties=False):
    x, s = _ties_and_zeros(lib) if ties else (_x(lib, True), _s(lib, True))
    y = GRADS[name](lib, x, s)
    w = lib.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)))
    inputs = [t for t in (x, s) if t.requires_grad]
    first = lib.autograd.grad((y * w).sum(), inputs, create_graph=True, allow_unused=True)
    used = [g for g in first if g is not None and g.requires_grad]
    second = (
        lib.autograd.grad(sum((g * g).sum() for g in used), inputs, allow_unused=True)
        if used
        else ()
    )
    node = y.grad_fn
    saved = sorted(n for n in dir(node) if n.startswith("_saved"))
    return (
        y.tolist(),
        type(node).__name__,
        saved,
        [None if g is None else g.tolist() for g in first],
        [None if g is None else g.tolist() for g in second],
    )


@pytest.mark.parametrize("ties", [False, True], ids=["plain", "ties_and_zeros"])
@pytest.mark.parametrize("name", GRADS)
def test_gradients_and_second_derivatives_match_torch(torch, name, ties):
    got, expected = _grads(og, name, ties), _grads(torch, name, ties)
    assert got[1:3] == expected[1:3]
    pairs = [(got[0], expected[0])] + list(zip(got[3] + got[4], expected[3] + expected[4]))
    for a, b in pairs:
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12, atol=1e-12)


def _tangent(lib, name, ties=False):
    import_fw = lib.autograd.forward_ad
    x, s = _ties_and_zeros(lib) if ties else (_x(lib), _s(lib))
    x, s = x.detach(), s.detach()
    rng = np.random.default_rng(5)
    with import_fw.dual_level():
        dx = import_fw.make_dual(x, lib.tensor(rng.standard_normal((3, 4))))
        ds = import_fw.make_dual(s, lib.tensor(rng.standard_normal((3, 4))))
        y = GRADS[name](lib, dx, ds)
        t = import_fw.unpack_dual(y).tangent
    return None if t is None else t.tolist()


@pytest.mark.parametrize("ties", [False, True], ids=["plain", "ties_and_zeros"])
@pytest.mark.parametrize("name", GRADS)
def test_forward_ad_tangents_match_torch(torch, name, ties):
    got, expected = _tangent(og, name, ties), _tangent(torch, name, ties)
    if expected is None:  # scatter_reduce's prod has no tangent in torch
        assert got is None
    else:
        np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-12)


def test_saved_fields_hold_torch_values(torch):
    def scenario(lib):
        x, s = _x(lib, True), _s(lib, True)
        g = x.gather(-1, _i(lib)[:, :3])
        r = x.scatter_reduce(0, _i(lib), s, "mean", include_self=False)
        a = x.index_add(0, _v(lib), s, alpha=3)
        return (
            (g.grad_fn._saved_dim, g.grad_fn._saved_sparse_grad, g.grad_fn._saved_index.tolist()),
            (r.grad_fn._saved_reduce, r.grad_fn._saved_include_self, r.grad_fn._saved_dim),
            r.grad_fn._saved_result.tolist(),
            (a.grad_fn._saved_alpha, a.grad_fn._saved_source_dim, a.grad_fn._saved_dim),
        )

    got, expected = scenario(og), scenario(torch)
    assert got[0][1:] == expected[0][1:] and got[0][0] == -1  # opgrad keeps dim's sign
    assert got[1:] == expected[1:]


def test_scatter_with_reduce_has_no_derivative(torch):
    def backward(lib):
        x = _x(lib, True)
        return x.scatter(0, _i(lib), _s(lib), reduce="add").sum().backward()

    assert_same_error(torch, backward, RuntimeError, "derivative for aten::scatter is not")

    def forward_ad(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(_x(lib), lib.ones(3, 4, dtype=lib.float64))
            return d.scatter(0, _i(lib), 2.0, reduce="multiply")

    assert_same_error(torch, forward_ad, NotImplementedError, "Trying to use forward AD")


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.gather(0, _i(lib)).sum().backward(),
        lambda lib, x: lib.take_along_dim(x, _i(lib), 0),
        lambda lib, x: lib.take_along_dim(x, _v(lib)),
        lambda lib, x: x.index_select(0, _v(lib)).sum().backward(),
        lambda lib, x: x.index_fill(0, _v(lib), lib.tensor(1.0, dtype=lib.float64)),
        lambda lib, x: x.scatter_add(0, _i(lib), x.detach()).sum().backward(),
    ],
    ids=[
        "gather_backward",
        "take_along_dim",
        "take_along_dim_flat",
        "index_select_backward",
        "index_fill",
        "scatter_add_backward",
    ],
)
def test_dispatch_mode_sees_torch_calls(torch, fn):
    def scenario(lib):
        x = _x(lib, True)
        return aten_log(lib, lambda: fn(lib, x))

    assert scenario(og) == scenario(torch)


# ---- errors ----------------------------------------------------------------------------------

_OOB = "is out of bounds for dimension 0 with size 3"
ERRORS = {
    "gather_float_index": (
        RuntimeError,
        "gather(): Expected dtype int32/int64 for index",
        lambda lib: _x(lib).gather(0, _i(lib).float()),
    ),
    "gather_out_of_bounds": (
        RuntimeError,
        "index 3 " + _OOB,
        lambda lib: _x(lib).gather(0, _i(lib) + 3),
    ),
    "gather_negative_index": (
        RuntimeError,
        "index -1 " + _OOB,
        lambda lib: _x(lib).gather(0, _i(lib) - 1),
    ),
    "gather_rank": (
        RuntimeError,
        "Index tensor must have the same number of dimensions as input tensor",
        lambda lib: _x(lib).gather(0, _i(lib)[0]),
    ),
    "gather_index_larger": (
        RuntimeError,
        "Size does not match at dimension 1 expected index [3, 5]",
        lambda lib: _x(lib).gather(0, lib.zeros(3, 5, dtype=lib.long)),
    ),
    "gather_dim": (IndexError, "Dimension out of range", lambda lib: _x(lib).gather(2, _i(lib))),
    "gather_out_dtype": (
        RuntimeError,
        "Expected out tensor to have dtype double, but got float instead",
        lambda lib: lib.gather(_x(lib), 0, _i(lib), out=lib.empty(0)),
    ),
    "scatter_float_index": (
        RuntimeError,
        "scatter(): Expected dtype int32/int64 for index",
        lambda lib: _x(lib).scatter(0, _i(lib).float(), _s(lib)),
    ),
    "scatter_dtype": (
        RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype",
        lambda lib: _x(lib).scatter(0, _i(lib) + 3, _s(lib).float()),
    ),
    "scatter_out_of_bounds": (
        RuntimeError,
        "index 3 " + _OOB,
        lambda lib: _x(lib).scatter(0, _i(lib) + 3, _s(lib)),
    ),
    "scatter_src_smaller": (
        RuntimeError,
        "to be no larger than self [3, 4] apart from dimension 0 and to be no "
        "larger size than src [1, 4]",
        lambda lib: _x(lib).scatter(0, _i(lib), _s(lib)[:1]),
    ),
    "scatter_value_index_larger": (
        RuntimeError,
        "Expected index [2, 5] to be no larger than self [3, 4] apart from " "dimension 0",
        lambda lib: _x(lib).scatter(0, lib.zeros(2, 5, dtype=lib.long), 1.0),
    ),
    "scatter_rank": (
        RuntimeError,
        "Index tensor must have the same number of dimensions as self tensor",
        lambda lib: _x(lib).scatter(0, _i(lib)[0], _s(lib)),
    ),
    "scatter_value_overflow": (
        RuntimeError,
        "value cannot be converted to type uint8_t without overflow",
        lambda lib: _x(lib).to(lib.uint8).scatter(0, _i(lib), 300),
    ),
    "scatter_bad_reduce": (
        RuntimeError,
        "reduce argument must be either add or multiply.",
        lambda lib: _x(lib).scatter(0, _i(lib), _s(lib), reduce="max"),
    ),
    "scatter_add_dtype": (
        RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype",
        lambda lib: _x(lib).scatter_add(0, _i(lib), _s(lib).float()),
    ),
    "scatter_reduce_bad_reduce": (
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got foo",
        lambda lib: _x(lib).scatter_reduce(0, _i(lib), _s(lib), "foo"),
    ),
    "scatter_reduce_bool_mean": (
        NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'",
        lambda lib: _x(lib).bool().scatter_reduce(0, _i(lib), _s(lib).bool(), "mean"),
    ),
    "index_select_float_index": (
        RuntimeError,
        "index_select(): Expected dtype int32 or int64 for index",
        lambda lib: _x(lib).index_select(0, _v(lib).float()),
    ),
    "index_select_out_of_range": (
        IndexError,
        "index out of range in self",
        lambda lib: _x(lib).index_select(0, _v(lib) - 4),
    ),
    "index_select_matrix_index": (
        IndexError,
        "index_select(): Index is supposed to be a vector",
        lambda lib: _x(lib).index_select(0, _v(lib)[None]),
    ),
    "index_select_scalar_self": (
        RuntimeError,
        "index_select(): Index to scalar can have only 1 value, got 2 value(s)",
        lambda lib: lib.tensor(3.0).index_select(0, lib.tensor([0, 0])),
    ),
    "index_add_float_index": (
        RuntimeError,
        "index_add_(): Expected dtype int32/int64 for index but got: Float",
        lambda lib: _x(lib).index_add(0, _v(lib).float(), _s(lib)),
    ),
    "index_add_out_of_bounds": (
        RuntimeError,
        "index -5 " + _OOB,
        lambda lib: _x(lib).index_add(0, _v(lib) - 5, _s(lib)),
    ),
    "index_add_dtype": (
        RuntimeError,
        "index_add_(): self (Double) and source (Float) must have the same scalar type",
        lambda lib: _x(lib).index_add(0, _v(lib) + 3, _s(lib).float()),
    ),
    "index_add_count": (
        RuntimeError,
        "index_add_(): Number of indices (3) should be equal to source.size(dim): (2), for dim: 0",
        lambda lib: _x(lib).index_add(0, _v(lib), _s(lib)[:2]),
    ),
    "index_add_shape": (
        RuntimeError,
        "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [3, 4] source.shape = [3, 5]",
        lambda lib: _x(lib).index_add(0, _v(lib), lib.zeros(3, 5, dtype=lib.float64)),
    ),
    "index_add_0dim_source": (
        RuntimeError,
        "Got self.shape = [2] source.shape = []",
        lambda lib: lib.tensor([1.0, 2]).index_add(0, lib.tensor([0]), lib.tensor(5.0)),
    ),
    "index_add_matrix_index": (
        IndexError,
        "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 3]",
        lambda lib: _x(lib).index_add(0, _v(lib)[None], _s(lib)),
    ),
    "index_copy_scalar_source_two_indices": (
        IndexError,
        "index_copy_(): When source is scalar, index should have one element (got 2)",
        lambda lib: _x(lib).index_copy(0, lib.tensor([0, 1]), lib.tensor(1.0, dtype=lib.float64)),
    ),
    "index_copy_int32_index": (
        RuntimeError,
        "index_copy_(): Expected a long tensor for index, but got Int",
        lambda lib: _x(lib).index_copy(0, _v(lib).int(), _s(lib)),
    ),
    "index_copy_out_of_bounds": (
        IndexError,
        "index_copy_(): index -1 " + _OOB,
        lambda lib: _x(lib).index_copy(0, _v(lib) - 1, _s(lib)),
    ),
    "index_copy_dtype": (
        RuntimeError,
        "index_copy_(): self and source expected to have the same dtype, but got (self) Double and (source) Float",
        lambda lib: _x(lib).index_copy(0, _v(lib), _s(lib)[:2].float()),
    ),
    "index_copy_count": (
        IndexError,
        "index_copy_(): Number of indices (3) should be equal to source.size(dim) (2)",
        lambda lib: _x(lib).index_copy(0, _v(lib), _s(lib)[:2]),
    ),
    "index_copy_slices": (
        RuntimeError,
        "Destination slice shape: 2 4 at dimension 1 and source slice shape: 3 4 at dimension 0.",
        lambda lib: lib.zeros(2, 3, 4).index_copy(1, lib.tensor([0, 1]), lib.zeros(3, 2, 4)),
    ),
    "index_copy_rank": (
        IndexError,
        "Source dimensionality (3), destination dimensionality (2)",
        lambda lib: _x(lib).index_copy(0, _v(lib), _s(lib)[None]),
    ),
    "index_copy_matrix_index": (
        IndexError,
        "index_copy_(): Index should have dimension 1 or 0 (got 2)",
        lambda lib: _x(lib).index_copy(0, _v(lib)[None], _s(lib)),
    ),
    "index_fill_int32_index": (
        IndexError,
        "index_fill_(): Expected dtype int64 for index.",
        lambda lib: _x(lib).index_fill(0, _v(lib).int(), 1.0),
    ),
    "index_fill_out_of_bounds": (
        IndexError,
        "index -5 " + _OOB,
        lambda lib: _x(lib).index_fill(0, _v(lib) - 5, 1.0),
    ),
    "index_fill_matrix_index": (
        RuntimeError,
        "Index has to be a vector/scalar",
        lambda lib: _x(lib).index_fill(0, _v(lib)[None], 1.0),
    ),
    "index_fill_vector_value": (
        RuntimeError,
        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        lambda lib: _x(lib).index_fill(0, _v(lib), lib.tensor([1.0])),
    ),
    "index_fill_overflow": (
        RuntimeError,
        "value cannot be converted to type uint8_t without overflow",
        lambda lib: lib.zeros(3, dtype=lib.uint8).index_fill(0, _v(lib), 300),
    ),
    "take_along_dim_int32": (
        RuntimeError,
        "take_along_dim(): dtype of indices should be Long but got Int",
        lambda lib: lib.take_along_dim(_x(lib), _i(lib).int(), 0),
    ),
    "take_along_dim_rank": (
        RuntimeError,
        "input and indices should have the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices",
        lambda lib: lib.take_along_dim(_x(lib), lib.tensor([0]), 0),
    ),
    "take_along_dim_broadcast": (
        RuntimeError,
        "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1",
        lambda lib: lib.take_along_dim(_x(lib), lib.zeros(2, 5, dtype=lib.long), 0),
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    exc_type, phrase, fn = ERRORS[name]
    assert_same_error(torch, fn, exc_type, phrase)


def test_a_refused_in_place_scatter_leaves_self_untouched(torch):
    def scenario(lib):
        y = _x(lib)
        with pytest.raises(RuntimeError):
            y.scatter_(0, _i(lib) + 3, _s(lib))
        return y.tolist(), y._version

    assert_same(torch, scenario)
