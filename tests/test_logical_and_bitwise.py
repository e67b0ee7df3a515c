"""The predicates (isinf, isposinf, isneginf, isfinite, isreal, signbit, isclose, allclose,
equal, isin), the logical ops, the bitwise ops and their operators (``& | ^ ~ << >>``),
fmax, fmin and clamp_max against torch: values, dtypes and shapes, the aten calls a
dispatch mode sees, in-place and out= variants, and errors. The float64 OpInfo samples of
the differentiable ones (fmax, fmin, clamp_max) run in test_opinfo.py."""

from __future__ import annotations

import math

import pytest

import opgrad as og
from torch_oracle import dtype_name, outcome_and_aten_log

NAN, INF = math.nan, math.inf
FLOATS = [1.0, -0.0, NAN, INF, -INF, -2.5]
INTS = [1, 2, -3, 0, 7, -8]
BOOLS = [True, False, True, False, False, True]


def _described(value):
    """A result as comparable data: a tensor's values (NaN spelled out), dtype and shape."""
    if isinstance(value, (bool, int, float)):
        return type(value).__name__, value
    data = value.tolist()
    if value.dtype.is_floating_point:
        data = [("nan" if math.isnan(v) else v) for v in value.reshape(-1).tolist()]
    return data, dtype_name(value.dtype), tuple(value.shape)


def _seen(lib, call):
    """What ``call(lib)`` gives (or raises) and the aten calls a dispatch mode sees."""
    return outcome_and_aten_log(lib, call, _described)


def _f(lib, data=FLOATS, dtype="float32"):
    return lib.tensor(data, dtype=getattr(lib, dtype))


def _i(lib, data=INTS, dtype="int64"):
    return lib.tensor(data, dtype=getattr(lib, dtype))


def _b(lib):
    return lib.tensor(BOOLS)


def _inplace(method, make, *args):
    def call(lib):
        x = make(lib).clone()
        return getattr(x, method)(*[a(lib) if callable(a) else a for a in args])

    return call


