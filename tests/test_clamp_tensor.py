"""clamp.Tensor (clamp_.Tensor, clamp.Tensor_out) against PyTorch: which overload a Python
call picks, bounds that broadcast, dtypes, NaN and min > max, errors, saved fields.

Values, gradients, second derivatives, tangents and gradcheck of the op itself are in the
tables of test_ops_vs_torch / test_gradcheck; the backward's aten calls in test_backward_logs.
"""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from opgrad.generated.python_surface import FUNCTIONS
from opgrad.python_arg_parser import resolve_overload
from torch_oracle import (
    assert_same_error,
    assert_same_tensor,
    aten_log,
    node_type_name,
    outcome,
    rng_for,
)

X = np.array([[-2.0, -0.5, 0.0], [0.3, 0.8, 2.0]])


def _x(lib, requires_grad=True):
    return lib.tensor(X, requires_grad=requires_grad)


# ---- overload selection -----------------------------------------------------------------

# fn(lib, x, t0, t1): t0 is a 0-dim tensor, t1 a (3,) tensor, neither requires grad
OVERLOADS = [
    ("number", lambda L, x, t0, t1: L.clamp(x, 0.5)),
    ("number_method", lambda L, x, t0, t1: x.clamp(-0.5, 0.5)),
    ("0dim_tensor", lambda L, x, t0, t1: L.clamp(x, t0)),
    ("tensor", lambda L, x, t0, t1: L.clamp(x, t1)),
    ("max_tensor_only", lambda L, x, t0, t1: L.clamp(x, None, t1)),
    ("both_tensors_method", lambda L, x, t0, t1: x.clamp(t0, t1)),
    # a 0-dim tensor fits a Scalar: PyTorch takes the Scalar overload (item())
    ("0dim_tensor_and_number", lambda L, x, t0, t1: L.clamp(x, t0, 2.0)),
    ("number_and_0dim_tensor", lambda L, x, t0, t1: x.clamp(-1, t0)),
    ("overload_object", lambda L, x, t0, t1: L.ops.aten.clamp.Tensor(x, t1)),
    ("overload_object_keyword", lambda L, x, t0, t1: L.ops.aten.clamp.Tensor(x, max=t1)),
]


def _overload_run(lib, fn):
    x, t0, t1 = _x(lib), lib.tensor(-0.4), lib.tensor([0.5, -1.0, 0.1])
    result = []
    log = aten_log(lib, lambda: result.append(fn(lib, x, t0, t1)))
    return node_type_name(result[0].grad_fn), log, result[0]


@pytest.mark.parametrize("fn", [pytest.param(f, id=name) for name, f in OVERLOADS])
def test_overload_node_and_aten_calls_match_torch(torch, fn):
    got_node, got_log, got = _overload_run(og, fn)
    node, log, expected = _overload_run(torch, fn)
    assert (got_node, got_log) == (node, log)
    assert_same_tensor(got, expected)


def test_tensor_keywords_resolve_to_the_tensor_overload():
    # resolve_overload directly: the resolving wrapper's cache is tested below
    t = og.tensor([0.5, 0.0, 0.1])
    for kwargs in ({"min": t}, {"max": t}, {"min": t, "max": t}, {"min": None, "max": t}):
        op, _ = resolve_overload(FUNCTIONS["clamp"], (_x(og),), kwargs)
        assert str(op) == "aten.clamp.Tensor", kwargs
    op, _ = resolve_overload(FUNCTIONS["clamp"], (_x(og),), {"min": 0.5})
    assert str(op) == "aten.clamp.default"


def test_tensor_keyword_after_number_keyword():
    x, t = _x(og), og.tensor([0.5, -1.0, 0.1])
    og.clamp(x, min=0)
    x.clamp(max=0.5)
    assert og.clamp(x, min=t).grad_fn.name() == "ClampBackward0"
    assert x.clamp(max=t).grad_fn.name() == "ClampBackward0"


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda L, x: L.clamp(x, L.tensor([0.5, 0.5, 0.5]), 2.0), id="tensor_number"),
        pytest.param(lambda L, x: L.clamp(x, 0.5, L.tensor([2.0, 2.0, 2.0])), id="number_tensor"),
        pytest.param(
            lambda L, x: L.clamp(x, L.tensor(0.5, requires_grad=True), 2.0),
            id="grad_0dim_number",
        ),
    ],
)
def test_mixed_tensor_and_number_bounds_are_a_type_error(torch, fn):
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        fn(torch, _x(torch))
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        fn(og, _x(og))


