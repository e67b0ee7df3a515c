"""max, min, amax, amin, aminmax, argmax, argmin against torch: values and indices over
dtypes, ties and NaN; the gradient rules at ties (even shares for whole-tensor and amax
reductions, the returned index for dim reductions); second derivatives and tangents; node
names and saved fields; the named tuples; out=; the binary form; errors. torch's OpInfo
samples run in test_opinfo.py."""

from __future__ import annotations

import math
import pickle

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

NAN = math.nan
TIES = [[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 0.0, 2.0], [5.0, -1.0, 5.0, 5.0]]
WITH_NAN = [[1.0, NAN, 3.0, NAN], [2.0, 2.0, 0.0, -1.0], [NAN, -1.0, 5.0, 5.0]]


def _comparable(value):
    """Nested lists of numbers with NaN spelled "nan" (NaN equals nothing, itself included)."""
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def _values(t):
    return None if t is None else _comparable(vals(t))


def _result(value):
    """Values, dtypes and shapes of a tensor or a tuple of them (and its type's name)."""
    if isinstance(value, tuple):
        return type(value).__name__, [_result(v) for v in value]
    return _values(value), dtype_name(value.dtype), tuple(value.shape)


def _same_call(torch, data, dtype, call):
    def scenario(lib):
        x = lib.tensor(data, dtype=getattr(lib, dtype))
        return _result(call(lib, x))

    assert_same(torch, scenario)


REDUCTIONS = {
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: lib.min(x),
    "max_dim": lambda lib, x: lib.max(x, 1),
    "max_dim_keepdim": lambda lib, x: x.max(-1, keepdim=True),
    "min_dim": lambda lib, x: x.min(dim=0),
    "min_dim_keepdim": lambda lib, x: lib.min(x, -2, True),
    "amax": lambda lib, x: x.amax(),
    "amax_dims": lambda lib, x: lib.amax(x, (0, -1)),
    "amin_dim_keepdim": lambda lib, x: x.amin(1, keepdim=True),
    "aminmax": lambda lib, x: lib.aminmax(x),
    "aminmax_dim": lambda lib, x: x.aminmax(dim=-1),
    "aminmax_keepdim": lambda lib, x: lib.aminmax(x, keepdim=True),
    "argmax": lambda lib, x: x.argmax(),
    "argmax_keepdim": lambda lib, x: lib.argmax(x, keepdim=True),
    "argmin_dim": lambda lib, x: lib.argmin(x, 1),
    "argmin_dim_keepdim": lambda lib, x: x.argmin(0, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_float_values_and_indices_follow_torch_at_ties_and_nan(torch, name, data):
    _same_call(torch, data, "float64", REDUCTIONS[name])


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int8", "uint8"])
def test_results_keep_the_input_dtype_and_indices_are_int64(torch, name, dtype):
    _same_call(torch, [[1, 7, 7, 0], [3, 3, 2, 9], [4, 0, 4, 1]], dtype, REDUCTIONS[name])


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_bool_inputs_as_torch(torch, name):
    def scenario(lib):
        x = lib.tensor([[True, False, True], [False, False, True]])
        try:
            return _result(REDUCTIONS[name](lib, x))
        except RuntimeError as exc:  # argmax/argmin refuse bool
            return str(exc)

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.max(0),
        lambda lib, x: x.max(-1, True),
        lambda lib, x: x.amax(0),
        lambda lib, x: x.amin(()),
        lambda lib, x: x.aminmax(dim=0),
        lambda lib, x: x.argmax(0, keepdim=True),
        lambda lib, x: x.max(),
    ],
)
def test_zero_dim_inputs(torch, call):
    _same_call(torch, 3.5, "float64", call)


# ---- gradients ----------------------------------------------------------------------

GRADIENT_CALLS = {
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: x.min(),
    "max_dim": lambda lib, x: x.max(1).values,
    "max_dim_keepdim": lambda lib, x: x.max(-1, keepdim=True)[0],
    "min_dim": lambda lib, x: x.min(0).values,
    "amax": lambda lib, x: x.amax(),
    "amax_dims": lambda lib, x: x.amax((0, 1)),
    "amax_dim": lambda lib, x: x.amax(1),
    "amin_dim_keepdim": lambda lib, x: x.amin(-1, True),
    "aminmax": lambda lib, x: lib.stack(lib.aminmax(x)),
    "aminmax_min_only": lambda lib, x: lib.aminmax(x, dim=0).min,
    "aminmax_dim_keepdim": lambda lib, x: lib.cat(lib.aminmax(x, dim=1, keepdim=True), 1),
}