CALLS = {
    # predicates over every kind of dtype
    "isinf": lambda L: L.isinf(_f(L)),
    "isinf_int": lambda L: L.isinf(_i(L)),
    "isinf_bool": lambda L: _b(L).isinf(),
    "isposinf": lambda L: L.isposinf(_f(L)),
    "isneginf": lambda L: _f(L, dtype="float64").isneginf(),
    "isposinf_int": lambda L: L.isposinf(_i(L)),
    "isfinite": lambda L: L.isfinite(_f(L)),
    "isfinite_int": lambda L: _i(L).isfinite(),
    "isreal": lambda L: L.isreal(_f(L)),
    "signbit": lambda L: L.signbit(_f(L)),
    "signbit_int": lambda L: _i(L, dtype="int8").signbit(),
    "signbit_bool": lambda L: L.signbit(_b(L)),
    "isclose": lambda L: L.isclose(_f(L), _f(L, [1.0 + 1e-6, 0.0, NAN, INF, INF, -2.6])),
    "isclose_equal_nan": lambda L: L.isclose(_f(L), _f(L), equal_nan=True),
    "isclose_tolerances": lambda L: _f(L).isclose(_f(L).add(0.05), rtol=0.0, atol=0.1),
    "isclose_zero_tolerances": lambda L: L.isclose(_f(L), _f(L), rtol=0, atol=0),
    "isclose_int": lambda L: L.isclose(_i(L), _i(L).add(1), atol=2),
    "isclose_broadcast": lambda L: L.isclose(_f(L), L.ones(2, 1)),
    "isclose_mixed_dtypes": lambda L: L.isclose(_f(L), _f(L, dtype="float64")),
    "isclose_negative_rtol": lambda L: L.isclose(_f(L), _f(L), rtol=-1.5),
    "isclose_negative_atol": lambda L: L.isclose(_f(L), _f(L), atol=-1e-9),
    "allclose": lambda L: L.allclose(_f(L, [1.0, 2.0]), _f(L, [1.0 + 1e-7, 2.0])),
    "allclose_nan": lambda L: L.allclose(_f(L), _f(L)),
    "allclose_equal_nan": lambda L: _f(L).allclose(_f(L), equal_nan=True),
    "allclose_broadcast": lambda L: L.allclose(_f(L, [1.0, 1.0]), L.ones(3, 1)),
    "allclose_mixed_dtypes": lambda L: L.allclose(_f(L), _f(L, dtype="float64")),
    "equal": lambda L: L.equal(_i(L), _i(L)),
    "equal_mixed_dtypes": lambda L: L.equal(_i(L), _i(L).float()),
    "equal_other_shape": lambda L: L.equal(L.ones(3), L.ones(1)),
    "equal_nan": lambda L: _f(L).equal(_f(L)),
    "isin": lambda L: L.isin(_i(L), _i(L, [[2, 7], [9, 0]])),
    "isin_mixed_dtypes": lambda L: L.isin(_i(L), _f(L, [1.0, -3.0, 2.5])),
    "isin_nan": lambda L: L.isin(_f(L), _f(L)),
    "isin_invert": lambda L: L.isin(_i(L), _i(L, [2]), invert=True),
    "isin_scalar": lambda L: L.isin(_i(L), 2.0),
    "isin_scalar_first": lambda L: L.isin(2, _i(L)),
    "isin_bool": lambda L: L.isin(_b(L), _i(L)),
    # logical ops take any dtype and give bool
    "logical_not": lambda L: L.logical_not(_f(L)),
    "logical_xor": lambda L: L.logical_xor(_i(L), _f(L)),
    "logical_xor_broadcast": lambda L: L.logical_xor(_i(L), L.zeros(2, 1)),
    "logical_not_": _inplace("logical_not_", _f),
    "logical_xor_": _inplace("logical_xor_", _i, _b),
    # bitwise ops: integer and bool types, PyTorch's promotion
    "and": lambda L: _i(L) & _i(L, [3] * 6),
    "and_number": lambda L: _i(L) & 6,
    "and_reflected": lambda L: 6 & _i(L),
    "and_bools": lambda L: _b(L) & _b(L).logical_not(),
    "and_bool_number": lambda L: _b(L) & 1,
    "and_bool_true": lambda L: _b(L) & True,
    "and_bool_int": lambda L: _b(L) & _i(L),
    "and_float": lambda L: _f(L) & _f(L),
    "and_float_number": lambda L: _i(L) & 1.5,
    "and_list": lambda L: _i(L) & [1],
    "or": lambda L: _i(L) | 4,
    "or_function_scalar_first": lambda L: L.bitwise_or(4, _i(L)),
    "xor": lambda L: _i(L) ^ _i(L, [1, 1, 1, 1, 1, 1]),
    "xor_reflected": lambda L: 5 ^ _i(L, dtype="int16"),
    "bitwise_and_uint8_wraps": lambda L: L.bitwise_and(_i(L, [255, 7], "uint8"), 300),
    "bitwise_and_scalar_first": lambda L: L.bitwise_and(6, _i(L)),
    "bitwise_or_method": lambda L: _i(L).bitwise_or(_i(L, [8] * 6)),
    "bitwise_or_": _inplace("bitwise_or_", _i, 8),
    "bitwise_xor_": _inplace("bitwise_xor_", _i, -1),
    "bitwise_xor_scalar_first": lambda L: L.bitwise_xor(True, _b(L)),
    "bitwise_not": lambda L: L.bitwise_not(_i(L)),
    "bitwise_not_float": lambda L: L.bitwise_not(_f(L)),
    "invert": lambda L: ~_i(L, dtype="int8"),
    "invert_bool": lambda L: ~_b(L),
    "invert_float": lambda L: ~_f(L),
    "iand": _inplace("__iand__", _i, 6),
    "iand_bool_by_int": _inplace("__iand__", _b, _i),
    "ior": _inplace("__ior__", _i, _i),
    "ixor": _inplace("__ixor__", _b, _b),
    "iand_float": _inplace("__iand__", _f, 1),
    "bitwise_and_": _inplace("bitwise_and_", _i, 3),
    "bitwise_not_": _inplace("bitwise_not_", _b),
    # shifts: PyTorch's answers where C leaves a shift undefined
    "lshift": lambda L: _i(L) << 2,
    "lshift_tensor": lambda L: _i(L) << _i(L, [0, 1, 62, 63, 64, -1]),
    "lshift_int8": lambda L: _i(L, dtype="int8") << 1,
    "lshift_uint8": lambda L: _i(L, [255, 64, 1], "uint8") << 1,
    "lshift_by_width": lambda L: _i(L, dtype="int32") << 32,
    "lshift_bool": lambda L: _b(L) << 1,
    "lshift_float": lambda L: _f(L) << 1,
    "lshift_float_number": lambda L: _i(L) << 1.5,
    "lshift_reflected": lambda L: 1 << _i(L),
    "rshift": lambda L: _i(L) >> 1,
    "rshift_tensor": lambda L: _i(L, [-8] * 6) >> _i(L, [0, 1, 62, 63, 64, -1]),
    "rshift_int8": lambda L: _i(L, [-128, 64, 5], "int8") >> 9,
    "rshift_uint8": lambda L: _i(L, [255, 64, 1], "uint8") >> 8,
    "rshift_reflected": lambda L: 64 >> _i(L),
    "ilshift": _inplace("__ilshift__", _i, 3),
    "irshift": _inplace("__irshift__", _i, _i),
    "ilshift_float_number": _inplace("__ilshift__", _i, 1.5),
    "bitwise_left_shift": lambda L: L.bitwise_left_shift(_i(L), 3),
    "bitwise_left_shift_scalar_first": lambda L: L.bitwise_left_shift(2, _i(L)),
    "bitwise_right_shift": lambda L: _i(L).bitwise_right_shift(_i(L, [1] * 6)),
    "bitwise_right_shift_scalar_first": lambda L: L.bitwise_right_shift(-64, _i(L)),
    "bitwise_left_shift_tensor": lambda L: L.bitwise_left_shift(_i(L), _i(L, [3] * 6)),
    "bitwise_right_shift_scalar": lambda L: _i(L).bitwise_right_shift(2),
    "bitwise_left_shift_": _inplace("bitwise_left_shift_", _i, 2),
    "bitwise_left_shift_tensor_": _inplace("bitwise_left_shift_", _i, _i),
    "bitwise_right_shift_scalar_": _inplace("bitwise_right_shift_", _i, 1),
    "ilshift_tensor": _inplace("__ilshift__", _i, _i),
    "irshift_scalar": _inplace("__irshift__", _i, 2),
    "bitwise_right_shift_": _inplace("bitwise_right_shift_", _i, _i),
    # fmax, fmin: a NaN loses to a number
    "fmax": lambda L: L.fmax(_f(L), _f(L, [NAN, 3.0, 1.0, NAN, 0.0, -2.5])),
    "fmin": lambda L: L.fmin(_f(L), _f(L, [NAN, 3.0, 1.0, NAN, 0.0, -2.5])),
    "fmax_mixed": lambda L: L.fmax(_i(L), _f(L, [1.5] * 6)),
    "fmin_bool": lambda L: L.fmin(_b(L), _b(L).logical_not()),
    "fmax_number": lambda L: L.fmax(_f(L), 2),
    "clamp_max": lambda L: _f(L).clamp_max(0.5),
    "clamp_max_int_by_float": lambda L: _i(L).clamp_max(1.5),
    "clamp_max_bool": lambda L: _b(L).clamp_max(0),
    "clamp_max_tensor": lambda L: L.clamp_max(_f(L), _f(L, [0.0, 1.0, 2.0, NAN, 3.0, -3.0])),
    "clamp_max_": _inplace("clamp_max_", _f, 0.0),
    "clamp_max_tensor_": _inplace("clamp_max_", _f, lambda L: _f(L, [0.0] * 6)),
}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_values_and_aten_calls_match_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


