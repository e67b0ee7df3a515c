"""The unary math ops of issue 15 against torch: acos ... atanh and their arc* aliases,
sinh, cosh, tan, trunc, fix, frac, erf, erfc, erfinv, exp2, expm1, log2, log10, logit (eps),
lgamma, digamma, polygamma, mvlgamma, i0, sinc, deg2rad, rad2deg, positive, nan_to_num and
frexp.

Values over dtypes and edge values (0, -0, poles, inf, NaN), in-place and out= variants,
node names and saved fields, the aten calls a dispatch mode sees forward and backward (with
and without create_graph), first and second derivatives, forward-mode tangents, and the
errors. float64 values match torch to a few ulps (scipy's and torch's special functions are
different implementations); float32 to 1e-6 relative, since torch's vectorised libm and
numpy's differ in the last bit; float16 (computed in float32, rounded once, as torch's CPU
kernels) to a half-precision ulp or two. torch's OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    assert_close_values,
    outcome_on_data,
    aten_log,
    assert_same_error,
    assert_same_saved_fields,
    dtype_name,
)

INF, NAN = math.inf, math.nan
EDGE = [0.0, -0.0, 0.3, -0.7, 0.5, 1.0, -1.0, 2.5, -2.5, 7.25, -3.0, 30.0, 1e-8, -1e-30]
EDGE += [100.0, INF, -INF, NAN, 0.999, 1e4]
INTS = [0, 1, -2, 3, 7]

FLOAT_OPS = (
    "acos asin atan acosh asinh atanh arccos arcsin arctan arccosh arcsinh arctanh sinh cosh "
    "tan erf erfc erfinv exp2 expm1 log2 log10 logit lgamma digamma i0 sinc deg2rad rad2deg"
).split()
ALL_CALLS = {name: (lambda name: lambda lib, x: getattr(lib, name)(x))(name) for name in FLOAT_OPS}
ALL_CALLS.update(
    {
        "trunc": lambda lib, x: lib.trunc(x),
        "fix": lambda lib, x: lib.fix(x),
        "frac": lambda lib, x: lib.frac(x),
        "positive": lambda lib, x: lib.positive(x),
        "nan_to_num": lambda lib, x: lib.nan_to_num(x),
        "nan_to_num_args": lambda lib, x: x.nan_to_num(1.5, posinf=1e30, neginf=-2.0),
        "logit_eps": lambda lib, x: x.logit(0.2),
        "logit_negative_eps": lambda lib, x: lib.logit(x, -0.2),
        "polygamma_0": lambda lib, x: lib.polygamma(0, x),
        "polygamma_1": lambda lib, x: x.polygamma(1),
        "polygamma_2": lambda lib, x: lib.polygamma(2, x),
        "polygamma_5": lambda lib, x: lib.polygamma(5, x),
        "mvlgamma_1": lambda lib, x: lib.mvlgamma(x, 1),
        "mvlgamma_3": lambda lib, x: x.mvlgamma(p=3),
        "frexp_mantissa": lambda lib, x: lib.frexp(x).mantissa,
        "frexp_exponent": lambda lib, x: x.frexp()[1],
        "special_i1": lambda lib, x: lib.ops.aten.special_i1(x),
    }
)

TOLERANCE = {"float64": (1e-12, 1e-300), "float32": (1e-6, 1e-37), "float16": (2e-3, 2e-7)}


def _outcome(call, lib, data, dtype):
    return outcome_on_data(call, lib, data, dtype)


def _assert_close(got, expected, dtype, what):
    rtol, atol = TOLERANCE.get(dtype, TOLERANCE["float32"])
    assert_close_values(got, expected, rtol, atol, what, signed_zeros=True)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int32", "bool"])
@pytest.mark.parametrize("name", sorted(ALL_CALLS))
def test_values_and_dtypes_match_torch(torch, name, dtype):
    data = EDGE if dtype.startswith("float") else ([True, False] if dtype == "bool" else INTS)
    call = ALL_CALLS[name]
    expected = _outcome(call, torch, data, dtype)
    got = _outcome(call, og, data, dtype)
    assert got[0] == expected[0], (got, expected)
    if expected[0] != "ok":
        assert got == expected
        return
    if dtype == "float16" and name in ("polygamma_2", "polygamma_5"):
        # torch evaluates zeta in float16 arithmetic, step by step; opgrad in float32,
        # rounded once: a few float16 ulps apart, and apart where torch underflows
        np.testing.assert_allclose(
            got[1].float().tolist(), expected[1].float().tolist(), rtol=2e-2, atol=2e-6
        )
        return
    _assert_close(got[1], expected[1], dtype, f"{name} {dtype}")


def test_edge_values_float64_exactly_where_torch_is_exact(torch):
    """The poles, signed zeros and infinities torch's kernels special-case."""
    cases = {
        "digamma": [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN],
        "lgamma": [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN, 1.0, 2.0],
        "sinc": [0.0, -0.0, INF, NAN],
        "erfinv": [-1.0, 1.0, 1.5, -1.5, 0.0, -0.0],
        "logit": [0.0, 1.0, -0.5, 1.5],
        "frac": [INF, -INF, NAN, -0.0, 2.0, -2.5],
        "trunc": [INF, -INF, NAN, -0.5, 0.5],
        "atanh": [1.0, -1.0, 2.0],
        "acosh": [1.0, 0.5],
    }
    for name, data in cases.items():
        t = getattr(torch, name)(torch.tensor(data, dtype=torch.float64)).tolist()
        o = getattr(og, name)(og.tensor(data, dtype=og.float64)).tolist()
        assert [repr(v) for v in o] == [repr(v) for v in t], name
    for n in (1, 2, 3):
        data = [0.0, -0.0, -1.0, -3.0, INF, -INF, NAN]
        t = torch.polygamma(n, torch.tensor(data, dtype=torch.float64)).tolist()
        o = og.polygamma(n, og.tensor(data, dtype=og.float64)).tolist()
        assert [repr(v) for v in o] == [repr(v) for v in t], n


