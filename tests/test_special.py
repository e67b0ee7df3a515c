"""opgrad.special against torch.special, and sgn and sign (issue 15 point 1).

Values over dtypes and edge values (0, -0, poles, inf, NaN) for every function, out=
variants, node names and saved fields, the aten calls a dispatch mode sees forward and
backward, gradients and forward-mode tangents, and the errors. The functions torch
composes from other ops (expit is sigmoid, ndtr is erf with three arithmetic ops) record
those ops, as torch's do.

Accuracy: scipy computes the Bessel and Airy functions. torch's own kernels for these are
less accurate in float64 (bessel_j0 off by 2e-7 absolute past |x| = 8, airy_ai by 2e-5
relative; scipy's agree with mpmath to an ulp or two), so those compare to looser bounds,
listed in LOOSE. torch's OpInfo samples run in test_opinfo.py."""

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
EDGE = [0.0, -0.0, 0.3, -0.7, 0.5, 1.0, -1.0, 2.5, -2.5, 7.25, -3.0, 30.0, 1e-8, 9.5, -12.0]
EDGE += [INF, -INF, NAN, 0.999]
INTS = [0, 1, -2, 3, 7]

UNARY = (
    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 digamma entr erf erfc erfcx erfinv exp2 "
    "expit expm1 gammaln i0 i0e i1 i1e log1p log_ndtr logit modified_bessel_i0 "
    "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 ndtr ndtri psi round "
    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 sinc spherical_bessel_j0"
).split()
POLYNOMIALS = (
    "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v "
    "chebyshev_polynomial_w shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w hermite_polynomial_h "
    "hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p"
).split()
#: torch's kernel is the less accurate one (see the module's docstring): (rtol, atol)
LOOSE = {
    "airy_ai": (1e-4, 1e-12),
    "bessel_j0": (1e-5, 1e-6),
    "bessel_j1": (1e-5, 1e-6),
    "bessel_y0": (1e-5, 1e-6),
    "bessel_y1": (1e-5, 1e-6),
}
#: float32: torch evaluates log_ndtr's and erfcx's tails in float32 steps (2e-6 apart)
TOLERANCE = {"float64": (1e-12, 1e-300), "float32": (5e-6, 1e-37), "float16": (2e-3, 2e-7)}
DIFFERENTIABLE = "entr erfcx i0e i1e log_ndtr ndtri".split()


def _outcome(call, lib, dtype, data):
    return outcome_on_data(call, lib, data, dtype)


def _assert_close(got, expected, dtype, what, tolerance=None):
    rtol, atol = tolerance or TOLERANCE.get(dtype, TOLERANCE["float32"])
    assert_close_values(got, expected, rtol, atol, what)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "bool"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_dtypes_match_torch(torch, name, dtype):
    data = EDGE if dtype.startswith("float") else ([True, False] if dtype == "bool" else INTS)
    call = lambda lib, x: getattr(lib.special, name)(x)  # noqa: E731
    expected = _outcome(call, torch, dtype, data)
    got = _outcome(call, og, dtype, data)
    assert got[0] == expected[0], (got, expected)
    if expected[0] != "ok":
        assert got == expected
        return
    tolerance = LOOSE.get(name) if dtype == "float64" else None
    if dtype in ("float32", "int64") and name in LOOSE:
        tolerance = (2e-5, 1e-6)
    _assert_close(got[1], expected[1], dtype, f"{name} {dtype}", tolerance)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(torch, name, dtype):
    """Degrees below 0 (0), 0, 1, small and large (torch's closed forms for the Chebyshev
    kinds inside (-1, 1)), fractional degrees (truncated), at +-1, 0, inside and outside.
    Not NaN: torch's recurrences give NaN, 0 or uninitialised memory for a NaN x
    (opgrad gives NaN)."""
    x = [-1.0, -0.8, -0.3, 0.0, 0.25, 0.5, 0.9, 1.0, 1.7, -2.2]
    n = [-2.0, 0.0, 1.0, 2.0, 3.7, 5.0, 7.0, 9.0, 12.0, 20.0]
    xs, ns = np.meshgrid(np.array(x), np.array(n), indexing="ij")
    tolerance = (1e-9, 1e-9) if dtype == "float64" else (2e-5, 1e-5)
    for call in (
        lambda lib: getattr(lib.special, name)(
            lib.tensor(xs, dtype=getattr(lib, dtype)), lib.tensor(ns, dtype=getattr(lib, dtype))
        ),
        lambda lib: getattr(lib.special, name)(lib.tensor(x, dtype=getattr(lib, dtype)), 3),
        lambda lib: getattr(lib.special, name)(lib.tensor(x, dtype=getattr(lib, dtype)), n=11),
        lambda lib: getattr(lib.special, name)(0.5, lib.tensor(n, dtype=getattr(lib, dtype))),
    ):
        with np.errstate(all="ignore"):
            _assert_close(call(og), call(torch), dtype, name, tolerance)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_out_variants_of_every_overload(torch, name):
    def run(lib):
        fn = getattr(lib.special, name)
        x, n = lib.tensor([0.25, -0.5, 1.5]), lib.tensor([2.0, 3.0, 4.0])
        outs = [lib.empty(0), lib.empty(3), lib.empty(3, dtype=lib.float64)]
        fn(x, n, out=outs[0])
        fn(0.75, n, out=outs[1])
        fn(x, 5, out=outs[2])
        return [(o.tolist(), dtype_name(o.dtype)) for o in outs]

    got, expected = run(og), run(torch)
    for (g, gd), (e, ed) in zip(got, expected):
        assert gd == ed
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_polynomials_promote_as_torch(torch):
    def scenario(lib):
        x = lib.tensor([0.5, 2.0])
        k = lib.tensor([1, 3])
        results = [
            lib.special.chebyshev_polynomial_t(x, k),
            lib.special.legendre_polynomial_p(k, k),
            lib.special.hermite_polynomial_h(x.double(), 2),
            lib.special.laguerre_polynomial_l(2, k),
        ]
        return [(r.tolist(), dtype_name(r.dtype)) for r in results]

    assert scenario(og) == scenario(torch)