def test_no_bounds_dispatches_the_tensor_overload(torch):
    for lib in (torch, og):
        x = _x(lib)
        log = aten_log(lib, lambda: outcome(lambda: lib.clamp(x)))
        assert log == ["aten.clamp.Tensor"], lib.__name__


# ---- broadcasting -----------------------------------------------------------------------

SHAPES = [
    ((2, 3), (3,), ()),
    ((2, 3), (2, 1), (1, 3)),
    ((2, 3), (2, 3), None),
    ((2, 3), None, (2, 1)),
    ((3,), (2, 3), None),  # a bound makes the result larger than self
    ((), (2,), (2,)),
    ((2, 1, 3), (4, 3), (3,)),
    # PyTorch's backward combines its masks in place: max's (2, 1, 3) mask cannot take
    # the (4, 3) one, so backward fails (with no mode watching) in both libraries
    ((2, 1, 3), (4, 1), (3,)),
]


def _broadcast_run(lib, shapes):
    x_shape, lo_shape, hi_shape = shapes
    rng = rng_for("clamp.Tensor broadcast", shapes)
    x = lib.tensor(rng.standard_normal(x_shape), requires_grad=True)
    lo = hi = None
    if lo_shape is not None:
        lo = lib.tensor(rng.uniform(-0.6, 0.0, lo_shape), requires_grad=True)
    if hi_shape is not None:
        hi = lib.tensor(rng.uniform(0.0, 0.6, hi_shape), requires_grad=True)
    out = lib.clamp(x, lo, hi)
    weights = lib.tensor(rng.standard_normal(tuple(out.shape)))
    (out * weights).sum().backward()
    return out, [t.grad for t in (x, lo, hi) if t is not None]


@pytest.mark.parametrize("shapes", SHAPES, ids=[str(s).replace(" ", "") for s in SHAPES])
def test_broadcast_bounds_gradients_have_their_shapes(torch, shapes):
    got_outcome, expected_outcome = outcome(lambda: _broadcast_run(og, shapes)), outcome(
        lambda: _broadcast_run(torch, shapes)
    )
    if expected_outcome[0] != "ok":
        assert got_outcome == expected_outcome
        return
    (got, got_grads), (expected, grads) = got_outcome[1], expected_outcome[1]
    assert_same_tensor(got.detach(), expected.detach())
    for g, e in zip(got_grads, grads):
        assert_same_tensor(g, e)


# ---- dtypes -------------------------------------------------------------------------------

DTYPES = [
    ("f32_self_f64_0dim", lambda L: L.clamp(L.tensor([1.0, 5.0, -3.0]), L.tensor(0.5).double())),
    ("f32_self_f64_bound", lambda L: L.clamp(L.tensor([1.0, 5.0]), L.tensor([0.5, 9.0]).double())),
    ("int_self_float_0dim", lambda L: L.clamp(L.tensor([1, 5, -3]), L.tensor(0.5))),
    ("int_self_float_bound", lambda L: L.clamp(L.tensor([1, 5]), None, L.tensor([0.5, 9.0]))),
    ("int32_self_int64_0dim", lambda L: L.clamp(L.tensor([1, 5], dtype=L.int32), L.tensor(2))),
    (
        "int32_self_int64_0dim_float_0dim",
        lambda L: L.clamp(L.tensor([1, 5], dtype=L.int32), L.tensor(2), L.tensor(2.5)),
    ),
    (
        "int64_self_int32_bound",
        lambda L: L.clamp(L.tensor([1, 5]), L.tensor([2, 2], dtype=L.int32)),
    ),
    ("bool_self_bool_min", lambda L: L.clamp(L.tensor([True, False]), L.tensor([False, True]))),
    ("bool_self_bool_max", lambda L: L.clamp(L.tensor([True, False]), None, L.tensor(False))),
    ("bool_self_int_bound", lambda L: L.clamp(L.tensor([True, False]), L.tensor([1, 0]))),
    (
        "bool_self_bool_and_int_bounds",
        lambda L: L.clamp(L.tensor([True, False]), L.tensor(False), L.tensor([0, 1])),
    ),
    ("float_self_bool_bound", lambda L: L.clamp(L.tensor([0.5, 2.0]), L.tensor(True))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=name) for name, f in DTYPES])
