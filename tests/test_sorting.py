"""sort, argsort, msort, topk, kthvalue, median, nanmedian and mode against torch: values
and indices at ties and NaN, over dtypes, negative and empty dims; gradients (to the
returned indices; whole-tensor medians share it among the ties), second derivatives and
tangents; node names and saved fields; named tuples; out=; the aten calls a dispatch mode
sees; errors. torch's OpInfo samples run in test_opinfo.py.

Where torch's pick among tied elements is an accident of its C++ selection algorithms
(topk and kthvalue, sort with stable=False on slices over 16 elements, mode on slices
over 16 elements or with NaN), opgrad picks the stable order's element: those cases are
checked on values here and on indices only where torch is stable too."""

from __future__ import annotations

import math

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
# at most 16 per slice, where torch's unstable sort (an insertion sort there) is stable
TIES = [
    [2.0, 1.0, 2.0, 3.0, 1.0, 2.0],
    [0.0, 0.0, 5.0, -1.0, 5.0, 0.0],
    [4.0, 4.0, 4.0, 4.0, 1.0, 7.0],
]
WITH_NAN = [
    [1.0, NAN, 3.0, NAN, 0.0, 3.0],
    [NAN, NAN, 1.0, NAN, NAN, NAN],
    [2.0, 1.0, 2.0, NAN, 4.0, 1.0],
]


def _comparable(value):
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def _result(value):
    """Values, dtypes and shapes of a tensor or a tuple of them (and the tuple's type)."""
    if isinstance(value, tuple):
        return type(value).__name__, [_result(v) for v in value]
    return _comparable(vals(value)), dtype_name(value.dtype), tuple(value.shape)


def _values_only(value):
    return _result(value[0] if isinstance(value, tuple) else value)


def _same_call(torch, data, dtype, call, project=_result):
    def scenario(lib):
        return project(call(lib, lib.tensor(data, dtype=getattr(lib, dtype))))

    assert_same(torch, scenario)


# calls whose indices follow torch's at ties and NaN as well
EXACT = {
    "sort": lambda lib, x: x.sort(),
    "sort_dim0": lambda lib, x: lib.sort(x, 0),
    "sort_descending": lambda lib, x: x.sort(descending=True),
    "sort_stable": lambda lib, x: x.sort(stable=True),
    "sort_stable_descending_dim0": lambda lib, x: lib.sort(x, stable=True, dim=-2, descending=True),
    "sort_stable_none": lambda lib, x: x.sort(stable=None, dim=1),
    "argsort": lambda lib, x: x.argsort(),
    "argsort_descending": lambda lib, x: lib.argsort(x, 0, True),
    "argsort_stable": lambda lib, x: x.argsort(stable=True, descending=True),
    "msort": lambda lib, x: lib.msort(x),
    "median": lambda lib, x: x.median(),
    "median_dim": lambda lib, x: x.median(1),
    "median_dim0_keepdim": lambda lib, x: lib.median(x, -2, True),
    "nanmedian": lambda lib, x: x.nanmedian(),
    "nanmedian_dim": lambda lib, x: lib.nanmedian(x, -1),
    "nanmedian_dim0_keepdim": lambda lib, x: x.nanmedian(0, keepdim=True),
}
# calls whose values follow torch's; which of tied indices they return may differ
VALUES = {
    "topk": lambda lib, x: x.topk(2),
    "topk_smallest_dim0": lambda lib, x: lib.topk(x, 2, 0, largest=False),
    "topk_unsorted": lambda lib, x: x.topk(3, sorted=False),
    "kthvalue": lambda lib, x: x.kthvalue(3),
    "kthvalue_dim0_keepdim": lambda lib, x: lib.kthvalue(x, 2, 0, True),
    "mode": lambda lib, x: x.mode(),
    "mode_dim0_keepdim": lambda lib, x: lib.mode(x, 0, True),
}


@pytest.mark.parametrize("name", sorted(EXACT))
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_values_and_indices_follow_torch_at_ties_and_nan(torch, name, data):
    _same_call(torch, data, "float64", EXACT[name])


@pytest.mark.parametrize("name", sorted(VALUES))
def test_selected_values_follow_torch_at_ties(torch, name):
    _same_call(torch, TIES, "float64", VALUES[name], _values_only)


@pytest.mark.parametrize("name", ["topk", "topk_smallest_dim0", "kthvalue"])
def test_selected_values_follow_torch_at_nan(torch, name):
    _same_call(torch, WITH_NAN, "float64", VALUES[name], _values_only)


