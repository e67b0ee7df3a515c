"""prod, nansum, nanmean, all, any, count_nonzero, var, std, var_mean, std_mean against
torch: values over dtypes, dims and keepdim; prod's gradient at zeros (one, two, along a
dim; first and second derivatives, tangents); node names and saved fields; the overloads
Python reaches; out=; errors and warnings. torch's OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    aten_log,
    assert_same,
    assert_same_error,
    assert_same_saved_fields,
    dtype_name,
    vals,
)

DATA = [[1.5, -2.0, 0.5, 3.0], [2.0, 0.25, -1.0, 4.0], [-0.5, 1.0, 2.5, -3.0]]
NAN = math.nan
WITH_NAN = [[1.0, NAN, 3.0, -2.0], [NAN, NAN, 0.5, 1.0], [2.0, -1.0, 4.0, 0.0]]


def _comparable(value):
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, 10)
    return value


def _result(value):
    """Values (rounded), dtypes and shapes of a tensor or a tuple of them."""
    if isinstance(value, tuple):
        return type(value).__name__, [_result(v) for v in value]
    return _comparable(vals(value)), dtype_name(value.dtype), tuple(value.shape)


def _same_call(torch, data, dtype, call):
    def scenario(lib):
        x = lib.tensor(data, dtype=getattr(lib, dtype))
        return _result(call(lib, x))

    assert_same(torch, scenario)


# ---- values --------------------------------------------------------------------------

FLOAT_CALLS = {
    "prod": lambda lib, x: x.prod(),
    "prod_dim": lambda lib, x: lib.prod(x, 1),
    "prod_dim_keepdim": lambda lib, x: x.prod(-2, keepdim=True),
    "prod_dtype": lambda lib, x: x.prod(dtype=lib.float64),
    "nansum": lambda lib, x: x.nansum(),
    "nansum_dims": lambda lib, x: lib.nansum(x, (0, -1), keepdim=True),
    "nansum_dim": lambda lib, x: x.nansum(1),
    "nanmean": lambda lib, x: x.nanmean(),
    "nanmean_dim": lambda lib, x: lib.nanmean(x, 0, True),
    "all": lambda lib, x: x.all(),
    "all_dim": lambda lib, x: x.all(1),
    "all_dims": lambda lib, x: lib.all(x, (0, 1), keepdim=True),
    "all_no_dims": lambda lib, x: x.all(dim=()),
    "any": lambda lib, x: lib.any(x),
    "any_dim_keepdim": lambda lib, x: x.any(-1, True),
    "any_none_keepdim": lambda lib, x: x.any(None, True),
    "count_nonzero": lambda lib, x: x.count_nonzero(),
    "count_nonzero_dim": lambda lib, x: lib.count_nonzero(x, 1),
    "count_nonzero_dims": lambda lib, x: x.count_nonzero((0, 1)),
    "count_nonzero_empty_dims": lambda lib, x: x.count_nonzero(dim=[]),
    "var": lambda lib, x: x.var(),
    "var_dim": lambda lib, x: x.var(1),
    "var_biased": lambda lib, x: lib.var(x, False),
    "var_correction": lambda lib, x: x.var(0, correction=2, keepdim=True),
    "var_float_correction": lambda lib, x: x.var(1, correction=0.5),
    "var_dim_list": lambda lib, x: lib.var(x, [0, 1], False, True),
    "var_no_dims": lambda lib, x: x.var(dim=()),
    "std": lambda lib, x: x.std(),
    "std_dim_biased": lambda lib, x: x.std(-1, unbiased=False),
    "std_correction_keepdim": lambda lib, x: lib.std(x, 0, correction=0, keepdim=True),
    "var_mean": lambda lib, x: lib.var_mean(x),
    "var_mean_dim": lambda lib, x: lib.var_mean(x, 1, correction=0),
    "var_mean_unbiased": lambda lib, x: lib.var_mean(x, False),
    "std_mean": lambda lib, x: lib.std_mean(x, [0], True, True),
    "std_mean_correction": lambda lib, x: lib.std_mean(x, dim=None, correction=2),
}


@pytest.mark.parametrize("name", sorted(FLOAT_CALLS))
@pytest.mark.parametrize("data", [DATA, WITH_NAN], ids=["finite", "nan"])
def test_float64_values_follow_torch(torch, name, data):
    _same_call(torch, data, "float64", FLOAT_CALLS[name])


@pytest.mark.parametrize("name", sorted(FLOAT_CALLS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_low_precision_values_follow_torch(torch, name, dtype):
    def scenario(lib):
        out = FLOAT_CALLS[name](lib, lib.tensor(DATA, dtype=getattr(lib, dtype)))
        outs = out if isinstance(out, tuple) else (out,)
        return [(dtype_name(o.dtype), tuple(o.shape)) for o in outs], [
            np.asarray(o.tolist(), dtype=np.float64) for o in outs
        ]

    (got_meta, got), (want_meta, want) = scenario(og), scenario(torch)
    assert got_meta == want_meta
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-3 if dtype == "float16" else 1e-5, atol=1e-3)


INTEGRAL_CALLS = {
    name: FLOAT_CALLS[name]
    for name in (
        "prod prod_dim prod_dim_keepdim prod_dtype nansum nansum_dims all all_dim all_dims "
        "all_no_dims any any_dim_keepdim count_nonzero count_nonzero_dim count_nonzero_dims"
    ).split()
}


@pytest.mark.parametrize("name", sorted(INTEGRAL_CALLS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integral_and_bool_inputs_as_torch(torch, name, dtype):
    _same_call(torch, [[1, 0, 3, 2], [2, 2, 1, 0], [1, 3, 1, 1]], dtype, INTEGRAL_CALLS[name])


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.prod(0),
        lambda lib, x: x.prod(),
        lambda lib, x: x.nansum(0),
        lambda lib, x: x.all(0),
        lambda lib, x: x.any(()),
        lambda lib, x: x.count_nonzero(0),
        lambda lib, x: lib.var_mean(x, 0, correction=0),
        lambda lib, x: x.std(0, correction=0),
    ],
)
def test_zero_dim_inputs(torch, call):
    _same_call(torch, 2.5, "float64", call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, e: e.prod(),
        lambda lib, e: e.prod(1),
        lambda lib, e: e.nansum(0),
        lambda lib, e: e.all(),
        lambda lib, e: e.any(1),
        lambda lib, e: e.count_nonzero(0),
        lambda lib, e: e.var(1),
        lambda lib, e: lib.std_mean(e, 1),
    ],
)
def test_empty_inputs(torch, call):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _result(call(lib, lib.empty(0, 3, dtype=lib.float64)))

    assert_same(torch, scenario)


# ---- prod at zeros ---------------------------------------------------------------------

ZEROS = {
    "no_zero": [[1.5, -2.0, 0.5], [2.0, 3.0, -1.0]],
    "one_zero": [[1.5, 0.0, 0.5], [2.0, 3.0, -1.0]],
    "two_zeros": [[1.5, 0.0, 0.5], [2.0, 0.0, -1.0]],
    "two_zeros_one_row": [[0.0, 2.0, 0.0], [2.0, 3.0, -1.0]],
    "three_zeros_one_row": [[0.0, 0.0, 0.0], [2.0, 3.0, -1.0]],
}
PROD_CALLS = {
    "full": lambda x: x.prod(),
    "dim0": lambda x: x.prod(0),
    "dim1": lambda x: x.prod(1),
    "dim1_keepdim": lambda x: x.prod(-1, keepdim=True),
}


def _prod_gradients(lib, data, call):
    x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    out = call(x)
    w = lib.tensor(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)))
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
    v = lib.tensor(np.linspace(-1.0, 1.5, 6).reshape(2, 3))
    (gg,) = lib.autograd.grad((g * v).sum(), x, allow_unused=True, materialize_grads=True)
    return _comparable(vals(g)), _comparable(vals(gg))


@pytest.mark.parametrize("call", sorted(PROD_CALLS))
@pytest.mark.parametrize("data", sorted(ZEROS))
def test_prod_gradient_and_its_gradient_at_zeros_follow_torch(torch, data, call):
    assert_same(torch, lambda lib: _prod_gradients(lib, ZEROS[data], PROD_CALLS[call]))


@pytest.mark.parametrize("call", sorted(PROD_CALLS))
@pytest.mark.parametrize("data", sorted(ZEROS))
def test_prod_gradient_without_a_graph_at_zeros(torch, data, call):
    def scenario(lib):
        x = lib.tensor(ZEROS[data], dtype=lib.float64, requires_grad=True)
        PROD_CALLS[call](x).sum().backward()
        return _comparable(vals(x.grad))

    assert_same(torch, scenario)


@pytest.mark.parametrize("call", sorted(PROD_CALLS))
@pytest.mark.parametrize("data", sorted(ZEROS))
def test_prod_tangent_at_zeros(torch, data, call):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            tangent = lib.tensor(np.linspace(-2.0, 3.0, 6).reshape(2, 3))
            x = fwAD.make_dual(lib.tensor(ZEROS[data], dtype=lib.float64), tangent)
            return _comparable(vals(fwAD.unpack_dual(PROD_CALLS[call](x)).tangent))

    assert_same(torch, scenario)


# ---- gradients and tangents ------------------------------------------------------------

GRADIENT_CALLS = {
    name: FLOAT_CALLS[name]
    for name in FLOAT_CALLS
    if not name.startswith(("all", "any", "count_nonzero"))
}


def _as_one(lib, out):
    return lib.stack(list(out)) if isinstance(out, tuple) else out


_NAN_BESIDE_A_ZERO = pytest.mark.xfail(
    strict=True,
    reason="prod along a dim where some slice has a zero: torch multiplies exclusive cumprods "
    "in every slice, so a NaN's own gradient is the finite product of the others; opgrad "
    "(no cumprod) divides the slice's product by the element there, which gives NaN",
)


def _gradient_params():
    for name in sorted(GRADIENT_CALLS):
        yield pytest.param(name, DATA, id=f"finite-{name}")
        marks = [_NAN_BESIDE_A_ZERO] if name in ("prod_dim", "prod_dim_keepdim") else []
        yield pytest.param(name, WITH_NAN, id=f"nan-{name}", marks=marks)


@pytest.mark.parametrize("name, data", _gradient_params())
def test_gradients_and_second_derivatives_follow_torch(torch, name, data):
    def scenario(lib):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        out = _as_one(lib, GRADIENT_CALLS[name](lib, x))
        w = lib.tensor(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)))
        (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
        if not g.requires_grad:  # linear (nansum, nanmean): the gradient has no graph
            return _comparable(vals(g)), None
        (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True, materialize_grads=True)
        return _comparable(vals(g)), _comparable(vals(gg))

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
def test_tangents_follow_torch(torch, name):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            tangent = lib.tensor(np.linspace(-1.0, 2.0, 12).reshape(3, 4))
            x = fwAD.make_dual(lib.tensor(DATA, dtype=lib.float64), tangent)
            out = GRADIENT_CALLS[name](lib, x)
            outs = out if isinstance(out, tuple) else (out,)
            return [_comparable(vals(fwAD.unpack_dual(o).tangent)) for o in outs]

    assert_same(torch, scenario)


def test_var_and_std_gradients_where_the_degrees_of_freedom_run_out(torch):
    def scenario(lib):
        x = lib.tensor([[2.0, 2.0], [1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = x.var(correction=4) + x.std(1, correction=2).sum() + x[0].std()
        (g,) = lib.autograd.grad(out, x)
        return _comparable(vals(g))

    assert_same(torch, scenario)


def test_one_unused_result_of_var_mean_gets_no_gradient(torch):
    def scenario(lib):
        x = lib.tensor(DATA, dtype=lib.float64, requires_grad=True)
        var_only = lib.autograd.grad(lib.var_mean(x, 1)[0].sum(), x)[0]
        mean_only = lib.autograd.grad(lib.std_mean(x, 0)[1].sum(), x)[0]
        return _comparable(vals(var_only)), _comparable(vals(mean_only))

    assert_same(torch, scenario)


# ---- nodes, saved fields and overloads ---------------------------------------------------

NODE_CALLS = {
    "prod": (lambda lib, x: x.prod(), "ProdBackward0"),
    "prod_dim": (lambda lib, x: x.prod(-1, True), "ProdBackward1"),
    "nansum": (lambda lib, x: x.nansum((0, 1)), "NansumBackward0"),
    "nansum_all": (lambda lib, x: x.nansum(), "NansumBackward0"),
    "nanmean": (lambda lib, x: x.nanmean(1), "DivBackward0"),
    "var": (lambda lib, x: x.var(), "VarBackward0"),
    "var_dim": (lambda lib, x: x.var(1), "VarBackward0"),
    "var_correction": (lambda lib, x: x.var(-1, correction=0, keepdim=True), "VarBackward0"),
    "std": (lambda lib, x: x.std(False), "StdBackward0"),
    "std_dim": (lambda lib, x: x.std([0], unbiased=True), "StdBackward0"),
    "var_mean": (lambda lib, x: lib.var_mean(x, 1, correction=2)[0], "VarMeanBackward0"),
    "var_mean_mean": (lambda lib, x: lib.var_mean(x)[1], "VarMeanBackward0"),
    "std_mean": (lambda lib, x: lib.std_mean(x, 1, True)[1], "StdMeanBackward0"),
}


@pytest.mark.parametrize("name", sorted(NODE_CALLS))
def test_node_names_and_saved_fields_match_torch(torch, name):
    call, node = NODE_CALLS[name]
    x_og = og.tensor(DATA, dtype=og.float64, requires_grad=True)
    x_t = torch.tensor(DATA, dtype=torch.float64, requires_grad=True)
    got, expected = call(og, x_og), call(torch, x_t)
    assert type(expected.grad_fn).__name__ == node
    assert type(got.grad_fn).__name__ == node
    assert_same_saved_fields(torch, got.grad_fn, expected.grad_fn, (x_og,), (x_t,), what=name)


def test_boolean_reductions_never_require_grad(torch):
    def scenario(lib):
        x = lib.tensor(DATA, requires_grad=True)
        outs = [x.all(), x.any(1), x.all((0,)), x.count_nonzero()]
        return [(o.requires_grad, o.grad_fn is None) for o in outs]

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.prod(),
        lambda lib, x: x.prod(1, dtype=lib.float64),
        lambda lib, x: x.nansum(),
        lambda lib, x: x.all(),
        lambda lib, x: x.all(1),
        lambda lib, x: x.any((0, 1)),
        lambda lib, x: x.any(dim=None),
        lambda lib, x: x.count_nonzero(),
        lambda lib, x: x.count_nonzero(1),
        lambda lib, x: x.count_nonzero([0, 1]),
        lambda lib, x: x.var(),
        lambda lib, x: x.var(True),
        lambda lib, x: x.var(1),
        lambda lib, x: x.var(1, correction=0),
        lambda lib, x: x.std(dim=(0,), keepdim=True),
        lambda lib, x: lib.var_mean(x),
        lambda lib, x: lib.std_mean(x, 0),
        lambda lib, x: lib.std_mean(x, False),
    ],
)
def test_a_dispatch_mode_sees_torchs_overloads(torch, call):
    assert_same(torch, lambda lib: aten_log(lib, lambda: call(lib, lib.tensor(DATA))))


def test_var_mean_and_std_mean_return_plain_tuples_and_are_functions_only(torch):
    def scenario(lib):
        x = lib.tensor(DATA)
        return (
            type(lib.var_mean(x)).__name__,
            type(lib.std_mean(x, 1)).__name__,
            hasattr(x, "var_mean"),
            hasattr(x, "std_mean"),
        )

    assert_same(torch, scenario)


# ---- out= ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.prod(x, 1, out=lib.empty(0)),
        lambda lib, x: lib.prod(x, 0, True, dtype=lib.float64, out=lib.empty(0, dtype=lib.float64)),
        lambda lib, x: lib.nansum(x, 1, out=lib.empty(0)),
        lambda lib, x: lib.nanmean(x, 0, out=lib.empty(0)),
        lambda lib, x: lib.all(x, out=lib.empty(0, dtype=lib.bool)),
        lambda lib, x: lib.all(x, 1, out=lib.empty(0, dtype=lib.bool)),
        lambda lib, x: lib.any(x, (0, 1), True, out=lib.empty(0, dtype=lib.bool)),
        lambda lib, x: lib.var(x, 1, out=lib.empty(0)),
        lambda lib, x: lib.var(x, out=lib.empty(0, dtype=lib.float64)),
        lambda lib, x: lib.var(x, 1, correction=0, out=lib.empty(0)),
        lambda lib, x: lib.std(x, [0], False, True, out=lib.empty(0)),
        lambda lib, x: lib.std(x, 1, correction=2, out=lib.empty(0)),
    ],
)
def test_out_variants_write_torch_values(torch, call):
    def scenario(lib):
        x = lib.tensor(DATA)
        out = call(lib, x)
        return _result(out), out._version

    assert_same(torch, scenario)


def test_out_refuses_inputs_that_require_grad(torch):
    assert_same_error(
        torch,
        lambda lib: lib.var(lib.tensor(DATA, requires_grad=True), 1, out=lib.empty(0)),
        RuntimeError,
        "don't support automatic differentiation",
    )


def test_a_float_out_of_var_refuses_an_integral_out(torch):
    assert_same_error(
        torch,
        lambda lib: lib.std(lib.tensor(DATA), 1, out=lib.empty(0, dtype=lib.int64)),
        RuntimeError,
        "can't be cast to the desired output type Long",
    )


def test_all_refuses_a_float_out():
    # torch: "all only supports bool tensor for result, got: Float"; opgrad refuses an out of
    # another dtype than the result's with the exact-dtype text
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype bool"):
        og.all(og.tensor(DATA), out=og.empty(0))


# ---- errors and warnings ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib: lib.tensor([1, 2]).var(), RuntimeError, "std and var only support floating"),
        (lambda lib: lib.std_mean(lib.tensor([1, 2])), RuntimeError, "std_mean only support"),
        (lambda lib: lib.var_mean(lib.tensor([1, 2])), RuntimeError, "var_mean only support"),
        (lambda lib: lib.tensor([1, 2]).nanmean(), RuntimeError, "nanmean(): expected input"),
        (lambda lib: lib.tensor(DATA).prod(2), IndexError, "Dimension out of range"),
        (lambda lib: lib.tensor(DATA).var(-3), IndexError, "Dimension out of range"),
        (lambda lib: lib.tensor(DATA).all(5), IndexError, "Dimension out of range"),
        (lambda lib: lib.tensor(DATA).any((0, -2)), RuntimeError, "dim 0 appears multiple"),
        (lambda lib: lib.tensor(DATA).count_nonzero((1, 1)), RuntimeError, "dim 1 appears"),
        (lambda lib: lib.tensor(DATA).nansum((0, 0)), RuntimeError, "dim 0 appears multiple"),
    ],
)
def test_bad_inputs_raise_torchs_errors(torch, call, exc_type, phrase):
    assert_same_error(torch, call, exc_type, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor(DATA).prod((0, 1)),
        lambda lib: lib.tensor(DATA).var(1, 0.5),
        lambda lib: lib.prod(lib.tensor(DATA), out=lib.empty(0)),
        lambda lib: lib.tensor(DATA).var(out=lib.empty(0)),
    ],
)
def test_calls_no_signature_takes_raise_type_errors(torch, call):
    def scenario(lib):
        try:
            call(lib)
        except TypeError as exc:
            return str(exc).splitlines()[0].replace("torch", "LIB").replace("opgrad", "LIB")
        return "no error"

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([1.0]).var(),
        lambda lib: lib.tensor([1.0, 2.0]).std(correction=3),
        lambda lib: lib.var_mean(lib.tensor(DATA), 1, correction=4),
    ],
)
def test_too_few_degrees_of_freedom_warn_as_torch(torch, call):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call(lib)
        outs = out if isinstance(out, tuple) else (out,)
        texts = [str(w.message).split(" (Triggered")[0] for w in caught]
        return [_comparable(vals(o)) for o in outs], texts

    assert_same(torch, scenario)
