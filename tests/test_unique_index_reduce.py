"""unique, unique_consecutive, index_reduce and combinations against torch: results (values,
dtypes, shapes, tuple or tensor), NaN, empty and 0-dim inputs, dims, the aten calls a dispatch
mode sees, nodes and saved fields, gradients, forward mode, out= and errors. (Their float64
OpInfo samples run in test_opinfo.py.)"""

from __future__ import annotations

import math
import warnings

import pytest

import opgrad as og
from torch_oracle import (
    assert_same_saved_fields,
    dtype_name,
    message,
    outcome_and_aten_log,
)

NAN = math.nan


def _plain(value):
    """Nested lists with NaN spelled out (NaN != NaN would fail the comparison)."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _describe(result):
    if isinstance(result, tuple):
        return ("tuple",) + tuple(_describe(r) for r in result)
    grad_fn = result.grad_fn
    return (
        _plain(result.detach().tolist()),
        dtype_name(result.dtype),
        tuple(result.shape),
        result.requires_grad,
        None if grad_fn is None else type(grad_fn).__name__,
    )


def _same(torch, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = outcome_and_aten_log(torch, call, _describe)
        got = outcome_and_aten_log(og, call, _describe)
    assert got == expected


X = [3.0, 1.0, 2.0, 1.0, NAN, NAN, 3.0]
ROWS = [[1, 5], [0, 7], [1, 5], [1, 2]]

UNIQUE = {
    "plain": lambda L: L.unique(L.tensor(X)),
    "unsorted": lambda L: L.unique(L.tensor([5, 3, 5, 1, 9, 3]), sorted=False),
    "inverse": lambda L: L.unique(L.tensor(X), return_inverse=True),
    "counts": lambda L: L.unique(L.tensor(X), return_counts=True),
    "both": lambda L: L.unique(L.tensor(X), return_inverse=True, return_counts=True),
    "2d_inverse_shape": lambda L: L.unique(
        L.tensor([[2.0, 1.0], [1.0, 2.0]]), return_inverse=True, return_counts=True
    ),
    "method": lambda L: L.tensor(X).unique(return_counts=True),
    "method_positional": lambda L: L.tensor([2, 2, 1]).unique(True, True),
    "empty": lambda L: L.unique(L.tensor([]), return_inverse=True, return_counts=True),
    "0dim": lambda L: L.unique(L.tensor(3.0), return_inverse=True, return_counts=True),
    "bool": lambda L: L.unique(L.tensor([True, False, True]), return_inverse=True),
    "int32": lambda L: L.unique(L.tensor([3, 1, 3], dtype=L.int32), return_counts=True),
    "float16": lambda L: L.unique(L.tensor([1.0, 2.0, 1.0], dtype=L.float16)),
    "signed_zero": lambda L: L.unique(L.tensor([-0.0, 0.0]), return_counts=True),
    "dim0": lambda L: L.unique(L.tensor(ROWS), dim=0, return_inverse=True, return_counts=True),
    "dim1": lambda L: L.unique(L.tensor(ROWS), dim=1, return_inverse=True, return_counts=True),
    "dim_negative": lambda L: L.unique(L.tensor(ROWS), dim=-2, return_counts=True),
    "dim_unsorted": lambda L: L.unique(L.tensor(ROWS), sorted=False, dim=0),
    "dim_3d": lambda L: L.unique(
        L.tensor([[[0, 1, 0, 1], [2, 2, 2, 2]], [[1, 0, 1, 0], [2, 2, 2, 2]]]),
        dim=2,
        return_inverse=True,
        return_counts=True,
    ),
    "dim_bool": lambda L: L.unique(
        L.tensor([[True, False], [True, False]]), dim=1, return_inverse=True, return_counts=True
    ),
    "dim_empty_selected": lambda L: L.unique(
        L.ones(0, 2), dim=0, return_inverse=True, return_counts=True
    ),
    "dim_method": lambda L: L.tensor(ROWS).unique(dim=0),
    # errors
    "dim_0dim": lambda L: L.unique(L.tensor(3.0), dim=0),
    "dim_out_of_range": lambda L: L.unique(L.ones(2, 3), dim=2),
    "dim_empty_unselected": lambda L: L.unique(L.ones(2, 0), dim=0),
    "dim_two_empty_dims": lambda L: L.unique(L.ones(0, 0), dim=0),
}

CONSECUTIVE = {
    "plain": lambda L: L.unique_consecutive(L.tensor(X)),
    "both": lambda L: L.unique_consecutive(
        L.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True
    ),
    "inverse_shape": lambda L: L.unique_consecutive(
        L.tensor([[1, 1], [2, 2]]), return_inverse=True
    ),
    "counts": lambda L: L.unique_consecutive(L.tensor([NAN, NAN, 1.0]), return_counts=True),
    "method": lambda L: L.tensor([1, 1, 2]).unique_consecutive(return_counts=True),
    "empty": lambda L: L.unique_consecutive(L.tensor([]), return_inverse=True, return_counts=True),
    "0dim": lambda L: L.unique_consecutive(L.tensor(3.0), return_inverse=True, return_counts=True),
    "dim0": lambda L: L.unique_consecutive(
        L.tensor([[1, 5], [1, 5], [1, 2], [1, 5]]), dim=0, return_inverse=True, return_counts=True
    ),
    "dim_negative": lambda L: L.unique_consecutive(
        L.tensor([[1, 1, 2], [3, 3, 4]]), dim=-1, return_inverse=True
    ),
    "dim_only": lambda L: L.unique_consecutive(L.tensor([[1, 1, 2], [3, 3, 4]]), dim=1),
    "dim_method": lambda L: L.tensor([[1, 1], [1, 1]]).unique_consecutive(dim=0),
    "dim_empty_selected": lambda L: L.unique_consecutive(
        L.ones(0, 2), dim=0, return_inverse=True, return_counts=True
    ),
    "dim_nan_rows": lambda L: L.unique_consecutive(
        L.tensor([[1.0, NAN], [1.0, NAN]]), dim=0, return_counts=True
    ),
    "dim_0dim": lambda L: L.unique_consecutive(L.tensor(3.0), dim=0),
    "dim_out_of_range": lambda L: L.unique_consecutive(L.ones(2, 3), dim=2),
    "dim_empty_unselected": lambda L: L.unique_consecutive(L.ones(0, 2), dim=1),
}


# the aten ops as such (torch.ops.aten; unique_dim_consecutive is reachable no other way)
ATEN = {
    "_unique2": lambda L: L._unique2(L.tensor([2, 1, 2]), True, False, True),
    "_unique2_nothing_asked": lambda L: L.ops.aten._unique2(L.tensor([2.0, 1.0])),
    "unique_dim_computes_all": lambda L: L.ops.aten.unique_dim(L.tensor(ROWS), 0),
    "unique_consecutive_aten": lambda L: L.ops.aten.unique_consecutive(
        L.tensor([1, 1, 2]), False, True
    ),
    "unique_dim_consecutive": lambda L: L.ops.aten.unique_dim_consecutive(L.tensor(ROWS), 0),
    "unique_dim_consecutive_dim1": lambda L: L.ops.aten.unique_dim_consecutive(
        L.tensor([[1, 1, 2], [3, 3, 4]]), 1, True, True
    ),
    "unique_dim_consecutive_bad_dim": lambda L: L.ops.aten.unique_dim_consecutive(
        L.tensor([1, 1]), 1
    ),
}


@pytest.mark.parametrize("call", list(ATEN.values()), ids=list(ATEN))
def test_unique_aten_ops_match_torch(torch, call):
    _same(torch, call)


@pytest.mark.parametrize("call", list(UNIQUE.values()), ids=list(UNIQUE))
def test_unique_matches_torch(torch, call):
    _same(torch, call)


@pytest.mark.parametrize("call", list(CONSECUTIVE.values()), ids=list(CONSECUTIVE))
def test_unique_consecutive_matches_torch(torch, call):
    _same(torch, call)


def _grad_x(L):
    return L.tensor([3.0, 1.0, 2.0, 1.0, 3.0], requires_grad=True)


UNIQUE_GRAD = {
    "unique": lambda L: L.unique(_grad_x(L), return_inverse=True),
    "unique_dim": lambda L: L.unique(_grad_x(L).view(1, 5), dim=1, return_counts=True),
    "consecutive": lambda L: L.unique_consecutive(_grad_x(L)),
    "consecutive_dim": lambda L: L.unique_consecutive(
        _grad_x(L).view(1, 5), dim=1, return_inverse=True
    ),
}


@pytest.mark.parametrize("call", list(UNIQUE_GRAD.values()), ids=list(UNIQUE_GRAD))
def test_unique_values_get_a_node_whose_backward_is_not_implemented(torch, call):
    """The values require grad (Unique2Backward0 ...), inverse and counts do not; backward
    and forward mode refuse, in torch's words."""
    _same(torch, call)

    def backward(L):
        r = call(L)
        (r[0] if isinstance(r, tuple) else r).sum().backward()

    _same(torch, backward)

    def forward_mode(L):
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(L.tensor([1.0, 2.0, 1.0]), L.ones(3))
            try:
                L.unique(x)
            except NotImplementedError as exc:
                return message(exc)

    # (outcomes only: torch refuses before its kernel runs, opgrad once the values exist)
    assert forward_mode(og) == forward_mode(torch)