def test_result_type_and_values_match_torch(torch, fn):
    assert_same_tensor(fn(og), fn(torch))


def _mixed_grads(lib):
    x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
    lo = lib.tensor(-0.3, dtype=lib.float64, requires_grad=True)  # 0-dim: float32 result
    hi = lib.tensor([0.5, 0.1, 1.0], dtype=lib.float64, requires_grad=True)  # float64 result
    out = lib.clamp(x, lo, hi)
    out.sum().backward()
    return [out.detach(), x.grad, lo.grad, hi.grad]


def test_mixed_dtype_gradients_take_each_input_dtype(torch):
    for got, expected in zip(_mixed_grads(og), _mixed_grads(torch)):
        assert_same_tensor(got, expected)


# ---- NaN, min > max --------------------------------------------------------------------------

NAN = float("nan")
SPECIAL = [
    ("nan_self", [NAN, 1.0, 5.0, -1.0], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0]),
    ("nan_min", [0.5, 1.0, 5.0, -1.0], [NAN, 0.0, NAN, 0.0], [2.0, 2.0, 2.0, 2.0]),
    ("nan_max", [0.5, 1.0, 5.0, -1.0], [0.0, 0.0, 0.0, 0.0], [NAN, 2.0, NAN, 2.0]),
    ("min_above_max", [0.5, 3.0, -3.0, 1.5], [2.0, 2.0, 2.0, 1.0], [1.0, 1.0, 1.0, 0.0]),
    ("min_equals_max", [0.5, 3.0, 1.0, -1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]),
]


def _special_run(lib, values):
    x, lo, hi = [lib.tensor(v, requires_grad=True) for v in values]
    out = lib.clamp(x, lo, hi)
    out.backward(lib.tensor([1.0, 2.0, 3.0, 4.0]))
    return [out.detach(), x.grad, lo.grad, hi.grad]


@pytest.mark.parametrize("values", [pytest.param(c[1:], id=c[0]) for c in SPECIAL])
def test_nan_and_crossed_bounds_match_torch(torch, values):
    for got, expected in zip(_special_run(og, values), _special_run(torch, values)):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())  # NaN equals NaN here


# ---- errors ---------------------------------------------------------------------------------

ERRORS = [
    ("no_bounds", lambda L: L.clamp(L.ones(2), None, None), RuntimeError, "At least one of"),
    (
        "no_bounds_overload",
        lambda L: L.ops.aten.clamp.Tensor(L.ones(2)),
        RuntimeError,
        "At least one of",
    ),
    (
        "bool_both_bounds",
        lambda L: L.clamp(L.tensor([True]), L.tensor(False), L.tensor(True)),
        NotImplementedError,
        "\"clamp_cpu\" not implemented for 'Bool'",
    ),
    (
        "bounds_do_not_broadcast",
        lambda L: L.clamp(L.ones(2, 3), L.zeros(3), L.ones(2)),
        RuntimeError,
        "must match the size",
    ),
    (
        "inplace_float_bound_into_int",
        lambda L: L.tensor([1, 5]).clamp_(L.tensor(0.5)),
        RuntimeError,
        "can't be cast to the desired output type Long",
    ),
    (
        "inplace_result_larger_than_self",
        lambda L: L.ones(2).clamp_(L.zeros(3, 2)),
        RuntimeError,
        "doesn't match the broadcast shape",
    ),
    (
        "inplace_on_leaf",
        lambda L: L.ones(3, requires_grad=True).clamp_(L.zeros(3)),
        RuntimeError,
        "a leaf Variable that requires grad",
    ),
    (
        "out_narrowing",
        lambda L: L.clamp(L.ones(2), L.zeros(2), out=L.empty(2, dtype=L.int64)),
        RuntimeError,
        "can't be cast to the desired output type Long",
    ),
    (
        "out_with_grad",
        lambda L: L.clamp(L.ones(2), None, L.zeros(2, requires_grad=True), out=L.empty(2)),
        RuntimeError,
        "don't support automatic differentiation",
    ),
]


