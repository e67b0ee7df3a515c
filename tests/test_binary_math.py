"""The binary math ops of issue 15 against torch: atan2 (arctan2), hypot, logaddexp,
logaddexp2, copysign, heaviside, nextafter, ldexp, fmod, remainder, floor_divide,
true_divide, addcmul, addcdiv, lerp, float_power, igamma, igammac and the aten ops
special_xlog1py and special_zeta (every overload), xlogy's overloads, and div's rounding
modes.

Values and result dtypes over dtype pairs (ints, bool, float16/32/64, wrapped numbers,
0-dim tensors), edge values (signed zeros, NaN, zero divisors), in-place and out= variants
and their refusals, node names and saved fields, first and second derivatives,
forward-mode tangents, and the aten calls a dispatch mode sees forward and backward.
torch's OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same_error, assert_same_saved_fields, dtype_name

NAN = math.nan


def _env(lib):
    return dict(
        a=lib.tensor([5, -3, 0, 7, -7]),
        b=lib.tensor([2, 2, -3, -2, -2]),
        z=lib.tensor([2, 0, 1, 1, 1]),
        f=lib.tensor([1.5, -2.0, 0.0, -0.0, NAN]),
        g=lib.tensor([0.5, 3.0, -1.0, 2.0, 1.0]),
        d=lib.tensor([1.5, -2.0, 0.0, -0.0, 7.25], dtype=lib.float64),
        e=lib.tensor([-0.5, 3.0, -1.0, 2.0, 1e-3], dtype=lib.float64),
        h=lib.tensor([1.5, -2.0, 0.0, 65000, 3], dtype=lib.half),
        bo=lib.tensor([True, False, True, False, True]),
        i8=lib.tensor([1, 2, 3, -4, 5], dtype=lib.int8),
        s0=lib.tensor(2.5),
        p=lib.tensor([0.5, 1.0, 2.0, 3.0, 10.0], dtype=lib.float64),
        inf=math.inf,
        aten=lib.ops.aten,
    )


def _outcome(lib, text):
    try:
        with np.errstate(all="ignore"):
            return "ok", eval(text, {"lib": lib, **_env(lib)})  # noqa: S307 - test table
    except Exception as exc:  # noqa: BLE001 - compared by type and text
        return type(exc).__name__, str(exc).replace("torch", "LIB").replace("opgrad", "LIB")


def _assert_same_outcome(torch, text, rtol=1e-6):
    expected, got = _outcome(torch, text), _outcome(og, text)
    assert got[0] == expected[0], (text, got, expected)
    if expected[0] != "ok":
        assert got == expected, text
        return
    e, g = expected[1], got[1]
    assert dtype_name(g.dtype) == dtype_name(e.dtype), text
    assert tuple(g.shape) == tuple(e.shape), text
    if dtype_name(e.dtype) != "float64":
        rtol = max(rtol, 1e-6)
    ev = np.asarray(e.detach().tolist(), dtype=np.float64)
    gv = np.asarray(g.detach().tolist(), dtype=np.float64)
    np.testing.assert_allclose(gv, ev, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=text)
    zero = ev == 0
    assert (np.signbit(ev[zero]) == np.signbit(gv[zero])).all(), f"{text}: signed zeros"


BINARY = (
    "atan2 arctan2 hypot logaddexp logaddexp2 copysign heaviside nextafter ldexp fmod "
    "remainder floor_divide true_divide igamma igammac float_power xlogy maximum minimum"
).split()
PAIRS = "a,b a,z f,g d,e h,h h,a a,f bo,bo i8,a f,s0 s0,d d,f p,e".split()
SCALARS = ["2", "-2", "2.5", "0", "True", "-inf"]


def _binary_cases(op):
    cases = [f"lib.{op}({pair})" for pair in PAIRS]
    for s in SCALARS:
        cases += [f"lib.{op}(a,{s})", f"lib.{op}(f,{s})", f"lib.{op}({s},g)", f"a.{op}({s})"]
    cases += [
        f"f.clone().{op}_(g)",
        f"a.clone().{op}_(b)",
        f"a.clone().{op}_(f)",
        f"f.clone().{op}_(2)",
        f"d.clone().{op}_(e)",
        f"lib.{op}(f,g,out=lib.empty(5))",
        f"lib.{op}(a,b,out=lib.empty(5,dtype=lib.int64))",
        f"lib.{op}(f,g,out=lib.empty(5,dtype=lib.int64))",
        f"lib.{op}(f,g,out=lib.empty(5,dtype=lib.float64))",
        f"lib.{op}(f,g,out=lib.empty(0))",
        f"lib.{op}(lib.ones(2,3),lib.ones(4))",
        f"lib.{op}(lib.ones(2,1),lib.ones(3))",
        f"lib.{op}(lib.ones(0,3),lib.ones(3))",
    ]
    return cases


@pytest.mark.parametrize("op", BINARY)
def test_values_dtypes_variants_and_errors_match_torch(torch, op):
    for text in _binary_cases(op):
        _assert_same_outcome(torch, text)


DIVISION_CASES = (
    [
        f"lib.div({pair},rounding_mode={mode})"
        for mode in ("None", "'trunc'", "'floor'")
        for pair in "a,b a,z f,g d,e h,h h,a a,2 a,-2 a,0 f,0 f,-0. a,f bo,bo a,2.5 i8,i8 a,-3".split()
    ]
    + [
        f"{call}"
        for mode in ("None", "'trunc'", "'floor'")
        for call in (
            f"lib.div(a,b,rounding_mode={mode},out=lib.empty(5,dtype=lib.int64))",
            f"lib.div(a,b,rounding_mode={mode},out=lib.empty(5))",
            f"lib.div(f,g,rounding_mode={mode},out=lib.empty(5,dtype=lib.int64))",
            f"a.clone().div_(b,rounding_mode={mode})",
            f"a.clone().div_(0,rounding_mode={mode})",
            f"f.clone().div_(g,rounding_mode={mode})",
        )
    ]
    + [
        "lib.div(a,b,rounding_mode='round')",
        "lib.floor_divide(a,0)",
        "lib.fmod(a,0)",
        "lib.remainder(a,0)",
        "lib.remainder(a,z)",
        "lib.fmod(a,z)",
        "lib.remainder(-7,b)",
        "lib.remainder(2.5,g)",
        "lib.remainder(True,a)",
        "lib.fmod(a,2.5)",
        "lib.remainder(d,-0.)",
        "lib.fmod(d,inf)",
        "lib.remainder(d,inf)",
        "lib.remainder(d,-inf)",
        "lib.floor_divide(d,inf)",
        "lib.floor_divide(-d,inf)",
    ]
)


@pytest.mark.parametrize("text", DIVISION_CASES)
def test_division_family_matches_torch(torch, text):
    _assert_same_outcome(torch, text)


TERNARY = [
    f"lib.{op}({args})"
    for op in ("addcmul", "addcdiv")
    for args in (
        "f,f,g",
        "f,g,g,value=2",
        "a,a,b",
        "a,a,b,value=2",
        "a,a,b,value=2.5",
        "d,f,g",
        "h,h,h,value=0.5",
        "bo,bo,bo",
        "a,f,g",
        "f,a,b",
        "f,g,g,value=True",
        "lib.ones(2,1),lib.ones(3),lib.ones(2,3)",
        "f,g,g,value=2,out=lib.empty(5)",
        "f,g,g,out=lib.empty(5,dtype=lib.int64)",
    )
] + [
    "f.clone().addcmul_(f,g,value=3)",
    "f.clone().addcdiv_(f,g,value=3)",
    "a.clone().addcmul_(f,g)",
    "f.clone().addcmul_(lib.ones(2,5),g)",
    "d.clone().float_power_(2)",
    "f.clone().float_power_(2)",
    "f.clone().float_power_(g)",
    "d.clone().float_power_(g)",
    "lib.float_power(f,g,out=lib.empty(5))",
    "lib.float_power(f,g,out=lib.empty(5,dtype=lib.float64))",
    "lib.float_power(2,g,out=lib.empty(5,dtype=lib.float64))",
    "lib.float_power(f,2,out=lib.empty(5,dtype=lib.float64))",
    "lib.float_power(a,-2)",
    "lib.pow(d,e,out=lib.empty(5,dtype=lib.float64))",
    "lib.pow(2,d,out=lib.empty(5,dtype=lib.float64))",
    "lib.pow(a,b,out=lib.empty(5))",
    "lib.pow(2,a,out=lib.empty(0,dtype=lib.int64))",
    "lib.float_power(bo,a)",
    "lib.lerp(f,g,0.3)",
    "lib.lerp(f,g,g)",
    "lib.lerp(f,d,0.5)",
    "f.clone().lerp_(g,2.5)",
    "lib.lerp(f,g,0.3,out=lib.empty(5))",
    "lib.igamma(p,e)",
    "lib.igammac(p,e)",
    "lib.igamma(lib.tensor([0.,0.,1.,-1.,inf,2.]),lib.tensor([0.,1.,0.,1.,1.,inf]))",
    "lib.igammac(lib.tensor([0.,0.,1.,-1.,inf,2.]),lib.tensor([0.,1.,0.,1.,1.,inf]))",
    "p.clone().igamma_(e)",
    "lib.igammac(p,e,out=lib.empty(5,dtype=lib.float64))",
    "lib.heaviside(f,g)",
    "lib.heaviside(a,b)",
    "lib.heaviside(a,f)",
    "lib.heaviside(f,g,out=lib.empty(5,dtype=lib.float64))",
    "lib.copysign(a,-0.)",
    "lib.copysign(f,-0.,out=lib.empty(5))",
    "f.clone().copysign_(-1)",
    "lib.nextafter(h,lib.zeros(5,dtype=lib.half))",
    "lib.nextafter(lib.tensor([0.,-0.,1.]),lib.tensor([1.,-1.,1.]))",
    "lib.ldexp(h,lib.tensor([20,-30,1,1,2]))",
    "lib.ldexp_(f.clone(),g)",
    "lib.ldexp(f,g,out=lib.empty(5,dtype=lib.int64))",
    "a.clone().ldexp_(b)",
    "lib.atan2(lib.tensor([0.,-0.,0.,-0.]),lib.tensor([0.,0.,-0.,-0.]))",
    "lib.arctan2(f,g,out=lib.empty(5))",
    "f.clone().arctan2_(g)",
    "lib.hypot(lib.tensor([inf,NAN]),lib.tensor([NAN,inf]))".replace("NAN", "float('nan')"),
    "lib.logaddexp(lib.tensor([inf,-inf,-inf]),lib.tensor([inf,-inf,1.]))",
    "lib.logaddexp2(lib.tensor([inf,-inf,-inf]),lib.tensor([inf,-inf,1.]))",
    "lib.true_divide(a,b)",
    "lib.true_divide(a,2)",
    "a.clone().true_divide_(b)",
    "lib.true_divide(f,g,out=lib.empty(5))",
    # the aten-only overloads opgrad.special will expose
    "aten.special_xlog1py(f,g)",
    "aten.special_xlog1py(a,b)",
    "aten.special_xlog1py(lib.tensor([0.,0.,1.,2.]),lib.tensor([-1.,float('nan'),-1.,-2.]))",
    "aten.special_xlog1py.self_scalar(2,g)",
    "aten.special_xlog1py.other_scalar(f,-1)",
    "aten.special_xlog1py.out(f,g,out=lib.empty(5))",
    "aten.special_xlog1py.self_scalar_out(0.5,g,out=lib.empty(5))",
    "aten.special_xlog1py.other_scalar_out(f,3,out=lib.empty(5))",
    "aten.special_zeta(p,e)",
    "aten.special_zeta(a,b)",
    "aten.special_zeta(h,h)",
    "aten.special_zeta(lib.tensor([1.,0.5,2.,2.,3.]),lib.tensor([1.,1.,0.,-1.,-1.5]))",
    "aten.special_zeta.self_scalar(2.5,p)",
    "aten.special_zeta.other_scalar(p,2)",
    "aten.special_zeta.out(p,e,out=lib.empty(5,dtype=lib.float64))",
    "aten.special_zeta.self_scalar_out(3,p,out=lib.empty(5,dtype=lib.float64))",
    "aten.special_zeta.other_scalar_out(p,3,out=lib.empty(5,dtype=lib.float64))",
    "aten.remainder.Scalar_Tensor(3,a)",
    "lib.xlogy(2,g,out=lib.empty(5))",
    "lib.xlogy(f,2,out=lib.empty(5))",
    "f.clone().xlogy_(-1)",
    "lib.xlogy(a,3)",
    "lib.xlogy(0,g)",
    "aten.floor_divide.Scalar(a,2)",
    "aten.true_divide.Scalar(a,2)",
]


@pytest.mark.parametrize("text", TERNARY)
def test_other_calls_match_torch(torch, text):
    _assert_same_outcome(torch, text, rtol=1e-12 if "zeta" in text or "igamma" in text else 1e-6)


# ---- autograd ---------------------------------------------------------------------------

X = [1.5, -2.0, 0.3, 2.5, 0.7]
Y = [0.5, 3.0, -1.0, 2.0, 1.25]
XP = [1.5, 2.0, 0.3, 2.5, 0.7]
YP = [0.5, 3.0, 1.0, 2.0, 1.25]


def _special(lib, name, overload=None):
    if lib is og:
        op = getattr(og.ops.aten, name)
        return getattr(op, overload) if overload else op
    return getattr(lib.special, name[len("special_") :])


GRAD_CASES = {
    "atan2": (lambda L, x, y: L.atan2(x, y), X, Y),
    "arctan2": (lambda L, x, y: x.arctan2(y), X, Y),
    "atan2_zero": (lambda L, x, y: L.atan2(x * 0, y * 0), X, Y),
    "hypot": (lambda L, x, y: L.hypot(x, y), X, Y),
    "logaddexp": (lambda L, x, y: L.logaddexp(x, y), X, Y),
    "logaddexp2": (lambda L, x, y: x.logaddexp2(y), X, Y),
    "copysign": (lambda L, x, y: L.copysign(x, y), X, Y),
    "copysign_scalar": (lambda L, x, y: L.copysign(x, -2.0) + y, X, Y),
    "nextafter": (lambda L, x, y: L.nextafter(x, y), X, Y),
    "ldexp": (lambda L, x, y: L.ldexp(x, y), X, Y),
    "fmod": (lambda L, x, y: L.fmod(x, y), X, Y),
    "fmod_scalar": (lambda L, x, y: L.fmod(x, 1.5) * y, X, Y),
    "remainder": (lambda L, x, y: L.remainder(x, y), X, Y),
    "remainder_scalar": (lambda L, x, y: x.remainder(-1.5) * y, X, Y),
    "true_divide": (lambda L, x, y: L.true_divide(x, y), X, Y),
    "addcmul": (lambda L, x, y: L.addcmul(x, x, y, value=2.5), X, Y),
    "addcdiv": (lambda L, x, y: y.addcdiv(x, y, value=-2), X, Y),
    "float_power": (lambda L, x, y: L.float_power(x, y), XP, Y),
    "float_power_tensor_scalar": (lambda L, x, y: x.float_power(2.5) * y, XP, Y),
    "float_power_scalar": (lambda L, x, y: L.float_power(2.5, y) * x, XP, Y),
    "igamma": (lambda L, x, y: L.igamma(x.detach(), y), XP, YP),
    "igammac": (lambda L, x, y: x.detach().igammac(y), XP, YP),
    "xlog1py": (lambda L, x, y: _special(L, "special_xlog1py")(x, y), X, YP),
    "xlog1py_zero": (lambda L, x, y: _special(L, "special_xlog1py")(x * 0, y - 3), X, YP),
    "xlog1py_self_scalar": (
        lambda L, x, y: _special(L, "special_xlog1py", "self_scalar")(2.5, y) * x,
        X,
        YP,
    ),
    "xlog1py_other_scalar": (
        lambda L, x, y: _special(L, "special_xlog1py", "other_scalar")(x * 0, -1.5) * y,
        X,
        YP,
    ),
    "xlog1py_other_scalar_positive": (
        lambda L, x, y: _special(L, "special_xlog1py", "other_scalar")(x, 2.0) * y,
        X,
        YP,
    ),
    "zeta": (lambda L, x, y: _special(L, "special_zeta")(x.detach() + 2, y), XP, YP),
    "zeta_self_scalar": (
        lambda L, x, y: _special(L, "special_zeta", "self_scalar")(2.5, y) * x,
        XP,
        YP,
    ),
    "lerp": (lambda L, x, y: L.lerp(x, y, 0.3), X, Y),
    "xlogy": (lambda L, x, y: L.xlogy(x, y), X, YP),
    "xlogy_zero": (lambda L, x, y: L.xlogy(x * 0, y - 3), X, YP),
    "xlogy_scalar_self": (lambda L, x, y: L.xlogy(2.5, y) * x, X, YP),
    "xlogy_scalar_other": (lambda L, x, y: (x * 0).xlogy(-1.5) * y, X, YP),
    "xlogy_scalar_other_positive": (lambda L, x, y: L.xlogy(x, 2.0) * y, X, YP),
    "lerp_tensor": (lambda L, x, y: L.lerp(x, y, x * y), X, Y),
}


def _leaves(lib, xv, yv):
    return (
        lib.tensor(xv, dtype=lib.float64, requires_grad=True),
        lib.tensor(yv, dtype=lib.float64, requires_grad=True),
    )


def _values(ts):
    return [None if t is None else np.asarray(t.tolist()) for t in ts]


def _assert_close_lists(got, expected, what):
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        if e is None:
            assert g is None, what
        else:
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=what)


def _grads(lib, case, create_graph):
    f, xv, yv = GRAD_CASES[case]
    x, y = _leaves(lib, xv, yv)
    r = f(lib, x, y)
    g = lib.autograd.grad(r.sum(), [x, y], create_graph=create_graph, allow_unused=True)
    return x, y, r, g


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_node_gradients_and_second_derivatives_match_torch(torch, case):
    tx, ty, tr, tg = _grads(torch, case, True)
    ox, oy, orr, og_ = _grads(og, case, True)
    assert type(orr.grad_fn).__name__ == type(tr.grad_fn).__name__, case
    _assert_close_lists(_values(og_), _values(tg), case)

    # second derivative: of the gradients' squared sum
    def second(lib, x, y, g):
        try:
            s = sum((t * t).sum() for t in g if t is not None)
            return "ok", _values(lib.autograd.grad(s, [x, y], allow_unused=True))
        except Exception as exc:  # noqa: BLE001 - compared by type and text
            return type(exc).__name__, str(exc)

    t2, o2 = second(torch, tx, ty, tg), second(og, ox, oy, og_)
    assert o2[0] == t2[0], (o2, t2)
    if t2[0] == "ok":
        _assert_close_lists(o2[1], t2[1], f"{case}: second derivative")


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_forward_mode_matches_torch(torch, case):
    f, xv, yv = GRAD_CASES[case]

    def tangent(lib):
        fa = lib.autograd.forward_ad
        try:
            with fa.dual_level():
                x = fa.make_dual(
                    lib.tensor(xv, dtype=lib.float64),
                    lib.tensor([1.0, 0.5, -1, 2, 0.25], dtype=lib.float64),
                )
                y = fa.make_dual(
                    lib.tensor(yv, dtype=lib.float64),
                    lib.tensor([0.3, -1.0, 1, 0.5, 2], dtype=lib.float64),
                )
                t = fa.unpack_dual(f(lib, x, y)).tangent
                return "ok", None if t is None else np.asarray(t.tolist())
        except Exception as exc:  # noqa: BLE001 - compared by type and text
            return type(exc).__name__, str(exc).replace("torch", "L").replace("opgrad", "L")

    expected, got = tangent(torch), tangent(og)
    assert got[0] == expected[0], (got, expected)
    if expected[0] == "ok" and expected[1] is not None:
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-12, equal_nan=True)
    else:
        assert got == expected


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_aten_calls_forward_and_backward_match_torch(torch, case):
    f, xv, yv = GRAD_CASES[case]
    logs = {}
    for lib in (torch, og):
        x, y = _leaves(lib, xv, yv)
        forward = aten_log(lib, lambda: f(lib, x, y))
        r = f(lib, x, y)
        g = lib.ones_like(r)
        backward = aten_log(
            lib, lambda: lib.autograd.grad(r, [x, y], g, retain_graph=True, allow_unused=True)
        )
        graph = aten_log(
            lib, lambda: lib.autograd.grad(r, [x, y], g, create_graph=True, allow_unused=True)
        )
        logs[lib.__name__] = (forward, backward, graph)
    assert logs["opgrad"] == logs["torch"]


SAVED = {
    "atan2": lambda L, x, y: L.atan2(x, y),
    "hypot": lambda L, x, y: L.hypot(x, y),
    "logaddexp": lambda L, x, y: L.logaddexp(x, y),
    "logaddexp2": lambda L, x, y: L.logaddexp2(x, y),
    "copysign": lambda L, x, y: L.copysign(x, y),
    "copysign_scalar": lambda L, x, y: L.copysign(x, 2.0),
    "nextafter": lambda L, x, y: L.nextafter(x, y),
    "ldexp": lambda L, x, y: L.ldexp(x, y),
    "fmod": lambda L, x, y: L.fmod(x, y),
    "fmod_scalar": lambda L, x, y: L.fmod(x, 2.0),
    "remainder": lambda L, x, y: L.remainder(x, y),
    "remainder_scalar": lambda L, x, y: L.remainder(x, 2.0),
    "remainder_scalar_tensor": lambda L, x, y: L.remainder(2.0, y),
    "floor_divide": lambda L, x, y: L.floor_divide(x, y),
    "heaviside": lambda L, x, y: L.heaviside(x, y),
    "addcmul": lambda L, x, y: L.addcmul(x, x, y, value=2),
    "addcdiv": lambda L, x, y: L.addcdiv(x, x, y, value=2),
    "igamma": lambda L, x, y: L.igamma(x, y),
    "igammac": lambda L, x, y: L.igammac(x, y),
    "xlog1py": lambda L, x, y: _special(L, "special_xlog1py")(x, y),
    "xlog1py_self_scalar": lambda L, x, y: _special(L, "special_xlog1py", "self_scalar")(2, y),
    "xlog1py_other_scalar": lambda L, x, y: _special(L, "special_xlog1py", "other_scalar")(x, 2),
    "zeta": lambda L, x, y: _special(L, "special_zeta")(x, y),
    "xlogy": lambda L, x, y: L.xlogy(x, y),
    "xlogy_scalar_self": lambda L, x, y: L.xlogy(2, y),
    "xlogy_scalar_other": lambda L, x, y: L.xlogy(x, 2),
    "zeta_self_scalar": lambda L, x, y: _special(L, "special_zeta", "self_scalar")(2, y),
    "zeta_other_scalar": lambda L, x, y: _special(L, "special_zeta", "other_scalar")(x, 2),
}


@pytest.mark.parametrize("case", sorted(SAVED))
def test_node_names_and_saved_fields_match_torch(torch, case):
    tx, ty = _leaves(torch, XP, YP)
    ox, oy = _leaves(og, XP, YP)
    t, o = SAVED[case](torch, tx, ty), SAVED[case](og, ox, oy)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    assert_same_saved_fields(torch, o.grad_fn, t.grad_fn, (ox, oy), (tx, ty), what=case)


NOT_DIFFERENTIABLE = {
    "heaviside": lambda L, x, y: L.heaviside(x, y),
    "floor_divide": lambda L, x, y: L.floor_divide(x, y),
    "floor_divide_number": lambda L, x, y: x.floor_divide(2),
    "remainder_scalar_tensor": lambda L, x, y: L.remainder(2, y),
    "igamma_self": lambda L, x, y: L.igamma(x, y.detach()),
    "igammac_self": lambda L, x, y: L.igammac(x, y.detach()),
    "zeta_self": lambda L, x, y: _special(L, "special_zeta")(x, y.detach()),
    "zeta_other_scalar": lambda L, x, y: _special(L, "special_zeta", "other_scalar")(x, 2),
}


@pytest.mark.parametrize("case", sorted(NOT_DIFFERENTIABLE))
def test_refused_derivatives_raise_torch_errors(torch, case):
    def scenario(lib):
        x, y = _leaves(lib, XP, YP)
        lib.autograd.grad(NOT_DIFFERENTIABLE[case](lib, x, y).sum(), [x])

    expected = _outcome_of(lambda: scenario(torch))
    assert expected[0] in ("RuntimeError", "NotImplementedError"), expected
    assert _outcome_of(lambda: scenario(og)) == expected


def _outcome_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - compared by type and text
        return type(exc).__name__, str(exc).replace("torch", "LIB").replace("opgrad", "LIB")
    return ("ok",)


@pytest.mark.parametrize("op", ["heaviside", "floor_divide", "igamma", "igammac"])
def test_forward_mode_refusals_match_torch(torch, op):
    def scenario(lib):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            d = fa.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
            getattr(lib, op)(d, d)

    assert _outcome_of(lambda: scenario(og)) == _outcome_of(lambda: scenario(torch))


@pytest.mark.parametrize(
    "call",
    [
        "lib.arctan2(x,y)",
        "x.arctan2_(y)",
        "lib.arctan2(x,y,out=lib.empty(3))",
        "lib.true_divide(x,y)",
        "lib.true_divide(x,2)",
        "x.true_divide_(y)",
        "lib.true_divide(x,y,out=lib.empty(3))",
        "lib.float_power(x,y)",
        "lib.float_power(x,2)",
        "lib.float_power(2,y)",
        "x.double().float_power_(2)",
        "x.double().float_power_(y)",
        "lib.float_power(x,y,out=lib.empty(3,dtype=lib.float64))",
        "lib.float_power(x,2,out=lib.empty(3,dtype=lib.float64))",
        "lib.float_power(2,y,out=lib.empty(3,dtype=lib.float64))",
        "lib.ldexp(x,y)",
        "lib.ldexp_(x,y)",
        "lib.floor_divide(x,2)",
        "lib.remainder(2,y)",
        "lib.fmod(x,2)",
        "lib.copysign(x,2)",
        "lib.addcdiv(x,x,y,value=3)",
    ],
)
def test_composites_call_torchs_aten_ops(torch, call):
    def log(lib):
        x, y = lib.tensor([1.5, 2.0, 3.0]), lib.tensor([0.5, -1.0, 2.0])
        return aten_log(lib, lambda: eval(call, {"lib": lib, "x": x, "y": y}))  # noqa: S307

    assert log(og) == log(torch)


def test_float_power_in_place_refuses_a_base_that_is_not_double(torch):
    def scenario(lib):
        lib.tensor([1.0, 2.0]).float_power_(2)

    assert_same_error(torch, scenario, RuntimeError, "the base given to float_power_ has dtype")


def test_atan2_bad_shapes_refused_as_torch(torch):
    def scenario(lib):
        lib.atan2(lib.ones(2, 3), lib.ones(4))

    assert_same_error(torch, scenario, RuntimeError, "must match the size")