# ---- index_reduce -----------------------------------------------------------------------


def _self(L, **kw):
    return L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], **kw)


def _source(L, **kw):
    return L.tensor([[2.0, 0.5], [3.0, 4.0], [5.0, -1.0], [1.0, 1.0]], **kw)


def _index(L):
    return L.tensor([0, 2, 0, 1])


INDEX_REDUCE = {
    f"{reduce}_{include}": (
        lambda L, reduce=reduce, include=include: _self(L).index_reduce(
            0, _index(L), _source(L), reduce, include_self=include
        )
    )
    for reduce in ("prod", "mean", "amax", "amin")
    for include in (True, False)
}
INDEX_REDUCE.update(
    {
        "untouched_rows": lambda L: _self(L).index_reduce(
            0, L.tensor([2, 2]), _source(L)[:2], "mean", include_self=False
        ),
        "dim1": lambda L: _self(L).index_reduce(
            1, L.tensor([1, 1, 0]), L.arange(9.0).reshape(3, 3), "amin"
        ),
        "dim_negative": lambda L: L.index_reduce(_self(L), -2, _index(L), _source(L), "amax"),
        "int32_index": lambda L: _self(L).index_reduce(0, _index(L).int(), _source(L), "prod"),
        "long_mean_floors": lambda L: L.tensor([[1, 2], [3, 4], [5, -6]]).index_reduce(
            0, _index(L), L.tensor([[2, 0], [3, 4], [5, -1], [1, 1]]), "mean"
        ),
        "long_amax_excluding_self": lambda L: L.tensor([[1, 2], [3, 4], [5, 6]]).index_reduce(
            0, _index(L), L.tensor([[2, 0], [3, 4], [5, -1], [1, 1]]), "amax", include_self=False
        ),
        "nan_wins": lambda L: L.tensor([1.0, 2.0]).index_reduce(
            0, L.tensor([0, 0]), L.tensor([NAN, 1.0]), "amax"
        ),
        "empty_index": lambda L: _self(L).index_reduce(
            0, L.tensor([], dtype=L.int64), L.ones(0, 2), "prod"
        ),
        "0dim": lambda L: L.tensor(2.0).index_reduce(0, L.tensor([0]), L.tensor(5.0), "prod"),
        "inplace": lambda L: _self(L).index_reduce_(0, _index(L), _source(L), "amin"),
        "out": lambda L: L.index_reduce(_self(L), 0, _index(L), _source(L), "mean", out=L.empty(0)),
        # errors
        "bad_reduce": lambda L: _self(L).index_reduce(0, _index(L), _source(L), "sum"),
        "float_index": lambda L: _self(L).index_reduce(0, _index(L).float(), _source(L), "prod"),
        "dtype_mismatch": lambda L: _self(L).index_reduce(
            0, _index(L), _source(L).double(), "prod"
        ),
        "index_count": lambda L: _self(L).index_reduce(0, _index(L)[:3], _source(L), "prod"),
        "index_out_of_range": lambda L: _self(L).index_reduce(
            0, L.tensor([0, 5, 0, 1]), _source(L), "prod"
        ),
        "negative_index": lambda L: _self(L).index_reduce(
            0, L.tensor([0, -1, 0, 1]), _source(L), "prod"
        ),
        "dim_out_of_range": lambda L: _self(L).index_reduce(2, _index(L), _source(L), "prod"),
        "index_2d": lambda L: _self(L).index_reduce(0, _index(L).view(2, 2), _source(L), "prod"),
        "shape_mismatch": lambda L: _self(L).index_reduce(0, _index(L), _source(L)[:, :1], "prod"),
        "bool": lambda L: L.tensor([True, False]).index_reduce(
            0, L.tensor([0, 1]), L.tensor([True, True]), "prod"
        ),
        "out_dtype": lambda L: L.index_reduce(
            _self(L), 0, _index(L), _source(L), "amax", out=L.empty(0, dtype=L.float64)
        ),
        "out_requires_grad": lambda L: L.index_reduce(
            _self(L, requires_grad=True), 0, _index(L), _source(L), "amax", out=L.empty(0)
        ),
    }
)