def test_empty_and_zero_dim(torch):
    for name in ("acos", "erf", "lgamma", "sinc", "trunc", "frac", "nan_to_num", "logit"):
        for shape in ((0,), (2, 0), ()):
            t = getattr(torch, name)(torch.full(shape, 0.25, dtype=torch.float64))
            o = getattr(og, name)(og.full(shape, 0.25, dtype=og.float64))
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.tolist(), t.tolist(), rtol=1e-12)
    t = torch.mvlgamma(torch.full((0, 3), 2.0), 2)
    o = og.mvlgamma(og.full((0, 3), 2.0), 2)
    assert tuple(o.shape) == tuple(t.shape)
    tm, te = torch.frexp(torch.zeros(0))
    om, oe = og.frexp(og.zeros(0))
    assert (dtype_name(om.dtype), dtype_name(oe.dtype)) == ("float32", "int32")


def test_positive_is_self(torch):
    x = og.tensor([1.0, -2.0], requires_grad=True)
    assert og.positive(x) is x and x.positive() is x
    assert torch.positive(torch.tensor([1, 2])).dtype == torch.int64
    assert og.positive(og.tensor([1, 2])).dtype == og.int64
    t = torch.tensor([1.0])
    assert aten_log(og, lambda: og.positive(x)) == aten_log(torch, lambda: torch.positive(t)) == []


# ---- in-place variants ------------------------------------------------------------------

INPLACE = {
    name: (lambda name: lambda x: getattr(x, name + "_")())(name)
    for name in FLOAT_OPS + ["trunc", "fix", "frac", "nan_to_num"]
}
INPLACE.update(
    {
        "logit_eps": lambda x: x.logit_(0.25),
        "polygamma_2": lambda x: x.polygamma_(2),
        "polygamma_1": lambda x: x.polygamma_(n=1),
        "mvlgamma_2": lambda x: x.mvlgamma_(2),
        "nan_to_num_args": lambda x: x.nan_to_num_(nan=2.0, posinf=3.0),
    }
)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_variants_match_torch(torch, name, dtype):
    data = [0.3, 0.75, 1.5, 2.0, NAN] if dtype.startswith("float") else [1, 2, 3]

    def run(lib):
        x = lib.tensor(data, dtype=getattr(lib, dtype))
        version = x._version
        try:
            with np.errstate(all="ignore"):
                r = INPLACE[name](x)
        except Exception as exc:  # noqa: BLE001
            return (type(exc).__name__, str(exc)), x
        assert r is x
        assert x._version == version + 1
        return ("ok", None), x

    (t_kind, t_err), t_x = run(torch)
    (o_kind, o_err), o_x = run(og)
    assert (o_kind, o_err) == (t_kind, t_err)
    _assert_close(o_x, t_x, dtype, name)