def _gradients(lib, data, call):
    x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    out = call(lib, x)
    w = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
    if not g.requires_grad:  # piecewise linear: a gradient may have no graph
        return _values(g), None
    (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True, materialize_grads=True)
    return _values(g), _values(gg)


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_gradients_at_ties_and_nan_follow_torch(torch, name, data):
    assert_same(torch, lambda lib: _gradients(lib, data, GRADIENT_CALLS[name]))


@pytest.mark.parametrize("name", ["max_dim", "max", "amax_dim", "aminmax"])
def test_gradient_of_the_gradient_flows_back_to_the_incoming_gradient(torch, name):
    def scenario(lib):
        x = lib.tensor(TIES, dtype=lib.float64, requires_grad=True)
        out = GRADIENT_CALLS[name](lib, x)
        v = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
        v.requires_grad_()
        (g,) = lib.autograd.grad(out, x, v, create_graph=True)
        (gv,) = lib.autograd.grad((g * lib.tensor(TIES, dtype=lib.float64)).sum(), v)
        return vals(g), vals(gv)

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_tangents_at_ties_and_nan_follow_torch(torch, name, data):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            tangent = lib.tensor(np.arange(12.0).reshape(3, 4))
            x = fwAD.make_dual(lib.tensor(data, dtype=lib.float64), tangent)
            out = GRADIENT_CALLS[name](lib, x)
            return _values(fwAD.unpack_dual(out).tangent)

    assert_same(torch, scenario)


NODE_CALLS = {
    "max": (lambda lib, x: x.max(), "MaxBackward1"),
    "min": (lambda lib, x: x.min(), "MinBackward1"),
    "max_dim": (lambda lib, x: x.max(1)[0], "MaxBackward0"),
    "max_negative_dim_keepdim": (lambda lib, x: x.max(-1, True)[0], "MaxBackward0"),
    "min_dim": (lambda lib, x: x.min(0)[0], "MinBackward0"),
    "amax": (lambda lib, x: x.amax(), "AmaxBackward0"),
    "amax_negative_dims": (lambda lib, x: x.amax((-1, 0), True), "AmaxBackward0"),
    "amin": (lambda lib, x: x.amin(1), "AminBackward0"),
    "aminmax": (lambda lib, x: x.aminmax()[1], "AminmaxBackward0"),
    "aminmax_dim": (lambda lib, x: x.aminmax(dim=-1, keepdim=True)[0], "AminmaxBackward0"),
    "binary_max": (lambda lib, x: lib.max(x, x * 2), "MaximumBackward0"),
    "binary_min": (lambda lib, x: x.min(x * 2), "MinimumBackward0"),
}


@pytest.mark.parametrize("name", sorted(NODE_CALLS))
def test_node_names_and_saved_fields_match_torch(torch, name):
    call, node = NODE_CALLS[name]
    x_og = og.tensor(TIES, dtype=og.float64, requires_grad=True)
    x_t = torch.tensor(TIES, dtype=torch.float64, requires_grad=True)
    got, expected = call(og, x_og), call(torch, x_t)
    assert type(expected.grad_fn).__name__ == node
    assert type(got.grad_fn).__name__ == node
    assert_same_saved_fields(torch, got.grad_fn, expected.grad_fn, (x_og,), (x_t,), what=name)


def test_indices_and_argmax_never_require_grad(torch):
    def scenario(lib):
        x = lib.tensor(TIES, requires_grad=True)
        values, indices = x.max(1)
        return values.requires_grad, indices.requires_grad, x.argmax().requires_grad

    assert_same(torch, scenario)


# ---- the named tuples -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, fields",
    [
        (lambda lib, x: lib.max(x, 1), ("values", "indices")),
        (lambda lib, x: x.min(0, keepdim=True), ("values", "indices")),
        (lambda lib, x: lib.aminmax(x, dim=1), ("min", "max")),
    ],
)
def test_named_tuples_index_unpack_and_name_their_fields(torch, call, fields):
    def scenario(lib):
        r = call(lib, lib.tensor(TIES))
        first, second = r
        return (
            type(r).__name__,
            type(r).__module__.replace("torch", "LIB").replace("opgrad", "LIB"),
            isinstance(r, tuple),
            len(r),
            getattr(r, fields[0]) is r[0] is first,
            getattr(r, fields[1]) is r[1] is second,
            type(r).n_fields,
            type(r).n_sequence_fields,
            repr(r).replace("torch", "LIB").replace("opgrad", "LIB"),
        )

    assert_same(torch, scenario)


