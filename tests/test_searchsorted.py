"""searchsorted and bucketize against torch: sides, int32 results, batched boundary rows,
sorters, numbers, mixed dtypes, NaN values, out=, the aten calls a dispatch mode sees, and
errors. (Their float64 OpInfo samples run in test_opinfo.py.)"""

from __future__ import annotations

import math

import pytest

import opgrad as og
from torch_oracle import dtype_name, outcome_and_aten_log

BOUNDS = [1.0, 3.0, 5.0, 7.0]
VALUES = [[0.0, 3.0, 6.0], [8.0, 1.0, 5.0]]


def _described(r):
    return r.tolist(), dtype_name(r.dtype), tuple(r.shape)


def _seen(lib, call):
    return outcome_and_aten_log(lib, call, _described)


def _b(L):
    return L.tensor(BOUNDS)


def _v(L):
    return L.tensor(VALUES)


def _out(dtype, make):
    def call(L):
        out = L.empty(0, dtype=getattr(L, dtype))
        assert make(L, out) is out
        return out

    return call


CALLS = {
    "left": lambda L: L.searchsorted(_b(L), _v(L)),
    "right": lambda L: L.searchsorted(_b(L), _v(L), right=True),
    "side_right": lambda L: L.searchsorted(_b(L), _v(L), side="right"),
    "side_left_right_false": lambda L: L.searchsorted(_b(L), _v(L), side="left"),
    "out_int32": lambda L: L.searchsorted(_b(L), _v(L), out_int32=True),
    "number": lambda L: L.searchsorted(_b(L), 4),
    "batched_rows": lambda L: L.searchsorted(
        L.tensor([[1.0, 2.0], [3.0, 4.0]]), L.tensor([[1.5, 4.0], [5.0, 3.0]]), right=True
    ),
    "batched_3d": lambda L: L.searchsorted(
        L.arange(24.0).reshape(2, 3, 4), L.arange(0.0, 36.0, 3.0).reshape(2, 3, 2)
    ),
    "int_values_float_bounds": lambda L: L.searchsorted(_b(L), L.tensor([2, 4])),
    "int_bounds": lambda L: L.searchsorted(
        L.tensor([1, 3, 3, 9]), L.tensor([3, 0, 10]), right=True
    ),
    "sorter": lambda L: L.searchsorted(
        L.tensor([5.0, 1.0, 3.0]), L.tensor([2.0, 4.0]), sorter=L.tensor([1, 2, 0])
    ),
    "nan_value": lambda L: L.searchsorted(L.tensor([1.0, 2.0, 3.0]), L.tensor([math.nan, 3.0])),
    "bucketize": lambda L: L.bucketize(_v(L), _b(L)),
    "bucketize_right": lambda L: L.bucketize(_v(L), _b(L), right=True, out_int32=True),
    "bucketize_number": lambda L: L.bucketize(4, _b(L)),
    "bucketize_2d_bounds": lambda L: L.bucketize(_v(L), L.ones(2, 2)),
    "mismatched_rows": lambda L: L.searchsorted(L.ones(2, 3), L.ones(3, 3)),
    "side_and_right_opposite": lambda L: L.searchsorted(_b(L), _v(L), side="left", right=True),
    "bad_side": lambda L: L.searchsorted(_b(L), _v(L), side="x"),
    "0d_bounds": lambda L: L.searchsorted(L.tensor(1.0), _v(L)),
    "number_with_2d_bounds": lambda L: L.searchsorted(L.ones(2, 3), 1.0),
    "bool": lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([True])),
    "bucketize_bool": lambda L: L.bucketize(L.tensor([True]), L.tensor([False, True])),
    "sorter_of_other_size": lambda L: L.searchsorted(_b(L), _v(L), sorter=L.tensor([0, 1, 2])),
    "sorter_int32": lambda L: L.searchsorted(
        _b(L), _v(L), sorter=L.tensor([0, 1, 2, 3], dtype=L.int32)
    ),
    "out": _out("int64", lambda L, out: L.searchsorted(_b(L), _v(L), out=out)),
    "out_int32": _out("int32", lambda L, out: L.searchsorted(_b(L), 2.0, out_int32=True, out=out)),
    "out_wrong_dtype": _out("int32", lambda L, out: L.searchsorted(_b(L), _v(L), out=out)),
    "out_float": _out("float32", lambda L, out: L.searchsorted(_b(L), _v(L), out=out)),
    "bucketize_out": _out(
        "int32", lambda L, out: L.bucketize(_v(L), _b(L), out_int32=True, out=out)
    ),
}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_searchsorted_and_bucketize_match_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


def test_results_are_not_differentiable(torch):
    def scenario(lib):
        b = lib.tensor(BOUNDS, requires_grad=True)
        v = lib.tensor(VALUES, requires_grad=True)
        r = lib.searchsorted(b, v)
        return r.requires_grad, r.grad_fn

    assert scenario(og) == scenario(torch)