OUT_CALLS = {
    "isposinf": (lambda L, out: L.isposinf(_f(L), out=out), "bool"),
    "isneginf": (lambda L, out: L.isneginf(_f(L), out=out), "bool"),
    "signbit": (lambda L, out: L.signbit(_f(L), out=out), "bool"),
    "isposinf_float_out": (lambda L, out: L.isposinf(_f(L), out=out), "float32"),
    "isneginf_int_out": (lambda L, out: L.isneginf(_f(L), out=out), "int64"),
    "signbit_float_out": (lambda L, out: L.signbit(_f(L), out=out), "float64"),
    "logical_not_float_out": (lambda L, out: L.logical_not(_f(L), out=out), "float32"),
    "logical_and_int_out": (lambda L, out: L.logical_and(_i(L), _f(L), out=out), "int64"),
    "logical_or_out": (lambda L, out: L.logical_or(_i(L), _b(L), out=out), "bool"),
    "logical_xor_out": (lambda L, out: L.logical_xor(_i(L), _i(L), out=out), "int64"),
    "isin_out": (lambda L, out: L.isin(_i(L), _i(L, [2, 0]), out=out), "bool"),
    "isin_scalar_out": (lambda L, out: L.isin(_i(L), 7, out=out), "bool"),
    "isin_scalar_first_out": (lambda L, out: L.isin(7, _i(L), out=out), "bool"),
    "bitwise_and_float_out": (lambda L, out: L.bitwise_and(_i(L), _i(L), out=out), "float32"),
    "bitwise_and_scalar_out": (lambda L, out: L.bitwise_and(_i(L), 6, out=out), "int64"),
    "bitwise_or_out": (lambda L, out: L.bitwise_or(_i(L), _i(L), out=out), "int64"),
    "bitwise_or_scalar_out": (lambda L, out: L.bitwise_or(_i(L), 1, out=out), "int64"),
    "bitwise_xor_out": (lambda L, out: L.bitwise_xor(_b(L), _b(L), out=out), "bool"),
    "bitwise_xor_scalar_out": (lambda L, out: L.bitwise_xor(_i(L), 3, out=out), "int64"),
    "bitwise_and_bool_out": (lambda L, out: L.bitwise_and(_i(L), _i(L), out=out), "bool"),
    "bitwise_not_out": (lambda L, out: L.bitwise_not(_i(L), out=out), "int64"),
    "left_shift_out": (lambda L, out: L.bitwise_left_shift(_i(L), _i(L), out=out), "int64"),
    "left_shift_scalar_out": (lambda L, out: L.bitwise_left_shift(_i(L), 2, out=out), "int64"),
    "right_shift_out": (lambda L, out: L.bitwise_right_shift(_i(L), _i(L), out=out), "int64"),
    "right_shift_scalar_out": (lambda L, out: L.bitwise_right_shift(_i(L), 1, out=out), "int64"),
    "fmax_out": (lambda L, out: L.fmax(_f(L), _f(L).neg(), out=out), "float32"),
    "fmin_out": (lambda L, out: L.fmin(_f(L), _f(L).neg(), out=out), "float64"),
    "fmax_int_out": (lambda L, out: L.fmax(_f(L), _f(L), out=out), "int64"),
    "clamp_max_out": (lambda L, out: L.clamp_max(_f(L), 0.0, out=out), "float32"),
    "clamp_max_out_exact": (lambda L, out: L.clamp_max(_f(L), 0.0, out=out), "float64"),
    "clamp_max_tensor_out": (lambda L, out: L.clamp_max(_f(L), _f(L).neg(), out=out), "float32"),
}