def test_every_function_of_torch_special_is_there(torch):
    assert sorted(og.special.__all__) == sorted(torch.special.__all__)


BINARY_CALLS = {
    "xlogy": lambda lib, a, b: lib.special.xlogy(a, b),
    "xlogy_self_scalar": lambda lib, a, b: lib.special.xlogy(2.5, b),
    "xlogy_other_scalar": lambda lib, a, b: lib.special.xlogy(a, 3),
    "xlog1py": lambda lib, a, b: lib.special.xlog1py(a, b),
    "xlog1py_self_scalar": lambda lib, a, b: lib.special.xlog1py(0.5, b),
    "xlog1py_other_scalar": lambda lib, a, b: lib.special.xlog1py(a, 2),
    "zeta": lambda lib, a, b: lib.special.zeta(a + 1.5, b),
    "zeta_self_scalar": lambda lib, a, b: lib.special.zeta(3, b),
    "zeta_other_scalar": lambda lib, a, b: lib.special.zeta(a + 1.5, 2),
    "gammainc": lambda lib, a, b: lib.special.gammainc(a, b),
    "gammaincc": lambda lib, a, b: lib.special.gammaincc(a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY_CALLS))
def test_binary_functions_values_nodes_and_gradients(torch, name):
    def run(lib):
        a = lib.tensor([0.5, 1.5, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.25, 2.0, 4.5], dtype=lib.float64, requires_grad=True)
        log = aten_log(lib, lambda: BINARY_CALLS[name](lib, a, b))
        y = BINARY_CALLS[name](lib, a, b)
        grads = []
        for leaf in (a, b):
            try:
                (g,) = lib.autograd.grad(y.sum(), leaf, retain_graph=True, allow_unused=True)
                grads.append(None if g is None else g.tolist())
            except RuntimeError as err:  # torch's "not implemented" for some inputs
                grads.append(str(err).replace("torch", "LIB").replace("opgrad", "LIB"))
        return y.tolist(), type(y.grad_fn).__name__, log, grads

    got, expected = run(og), run(torch)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1:3] == expected[1:3]
    for g, e in zip(got[3], expected[3]):
        if isinstance(e, list):
            np.testing.assert_allclose(g, e, rtol=1e-10)
        else:
            assert g == e


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "zeta", "gammainc", "gammaincc"])
def test_binary_functions_out(torch, name):
    def run(lib):
        fn = getattr(lib.special, name)
        a = lib.tensor([1.5, 2.5], dtype=lib.float64)
        outs = [lib.empty(0, dtype=lib.float64) for _ in range(3)]
        log = aten_log(lib, lambda: fn(a, a, out=outs[0]))
        if name in ("xlogy", "xlog1py", "zeta"):
            fn(a, 2, out=outs[1])
            fn(2, a, out=outs[2])
        return [o.tolist() for o in outs], log

    got, expected = run(og), run(torch)
    assert got[1] == expected[1]
    for g, e in zip(got[0], expected[0]):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_special_ops_are_no_top_level_functions(torch):
    for name in ("special_entr", "special_ndtr", "special_i1"):
        assert not hasattr(torch, name) and not hasattr(og, name)
        assert hasattr(og.ops.aten, name)