def test_inplace_on_a_leaf_that_requires_grad_is_refused(torch):
    def scenario(lib):
        lib.tensor([0.5], requires_grad=True).acos_()

    assert_same_error(torch, scenario, RuntimeError, "a leaf Variable that requires grad")


# ---- out= variants ------------------------------------------------------------------------

OUT_CALLS = {
    name: (lambda name: lambda lib, x, out: getattr(lib, name)(x, out=out))(name)
    for name in FLOAT_OPS + ["trunc", "fix", "frac", "nan_to_num"]
}
OUT_CALLS.update(
    {
        "logit_eps": lambda lib, x, out: lib.logit(x, 0.1, out=out),
        "polygamma_3": lambda lib, x, out: lib.polygamma(3, x, out=out),
        "mvlgamma_2": lambda lib, x, out: lib.mvlgamma(x, 2, out=out),
        "nan_to_num_args": lambda lib, x, out: lib.nan_to_num(x, 0.5, out=out),
        "special_i1": lambda lib, x, out: lib.ops.aten.special_i1.out(x, out=out),
    }
)


@pytest.mark.parametrize(
    "dtypes",
    [
        ("float32", "float32"),
        ("float32", "float64"),
        ("float64", "float32"),
        ("int64", "float32"),
        ("int64", "int64"),
        ("float32", "int64"),
    ],
)
@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_variants_match_torch(torch, name, dtypes):
    in_dtype, out_dtype = dtypes
    data = [0.3, 0.75, 1.5, 2.0] if in_dtype.startswith("float") else [1, 2, 3, 4]

    def run(lib):
        x = lib.tensor(data, dtype=getattr(lib, in_dtype))
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        try:
            with np.errstate(all="ignore"):
                r = OUT_CALLS[name](lib, x, out)
        except Exception as exc:  # noqa: BLE001
            return (type(exc).__name__, str(exc).replace("torch.", "LIB.")), out
        assert r is out
        return ("ok", None), out

    (t_kind, t_err), t_out = run(torch)
    (o_kind, o_err), o_out = run(og)
    assert (o_kind, o_err) == (t_kind, t_err)
    if t_kind != "ok":
        # torch has resized out by the time frac's kernel refuses integers; opgrad refuses
        # first and leaves out as it was
        assert o_out.numel() == 0 or tuple(t_out.shape) == tuple(o_out.shape)
        return
    # computed in the input's (float) type, then cast into out
    _assert_close(o_out, t_out, in_dtype if in_dtype.startswith("float") else "float32", name)


def test_frexp_out(torch):
    def run(lib, mantissa_dtype, exponent_dtype):
        x = lib.tensor([3.0, -0.5, 0.0, 1e-40])
        m = lib.empty(0, dtype=getattr(lib, mantissa_dtype))
        e = lib.empty(0, dtype=getattr(lib, exponent_dtype))
        try:
            r = lib.frexp(x, out=(m, e))
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc)
        assert r[0] is m and r[1] is e
        return m.tolist(), e.tolist(), type(r).__name__

    for dtypes in (("float32", "int32"), ("float64", "int32"), ("float32", "int64")):
        assert run(og, *dtypes) == run(torch, *dtypes), dtypes


def test_out_refuses_inputs_that_require_grad(torch):
    def scenario(lib):
        lib.erf(lib.ones(2, requires_grad=True), out=lib.empty(2))

    assert_same_error(torch, scenario, RuntimeError, "don't support automatic differentiation")


# ---- errors -----------------------------------------------------------------------------