@pytest.mark.parametrize(
    "name", ["topk", "topk_smallest_dim0", "kthvalue", "kthvalue_dim0_keepdim", "mode"]
)
def test_selections_point_at_their_values(name):
    x = og.tensor(TIES, dtype=og.float64)
    values, indices = VALUES[name](og, x)
    dim = 0 if "dim0" in name else 1
    keep = values if values.dim() == 2 else values.unsqueeze(dim)
    at = indices if indices.dim() == 2 else indices.unsqueeze(dim)
    assert vals(og.gather(x, dim, at)) == vals(keep)


def test_mode_and_topk_indices_follow_torch_without_ties(torch):
    data = [[3.0, -1.0, 2.5, 7.0], [0.5, 9.0, -4.0, 1.0]]
    for call in (lambda lib, x: x.topk(2, largest=False), lambda lib, x: x.kthvalue(2, 0)):
        _same_call(torch, data, "float64", call)
    _same_call(
        torch, [[1.0, 2.0, 2.0, 3.0, 2.0], [5.0, 5.0, 1.0, 1.0, 0.0]], "float64", VALUES["mode"]
    )


@pytest.mark.parametrize("name", sorted(EXACT) + ["mode", "mode_dim0_keepdim"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int16", "uint8"])
def test_results_keep_the_input_dtype_and_indices_are_int64(torch, name, dtype):
    call = EXACT.get(name) or VALUES[name]
    _same_call(torch, [[1, 7, 7, 0, 2], [3, 3, 2, 9, 3], [4, 0, 4, 1, 0]], dtype, call)


@pytest.mark.parametrize("name", ["sort", "sort_descending", "argsort", "msort", "mode"])
def test_bool_inputs_sort_as_torch(torch, name):
    call = EXACT.get(name) or VALUES[name]
    _same_call(torch, [[True, False, True, False], [False, False, True, True]], "bool", call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.sort(),
        lambda lib, x: x.sort(0, True),
        lambda lib, x: x.argsort(),
        lambda lib, x: x.topk(1),
        lambda lib, x: x.topk(0, 0),
        lambda lib, x: x.kthvalue(1),
        lambda lib, x: x.median(0),
        lambda lib, x: x.nanmedian(-1, True),
        lambda lib, x: x.median(),
        lambda lib, x: x.mode(0),
    ],
)
def test_zero_dim_inputs(torch, call):
    _same_call(torch, 3.5, "float64", call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, e: e.sort(1),
        lambda lib, e: e.sort(0, descending=True),
        lambda lib, e: e.argsort(stable=True),
        lambda lib, e: e.topk(0, 1),
        lambda lib, e: e.topk(2, 0),
        lambda lib, e: e.kthvalue(1, 0),
        lambda lib, e: e.median(0),
        lambda lib, e: e.nanmedian(0, True),
        lambda lib, e: e.mode(0),
        lambda lib, e: e.median(),
        lambda lib, e: e.nanmedian(),
        lambda lib, e: lib.msort(e),
    ],
)
def test_empty_inputs_as_torch(torch, call):
    _same_call(torch, np.zeros((3, 0)).tolist(), "float64", call)


def test_long_slices_sort_by_value(torch):
    """Over 16 elements torch's unstable sort may reorder ties: the values still agree, and
    a stable sort agrees in its indices too."""
    data = np.random.default_rng(3).integers(0, 4, (5, 40)).astype(np.float64).tolist()
    _same_call(torch, data, "float64", lambda lib, x: x.sort(descending=True), _values_only)
    _same_call(torch, data, "float64", lambda lib, x: x.sort(stable=True, descending=True))
    _same_call(torch, data, "float64", lambda lib, x: x.median(1))
    _same_call(torch, data, "float64", lambda lib, x: x.nanmedian(0))


# ---- gradients ----------------------------------------------------------------------