def test_named_tuples_pickle_and_rebuild_from_a_sequence():
    copy = pickle.loads(pickle.dumps(og.return_types.aminmax((1.5, 2.5))))
    assert type(copy) is og.return_types.aminmax and (copy.min, copy.max) == (1.5, 2.5)
    r = og.max(og.tensor(TIES), 1)
    again = og.return_types.max((r.values, r.indices))
    assert again.values is r.values
    with pytest.raises(TypeError):
        og.return_types.max((r.values,))


def test_aten_overloads_return_plain_tuples(torch):
    def scenario(lib):
        x = lib.tensor(TIES)
        return [
            type(lib.ops.aten.max.dim(x, 1)).__name__,
            type(lib.ops.aten.aminmax.default(x)).__name__,
        ]

    assert_same(torch, scenario)


# ---- out= ---------------------------------------------------------------------------


def test_out_tuples_are_written_in_place_and_returned_as_named_tuples(torch):
    def scenario(lib):
        x = lib.tensor(TIES)
        values, indices = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.max(x, 1, keepdim=True, out=(values, indices))
        low, high = lib.empty(0), lib.empty(0)
        r2 = lib.aminmax(x, dim=0, out=(low, high))
        return (
            type(r).__name__,
            r.values is values and r.indices is indices,
            vals(values),
            vals(indices),
            values._version,
            type(r2).__name__,
            r2.min is low,
            vals(low),
            vals(high),
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.min(x, 0, out=(lib.empty(0), lib.empty(0, dtype=lib.int64))),
        lambda lib, x: lib.max(x, out=lib.empty(0)),
        lambda lib, x: lib.min(x, out=lib.empty(0, dtype=lib.float64)),
        lambda lib, x: lib.amax(x, (0, 1), out=lib.empty(0)),
        lambda lib, x: lib.amin(x, 1, True, out=lib.empty(0)),
        lambda lib, x: lib.argmax(x, 1, out=lib.empty(0, dtype=lib.int64)),
        lambda lib, x: lib.argmin(x, out=lib.empty(0, dtype=lib.int64)),
        lambda lib, x: lib.max(x, -x, out=lib.empty(0)),
        lambda lib, x: lib.min(x, x * 0.5, out=lib.empty(0, dtype=lib.float64)),
    ],
)
def test_out_variants_write_torch_values(torch, call):
    def scenario(lib):
        return _result(call(lib, lib.tensor(TIES)))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, phrase",
    [
        (
            lambda lib, x: lib.max(x, 1, out=(lib.empty(0, dtype=lib.float64), lib.empty(0))),
            "Expected out tensor to have dtype float, but got double instead",
        ),
        (
            lambda lib, x: lib.min(x, 1, out=(lib.empty(0), lib.empty(0, dtype=lib.int32))),
            "Expected out tensor to have dtype long int, but got int instead",
        ),
        (
            lambda lib, x: lib.argmax(x, out=lib.empty(0, dtype=lib.int32)),
            "Expected out tensor to have dtype long int, but got int instead",
        ),
        (
            lambda lib, x: lib.aminmax(x, out=(lib.empty(0, dtype=lib.float64), lib.empty(0))),
            "Expected out tensor to have dtype float, but got double instead",
        ),
        (
            lambda lib, x: lib.max(x, x, out=lib.empty(0, dtype=lib.int64)),
            "result type Float can't be cast to the desired output type Long",
        ),
    ],
)
def test_out_dtype_errors(torch, call, phrase):
    assert_same_error(torch, lambda lib: call(lib, lib.tensor(TIES)), RuntimeError, phrase)


def test_a_refused_out_leaves_every_out_unchanged(torch):
    def scenario(lib):
        values, indices = lib.zeros(3), lib.zeros(3, dtype=lib.int32)
        try:
            lib.max(lib.tensor(TIES), 1, out=(values, indices))
        except RuntimeError:
            pass
        return vals(values), vals(indices), values._version, indices._version

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.max(x, out=lib.empty(0)),
        lambda lib, x: lib.max(x, 1, out=(lib.empty(0), lib.empty(0, dtype=lib.int64))),
    ],
)
def test_out_refuses_inputs_that_require_grad(torch, call):
    assert_same_error(
        torch,
        lambda lib: call(lib, lib.tensor(TIES, requires_grad=True)),
        RuntimeError,
        "don't support automatic differentiation",
    )


# ---- the binary form, dispatch and Python protocol -------------------------------------