ERRORS = [
    (lambda lib: lib.polygamma(-1, lib.ones(2)), RuntimeError, "does not support negative n"),
    (lambda lib: lib.ones(2).polygamma_(-2), RuntimeError, "does not support negative n"),
    (lambda lib: lib.mvlgamma(lib.ones(2), 0), RuntimeError, "p has to be greater than"),
    (lambda lib: lib.tensor([True]).mvlgamma(1), RuntimeError, "may not be a boolean"),
    (lambda lib: lib.frexp(lib.tensor([1, 2])), RuntimeError, "only supports floating-point"),
    (lambda lib: lib.frac(lib.tensor([1, 2])), NotImplementedError, "frac_cpu"),
    (lambda lib: lib.tensor([True]).frac_(), NotImplementedError, "frac_cpu"),
    (lambda lib: lib.trunc(lib.tensor([True])), NotImplementedError, "trunc_vml_cpu"),
    (lambda lib: lib.fix(lib.tensor([True])), NotImplementedError, "trunc_vml_cpu"),
    (lambda lib: lib.positive(lib.tensor([True])), RuntimeError, "on a bool tensor"),
    (lambda lib: lib.tensor([1, 2]).acos_(), RuntimeError, "can't be cast"),
    (lambda lib: lib.tensor([1, 2]).deg2rad_(), RuntimeError, "can't be cast"),
    (lambda lib: lib.tensor([True]).lgamma_(), RuntimeError, "can't be cast"),
    (
        lambda lib: lib.nan_to_num(lib.ones(2), out=lib.empty(2, dtype=lib.float64)),
        RuntimeError,
        "dtype of out",
    ),
    (
        lambda lib: lib.trunc(lib.ones(2), out=lib.empty(2, dtype=lib.float64)),
        RuntimeError,
        "Found dtype Double but expected Float",
    ),
    (
        lambda lib: lib.erf(lib.ones(2), out=lib.empty(2, dtype=lib.int64)),
        RuntimeError,
        "can't be cast to the desired output type Long",
    ),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(torch, index):
    scenario, exc_type, phrase = ERRORS[index]
    assert_same_error(torch, scenario, exc_type, phrase)


def test_refused_inplace_leaves_self_unchanged():
    x = og.tensor([1, 2])
    with pytest.raises(RuntimeError):
        x.acos_()
    assert x.tolist() == [1, 2] and x._version == 0


# ---- autograd: nodes, saved fields, aten calls, derivatives ------------------------------

GRAD_DATA = [0.3, 0.55, -0.45, 0.8]
GRAD_CALLS = {
    "acos": lambda lib, x: x.acos(),
    "asin": lambda lib, x: lib.asin(x),
    "atan": lambda lib, x: x.atan(),
    "acosh": lambda lib, x: (x + 2).acosh(),
    "asinh": lambda lib, x: x.asinh(),
    "atanh": lambda lib, x: x.atanh(),
    "arccos": lambda lib, x: x.arccos(),
    "arcsin": lambda lib, x: lib.arcsin(x),
    "arctan": lambda lib, x: x.arctan(),
    "arccosh": lambda lib, x: lib.arccosh(x + 2),
    "arcsinh": lambda lib, x: x.arcsinh(),
    "arctanh": lambda lib, x: lib.arctanh(x),
    "arccos_": lambda lib, x: (x * 1).arccos_(),
    "acosh_": lambda lib, x: (x + 2).acosh_(),
    "arcsinh_": lambda lib, x: (x * 1).arcsinh_(),
    "arctanh_": lambda lib, x: (x * 1).arctanh_(),
    "sinh": lambda lib, x: x.sinh(),
    "cosh": lambda lib, x: x.cosh(),
    "tan": lambda lib, x: x.tan(),
    "tan_": lambda lib, x: (x * 1).tan_(),
    "trunc": lambda lib, x: x.trunc(),
    "fix": lambda lib, x: x.fix(),
    "fix_": lambda lib, x: (x * 2).fix_(),
    "frac": lambda lib, x: (x * 3).frac(),
    "erf": lambda lib, x: x.erf(),
    "erfc": lambda lib, x: x.erfc(),
    "erfinv": lambda lib, x: x.erfinv(),
    "erfinv_": lambda lib, x: (x * 1).erfinv_(),
    "exp2": lambda lib, x: x.exp2(),
    "expm1": lambda lib, x: x.expm1(),
    "expm1_": lambda lib, x: (x * 1).expm1_(),
    "log2": lambda lib, x: (x + 1).log2(),
    "log10": lambda lib, x: (x + 1).log10(),
    "logit": lambda lib, x: x.logit(),
    "logit_eps": lambda lib, x: x.logit(0.35),
    "logit_": lambda lib, x: (x * 1).logit_(0.1),
    "lgamma": lambda lib, x: x.lgamma(),
    "digamma": lambda lib, x: x.digamma(),
    "digamma_": lambda lib, x: (x * 1).digamma_(),
    "polygamma_0": lambda lib, x: lib.polygamma(0, x),
    "polygamma_2": lambda lib, x: x.polygamma(2),
    "polygamma_inplace": lambda lib, x: (x * 1).polygamma_(3),
    "mvlgamma": lambda lib, x: (x + 3).mvlgamma(3),
    "mvlgamma_": lambda lib, x: (x + 3).mvlgamma_(2),
    "i0": lambda lib, x: x.i0(),
    "special_i1": lambda lib, x: lib.ops.aten.special_i1(x),
    "sinc": lambda lib, x: x.sinc(),
    "sinc_at_zero": lambda lib, x: (x * 0).sinc(),
    "deg2rad": lambda lib, x: x.deg2rad(),
    "rad2deg_": lambda lib, x: (x * 1).rad2deg_(),
    "nan_to_num": lambda lib, x: (x / (x - 0.3)).nan_to_num(),
    "nan_to_num_": lambda lib, x: (x.log() * 1).nan_to_num_(neginf=0.0),
    "frexp": lambda lib, x: lib.frexp(x * 10).mantissa,
    "positive": lambda lib, x: x.positive(),
}


def _leaf(lib):
    return lib.tensor(GRAD_DATA, dtype=lib.float64, requires_grad=True)


#: torch does not differentiate these (derivatives.yaml: not_implemented)
NOT_DIFFERENTIATED = {"acosh_", "arcsinh_", "arctanh_"}
DIFFERENTIATED = sorted(set(GRAD_CALLS) - NOT_DIFFERENTIATED)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIATED))
def test_inplace_inverse_hyperbolics_are_not_differentiated_as_in_torch(torch, name):
    call = GRAD_CALLS[name]

    def backward(lib):
        call(lib, _leaf(lib)).sum().backward()

    assert_same_error(torch, backward, NotImplementedError, "is not implemented")

    def forward_mode(lib):
        with lib.autograd.forward_ad.dual_level():
            primal = lib.tensor(GRAD_DATA, dtype=lib.float64)
            call(lib, lib.autograd.forward_ad.make_dual(primal, lib.ones_like(primal)))

    assert_same_error(torch, forward_mode, NotImplementedError, "does not support it")