@pytest.mark.parametrize("case", list(OUT_CALLS.values()), ids=list(OUT_CALLS))
def test_out_variants_match_torch(torch, case):
    make, dtype = case

    def call(lib):
        out = lib.empty(0, dtype=getattr(lib, dtype))
        result = make(lib, out)
        assert result is out
        return out

    assert _seen(og, call) == _seen(torch, call)


DUNDERS = [
    f"{name}.{overload}"
    for name in ("__and__", "__or__", "__xor__", "__iand__", "__ior__", "__ixor__")
    for overload in ("Tensor", "Scalar")
]


@pytest.mark.parametrize("overload", DUNDERS)
def test_operator_ops_through_the_dispatcher_api_match_torch(torch, overload):
    name, kind = overload.split(".")

    def call(lib):
        op = getattr(getattr(lib.ops.aten, name), kind)
        x = _i(lib).clone()
        result = op(x, _i(lib, [6] * 6) if kind == "Tensor" else 6)
        return x if name.startswith("__i") else result

    assert _seen(og, call) == _seen(torch, call)


def test_in_place_operators_bump_the_version_and_return_self():
    x = og.tensor([1, 2, 3])
    for op in ("__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
        before = x._version
        assert getattr(x, op)(1) is x and x._version == before + 1


def test_constants_are_torchs():
    import math

    assert (og.inf, og.pi, og.e, og.newaxis) == (math.inf, math.pi, math.e, None)
    assert math.isnan(og.nan)


def test_a_refused_out_is_left_unchanged():
    out = og.zeros(3)
    with pytest.raises(RuntimeError, match="isposinf does not support non-boolean outputs"):
        og.isposinf(og.tensor([1.0, og.inf, 2.0]), out=out)
    assert out.tolist() == [0.0, 0.0, 0.0] and out._version == 0


def test_a_refused_in_place_shift_leaves_self_unchanged():
    x = og.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        x <<= 1.5
    assert x.tolist() == [1, 2, 3] and x._version == 0


def test_fmax_fmin_gradients_follow_the_number_over_nan(torch):
    def scenario(lib):
        a = lib.tensor([1.0, NAN, 3.0, NAN, 2.0], requires_grad=True)
        b = lib.tensor([NAN, 2.0, 3.0, NAN, 5.0], requires_grad=True)
        out = []
        for fn in (lib.fmax, lib.fmin):
            y = fn(a, b)
            ga, gb = lib.autograd.grad(y.sum(), (a, b))
            out.append((type(y.grad_fn).__name__, ga.tolist(), gb.tolist()))
        return out

    assert scenario(og) == scenario(torch)


def test_clamp_max_nodes_and_gradients(torch):
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        bound = lib.tensor([0.0, 0.5, 1.0], requires_grad=True)
        y0 = x.clamp_max(0.5)
        y1 = x.clamp_max(bound)
        g0 = lib.autograd.grad(y0.sum(), x)[0]
        g1 = lib.autograd.grad(y1.sum(), (x, bound))
        names0 = sorted(n for n in dir(y0.grad_fn) if n.startswith("_saved"))
        names1 = sorted(n for n in dir(y1.grad_fn) if n.startswith("_saved"))
        return (
            type(y0.grad_fn).__name__,
            type(y1.grad_fn).__name__,
            names0,
            names1,
            y0.grad_fn._saved_max,
            g0.tolist(),
            [g.tolist() for g in g1],
        )

    assert scenario(og) == scenario(torch)


def test_bitwise_results_are_not_differentiable(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return [
            (y.requires_grad, y.grad_fn)
            for y in (lib.isfinite(x), lib.isclose(x, x), lib.signbit(x), lib.isin(x, x))
        ]

    assert scenario(og) == scenario(torch)