# ---- nodes, saved fields, backward calls ----------------------------------------------------


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_nodes_and_backward_calls_match_torch(torch, name):
    data = [0.3, 0.7, 1.5, -0.4] if name != "ndtri" else [0.1, 0.5, 0.9, 0.3]
    if name == "entr":
        data = [0.3, 0.7, 1.5, 2.0]

    def run(lib):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x)
        grad = lib.tensor([1.0, -2.0, 0.5, 3.0], dtype=lib.float64)
        log = aten_log(lib, lambda: lib.autograd.grad(y, x, grad, create_graph=True))
        (g,) = lib.autograd.grad(y, x, grad, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, retain_graph=True)
        return x, y, g, gg, log

    ox, oy, og_, ogg, olog = run(og)
    tx, ty, tg, tgg, tlog = run(torch)
    assert type(oy.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert_same_saved_fields(torch, oy.grad_fn, ty.grad_fn, (ox,), (tx,), what=name)
    assert olog == tlog
    np.testing.assert_allclose(og_.detach().tolist(), tg.detach().tolist(), rtol=1e-10)
    np.testing.assert_allclose(ogg.tolist(), tgg.tolist(), rtol=1e-8)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_tangents_match_torch(torch, name):
    data = [0.1, 0.5, 0.9, 0.3]

    def run(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(
                lib.tensor(data, dtype=lib.float64),
                lib.tensor([1.0, 2.0, -1.0, 0.5], dtype=lib.float64),
            )
            return fwAD.unpack_dual(getattr(lib.special, name)(x)).tangent.tolist()

    np.testing.assert_allclose(run(og), run(torch), rtol=1e-10)


@pytest.mark.parametrize(
    "name", ["bessel_j0", "modified_bessel_k1", "airy_ai", "chebyshev_polynomial_t"]
)
def test_functions_without_a_derivative_give_results_that_do_not_require_grad(torch, name):
    def run(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        args = (x, 3) if "polynomial" in name else (x,)
        y = getattr(lib.special, name)(*args)
        out = lib.empty(2)
        getattr(lib.special, name)(*args, out=out)  # accepted: nothing to differentiate
        return y.requires_grad, y.grad_fn, out.requires_grad

    assert run(og) == run(torch)


@pytest.mark.parametrize(
    "name, args",
    [
        ("expit", ()),
        ("ndtr", ()),
        ("psi", ()),
        ("gammaln", ()),
        ("round", ()),
        ("logit", (0.1,)),
        ("multigammaln", (2,)),
        ("softmax", (0,)),
        ("log_softmax", (0,)),
        ("logsumexp", (0,)),
        ("i1", ()),
        ("entr", ()),
    ],
)
def test_composites_record_torchs_ops_and_nodes(torch, name, args):
    def run(lib):
        x = lib.tensor([1.5, 2.5, 3.0], dtype=lib.float64, requires_grad=True)
        log = aten_log(lib, lambda: getattr(lib.special, name)(x, *args))
        y = getattr(lib.special, name)(x, *args)
        return log, type(y.grad_fn).__name__

    assert run(og) == run(torch)


def test_polygamma_and_round_take_torchs_arguments(torch):
    def run(lib):
        x = lib.tensor([1.25, 2.5, 3.0], dtype=lib.float64)
        return [
            lib.special.polygamma(2, x).tolist(),
            lib.special.round(x, decimals=1).tolist(),
            lib.special.softmax(x, 0, dtype=lib.float32).dtype == lib.float32,
            lib.special.logsumexp(x, [0], keepdim=True).tolist(),
            lib.special.log_softmax(x, dim=0).tolist(),
        ]

    got, expected = run(og), run(torch)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1:4] == expected[1:4]
    np.testing.assert_allclose(got[4], expected[4], rtol=1e-15)


# ---- out= -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["entr", "ndtr", "expit", "erfcx", "bessel_j0", "round"])
@pytest.mark.parametrize(
    "out_shape, out_dtype",
    [((3,), "float64"), ((0,), "float64"), ((2,), "float64"), ((3,), "int64"), ((3,), "float32")],
)
def test_out_variants_match_torch(torch, name, out_shape, out_dtype):
    def run(lib):
        x = lib.tensor([0.5, 1.5, 2.5], dtype=lib.float64)
        out = lib.zeros(out_shape, dtype=getattr(lib, out_dtype))
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                log = aten_log(lib, lambda: getattr(lib.special, name)(x, out=out))
            except Exception as exc:  # noqa: BLE001 - compared by type and text
                return type(exc).__name__, str(exc).replace("torch", "LIB").replace("opgrad", "LIB")
        values = np.round(np.asarray(out.tolist(), dtype=float), 6).tolist()
        log = [c for c in log if c != "aten.can_cast.default"]
        return values, dtype_name(out.dtype), log, [str(w.message)[:40] for w in caught]

    assert run(og) == run(torch)


def test_out_refuses_inputs_that_require_grad(torch):
    assert_same_error(
        torch,
        lambda lib: lib.special.entr(lib.tensor([0.5], requires_grad=True), out=lib.empty(1)),
        RuntimeError,
        "don't support automatic differentiation",
    )


def test_log1p_and_logsumexp_out(torch):
    def run(lib):
        x = lib.tensor([[0.5, 1.5], [2.0, -0.5]], dtype=lib.float64)
        a, b = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.float64)
        lib.log1p(x, out=a)
        lib.logsumexp(x, 1, out=b)
        return a.tolist(), b.tolist()

    assert run(og) == run(torch)


# ---- sgn, sign and the in-place functions ------------------------------------------------


def test_sgn_and_sign_give_zero_for_nan(torch):
    def run(lib):
        x = lib.tensor([1.5, -0.0, 0.0, -2.0, NAN, INF, -INF])
        return [
            [repr(v) for v in lib.sgn(x).tolist()],
            [repr(v) for v in lib.sign(x).tolist()],
            [repr(v) for v in x.clone().sgn_().tolist()],
            [repr(v) for v in x.clone().sign_().tolist()],
            lib.sign(lib.tensor([3, -1, 0])).tolist(),
        ]

    assert run(og) == run(torch)


def test_sgn_saves_self_and_result_and_its_gradient_is_zero(torch):
    def run(lib):
        x = lib.tensor([1.5, -2.0, 0.0], requires_grad=True)
        y = lib.sgn(x)
        log = aten_log(lib, lambda: lib.autograd.grad(y.sum(), x, retain_graph=True))
        (g,) = lib.autograd.grad(y.sum(), x, retain_graph=True)
        return type(y.grad_fn).__name__, (lib.zeros(3) + g).tolist(), log, x, y

    got, expected = run(og), run(torch)
    assert got[:3] == expected[:3]
    assert_same_saved_fields(
        torch, got[4].grad_fn, expected[4].grad_fn, (got[3],), (expected[3],), what="sgn"
    )


def test_sgn_and_sign_out_and_in_place(torch):
    def run(lib):
        x = lib.tensor([1.5, -2.0, 0.0])
        a, b = lib.empty(3), lib.empty(3)
        lib.sgn(x, out=a)
        lib.sign(x, out=b)
        leaf = lib.tensor([1.0, -1.0], requires_grad=True)
        y = leaf * 2
        y.sgn_()
        return a.tolist(), b.tolist(), type(y.grad_fn).__name__

    assert run(og) == run(torch)


@pytest.mark.parametrize("name", ["ceil_", "floor_", "round_", "rsqrt_", "log1p_"])
def test_in_place_functions(torch, name):
    def run(lib):
        x = lib.tensor([1.25, 2.5, 0.75])
        result = getattr(lib, name)(x)
        return result is x, x._version, x.tolist()

    got, expected = run(og), run(torch)
    assert got[:2] == expected[:2]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)  # float32 libm's last bit


def test_round_in_place_function_takes_decimals(torch):
    def run(lib):
        x = lib.tensor([1.25, 2.55, 0.75], dtype=lib.float64)
        lib.round_(x, decimals=1)
        return x.tolist()

    assert run(og) == run(torch)