@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_node_and_saved_fields_match_torch(torch, name):
    call = GRAD_CALLS[name]
    tx, ox = _leaf(torch), _leaf(og)
    with np.errstate(all="ignore"):
        t, o = call(torch, tx), call(og, ox)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    assert_same_saved_fields(torch, o.grad_fn, t.grad_fn, (ox,), (tx,), what=name)


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_aten_calls_forward_and_backward_match_torch(torch, name):
    call = GRAD_CALLS[name]

    def logs(lib):
        x = _leaf(lib)
        with np.errstate(all="ignore"):
            forward = aten_log(lib, lambda: call(lib, x))
            y = call(lib, x)
        g = lib.ones_like(y)
        backward = aten_log(lib, lambda: lib.autograd.grad(y, x, g, retain_graph=True))
        graph = aten_log(lib, lambda: lib.autograd.grad(y, x, g, create_graph=True))
        return forward, backward, graph

    assert logs(og) == logs(torch)


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_first_and_second_derivatives_match_torch(torch, name):
    call = GRAD_CALLS[name]

    def derivatives(lib):
        x = _leaf(lib)
        with np.errstate(all="ignore"):
            y = call(lib, x)
            w = lib.tensor([0.5, -1.0, 2.0, 1.5], dtype=lib.float64)
            (g,) = lib.autograd.grad(y, x, w, create_graph=True)
            if not g.requires_grad:
                return g.tolist(), None
            (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
        return g.tolist(), None if gg is None else gg.tolist()

    got, expected = derivatives(og), derivatives(torch)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10, atol=1e-12)
    if expected[1] is None:
        assert got[1] is None
    else:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_forward_mode_tangents_match_torch(torch, name):
    call = GRAD_CALLS[name]

    def tangent(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            primal = lib.tensor(GRAD_DATA, dtype=lib.float64)
            direction = lib.tensor([1.0, -0.5, 2.0, 0.25], dtype=lib.float64)
            x = fwAD.make_dual(primal, direction)
            with np.errstate(all="ignore"):
                y = call(lib, x)
            out = fwAD.unpack_dual(y)
            return out.primal.tolist(), None if out.tangent is None else out.tangent.tolist()

    got, expected = tangent(og), tangent(torch)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-300)
    if expected[1] is None:
        assert got[1] is None
    else:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-12)