@pytest.mark.parametrize("call", list(INDEX_REDUCE.values()), ids=list(INDEX_REDUCE))
def test_index_reduce_matches_torch(torch, call):
    _same(torch, call)


def test_index_reduce_warns_that_it_is_in_beta():
    from opgrad import index_kernels

    index_kernels._index_reduce_warned.clear()
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        og.ones(2).index_reduce(0, og.tensor([0]), og.ones(1), "prod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process, as torch's TORCH_WARN_ONCE
        og.ones(2).index_reduce(0, og.tensor([0]), og.ones(1), "prod")


GRAD_CASES = {
    f"{reduce}_{include}": (reduce, include, index, source)
    for reduce in ("prod", "mean", "amax", "amin")
    for include in (True, False)
    for index, source in [
        ([0, 2, 0, 1], [[2.0, 0.0], [3.0, 4.0], [5.0, -1.0], [1.0, 1.0]]),
    ]
}
# ties (amax/amin share evenly), zeros in self and in source (prod: one zero, two zeros)
GRAD_CASES["amax_ties"] = ("amax", True, [0, 0, 2, 1], [[1.0, 2.0], [1.0, 9.0], [5.0, 6.0], [0, 0]])
GRAD_CASES["amin_ties"] = (
    "amin",
    False,
    [0, 0, 2, 1],
    [[1.0, 2.0], [1.0, 2.0], [5.0, 6.0], [3, 3]],
)
GRAD_CASES["prod_zeros"] = (
    "prod",
    True,
    [0, 0, 2, 1],
    [[0.0, 0.0], [3.0, 0.0], [0.0, 6.0], [1, 1]],
)


def _grad_scenario(reduce, include, index, source, self_values=None):
    def scenario(L):
        s = L.tensor(self_values or [[1.0, 0.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        src = L.tensor(source, requires_grad=True)
        r = s.index_reduce(0, L.tensor(index), src, reduce, include_self=include)
        g = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        gs, gsrc = L.autograd.grad(r, (s, src), g)
        return _describe(r), _describe(gs), _describe(gsrc)

    return scenario


@pytest.mark.parametrize("case", list(GRAD_CASES.values()), ids=list(GRAD_CASES))
def test_index_reduce_gradients_match_torch(torch, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scenario = _grad_scenario(*case)
        assert scenario(og) == scenario(torch)


def test_index_reduce_saved_fields_match_torch(torch):
    def make(L):
        s = _self(L, requires_grad=True)
        src = _source(L, requires_grad=True)
        return s.index_reduce(0, _index(L), src, "prod").grad_fn, (s, src)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, got_inputs = make(og)
        expected, expected_inputs = make(torch)
    assert type(got).__name__ == type(expected).__name__ == "IndexReduceBackward0"
    assert_same_saved_fields(
        torch, got, expected, got_inputs, expected_inputs, what="IndexReduceBackward0"
    )


def test_index_reduce_double_backward_matches_torch(torch):
    def scenario(L):
        s = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64, requires_grad=True)
        src = L.tensor([[2.0, 3.0], [5.0, 7.0]], dtype=L.float64, requires_grad=True)
        r = s.index_reduce(0, L.tensor([0, 0]), src, "prod")
        (gs,) = L.autograd.grad(r.sum(), (s,), create_graph=True)
        return [round(v, 10) for v in L.autograd.grad(gs.sum(), (src,))[0].flatten().tolist()]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(og) == scenario(torch)


def test_index_reduce_has_no_forward_mode(torch):
    def scenario(L):
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(_self(L), L.ones(3, 2))
            try:
                d.index_reduce(0, _index(L), _source(L), "mean")
            except Exception as exc:  # noqa: BLE001 - compared
                return type(exc).__name__, message(exc)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(og) == scenario(torch)


# ---- combinations -------------------------------------------------------------------------

COMBINATIONS = {
    "r2": lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0])),
    "r2_replacement": lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0]), with_replacement=True),
    "r3": lambda L: L.combinations(L.tensor([1, 2, 3, 4]), 3),
    "r3_replacement": lambda L: L.combinations(L.tensor([1, 2, 3]), 3, True),
    "r1": lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0]), 1),
    "r0": lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0]), 0),
    "r_too_large": lambda L: L.combinations(L.tensor([1.0, 2.0]), 3),
    "empty": lambda L: L.combinations(L.tensor([])),
    "method": lambda L: (
        L.tensor([1.0, 2.0, 3.0]).combinations(2)
        if hasattr(L.Tensor, "combinations")
        else L.combinations(L.tensor([1.0, 2.0, 3.0]), 2)
    ),
    "requires_grad": lambda L: L.combinations(L.tensor([1.0, 2.0, 3.0], requires_grad=True)),
    "2d": lambda L: L.combinations(L.ones(2, 2)),
    "negative_r": lambda L: L.combinations(L.tensor([1.0, 2.0]), -1),
}