def test_binary_max_and_min_are_maximum_and_minimum(torch):
    def scenario(lib):
        a = lib.tensor(TIES, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(WITH_NAN, dtype=lib.float64)
        out = lib.max(a, b) + a.min(b * 0 + 2)
        (g,) = lib.autograd.grad(out.sum(), a)
        promoted = lib.max(lib.tensor([1, 5]), lib.tensor([2.5, 0.5]))
        return _values(out), _values(g), vals(promoted), dtype_name(promoted.dtype)

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.max(),
        lambda lib, x: lib.max(x, 1),
        lambda lib, x: x.min(0, True),
        lambda lib, x: lib.max(x, x),
        lambda lib, x: x.min(x),
        lambda lib, x: lib.max(x, 1, out=(lib.empty(0), lib.empty(0, dtype=lib.int64))),
        lambda lib, x: lib.amax(x),
        lambda lib, x: lib.aminmax(x, dim=1),
        lambda lib, x: x.argmin(),
    ],
)
def test_a_dispatch_mode_sees_torchs_overloads(torch, call):
    def scenario(lib):
        x = lib.tensor(TIES)
        return aten_log(lib, lambda: call(lib, x))

    assert_same(torch, scenario)


def test_python_max_sorted_and_item_over_a_1d_tensor(torch):
    def scenario(lib):
        t = lib.tensor([3.0, -1.0, 7.5, 2.0])
        return (
            vals(max(t)),
            vals(min(t)),
            [vals(v) for v in sorted(t)],
            t.max().item(),
            lib.tensor([4, 9, 2]).min().item(),
        )

    assert_same(torch, scenario)


# ---- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib, e: e.max(), RuntimeError, "Expected reduction dim to be specified"),
        (lambda lib, e: e.min(), RuntimeError, "Expected reduction dim to be specified"),
        (lambda lib, e: e.max(0), IndexError, "Expected reduction dim 0 to have non-zero size"),
        (lambda lib, e: e.min(-2), IndexError, "Expected reduction dim 0 to have non-zero size"),
        (lambda lib, e: e.amax(), RuntimeError, "Expected reduction dim to be specified"),
        (lambda lib, e: e.amax(-2), IndexError, "Expected reduction dim -2 to have non-zero"),
        (lambda lib, e: e.amin((1, 0)), IndexError, "Expected reduction dim 0 to have non-zero"),
        (lambda lib, e: e.aminmax(), RuntimeError, "cannot compute aminmax over an empty"),
        (lambda lib, e: e.aminmax(dim=0), IndexError, "aminmax: Expected reduction dim 0"),
        (lambda lib, e: e.argmax(), IndexError, "Expected reduction dim to be specified"),
        (lambda lib, e: e.argmin(-2), IndexError, "Expected reduction dim 0 to have non-zero"),
    ],
)
def test_empty_reductions_raise_torchs_errors(torch, call, exc_type, phrase):
    assert_same_error(torch, lambda lib: call(lib, lib.empty(0, 3)), exc_type, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, e: e.max(1),
        lambda lib, e: e.amin(1, keepdim=True),
        lambda lib, e: lib.aminmax(e, dim=1),
        lambda lib, e: e.argmax(1),
    ],
)
def test_empty_results_along_a_nonempty_dim(torch, call):
    def scenario(lib):
        return _result(call(lib, lib.empty(0, 3)))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib, x: x.max(2), IndexError, "Dimension out of range"),
        (lambda lib, x: x.min(-3), IndexError, "Dimension out of range"),
        (lambda lib, x: x.amax(5), IndexError, "Dimension out of range"),
        (lambda lib, x: x.amax((0, -2)), RuntimeError, "dim 0 appears multiple times"),
        (lambda lib, x: x.aminmax(dim=2), IndexError, "Dimension out of range"),
        (lambda lib, x: x.argmax(-3), IndexError, "Dimension out of range"),
        (lambda lib, x: lib.tensor(1.0).max(1), IndexError, "Dimension out of range"),
    ],
)
def test_bad_dims_raise_torchs_errors(torch, call, exc_type, phrase):
    assert_same_error(torch, lambda lib: call(lib, lib.tensor(TIES)), exc_type, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.max(x, 2.0),
        lambda lib, x: lib.max(x, keepdim=True),
        lambda lib, x: lib.max(x, 1, out=lib.empty(0)),
    ],
)
def test_calls_no_signature_takes_raise_type_errors(torch, call):
    def scenario(lib):
        try:
            call(lib, lib.tensor(TIES))
        except TypeError as exc:
            return str(exc).splitlines()[0].replace("torch", "LIB").replace("opgrad", "LIB")
        return "no error"

    assert_same(torch, scenario)
