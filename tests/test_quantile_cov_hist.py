"""quantile, nanquantile, cov, corrcoef, histc and bincount (and floor, ceil, round and lerp,
which quantile calls) against torch: values, dtypes, shapes, result nodes, the aten calls a
dispatch mode sees, out=, errors and warnings, gradients. (Their float64 OpInfo samples run
in test_opinfo.py.)"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import dtype_name, message, outcome, outcome_and_aten_log

X = [[1.0, 5.0, 2.0, 8.0], [3.0, 3.0, -1.0, 0.0], [math.nan, 1.0, 2.0, 3.0]]
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


def _plain(values):
    """Nested lists with NaN spelled out (NaN != NaN would fail the comparison)."""
    if isinstance(values, list):
        return [_plain(v) for v in values]
    if isinstance(values, float) and math.isnan(values):
        return "nan"
    return values


def _described(r):
    node = None if r.grad_fn is None else type(r.grad_fn).__name__
    return _plain(r.detach().tolist()), dtype_name(r.dtype), tuple(r.shape), node


def _seen(lib, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome_and_aten_log(lib, call, _described)
    texts = [
        message(w.message).partition(" (Triggered internally")[0]
        for w in caught
        if "degrees of freedom" in str(w.message)
    ]
    # quantile's out= resizes out with aten.resize_, which opgrad does not have as an op
    outcome, log = result
    return (outcome, [name for name in log if name != "aten.resize_.default"]), texts


def _x(L, rows=3, dtype="float32", grad=False):
    return L.tensor(X[:rows], dtype=getattr(L, dtype), requires_grad=grad)


def _out(dtype, make):
    def call(L):
        out = L.empty(0, dtype=getattr(L, dtype))
        assert make(L, out) is out
        return out

    return call


QUANTILE = {
    "q_tensor_all": lambda L: L.quantile(
        _x(L, 2, "float64", True), L.tensor([0.2, 0.5], dtype=L.float64)
    ),
    "q_scalar_dim_keepdim": lambda L: L.quantile(_x(L, 2, grad=True), 0.3, dim=1, keepdim=True),
    "q_tensor_dim0": lambda L: L.quantile(_x(L), L.tensor([0.0, 0.25, 1.0]), dim=0),
    "q_tensor_dim0_keepdim": lambda L: L.quantile(_x(L), L.tensor([0.4, 0.6]), 0, True),
    "q_tensor_keepdim_all": lambda L: L.quantile(_x(L), L.tensor([0.5, 0.2]), None, True),
    "q_0d_tensor": lambda L: L.quantile(_x(L), L.tensor(0.75), dim=-1),
    "scalar_all": lambda L: L.quantile(_x(L, 2), 0.4),
    "0d_input": lambda L: L.quantile(L.tensor(3.0), 0.5, dim=0, keepdim=True),
    "0d_input_q_tensor": lambda L: L.quantile(L.tensor(3.0), L.tensor([0.5, 0.2]), keepdim=True),
    "1d_input": lambda L: L.quantile(L.tensor([4.0, 1.0, 3.0]), L.tensor([0.1, 0.9])),
    "method": lambda L: _x(L).quantile(0.5, 1, True, interpolation="higher"),
    "ties": lambda L: L.quantile(L.tensor([2.0, 2.0, 1.0, 2.0]), L.tensor([0.3, 0.5, 0.7])),
    "nan_row": lambda L: L.quantile(_x(L), 0.5, dim=1),
    "nanquantile": lambda L: L.nanquantile(_x(L), L.tensor([0.2, 0.5]), dim=1),
    "nanquantile_all": lambda L: L.nanquantile(_x(L), 0.4),
    "nanquantile_all_nan_row": lambda L: L.nanquantile(
        L.tensor([[math.nan, 1.0, 2.0], [math.nan] * 3]), 0.5, dim=1
    ),
    "nanquantile_method": lambda L: _x(L).nanquantile(0.25, dim=0, interpolation="midpoint"),
    "out_scalar": _out("float32", lambda L, out: L.quantile(_x(L), 0.5, dim=1, out=out)),
    "out_tensor": _out(
        "float64",
        lambda L, out: L.quantile(
            _x(L, 2, "float64"), L.tensor([0.2, 0.5], dtype=L.float64), dim=1, out=out
        ),
    ),
    "nan_out": _out(
        "float32", lambda L, out: L.nanquantile(_x(L), L.tensor([0.3]), dim=0, out=out)
    ),
    "out_wrong_dtype": _out("float64", lambda L, out: L.quantile(_x(L), 0.5, out=out)),
    # errors, in PyTorch's order
    "q_above_one": lambda L: L.quantile(_x(L), 1.5),
    "q_below_zero_before_mode": lambda L: L.quantile(_x(L), -0.5, interpolation="foo"),
    "q_nan": lambda L: L.quantile(_x(L), math.nan),
    "q_tensor_above_one_under_mode": lambda L: L.quantile(L.tensor([1.0, 2.0]), L.tensor([1.5])),
    "q_tensor_nan_under_mode": lambda L: L.quantile(L.tensor([1.0, 2.0]), L.tensor([math.nan])),
    "nan_q_above_one": lambda L: L.nanquantile(_x(L), 1.5),
    "bad_mode": lambda L: L.quantile(_x(L), L.tensor([0.5]), interpolation="foo"),
    "bad_mode_before_empty": lambda L: L.quantile(L.empty(0), 0.5, interpolation="foo"),
    "empty": lambda L: L.quantile(L.empty(0), 0.5),
    "empty_rows": lambda L: L.quantile(L.empty(0, 3), 0.5, dim=1),
    "nan_empty": lambda L: L.nanquantile(L.empty(0), 0.5),
    "q_other_dtype": lambda L: L.quantile(_x(L, dtype="float64"), L.tensor([0.5])),
    "q_2d": lambda L: L.quantile(_x(L), L.tensor([[0.5]])),
    "int_input": lambda L: L.quantile(L.tensor([1, 2]), 0.5),
    "int_input_q_tensor": lambda L: L.quantile(L.tensor([1, 2]), L.tensor(0.5)),
    "half_input": lambda L: L.quantile(L.tensor([1.0, 2.0], dtype=L.float16), 0.5),
    "dim_out_of_range": lambda L: L.quantile(_x(L), 0.5, dim=2),
    "negative_dim_out_of_range": lambda L: L.quantile(_x(L), 0.5, dim=-3),
}

for _mode_name in MODES:
    QUANTILE[f"mode_{_mode_name}"] = lambda L, m=_mode_name: L.quantile(
        _x(L), L.tensor([0.2, 0.7]), dim=0, interpolation=m
    )
    QUANTILE[f"scalar_mode_{_mode_name}"] = lambda L, m=_mode_name: L.quantile(
        _x(L, 2, grad=True), 0.3, dim=0, interpolation=m
    )
    QUANTILE[f"nan_mode_{_mode_name}"] = lambda L, m=_mode_name: L.nanquantile(
        _x(L, grad=True), L.tensor([0.1, 0.5, 0.9]), dim=1, interpolation=m
    )


def test_q_values_out_of_range_refused_without_a_dispatch_mode(torch):
    # torch reads a q tensor's values only outside dispatch modes (under the mode of the
    # tests above, a q out of range reaches gather and its index error)
    for q in ([1.5], [math.nan], [-0.1, 0.5]):
        for fn in ("quantile", "nanquantile"):

            def call(L):
                return getattr(L, fn)(L.tensor([1.0, 2.0]), L.tensor(q))

            assert outcome(lambda: call(og)) == outcome(lambda: call(torch))
            assert "q values must be in the range [0, 1]" in outcome(lambda: call(og))[1]
    # after the argument checks, as torch
    call = lambda L: L.quantile(L.tensor([1.0, 2.0]), L.tensor([1.5]), dim=3)  # noqa: E731
    assert outcome(lambda: call(og)) == outcome(lambda: call(torch))


@pytest.mark.parametrize("call", list(QUANTILE.values()), ids=list(QUANTILE))
def test_quantile_matches_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


def _w(L, values, dtype):
    return L.tensor(values, dtype=getattr(L, dtype))


COV = {
    "plain": lambda L: L.cov(_x(L, 2, grad=True)),
    "float64": lambda L: L.cov(_x(L, 2, "float64")),
    "correction0": lambda L: L.cov(_x(L, 2), correction=0),
    "fweights": lambda L: L.cov(_x(L, 2), fweights=_w(L, [1, 2, 1, 1], "int64")),
    "aweights": lambda L: L.cov(_x(L, 2), aweights=_w(L, [0.5, 1, 2, 1], "float32")),
    "both_correction2": lambda L: L.cov(
        _x(L, 2, "float64"),
        correction=2,
        fweights=_w(L, [1, 2, 1, 1], "int64"),
        aweights=_w(L, [0.5, 1, 2, 1], "float64"),
    ),
    "both_correction0": lambda L: L.cov(
        _x(L, 2),
        correction=0,
        fweights=_w(L, [1, 2, 1, 1], "int32"),
        aweights=_w(L, [0.5, 1, 2, 1], "float32"),
    ),
    "dof_warns": lambda L: L.cov(_x(L, 2, "float64"), correction=4),
    "1d_int": lambda L: L.cov(L.tensor([1, 2, 4])),
    "0d": lambda L: L.cov(L.tensor(2.0)),
    "one_observation": lambda L: L.cov(L.tensor([[2.0], [3.0]])),
    "no_observations": lambda L: L.cov(L.empty(2, 0)),
    "method": lambda L: _x(L, 2).cov(correction=0),
    "3d": lambda L: L.cov(L.ones(1, 2, 3)),
    "bool": lambda L: L.cov(L.tensor([True, False])),
    "fweights_2d": lambda L: L.cov(_x(L, 2), fweights=L.ones(1, 4, dtype=L.int64)),
    "fweights_float": lambda L: L.cov(_x(L, 2), fweights=L.ones(4)),
    "fweights_numel": lambda L: L.cov(_x(L, 2), fweights=L.ones(3, dtype=L.int64)),
    "fweights_negative": lambda L: L.cov(_x(L, 2), fweights=_w(L, [1, -2, 1, 1], "int64")),
    "aweights_2d": lambda L: L.cov(_x(L, 2), aweights=L.ones(2, 2)),
    "aweights_int": lambda L: L.cov(_x(L, 2), aweights=L.ones(4, dtype=L.int64)),
    "aweights_numel": lambda L: L.cov(_x(L, 2), aweights=L.ones(5)),
    "aweights_negative": lambda L: L.cov(_x(L, 2), aweights=_w(L, [1, -2, 1, 1], "float32")),
    "weights_sum_zero": lambda L: L.cov(_x(L, 2), fweights=L.zeros(4, dtype=L.int64)),
    "corrcoef": lambda L: L.corrcoef(_x(L, 2, "float64", True)),
    "corrcoef_float32": lambda L: L.corrcoef(_x(L, 2)),
    "corrcoef_1d": lambda L: L.corrcoef(L.tensor([1.0, 2.0, 4.0])),
    "corrcoef_constant_row": lambda L: L.corrcoef(L.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])),
    "corrcoef_method": lambda L: _x(L, 2, "float64").corrcoef(),
    "corrcoef_3d": lambda L: L.corrcoef(L.ones(1, 2, 3)),
}


@pytest.mark.parametrize("call", list(COV.values()), ids=list(COV))
def test_cov_and_corrcoef_match_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


def test_corrcoef_of_ints_matches_torch_to_float32_rounding(torch):
    # the float32 products are summed in another order than PyTorch's mm: last bits differ
    def call(L):
        return L.corrcoef(L.tensor([[1, 2, 4], [2, 1, 0]]))

    got, expected = _seen(og, call), _seen(torch, call)
    assert got[0][1] == expected[0][1]
    np.testing.assert_allclose(got[0][0][1][0], expected[0][0][1][0], rtol=1e-6)
    assert got[0][0][1][1:] == expected[0][0][1][1:]


HISTC = {
    "default_range": lambda L: L.histc(_x(L, 2), bins=5),
    "range": lambda L: L.histc(
        L.tensor([0.0, 1, 2, 3, 4, 5, 2.5, 1.0000001, -1, 6]), bins=4, min=0, max=4
    ),
    "edges": lambda L: L.histc(L.tensor([0.0, 1, 2, 3, 4, 5, 2.5, -1, 6]), bins=5, min=0, max=5),
    "float64": lambda L: L.histc(_x(L, 2, "float64"), bins=3, min=-1, max=8),
    "float16": lambda L: L.histc(L.tensor([1.0, 2.0, 1.5], dtype=L.float16), bins=3),
    "constant_data": lambda L: L.histc(L.tensor([1.0, 1, 1]), bins=3),
    "min_equals_max": lambda L: L.histc(L.tensor([1.0, 1, 1, 3]), bins=3, min=2, max=2),
    "empty": lambda L: L.histc(L.tensor([]), bins=3),
    "nan_ignored": lambda L: L.histc(L.tensor([1.0, 2, math.nan]), bins=2, min=0, max=3),
    "2d": lambda L: L.histc(L.tensor([[1.0, 2], [3, 4]]), bins=2),
    "0d": lambda L: L.histc(L.tensor(2.0), bins=2),
    "positional": lambda L: L.histc(L.tensor([1.0, 2]), 2, 1, 2),
    "method": lambda L: L.tensor([1.0, 2]).histc(2, 1, 2),
    "grad_input": lambda L: L.histc(L.tensor([1.0, 2, 3], requires_grad=True), bins=3),
    "out": _out("float32", lambda L, out: L.histc(_x(L, 2), bins=3, out=out)),
    "out_float64": _out(
        "float64", lambda L, out: L.histc(_x(L, 2, "float64"), bins=3, min=-1, max=1, out=out)
    ),
    "out_wrong_dtype": _out("float64", lambda L, out: L.histc(_x(L, 2), bins=3, out=out)),
    "bins_0": lambda L: L.histc(L.tensor([1.0, 2]), bins=0, min=3, max=1),
    "bins_negative": lambda L: L.histc(L.tensor([1.0, 2]), bins=-1),
    "max_below_min": lambda L: L.histc(L.tensor([1.0, 2]), bins=3, min=3, max=1),
    "int": lambda L: L.histc(L.tensor([1, 2]), bins=3),
    "int_bad_range": lambda L: L.histc(L.tensor([1, 2]), bins=3, min=3, max=1),
    "bool": lambda L: L.histc(L.tensor([True]), bins=3),
    "int_out_wrong_dtype": _out("float64", lambda L, out: L.histc(L.tensor([1, 2]), 2, out=out)),
    "nan_data": lambda L: L.histc(L.tensor([math.nan, 1.0]), bins=2),
    "lone_nan": lambda L: L.histc(L.tensor([math.nan]), bins=2),
    "inf_data": lambda L: L.histc(L.tensor([-math.inf, 2.0]), bins=2),
    "inf_max": lambda L: L.histc(L.tensor([1.0, 2]), bins=3, min=0, max=math.inf),
    "nan_min": lambda L: L.histc(L.tensor([1.0, 2]), bins=3, min=math.nan, max=1),
    "huge_range": lambda L: L.histc(L.tensor([1.0, 1e30]), bins=2),
    "wide_range": lambda L: L.histc(L.tensor([1.0, 2]), bins=2, min=0.1, max=12345678.5),
}


@pytest.mark.parametrize("call", list(HISTC.values()), ids=list(HISTC))
def test_histc_matches_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("bins", [3, 7, 10, 100])
def test_histc_bins_boundary_elements_as_torch(torch, dtype, bins):
    # elements on and next to every bin edge, and random ones, in several ranges
    rng = np.random.default_rng(bins)
    for lo, hi in [(0.0, 1.0), (-3.3, 7.1), (0.1, 0.7)]:
        edges = np.linspace(lo, hi, bins + 1)
        data = np.concatenate(
            [
                edges,
                np.nextafter(edges, -np.inf),
                np.nextafter(edges, np.inf),
                rng.uniform(lo - 1, hi + 1, 500),
            ]
        )
        got = og.histc(og.tensor(data.tolist(), dtype=getattr(og, dtype)), bins, lo, hi)
        expected = torch.histc(
            torch.tensor(data.tolist(), dtype=getattr(torch, dtype)), bins, lo, hi
        )
        assert got.tolist() == expected.tolist(), (lo, hi)


BINCOUNT = {
    "plain": lambda L: L.bincount(L.tensor([1, 2, 2, 5])),
    "minlength": lambda L: L.tensor([0, 1]).bincount(minlength=4),
    "positional": lambda L: L.bincount(L.tensor([0, 1]), None, 4),
    "int32": lambda L: L.bincount(L.tensor([0, 3, 3], dtype=L.int32)),
    "uint8": lambda L: L.bincount(L.tensor([0, 3, 3], dtype=L.uint8)),
    "empty": lambda L: L.bincount(L.tensor([], dtype=L.int64)),
    "empty_minlength": lambda L: L.bincount(L.tensor([], dtype=L.int64), minlength=3),
    "empty_with_weights": lambda L: L.bincount(
        L.tensor([], dtype=L.int64), L.tensor([]), minlength=2
    ),
    "float_weights": lambda L: L.bincount(L.tensor([1, 2, 2]), L.tensor([1.0, 2, 3]), minlength=5),
    "float64_weights": lambda L: L.bincount(
        L.tensor([1, 2, 2]), L.tensor([0.1, 0.2, 0.3], dtype=L.float64)
    ),
    "int_weights": lambda L: L.bincount(L.tensor([0, 3, 3]), L.tensor([1, 2, 3])),
    "int32_weights": lambda L: L.bincount(L.tensor([0, 3, 3]), L.tensor([1, 2, 3], dtype=L.int32)),
    "half_weights": lambda L: L.bincount(L.tensor([0, 3, 3]), L.tensor([1, 2, 3], dtype=L.float16)),
    "bool_weights": lambda L: L.bincount(L.tensor([0, 3, 3]), L.tensor([True, True, False])),
    "method_weights": lambda L: L.tensor([2, 0, 2]).bincount(L.tensor([0.5, 0.25, 0.125])),
    "negative": lambda L: L.bincount(L.tensor([0, -1])),
    "2d": lambda L: L.bincount(L.tensor([[0, 1]])),
    "0d": lambda L: L.bincount(L.tensor(3)),
    "minlength_negative": lambda L: L.bincount(L.tensor([0, 1]), minlength=-1),
    "float_input": lambda L: L.bincount(L.tensor([0.0, 1])),
    "bool_input": lambda L: L.bincount(L.tensor([True, False])),
    "weights_length": lambda L: L.bincount(L.tensor([0, 1]), L.tensor([1.0, 2, 3])),
    "weights_2d": lambda L: L.bincount(L.tensor([0, 1]), L.tensor([[1.0, 2]])),
    "python_refuses_out": lambda L: L.bincount(L.tensor([0, 1]), out=L.empty(0)),
    # the aten op's out= variant
    "aten_out": _out(
        "int64", lambda L, out: L.ops.aten.bincount.out(L.tensor([0, 2, 2]), None, 4, out=out)
    ),
    "aten_out_wrong_dtype": _out(
        "float64", lambda L, out: L.ops.aten.bincount.out(L.tensor([1]), None, 0, out=out)
    ),
    "aten_out_negative": _out(
        "float64", lambda L, out: L.ops.aten.bincount.out(L.tensor([1, -1]), None, 0, out=out)
    ),
    "aten_out_weights": _out(
        "float64",
        lambda L, out: L.ops.aten.bincount.out(
            L.tensor([0, 2]), L.tensor([0.5, 2.0], dtype=L.float64), out=out
        ),
    ),
}


@pytest.mark.parametrize("call", list(BINCOUNT.values()), ids=list(BINCOUNT))
def test_bincount_matches_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


def test_bincount_float_weights_sum_in_order_as_torch(torch):
    rng = np.random.default_rng(0)
    index = rng.integers(0, 7, 2000).tolist()
    weights = rng.standard_normal(2000).astype(np.float32).tolist()
    got = og.bincount(og.tensor(index), og.tensor(weights))
    expected = torch.bincount(torch.tensor(index), torch.tensor(weights))
    assert got.tolist() == expected.tolist()


def test_bincount_and_histc_autograd_as_torch(torch):
    def scenario(L):
        w = L.tensor([1.0, 2.0], requires_grad=True)
        r = L.bincount(L.tensor([0, 1]), w)
        node = r.grad_fn
        names = [type(f).__name__ for f, _ in node.next_functions]
        try:
            r.sum().backward()
            err = None
        except RuntimeError as exc:
            err = message(exc)
        h = L.histc(L.tensor([1.0, 2.0], requires_grad=True), bins=3)
        return node.name(), names, err, h.requires_grad, h.grad_fn

    got, expected = scenario(og), scenario(torch)
    assert got[1:] == expected[1:]
    assert got[0].rpartition(":")[2] == expected[0].rpartition(":")[2] == "NotImplemented"


def test_bincount_forward_ad_refused_as_torch(torch):
    def scenario(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(L.tensor([1.0, 2.0]), L.ones(2))
            try:
                L.bincount(L.tensor([0, 1]), d)
            except NotImplementedError as exc:
                return message(exc)

    assert scenario(og) == scenario(torch)


# ---- gradients ------------------------------------------------------------------------------


def _grads(L, fn, *inputs):
    ts = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in inputs]
    out = fn(L, *ts)
    g = L.tensor(
        np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).tolist(), dtype=L.float64
    )
    grads = L.autograd.grad(out, ts, g, allow_unused=True)
    return [None if x is None else _plain(x.tolist()) for x in grads]


GRADS = {
    "quantile_linear": lambda L, x: L.quantile(x, L.tensor([0.2, 0.9], dtype=L.float64), dim=1),
    "quantile_ties": lambda L, x: L.quantile(x, 0.5),
    "quantile_lower": lambda L, x: L.quantile(x, 0.4, dim=0, interpolation="lower"),
    "quantile_midpoint": lambda L, x: L.quantile(x, 0.4, dim=0, interpolation="midpoint"),
    "quantile_nearest": lambda L, x: L.quantile(
        x, 0.4, dim=1, keepdim=True, interpolation="nearest"
    ),
    "nanquantile": lambda L, x: L.nanquantile(x, L.tensor([0.3, 0.6], dtype=L.float64), dim=0),
    "cov": lambda L, x: L.cov(x),
    "cov_weighted": lambda L, x: L.cov(
        x, fweights=L.tensor([1, 2, 1, 3]), aweights=L.tensor([0.5, 1, 2, 1], dtype=L.float64)
    ),
    "corrcoef": lambda L, x: L.corrcoef(x),
}

GRAD_X = [[1.0, 5.0, 2.0, 8.0], [3.0, 3.0, -1.0, 0.5], [2.0, 1.0, 2.0, 7.0]]


@pytest.mark.parametrize("fn", list(GRADS.values()), ids=list(GRADS))
def test_gradients_match_torch(torch, fn):
    got, expected = _grads(og, fn, GRAD_X), _grads(torch, fn, GRAD_X)
    np.testing.assert_allclose(
        np.array(got, dtype=float), np.array(expected, dtype=float), rtol=1e-12, atol=1e-12
    )


def test_quantile_gradient_reaches_q_as_torch(torch):
    # the linear weights are ranks - floor(ranks): q gets a gradient through lerp's weight
    def fn(L, x, q):
        return L.quantile(x, q, dim=1)

    got = _grads(og, fn, GRAD_X, [0.25, 0.6])
    expected = _grads(torch, fn, GRAD_X, [0.25, 0.6])
    np.testing.assert_allclose(np.array(got[1]), np.array(expected[1]), rtol=1e-12)
    np.testing.assert_allclose(np.array(got[0]), np.array(expected[0]), rtol=1e-12)


def test_quantile_and_cov_gradcheck():
    # no ties: at a tie the numerical derivative is ill-defined
    x = og.tensor(
        [[1.0, 5.0, 2.0, 8.0], [3.0, 3.5, -1.0, 0.5], [2.0, 1.0, 2.5, 7.0]],
        dtype=og.float64,
        requires_grad=True,
    )
    q = og.tensor([0.3, 0.8], dtype=og.float64)
    assert og.autograd.gradcheck(lambda t: og.quantile(t, q, dim=1), (x,))
    assert og.autograd.gradgradcheck(lambda t: og.quantile(t, q, dim=0), (x,))
    assert og.autograd.gradcheck(lambda t: og.cov(t), (x,))
    assert og.autograd.gradgradcheck(lambda t: og.corrcoef(t), (x,))


# ---- floor, ceil, round, lerp -----------------------------------------------------------------


ROUNDING = {
    f"{name}_{dtype}": (
        lambda L, n=name, d=dtype: getattr(L, n)(
            L.tensor([2.5, -0.5, 1.5, 0.49999997, -2.7, 3.0], dtype=getattr(L, d))
        )
    )
    for name in ("floor", "ceil", "round")
    for dtype in ("float32", "float64", "float16")
}
ROUNDING.update(
    {
        "floor_int": lambda L: L.floor(L.tensor([3, -2], dtype=L.int32)),
        "round_uint8": lambda L: L.round(L.tensor([3], dtype=L.uint8)),
        "ceil_bool": lambda L: L.ceil(L.tensor([True])),
        "floor_": lambda L: L.tensor([1.5, -1.5]).floor_(),
        "round_decimals": lambda L: L.round(L.tensor([1.2345, 125.0, 2.5, 0.125]), decimals=2),
        "round_decimals_negative": lambda L: L.round(
            L.tensor([1.2345, 125.0, 2.5, 0.125, 150.0], dtype=L.float64), decimals=-1
        ),
        "round_decimals_int": lambda L: L.round(L.tensor([3], dtype=L.int32), decimals=1),
        "round__decimals": lambda L: L.tensor([0.125, 0.375]).round_(decimals=2),
        "ceil_grad": lambda L: L.ceil(L.tensor([1.2], requires_grad=True)),
        "round_decimals_grad": lambda L: L.round(L.tensor([1.2], requires_grad=True), decimals=1),
        "floor_out": _out("float32", lambda L, out: L.floor(L.tensor([1.5]), out=out)),
        "ceil_out": _out("float64", lambda L, out: L.ceil(L.tensor([1.5, -2.5]), out=out)),
        "round_out": _out("float32", lambda L, out: L.round(L.tensor([0.5, 1.5]), out=out)),
        "round_decimals_out": _out(
            "float32", lambda L, out: L.round(L.tensor([0.125, 1.55]), decimals=1, out=out)
        ),
        "lerp_tensor_out": _out(
            "float32",
            lambda L, out: L.lerp(L.tensor([1.0]), L.tensor([3.0]), L.tensor([0.75]), out=out),
        ),
        "lerp_scalar": lambda L: L.lerp(L.tensor([1.0, 2]), L.tensor([3.0, 5]), 0.5),
        "lerp_tensor": lambda L: L.lerp(
            L.tensor([1.0, 2], requires_grad=True), L.tensor([3.0, 5]), L.tensor([0.3, 0.7])
        ),
        "lerp_broadcast": lambda L: L.lerp(L.tensor([1.0, 2]), L.tensor(3.0), 0.7),
        "lerp_weight_broadcast": lambda L: L.lerp(
            L.tensor([1.0, 2]), L.tensor([3.0, 5]), L.tensor([[0.7]])
        ),
        "lerp_0d_weight_of_other_dtype": lambda L: L.lerp(
            L.tensor([1.0, 2]), L.tensor([3.0, 5]), L.tensor(0.5, dtype=L.float64)
        ),
        "lerp_end_dtype": lambda L: L.lerp(
            L.tensor([1.0, 2]), L.tensor([3.0, 5], dtype=L.float64), 0.5
        ),
        "lerp_weight_dtype": lambda L: L.lerp(
            L.tensor([1.0, 2]), L.tensor([3.0, 5]), L.tensor([0.5, 0.1], dtype=L.float64)
        ),
        "lerp_int": lambda L: L.lerp(L.tensor([1, 2]), L.tensor([3, 5]), 0.5),
        "lerp_inf": lambda L: L.lerp(
            L.tensor([1.0, math.inf]), L.tensor([2.0, math.inf]), L.tensor([1.0, 0.7])
        ),
        "lerp_": lambda L: L.tensor([1.0, 2]).lerp_(L.tensor([3.0, 5]), 0.25),
        "lerp_out": _out(
            "float32", lambda L, out: L.lerp(L.tensor([1.0]), L.tensor([3.0]), 0.5, out=out)
        ),
        "lerp_out_float64": _out(
            "float64", lambda L, out: L.lerp(L.tensor([1.0]), L.tensor([3.0]), 0.5, out=out)
        ),
        "lerp_tensor_out_float64": _out(
            "float64",
            lambda L, out: L.lerp(L.tensor([1.0]), L.tensor([3.0]), L.tensor([0.5]), out=out),
        ),
        "floor_int_out_float64": _out("float64", lambda L, out: L.floor(L.tensor([1]), out=out)),
        "round_decimals_out_float64": _out(
            "float64", lambda L, out: L.round(L.tensor([1.5]), decimals=1, out=out)
        ),
        "lerp_large": lambda L: L.lerp(
            L.tensor([1e8, 1e8]), L.tensor([3.0, 3.0]), L.tensor([0.7, 0.3])
        ),
    }
)


@pytest.mark.parametrize("call", list(ROUNDING.values()), ids=list(ROUNDING))
def test_rounding_and_lerp_match_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


def test_lerp_random_values_as_torch(torch):
    rng = np.random.default_rng(1)
    for dtype in ("float32", "float64"):
        a, b = rng.standard_normal((2, 1000)) * 100
        w = rng.uniform(-1, 2, 1000)
        got = og.lerp(*(og.tensor(v.tolist(), dtype=getattr(og, dtype)) for v in (a, b, w)))
        expected = torch.lerp(
            *(torch.tensor(v.tolist(), dtype=getattr(torch, dtype)) for v in (a, b, w))
        )
        assert got.tolist() == expected.tolist()


# ---- bincount's OpInfo samples -----------------------------------------------------------------


def test_bincount_opinfo_samples_match_torch(torch):
    # bincount's OpInfo supports integral inputs only, so test_opinfo.py (float64 samples)
    # does not collect it: its int64 samples run here
    from opinfo_support import load_op_db, sample_args

    (opinfo,) = [o for o in load_op_db() if o.name == "bincount"]
    samples = list(opinfo.sample_inputs("cpu", torch.int64))
    assert samples
    for sample in samples:
        (t_in, t_args, t_kwargs), _ = sample_args(torch, sample)
        (o_in, o_args, o_kwargs), _ = sample_args(og, sample)
        expected = torch.bincount(t_in, *t_args, **t_kwargs)
        got = og.bincount(o_in, *o_args, **o_kwargs)
        assert dtype_name(got.dtype) == dtype_name(expected.dtype)
        assert got.tolist() == expected.tolist()
        # the method, as the OpInfo's method variant
        assert o_in.bincount(*o_args, **o_kwargs).tolist() == expected.tolist()


# ---- nodes and saved fields ---------------------------------------------------------------------


NODES = {
    "lerp_tensor": lambda L, a, b, w: L.lerp(a, b, w),
    "lerp_scalar": lambda L, a, b, w: L.lerp(a, b, 0.25),
    "lerp_inplace": lambda L, a, b, w: a.clone().lerp_(b, w),
    "floor": lambda L, a, b, w: L.floor(a),
    "ceil_inplace": lambda L, a, b, w: a.clone().ceil_(),
    "round": lambda L, a, b, w: L.round(a),
    "round_decimals": lambda L, a, b, w: L.round(a, decimals=1),
    "quantile": lambda L, a, b, w: L.quantile(a, 0.4),
    "quantile_q_tensor": lambda L, a, b, w: L.quantile(a, w),
    "nanquantile_lower": lambda L, a, b, w: L.nanquantile(a, 0.4, interpolation="lower"),
}


@pytest.mark.parametrize("make", list(NODES.values()), ids=list(NODES))
def test_nodes_and_saved_fields_match_torch(torch, make):
    def run(L):
        inputs = [
            L.tensor(v, dtype=L.float64, requires_grad=True)
            for v in ([1.0, 2.5, -0.5], [3.0, 5.0, 1.0], [0.3, 0.7, 0.9])
        ]
        return make(L, *inputs).grad_fn, inputs

    (got, got_inputs), (expected, expected_inputs) = run(og), run(torch)
    assert type(got).__name__ == type(expected).__name__
    assert [type(f).__name__ if f else None for f, _ in got.next_functions] == [
        type(f).__name__ if f else None for f, _ in expected.next_functions
    ]
    from torch_oracle import assert_same_saved_fields

    assert_same_saved_fields(
        torch, got, expected, got_inputs, expected_inputs, what=type(expected).__name__
    )


def test_lerp_forward_ad_matches_torch(torch):
    def run(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(
                L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([0.5, 1.0], dtype=L.float64)
            )
            b = fw.make_dual(
                L.tensor([3.0, 5.0], dtype=L.float64), L.tensor([1.0, -1.0], dtype=L.float64)
            )
            w = fw.make_dual(
                L.tensor([0.2, 0.7], dtype=L.float64), L.tensor([2.0, 3.0], dtype=L.float64)
            )
            r = L.lerp(a, b, w)
            q = L.quantile(L.stack([a, b]), 0.3, dim=0)
            return fw.unpack_dual(r).tangent.tolist(), fw.unpack_dual(q).tangent.tolist()

    got, expected = run(og), run(torch)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