GRADIENT_CALLS = {
    "sort": lambda lib, x: x.sort()[0],
    "sort_stable_descending_dim0": lambda lib, x: x.sort(stable=True, dim=0, descending=True)[0],
    "msort": lambda lib, x: lib.msort(x),
    "median": lambda lib, x: x.median(),
    "median_dim": lambda lib, x: x.median(1).values,
    "median_dim_keepdim": lambda lib, x: x.median(0, keepdim=True)[0],
    "nanmedian": lambda lib, x: x.nanmedian(),
    "nanmedian_dim": lambda lib, x: x.nanmedian(-1)[0],
}
# ties broken differently from torch: gradients compared on inputs without ties
DISTINCT_GRADIENT_CALLS = {
    "topk": lambda lib, x: x.topk(3)[0],
    "topk_smallest_dim0": lambda lib, x: x.topk(2, 0, largest=False)[0],
    "kthvalue": lambda lib, x: x.kthvalue(2).values,
    "kthvalue_dim0_keepdim": lambda lib, x: x.kthvalue(2, 0, True)[0],
    "mode": lambda lib, x: x.mode(0)[0],
}
DISTINCT = [[3.0, -1.0, 2.5, 7.0, 0.5], [0.25, 9.0, -4.0, 1.0, 6.0], [5.0, 2.0, 8.0, -3.0, 4.5]]
MODE_DATA = [[3.0, -1.0, 2.5, 2.5, 0.5], [3.0, 9.0, 2.5, 1.0, 0.5], [5.0, 9.0, 8.0, 1.0, 4.5]]


def _gradients(lib, data, call):
    x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    out = call(lib, x)
    w = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
    if not g.requires_grad:
        return _comparable(vals(g)), None
    (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True, materialize_grads=True)
    return _comparable(vals(g)), _comparable(vals(gg))


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS))
@pytest.mark.parametrize("data", [TIES, WITH_NAN], ids=["ties", "nan"])
def test_gradients_at_ties_and_nan_follow_torch(torch, name, data):
    assert_same(torch, lambda lib: _gradients(lib, data, GRADIENT_CALLS[name]))


@pytest.mark.parametrize("name", sorted(DISTINCT_GRADIENT_CALLS))
def test_selection_gradients_follow_torch(torch, name):
    data = MODE_DATA if name == "mode" else DISTINCT
    assert_same(torch, lambda lib: _gradients(lib, data, DISTINCT_GRADIENT_CALLS[name]))


def test_whole_tensor_median_shares_the_gradient_among_its_ties(torch):
    def scenario(lib):
        x = lib.tensor([[2.0, 1.0, 2.0], [3.0, 2.0, 0.0]], dtype=lib.float64, requires_grad=True)
        x.median().backward()
        return vals(x.grad)

    assert_same(torch, scenario)
    assert scenario(og) == [[1 / 3, 0.0, 1 / 3], [0.0, 1 / 3, 0.0]]


def test_median_along_a_dim_sends_the_gradient_to_its_index(torch):
    def scenario(lib):
        x = lib.tensor([[2.0, 1.0, 2.0, 2.0]], requires_grad=True)
        r = x.median(1)
        r.values.sum().backward()
        return vals(r.indices), vals(x.grad)

    assert_same(torch, scenario)


def test_gradient_of_the_gradient_flows_back_to_the_incoming_gradient(torch):
    def scenario(lib):
        x = lib.tensor(TIES, dtype=lib.float64, requires_grad=True)
        out = x.sort(1, descending=True).values
        v = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
        v.requires_grad_()
        (g,) = lib.autograd.grad(out, x, v, create_graph=True)
        (gv,) = lib.autograd.grad((g * lib.tensor(TIES, dtype=lib.float64)).sum(), v)
        return vals(g), vals(gv)

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", sorted(GRADIENT_CALLS) + sorted(DISTINCT_GRADIENT_CALLS))
def test_tangents_follow_torch(torch, name):
    call = GRADIENT_CALLS.get(name) or DISTINCT_GRADIENT_CALLS[name]
    data = MODE_DATA if name == "mode" else (TIES if name in GRADIENT_CALLS else DISTINCT)

    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            tangent = lib.tensor(np.arange(len(data) * len(data[0]), dtype=np.float64))
            x = fwAD.make_dual(lib.tensor(data, dtype=lib.float64), tangent.reshape(x_shape(data)))
            return _comparable(vals(fwAD.unpack_dual(call(lib, x)).tangent))

    assert_same(torch, scenario)


def x_shape(data):
    return (len(data), len(data[0]))


NODE_CALLS = {
    "sort": (lambda lib, x: x.sort()[0], "SortBackward0"),
    "sort_dim0_descending": (lambda lib, x: x.sort(0, True)[0], "SortBackward0"),
    "sort_stable": (lambda lib, x: x.sort(stable=True, dim=-2)[0], "SortBackward1"),
    "msort": (lambda lib, x: x.msort(), "SortBackward0"),
    "topk": (lambda lib, x: x.topk(2, largest=False)[0], "TopkBackward0"),
    "kthvalue": (lambda lib, x: x.kthvalue(2, 0, True)[0], "KthvalueBackward0"),
    "median": (lambda lib, x: x.median(), "MedianBackward0"),
    "median_dim": (lambda lib, x: x.median(-1)[0], "MedianBackward1"),
    "nanmedian": (lambda lib, x: x.nanmedian(), "NanmedianBackward0"),
    "nanmedian_dim": (lambda lib, x: x.nanmedian(0, True)[0], "NanmedianBackward1"),
    "mode": (lambda lib, x: x.mode(1)[0], "ModeBackward0"),
}