@pytest.mark.parametrize("call", list(COMBINATIONS.values()), ids=list(COMBINATIONS))
def test_combinations_matches_torch(torch, call):
    _same(torch, call)


def test_combinations_gradient_matches_torch(torch):
    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        r = L.combinations(x, 2, True)
        (g,) = L.autograd.grad(r, x, L.arange(20.0).reshape(10, 2))
        return g.tolist()

    assert scenario(og) == scenario(torch)


def test_index_reduce_inplace_node_gradients_and_forward_mode_match_torch(torch):
    def scenario(L):
        x = L.tensor([[1.0, 0.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        src = L.tensor([[2.0, 3.0], [0.0, 4.0]], requires_grad=True)
        y = x.clone()
        y.index_reduce_(0, L.tensor([0, 0]), src, "prod", include_self=False)
        gx, gsrc = L.autograd.grad(y, (x, src), L.arange(6.0).reshape(3, 2))
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(L.ones(3, 2), L.ones(3, 2))
            try:
                d.index_reduce_(0, L.tensor([0]), L.ones(1, 2), "prod")
                forward = "ok"
            except NotImplementedError as exc:
                forward = message(exc)
        return type(y.grad_fn).__name__, gx.tolist(), gsrc.tolist(), forward

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(og) == scenario(torch)


def test_torch_function_handlers_see_torchs_functions(torch):
    def scenario(L):
        class Seen(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func.__name__

        x = L.ones(2).as_subclass(Seen)
        return L.unique(x), x.unique(), L.unique_consecutive(x), x.unique_consecutive()

    assert scenario(og) == scenario(torch)