def test_aliases_are_their_ops_to_a_dispatch_mode(torch):
    for alias, op in [("arccos", "acos"), ("arctanh", "atanh"), ("fix", "trunc")]:
        for lib in (og, torch):
            x = lib.tensor([0.25])
            assert aten_log(lib, lambda: getattr(lib, alias)(x)) == [f"aten.{op}.default"]
            assert aten_log(lib, lambda: getattr(x, alias + "_")()) == [f"aten.{op}_.default"]
            out = lib.empty(1)
            log = aten_log(lib, lambda: getattr(lib, alias)(x, out=out))
            assert log == [f"aten.{op}.out"]
    assert og.ops.aten.arccos.default._schema.name == "aten::arccos"


def test_schemas_match_torch(torch):
    names = [
        ("polygamma", "default"),
        ("polygamma_", "default"),
        ("polygamma", "out"),
        ("mvlgamma", "out"),
        ("logit", "out"),
        ("logit_backward", "default"),
        ("nan_to_num_", "default"),
        ("frexp", "Tensor_out"),
        ("special_i1", "default"),
        ("positive", "default"),
        ("fix", "out"),
        ("arcsinh_", "default"),
    ]
    for op, overload in names:
        got = str(getattr(getattr(og.ops.aten, op), overload)._schema)
        expected = str(getattr(getattr(torch.ops.aten, op), overload)._schema)
        assert got == expected, op


def test_logit_backward_op_matches_torch(torch):
    x = [-0.1, 0.0, 0.3, 1.0, 1.2, NAN]
    for eps in (None, 0.2, -1.0):
        t = torch.ops.aten.logit_backward(
            torch.ones(6, dtype=torch.float64), torch.tensor(x, dtype=torch.float64), eps
        )
        o = og.ops.aten.logit_backward(
            og.ones(6, dtype=og.float64), og.tensor(x, dtype=og.float64), eps
        )
        assert [repr(v) for v in o.tolist()] == [repr(v) for v in t.tolist()], eps


KEYWORD_CALLS = [
    "L.polygamma(2, input=x)",
    "L.polygamma(n=2, input=x)",
    "L.polygamma(2, input=x, out=L.empty(2))",
    "x.polygamma(2)",
    "x.polygamma(n=1)",
    "x.polygamma()",
    "x.polygamma(1.5)",
    "x.polygamma(1, 2)",
    "x.polygamma_(2)",
    "L.mvlgamma(input=x, p=2)",
    "L.logit(x, eps=0.1)",
    "L.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0)",
    "L.frexp(input=x)",
    "L.fix(input=x)",
    "L.arccos(input=x)",
    "L.erfinv(x, out=L.empty(0))",
]


@pytest.mark.parametrize("call", KEYWORD_CALLS)
def test_python_signatures_match_torch(torch, call):
    """torch's Python signatures: a Tensor self is "input" wherever it stands, and
    Tensor.polygamma binds self to polygamma's second argument."""

    def outcome(lib):
        x = lib.tensor([1.5, 2.5])
        try:
            r = eval(call, {"L": lib, "x": x})
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc).replace("torch", "LIB").replace("opgrad", "LIB")
        r = r[0] if isinstance(r, tuple) else r
        return "ok", [repr(v) for v in np.round(np.asarray(r.tolist(), dtype=float), 5)]

    assert outcome(og) == outcome(torch)


@pytest.mark.parametrize("name", ["acos_", "atanh_", "erf_", "trunc_", "logit_", "nan_to_num_"])
def test_inplace_functions_match_torch(torch, name):
    """torch.acos_(x): the in-place variants torch has as functions (not erfinv_, lgamma_,
    digamma_, polygamma_, mvlgamma_, which are methods only)."""

    def run(lib):
        x = lib.tensor([0.25, 0.5], dtype=lib.float64)
        r = getattr(lib, name)(x)
        assert r is x
        return x.tolist()

    assert run(og) == pytest.approx(run(torch), rel=1e-15)
    for method_only in ("erfinv_", "lgamma_", "digamma_", "polygamma_", "mvlgamma_"):
        assert not hasattr(torch, method_only) and not hasattr(og, method_only)