@pytest.mark.parametrize("name", sorted(NODE_CALLS))
def test_node_names_and_saved_fields_match_torch(torch, name):
    call, node = NODE_CALLS[name]
    x_og = og.tensor(DISTINCT, dtype=og.float64, requires_grad=True)
    x_t = torch.tensor(DISTINCT, dtype=torch.float64, requires_grad=True)
    got, expected = call(og, x_og), call(torch, x_t)
    assert type(expected.grad_fn).__name__ == node
    assert type(got.grad_fn).__name__ == node
    assert_same_saved_fields(torch, got.grad_fn, expected.grad_fn, (x_og,), (x_t,), what=name)


def test_indices_and_argsort_never_require_grad(torch):
    def scenario(lib):
        x = lib.tensor(TIES, requires_grad=True)
        return (
            x.sort()[1].requires_grad,
            x.topk(2)[1].requires_grad,
            x.argsort().requires_grad,
            x.argsort(stable=True).grad_fn is None,
        )

    assert_same(torch, scenario)


# ---- named tuples, out= and dispatch ----------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.sort(x, 1),
        lambda lib, x: x.sort(stable=True),
        lambda lib, x: x.topk(2),
        lambda lib, x: lib.kthvalue(x, 1),
        lambda lib, x: x.median(0),
        lambda lib, x: lib.nanmedian(x, 1),
        lambda lib, x: x.mode(),
    ],
)
def test_named_tuples_name_their_fields(torch, call):
    def scenario(lib):
        r = call(lib, lib.tensor(DISTINCT))
        return (
            type(r).__name__,
            type(r).__module__.replace("torch", "LIB").replace("opgrad", "LIB"),
            r.values is r[0],
            r.indices is r[1],
            repr(r).replace("torch", "LIB").replace("opgrad", "LIB"),
        )

    assert_same(torch, scenario)


OUT_CALLS = {
    "sort": lambda lib, x, v, i: lib.sort(x, 0, True, out=(v, i)),
    "sort_stable": lambda lib, x, v, i: lib.sort(x, stable=True, dim=1, out=(v, i)),
    "topk": lambda lib, x, v, i: lib.topk(x, 2, out=(v, i)),
    "kthvalue": lambda lib, x, v, i: lib.kthvalue(x, 2, 0, True, out=(v, i)),
    "median": lambda lib, x, v, i: lib.median(x, 1, out=(v, i)),
    "nanmedian": lambda lib, x, v, i: lib.nanmedian(x, 0, out=(v, i)),
    "mode": lambda lib, x, v, i: lib.mode(x, 1, out=(v, i)),
}


@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_tuples_are_written_in_place_and_returned_as_named_tuples(torch, name):
    def scenario(lib):
        values, indices = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64)
        r = OUT_CALLS[name](lib, lib.tensor(DISTINCT, dtype=lib.float64), values, indices)
        return (
            type(r).__name__,
            r[0] is values and r[1] is indices,
            vals(values),
            vals(indices),
            values._version > 0,
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.argsort(x, stable=True, dim=0, out=lib.empty(0, dtype=lib.int64)),
        lambda lib, x: lib.msort(x, out=lib.empty(0)),
    ],
)
def test_argsort_and_msort_out(torch, call):
    def scenario(lib):
        x = lib.tensor(TIES)
        return _result(call(lib, x)), aten_log(lib, lambda: call(lib, x))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, phrase",
    [
        (
            lambda lib, x: lib.sort(x, out=(lib.empty(0, dtype=lib.float64), lib.empty(0))),
            "Expected out tensor to have dtype float, but got double instead",
        ),
        (
            lambda lib, x: lib.topk(x, 1, out=(lib.empty(0), lib.empty(0, dtype=lib.int32))),
            "Expected out tensor to have dtype long int, but got int instead",
        ),
    ],
)
def test_out_dtype_errors(torch, call, phrase):
    assert_same_error(torch, lambda lib: call(lib, lib.tensor(TIES)), RuntimeError, phrase)


