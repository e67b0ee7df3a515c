"""cumsum, cumprod, cummax, cummin, logcumsumexp, trace, diff and flip against torch: values
over dtypes and dims (dtype=, in-place, out=), ties and NaN in cummax/cummin, cumprod's
gradient at one and several zeros (first and second derivatives), tangents, node names and
saved fields, named tuples, the aten calls a dispatch mode sees, and errors. torch's OpInfo
samples run in test_opinfo.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    aten_log,
    assert_same,
    outcome,
    assert_same_error,
    assert_same_saved_fields,
    dtype_name,
    vals,
)

NAN = math.nan


def _comparable(value):
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def _result(value):
    if isinstance(value, tuple):
        return type(value).__name__, [_result(v) for v in value]
    return _comparable(vals(value)), dtype_name(value.dtype), tuple(value.shape)


def _same_call(torch, data, dtype, call):
    def scenario(lib):
        return _result(call(lib, lib.tensor(data, dtype=getattr(lib, dtype))))

    assert_same(torch, scenario)


DATA = [[1, 7, 7, 0, 2], [3, 3, 2, 9, 3], [4, 0, 4, 1, 0]]
CALLS = {
    "cumsum": lambda lib, x: x.cumsum(1),
    "cumsum_dim0": lambda lib, x: lib.cumsum(x, 0),
    "cumsum_negative_dim": lambda lib, x: lib.cumsum(x, dim=-2),
    "cumprod": lambda lib, x: x.cumprod(1),
    "cumprod_dim0": lambda lib, x: lib.cumprod(x, -2),
    "cummax": lambda lib, x: x.cummax(1),
    "cummax_dim0": lambda lib, x: lib.cummax(x, 0),
    "cummin": lambda lib, x: x.cummin(-1),
    "cummin_dim0": lambda lib, x: lib.cummin(x, dim=0),
    "trace": lambda lib, x: x.trace(),
    "diff": lambda lib, x: x.diff(),
    "diff_dim0_n2": lambda lib, x: lib.diff(x, 2, 0),
    "flip": lambda lib, x: x.flip(0, 1),
    "flip_list": lambda lib, x: lib.flip(x, [-1]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int16", "uint8"])
def test_values_and_dtypes_follow_torch(torch, name, dtype):
    _same_call(torch, DATA, dtype, CALLS[name])


@pytest.mark.parametrize(
    "name", ["cumsum", "cumprod", "cummax", "cummin_dim0", "diff", "diff_dim0_n2", "flip"]
)
def test_bool_inputs_as_torch(torch, name):
    _same_call(torch, [[True, False, True], [False, False, True]], "bool", CALLS[name])


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_logcumsumexp_values_follow_torch(torch, dtype):
    data = [[0.5, -2.0, 30.0, 1.0], [-math.inf, -math.inf, 2.0, math.inf], [NAN, 1.0, 2.0, 3.0]]
    _same_call(torch, data, dtype, lambda lib, x: x.logcumsumexp(1))
    _same_call(torch, data, dtype, lambda lib, x: lib.logcumsumexp(x, 0))


def test_float32_running_sums_round_each_output_once(torch):
    # PyTorch accumulates float32 in double: numpy's float32 cumsum would drift here
    data = np.random.default_rng(0).standard_normal((2, 5000)).astype(np.float32).tolist()
    _same_call(torch, data, "float32", lambda lib, x: x.cumsum(1))
    _same_call(torch, data, "float32", lambda lib, x: (x * 0.001 + 1).cumprod(1))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.cumsum(0, dtype=lib.float64),
        lambda lib, x: lib.cumsum(x, 1, dtype=lib.int32),
        lambda lib, x: x.cumprod(1, dtype=lib.float32),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_dtype_argument_casts_the_input_first(torch, call, dtype):
    _same_call(torch, [[1.5, 0.0, 2.0], [-1.0, 3.0, 0.5]], dtype, call)


# ---- cummax and cummin: ties, NaN, signed zeros ---------------------------------------

TIES = [[1.0, 3.0, 3.0, 2.0, 3.0, 0.0], [2.0, 2.0, 2.0, 1.0, 1.0, 5.0]]
WITH_NAN = [[1.0, NAN, 3.0, NAN, 5.0, 0.0], [2.0, 1.0, NAN, 0.0, NAN, NAN]]


@pytest.mark.parametrize("data", [TIES, WITH_NAN, [[0.0, -0.0, 0.0, -0.0]]])
@pytest.mark.parametrize("name", ["cummax", "cummin", "cummax_dim0", "cummin_dim0"])
def test_cummax_cummin_report_the_latest_tie_and_nan(torch, name, data):
    _same_call(torch, data, "float64", CALLS[name])


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_gradients_go_to_the_reported_indices(torch, name):
    def scenario(lib):
        x = lib.tensor(TIES, dtype=lib.float64, requires_grad=True)
        values = getattr(x, name)(1).values
        weights = lib.arange(12, dtype=lib.float64).reshape(2, 6)
        (grad,) = lib.autograd.grad(values, x, weights)
        return vals(grad)

    assert_same(torch, scenario)


def test_named_tuples_and_their_out_forms(torch):
    def scenario(lib):
        x = lib.tensor(TIES)
        result = lib.cummax(x, 1)
        values, indices = lib.empty(0), lib.empty(0, dtype=lib.int64)
        written = lib.cummin(x, 0, out=(values, indices))
        return (
            type(result).__name__,
            vals(result.values),
            vals(result.indices),
            type(written).__name__,
            written.values is values,
            vals(indices),
        )

    assert_same(torch, scenario)
    assert type(og.cummax(og.tensor([1.0]), 0)) is og.return_types.cummax


# ---- in-place and out= -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.cumsum_(1),
        lambda lib, x: x.cumprod_(0),
        lambda lib, x: x.cumsum_(0, dtype=x.dtype),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_in_place_forms_keep_self_and_its_dtype(torch, call, dtype):
    def scenario(lib):
        x = lib.tensor(DATA, dtype=getattr(lib, dtype))
        result = call(lib, x)
        return result is x, _result(x), x._version

    assert_same(torch, scenario)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_in_place_refuses_another_dtype(torch, dtype):
    def scenario(lib):
        x = lib.tensor(DATA, dtype=getattr(lib, dtype))
        other = lib.float64 if dtype == "float32" else lib.float32
        x.cumsum_(0, dtype=other)

    assert_same_error(torch, scenario, RuntimeError, "Bad in-place call")


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, out: lib.cumsum(x, 1, out=out),
        lambda lib, x, out: lib.cumprod(x, 0, out=out),
        lambda lib, x, out: lib.cumsum(x, 1, dtype=out.dtype, out=out),
        lambda lib, x, out: lib.diff(x, out=out),
        lambda lib, x, out: lib.diff(x, 2, 0, out=out),
    ],
)
@pytest.mark.parametrize("out_dtype", ["float32", "int64", "float64"])
def test_out_forms_compute_in_outs_dtype_as_torch(torch, call, out_dtype):
    def scenario(lib):
        x = lib.tensor([[1.5, 0.5, 2.0], [-1.0, 3.0, 0.25]])
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        return outcome(lambda: (call(lib, x, out) is out, _result(out)))

    assert_same(torch, scenario)


def test_cumsum_out_with_another_dtype_argument_is_refused(torch):
    def scenario(lib):
        lib.cumsum(lib.ones(3), 0, dtype=lib.float64, out=lib.empty(0))

    assert_same_error(torch, scenario, RuntimeError, "Expected out tensor to have dtype double")


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.cummax(lib.ones(3), 0, out=(lib.empty(0), lib.empty(0, dtype=lib.int32))),
        lambda lib: lib.cummin(
            lib.ones(3), 0, out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64))
        ),
        lambda lib: lib.logcumsumexp(lib.ones(3), 0, out=lib.empty(0, dtype=lib.float64)),
        lambda lib: lib.logcumsumexp(lib.ones(3, dtype=lib.int64), 0, out=lib.empty(0)),
        lambda lib: lib.diff(lib.ones(3), 0, out=lib.empty(0, dtype=lib.int64)),
    ],
)
def test_out_of_another_scalar_type_is_refused(torch, call):
    assert_same_error(torch, call, RuntimeError, "expected scalar_type")


# ---- edge shapes and errors ------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.cumprod(-1),
        lambda lib, x: x.cummax(0),
        lambda lib, x: x.cummin(-1),
        lambda lib, x: x.logcumsumexp(0),
        lambda lib, x: x.flip(0),
    ],
)
def test_zero_dim_inputs(torch, call):
    _same_call(torch, 2.5, "float64", call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, e: e.cumsum(0),
        lambda lib, e: e.cumprod(1),
        lambda lib, e: e.cummax(0),
        lambda lib, e: e.cummin(1),
        lambda lib, e: e.logcumsumexp(1),
        lambda lib, e: e.trace(),
        lambda lib, e: e.diff(),
        lambda lib, e: e.diff(dim=0),
        lambda lib, e: e.flip(1),
    ],
)
def test_empty_inputs_as_torch(torch, call):
    _same_call(torch, np.zeros((3, 0)).tolist(), "float64", call)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda lib: lib.ones(3).cumsum(1), IndexError, "Dimension out of range"),
        (lambda lib: lib.tensor(3.0).cumprod(1), IndexError, "Dimension out of range"),
        (lambda lib: lib.ones(3).cummax(-2), IndexError, "Dimension out of range"),
        (lambda lib: lib.ones(3, dtype=lib.int64).logcumsumexp(0), NotImplementedError, "Long"),
        (lambda lib: lib.ones(3, dtype=lib.bool).logcumsumexp(0), NotImplementedError, "Bool"),
        (lambda lib: lib.ones(3).trace(), RuntimeError, "expected a matrix"),
        (lambda lib: lib.ones(2, 2, dtype=lib.bool).trace(), NotImplementedError, "Bool"),
        (lambda lib: lib.diff(lib.tensor(1.0)), RuntimeError, "at least one-dimensional"),
        (lambda lib: lib.diff(lib.ones(3), n=-1), RuntimeError, "order must be non-negative"),
        (lambda lib: lib.diff(lib.ones(3), dim=2), IndexError, "Dimension out of range"),
        (
            lambda lib: lib.diff(lib.ones(3), prepend=lib.ones(1, 1)),
            RuntimeError,
            "same dimension as input",
        ),
        (
            lambda lib: lib.diff(lib.ones(2, 3), append=lib.ones(3, 1)),
            RuntimeError,
            "input.size(0) = 2, but got tensor.size(0) = 3",
        ),
        (lambda lib: lib.ones(2, 2).flip(0, 0), RuntimeError, "appears multiple times"),
        (lambda lib: lib.ones(2, 2).flip(2), IndexError, "Dimension out of range"),
    ],
)
def test_errors_as_torch(torch, call, exc, phrase):
    assert_same_error(torch, call, exc, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.diff(x, n=5),
        lambda lib, x: lib.diff(x, n=0),
        lambda lib, x: lib.diff(x, prepend=x[:, :2], append=x[:, :1]),
        lambda lib, x: lib.diff(x, 3, 0, append=lib.zeros(2, 4, dtype=lib.float64)),
        lambda lib, x: lib.diff(x > 0, 2),
        lambda lib, x: lib.diff(x.to(lib.int64), append=lib.tensor([[0.5], [1.5]])),
    ],
)
def test_diff_orders_and_ends(torch, call):
    _same_call(torch, [[1.0, -2.0, 4.0, 0.5], [3.0, 3.0, -1.0, 2.0]], "float64", call)


# ---- gradients, second derivatives and tangents ----------------------------------------

ZEROS = {
    "no_zero": [[1.5, -2.0, 0.5, 3.0], [2.0, 1.0, -1.0, 0.25]],
    "one_zero": [[1.5, 0.0, 0.5, 3.0], [2.0, 1.0, -1.0, 0.0]],
    "two_zeros": [[0.0, 2.0, 0.0, 3.0], [2.0, 0.0, -1.0, 0.0]],
    "several_zeros": [[1.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0]],
}


def _gradients(lib, data, call, create_graph):
    x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    y = call(lib, x)
    y = y[0] if isinstance(y, tuple) else y
    weights = lib.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape)).tolist())
    weights = weights.to(lib.float64)
    (grad,) = lib.autograd.grad(y, x, weights, create_graph=create_graph)
    if not create_graph:
        return vals(grad)
    (second,) = lib.autograd.grad((grad * grad * x).sum(), x)
    return vals(grad), vals(second)


def _close(got, expected):
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("zeros", sorted(ZEROS))
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "double_backward"])
def test_cumprod_gradient_at_zeros_is_torchs(torch, zeros, dim, create_graph):
    def call(lib, x):
        return x.cumprod(dim)

    _close(
        _gradients(og, ZEROS[zeros], call, create_graph),
        _gradients(torch, ZEROS[zeros], call, create_graph),
    )


GRADIENT_CALLS = {
    "cumsum": lambda lib, x: x.cumsum(1),
    "cumsum_dtype": lambda lib, x: x.cumsum(0, dtype=lib.float32),
    "cummax": lambda lib, x: x.cummax(1),
    "cummin": lambda lib, x: x.cummin(0),
    "logcumsumexp": lambda lib, x: x.logcumsumexp(1),
    "logcumsumexp_dim0": lambda lib, x: x.logcumsumexp(0),
    "trace": lambda lib, x: x.trace(),
    "diff": lambda lib, x: lib.diff(x, 2, prepend=x[:, :1]),
    "flip": lambda lib, x: x.flip(1, 0),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "double_backward"])
def test_gradients_follow_torch(torch, name, create_graph):
    data = ZEROS["one_zero"]
    call = GRADIENT_CALLS[name]
    _close(_gradients(og, data, call, create_graph), _gradients(torch, data, call, create_graph))


def _tangent(lib, data, tangent, call):
    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        x = fwAD.make_dual(
            lib.tensor(data, dtype=lib.float64), lib.tensor(tangent, dtype=lib.float64)
        )
        y = call(lib, x)
        y = y[0] if isinstance(y, tuple) else y
        return vals(fwAD.unpack_dual(y).tangent)


@pytest.mark.parametrize("zeros", sorted(ZEROS))
@pytest.mark.parametrize(
    "name", ["cumprod", "cumprod_dim0", "cumsum", "cummax", "cummin_dim0", "logcumsumexp"]
)
def test_tangents_follow_torch(torch, name, zeros):
    call = {**GRADIENT_CALLS, **CALLS}[name]
    tangent = [[0.5, -1.0, 2.0, 1.5], [1.0, 0.25, -3.0, 2.0]]
    _close(_tangent(og, ZEROS[zeros], tangent, call), _tangent(torch, ZEROS[zeros], tangent, call))


def test_cumprod_tangent_of_a_zero_dim_zero(torch):
    def call(lib, x):
        return x.cumprod(0)

    _close(_tangent(og, 0.0, 2.5, call), _tangent(torch, 0.0, 2.5, call))


# ---- nodes, saved fields and the calls a dispatch mode sees ----------------------------

NODE_CALLS = {
    "cumsum": lambda lib, x: x.cumsum(-1),
    "cumprod": lambda lib, x: x.cumprod(1),
    "cummax": lambda lib, x: x.cummax(0)[0],
    "cummin": lambda lib, x: x.cummin(-1)[0],
    "logcumsumexp": lambda lib, x: x.logcumsumexp(1),
    "trace": lambda lib, x: x.trace(),
    "flip": lambda lib, x: x.flip(1, -2),
    "diff": lambda lib, x: lib.diff(x),
}


@pytest.mark.parametrize("name", sorted(NODE_CALLS))
def test_node_names_and_saved_fields(torch, name):
    data = ZEROS["no_zero"]
    xt = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    xo = og.tensor(data, dtype=og.float64, requires_grad=True)
    yt, yo = NODE_CALLS[name](torch, xt), NODE_CALLS[name](og, xo)
    assert yo.grad_fn.name() == yt.grad_fn.name()
    assert_same_saved_fields(torch, yo.grad_fn, yt.grad_fn, (xo,), (xt,), what=name)


@pytest.mark.parametrize(
    "name, data",
    [
        ("cumsum", ZEROS["no_zero"]),
        ("cummax", ZEROS["no_zero"]),
        ("logcumsumexp", ZEROS["no_zero"]),
        ("trace", ZEROS["no_zero"]),
        ("cumprod", ZEROS["no_zero"]),
        ("cumprod", ZEROS["two_zeros"]),
    ],
)
def test_backward_calls_a_dispatch_mode_sees(torch, name, data):
    """Without a mode torch skips cumprod's zero-free check under one (a subclass-safe
    path): opgrad always takes torch's unobserved path, so cumprod is compared with zeros."""

    def scenario(lib):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = NODE_CALLS[name](lib, x)
        return aten_log(lib, lambda: y.backward(lib.ones_like(y)))

    if name == "cumprod" and data is ZEROS["no_zero"]:
        log = scenario(og)
        assert log[-5:-2] == ["aten.flip.default", "aten.cumsum.default", "aten.flip.default"]
        return
    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.diff(x, 2, 1, prepend=x, append=x),
        lambda lib, x: lib.diff(x > 0),
        lambda lib, x: lib.diff(x, 0),
        lambda lib, x: lib.diff(x, 2, out=lib.empty(0, dtype=lib.float64)),
    ],
)
def test_diff_makes_torchs_aten_calls(torch, call):
    def scenario(lib):
        x = lib.tensor(ZEROS["no_zero"], dtype=lib.float64)
        return aten_log(lib, lambda: call(lib, x))

    assert_same(torch, scenario)


def test_logcumsumexp_out_writes_a_tensor_of_its_dtype(torch):
    def scenario(lib):
        x = lib.tensor([[1.5, 0.5, 2.0], [-1.0, 3.0, 0.25]], dtype=lib.float64)
        out = lib.empty(0, dtype=lib.float64)
        return lib.logcumsumexp(x, 1, out=out) is out, _result(out)

    assert_same(torch, scenario)