@pytest.mark.parametrize("fn, exc, phrase", [pytest.param(*c[1:], id=c[0]) for c in ERRORS])
def test_errors_match_torch(torch, fn, exc, phrase):
    assert_same_error(torch, fn, exc, phrase)


def test_failed_inplace_leaves_self_untouched():
    x = og.tensor([1.0, -2.0])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.clamp_(og.zeros(3, 2))
    with pytest.raises(RuntimeError, match="must match the size"):
        x.clamp_(og.zeros(3))
    assert x.tolist() == [1.0, -2.0] and x._version == 0


# ---- in-place and out= -----------------------------------------------------------------------


def test_inplace_aten_calls_match_torch(torch):
    def run(lib):
        x, t0, t1 = _x(lib), lib.tensor(-0.4), lib.tensor([0.5, -1.0, 0.1])
        return aten_log(lib, lambda: (x * 1).clamp_(t0, t1))

    assert run(og) == run(torch)


def _inplace_run(lib):
    x = _x(lib)
    lo = lib.tensor([-0.4, 0.1, -1.0], requires_grad=True)
    hi = lib.tensor(0.5, requires_grad=True)
    t = x * 1
    result = t.clamp_(lo, hi)
    saved = result.grad_fn._saved_self
    (result * result).sum().backward()
    return [result is t, t._version, node_type_name(result.grad_fn)], [
        result.detach(),
        saved.detach(),
        x.grad,
        lo.grad,
        hi.grad,
    ]


def test_inplace_matches_torch(torch):
    got_facts, got = _inplace_run(og)
    facts, expected = _inplace_run(torch)
    assert got_facts == facts == [True, 1, "ClampBackward0"]
    for g, e in zip(got, expected):
        assert_same_tensor(g, e)


def _out_run(lib):
    out = lib.empty(0, dtype=lib.float64)
    returned = lib.clamp(lib.tensor(X), lib.tensor([-0.4, 0.1, -1.0]), lib.tensor(0.5), out=out)
    return returned is out, out._version, out


def test_out_variant_matches_torch(torch):
    got_is, got_version, got = _out_run(og)
    is_out, version, expected = _out_run(torch)
    assert (got_is, got_version) == (is_out, version) == (True, 1)
    assert_same_tensor(got, expected)


# ---- saved fields ----------------------------------------------------------------------------


def _saved_facts(lib, with_min, with_max, bounds_require_grad):
    x = _x(lib)
    lo = lib.tensor([-0.4, 0.1, -1.0], requires_grad=bounds_require_grad) if with_min else None
    hi = lib.tensor(0.5, requires_grad=bounds_require_grad) if with_max else None
    node = lib.clamp(x, lo, hi).grad_fn
    facts = [node_type_name(node)]
    for name, value in (("self", x), ("min", lo), ("max", hi)):
        saved = getattr(node, f"_saved_{name}")
        raw = getattr(node, f"_raw_saved_{name}")
        facts.append((name, saved is value, saved is None, type(raw).__name__))
    facts.append([(node_type_name(f), n) for f, n in node.next_functions])
    return facts


@pytest.mark.parametrize("with_min, with_max", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("bounds_require_grad", [True, False])
def test_saved_fields_and_edges_match_torch(torch, with_min, with_max, bounds_require_grad):
    args = (with_min, with_max, bounds_require_grad)
    assert _saved_facts(og, *args) == _saved_facts(torch, *args)


# ---- logical_or (clamp's backward for max) -------------------------------------------------


def test_logical_or_inplace_matches_torch(torch):
    def run(lib):
        a = lib.tensor([True, False, False, True])
        returned = a.logical_or_(lib.tensor([0.0, 2.0, 0.0, 0.0]))
        return returned is a, a._version, a.tolist(), lib.logical_or(a, lib.tensor(1)).tolist()

    assert run(og) == run(torch)