def test_out_refuses_inputs_that_require_grad(torch):
    assert_same_error(
        torch,
        lambda lib: lib.sort(
            lib.tensor(TIES, requires_grad=True),
            out=(lib.empty(0), lib.empty(0, dtype=lib.int64)),
        ),
        RuntimeError,
        "don't support automatic differentiation",
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.sort(),
        lambda lib, x: x.sort(stable=False),
        lambda lib, x: lib.sort(x, 0, True),
        lambda lib, x: x.argsort(),
        lambda lib, x: x.argsort(stable=True),
        lambda lib, x: x.msort(),
        lambda lib, x: x.topk(2),
        lambda lib, x: x.kthvalue(2),
        lambda lib, x: x.median(1),
        lambda lib, x: x.nanmedian(),
        lambda lib, x: x.mode(),
    ],
)
def test_a_dispatch_mode_sees_torchs_overloads(torch, call):
    assert_same(torch, lambda lib: aten_log(lib, lambda: call(lib, lib.tensor(TIES))))


@pytest.mark.parametrize("name", ["sort", "topk", "median_dim"])
def test_a_dispatch_mode_sees_torchs_backward_calls(torch, name):
    call = {
        "sort": lambda lib, x: x.sort(0)[0],
        "topk": lambda lib, x: x.topk(2)[0],
        "median_dim": lambda lib, x: x.median(1)[0],
    }[name]

    def scenario(lib):
        x = lib.tensor(DISTINCT, requires_grad=True)
        y = call(lib, x)
        g = lib.ones_like(y)
        return aten_log(lib, lambda: lib.autograd.grad(y, x, g))

    assert_same(torch, scenario)


def test_python_sorted_over_a_1d_tensor(torch):
    assert_same(torch, lambda lib: [vals(v) for v in sorted(lib.tensor([3.0, -1.0, 7.5, 2.0]))])


# ---- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib, x: x.topk(7), RuntimeError, "selected index k out of range"),
        (lambda lib, x: x.topk(-1), RuntimeError, "selected index k out of range"),
        (lambda lib, x: x.topk(4, 0), RuntimeError, "selected index k out of range"),
        (lambda lib, x: lib.tensor(1.0).topk(2), RuntimeError, "selected index k out of range"),
        (lambda lib, x: x.kthvalue(0), RuntimeError, "selected number k out of range"),
        (lambda lib, x: x.kthvalue(7), RuntimeError, "selected number k out of range"),
        (lambda lib, x: x.kthvalue(4, -2), RuntimeError, "for dimension 0"),
        (lambda lib, x: x.sort(2), IndexError, "Dimension out of range"),
        (lambda lib, x: x.argsort(-3), IndexError, "Dimension out of range"),
        (lambda lib, x: x.topk(1, 3), IndexError, "Dimension out of range"),
        (lambda lib, x: x.median(2), IndexError, "Dimension out of range"),
        (lambda lib, x: x.mode(-3), IndexError, "Dimension out of range"),
        (lambda lib, x: lib.zeros(3, 0).median(1), IndexError, "reduction dim 1 to have non-zero"),
        (lambda lib, x: lib.zeros(0, 2).nanmedian(0), IndexError, "reduction dim 0 to have non"),
        (lambda lib, x: lib.zeros(3, 0).kthvalue(1), IndexError, "reduction dim 1 to have non"),
        (lambda lib, x: lib.zeros(3, 0).mode(-1), IndexError, "reduction dim 1 to have non"),
    ],
)
def test_bad_k_and_dims_raise_torchs_errors(torch, call, exc_type, phrase):
    assert_same_error(torch, lambda lib: call(lib, lib.tensor(TIES)), exc_type, phrase)


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib, b: b.topk(1), RuntimeError, "topk does not support bool"),
        (lambda lib, b: b.median(0), NotImplementedError, '"median_out" not implemented'),
        (lambda lib, b: b.nanmedian(1), NotImplementedError, '"median_out" not implemented'),
        (lambda lib, b: b.nanmedian(), NotImplementedError, '"median_cpu" not implemented'),
        (lambda lib, b: b.kthvalue(1), NotImplementedError, '"kthvalue_cpu" not'),
    ],
)
def test_refused_bool_inputs_raise_torchs_errors(torch, call, exc_type, phrase):
    def scenario(lib):
        return call(lib, lib.tensor([[True, False]]))

    assert_same_error(torch, scenario, exc_type, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.argsort(0, stable=True),
        lambda lib, x: lib.sort(x, 0, out=lib.empty(0)),
        lambda lib, x: x.median(keepdim=True),
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
