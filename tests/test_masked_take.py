"""masked_select, masked_scatter, nonzero (as_tuple), nonzero_static, argwhere, take and put
against torch: values (broadcast masks, duplicates, negative positions, 0-dim and empty
tensors, dtypes, layouts), in-place and out= variants, gradients, second derivatives,
tangents, node names, saved fields, the aten calls a mode sees, and every check torch makes
(its exception type and text)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same, assert_same_error, result_scenario


def _x(lib, rg=False, dtype="float64"):
    data = np.arange(12.0).reshape(3, 4) - 4
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=rg)


def _s(lib, rg=False, dtype="float64"):
    return lib.tensor(np.arange(100.0, 112.0), dtype=getattr(lib, dtype), requires_grad=rg)


def _m(lib):
    return lib.tensor([True, False, True, True])


def _i(lib):
    return lib.tensor([[0, 11], [5, -1], [5, 3]])


# ---- values ----------------------------------------------------------------------------------

VALUES = {
    "masked_select": lambda lib, T: _x(lib).masked_select(_m(lib)),
    "masked_select_broadcasts_self": lambda lib, T: _x(lib)[:1].masked_select(
        lib.ones(2, 1, 4, dtype=lib.bool)
    ),
    "masked_select_0dim": lambda lib, T: T(2.0).masked_select(T(True)),
    "masked_select_0dim_false": lambda lib, T: T(2.0).masked_select(T(False)),
    "masked_select_empty": lambda lib, T: _x(lib)[:0].masked_select(_m(lib)),
    "masked_select_int": lambda lib, T: _x(lib).long().masked_select(_m(lib)),
    "masked_select_bool": lambda lib, T: _x(lib).bool().masked_select(_m(lib)),
    "masked_select_float16": lambda lib, T: _x(lib).half().masked_select(_m(lib)),
    "masked_scatter": lambda lib, T: _x(lib).masked_scatter(_m(lib), _s(lib)),
    "masked_scatter_2d_source": lambda lib, T: _x(lib).masked_scatter(
        _m(lib), _s(lib).reshape(3, 4)
    ),
    "masked_scatter_broadcasts_self": lambda lib, T: _x(lib)[:1].masked_scatter(
        lib.ones(2, 4, dtype=lib.bool), _s(lib)
    ),
    "masked_scatter_0dim_source": lambda lib, T: lib.zeros(1).masked_scatter(T([True]), T(5.0)),
    "masked_scatter_no_ones_empty_source": lambda lib, T: _x(lib).masked_scatter(
        lib.zeros(4, dtype=lib.bool), T([], dtype=lib.float64)
    ),
    "masked_scatter_int": lambda lib, T: _x(lib).long().masked_scatter(_m(lib), _s(lib).long()),
    "nonzero": lambda lib, T: _x(lib).nonzero(),
    "nonzero_function": lambda lib, T: lib.nonzero(_x(lib)),
    "nonzero_nan_and_negative_zero": lambda lib, T: T([float("nan"), 0.0, -0.0, 1.0]).nonzero(),
    "nonzero_0dim": lambda lib, T: T(3.0).nonzero(),
    "nonzero_0dim_zero": lambda lib, T: T(0.0).nonzero(),
    "nonzero_empty": lambda lib, T: lib.zeros(0, 3).nonzero(),
    "nonzero_bool": lambda lib, T: _x(lib).bool().nonzero(),
    "nonzero_float16": lambda lib, T: _x(lib).half().nonzero(),
    "nonzero_static_truncates": lambda lib, T: _x(lib).nonzero_static(size=3),
    "nonzero_static_pads": lambda lib, T: lib.nonzero_static(_x(lib), size=14, fill_value=-7),
    "nonzero_static_0dim": lambda lib, T: T(1.0).nonzero_static(size=2),
    "argwhere": lambda lib, T: _x(lib).argwhere(),
    "argwhere_0dim": lambda lib, T: lib.argwhere(T(3.0)),
    "take": lambda lib, T: _x(lib).take(_i(lib)),
    "take_function_0dim_index": lambda lib, T: lib.take(_x(lib), T(5)),
    "take_0dim_self": lambda lib, T: T(5.0).take(T([0, 0, -1])),
    "take_empty": lambda lib, T: lib.zeros(0).take(T([], dtype=lib.long)),
    "take_bool": lambda lib, T: _x(lib).bool().take(_i(lib)),
    "put": lambda lib, T: _x(lib).put(T([1, -1]), T([9.0, 8.0], dtype=lib.float64)),
    "put_2d_index": lambda lib, T: _x(lib).put(T([[1, 2]]), T([9.0, 8.0], dtype=lib.float64)),
    "put_duplicates_last_wins": lambda lib, T: _x(lib).put(
        T([1, 1]), T([9.0, 8.0], dtype=lib.float64)
    ),
    "put_duplicates_accumulate": lambda lib, T: lib.put(
        _x(lib), T([1, 1, -12]), T([9.0, 8.0, 1.0], dtype=lib.float64), True
    ),
    "put_bool_accumulate": lambda lib, T: _x(lib)
    .bool()
    .put(T([1, 1]), T([True, True]), accumulate=True),
    "put_int_accumulate": lambda lib, T: _x(lib).long().put(T([1, 1]), T([5, 6]), True),
    "put_0dim": lambda lib, T: T(1.0).put(T(0), T(9.0)),
    "put_empty_index": lambda lib, T: lib.zeros(0).put(T([], dtype=lib.long), T([])),
    "masked_scatter_backward_pads_with_zeros": lambda lib, T: lib.ops.aten.masked_scatter_backward(
        _x(lib), _m(lib), [13]
    ),
}


@pytest.mark.parametrize("name", VALUES)
def test_values_match_torch(torch, name):
    assert_same(torch, result_scenario(VALUES[name]))


def test_nonzero_as_tuple_matches_torch(torch):
    def scenario(lib):
        return [
            [t.tolist() for t in r]
            for r in (
                _x(lib).nonzero(as_tuple=True),
                lib.nonzero(_x(lib), as_tuple=True),
                lib.tensor(3.0).nonzero(as_tuple=True),
                lib.tensor(0.0).nonzero(as_tuple=True),
                lib.zeros(0, 2).nonzero(as_tuple=True),
            )
        ]

    assert_same(torch, scenario)


def test_result_strides_match_torch(torch):
    """nonzero's result is column-major in torch, nonzero_static's row-major."""

    def scenario(lib):
        x = _x(lib)
        return [
            r.stride()
            for r in (
                x.nonzero(),
                x.argwhere(),
                x.nonzero_static(size=3),
                x.masked_select(_m(lib)),
                x.take(_i(lib).t()),
            )
        ]

    assert_same(torch, scenario)


def test_in_place_variants_write_self_and_bump_its_version(torch):
    def scenario(lib):
        out = []
        for fn in (
            lambda y: y.masked_scatter_(_m(lib), _s(lib)),
            lambda y: y.put_(lib.tensor([0, 0, 5]), _s(lib)[:3]),
            lambda y: y.put_(lib.tensor([0, 0, 5]), _s(lib)[:3], accumulate=True),
        ):
            y = _x(lib)
            before = y._version
            r = fn(y)
            out.append((r is y, y._version - before, y.tolist()))
        return out

    assert_same(torch, scenario)


def test_out_variants_write_out(torch):
    def scenario(lib):
        outs = []
        for fn, dtype in (
            (lambda o: lib.masked_select(_x(lib), _m(lib), out=o), lib.float64),
            (lambda o: lib.nonzero(_x(lib), out=o), lib.long),
            (lambda o: lib.nonzero_static(_x(lib), size=2, out=o), lib.long),
            (lambda o: lib.take(_x(lib), _i(lib), out=o), lib.float64),
        ):
            o = lib.empty(0, dtype=dtype)
            r = fn(o)
            outs.append((r is o, o.tolist()))
        return outs

    assert_same(torch, scenario)


# ---- gradients, second derivatives, tangents, nodes ------------------------------------------

GRADS = {
    "masked_select": lambda lib, x, s: x.masked_select(_m(lib)),
    "masked_select_broadcast": lambda lib, x, s: x[:1].masked_select(
        lib.tensor([[True, False, True, True], [False, True, True, False]])
    ),
    "masked_scatter": lambda lib, x, s: x.masked_scatter(_m(lib), s),
    "masked_scatter_broadcast": lambda lib, x, s: x[:1].masked_scatter(
        lib.tensor([[True], [False]]), s
    ),
    "take": lambda lib, x, s: x.take(_i(lib)),
    "put": lambda lib, x, s: x.put(lib.tensor([0, 0, 5]), s[:3]),
    "put_accumulate": lambda lib, x, s: x.put(lib.tensor([[0], [0], [5]]), s[:3], True),
    "put_": lambda lib, x, s: x.clone().put_(lib.tensor([0, 7, 5]), s[:3]),
    "masked_scatter_": lambda lib, x, s: x.clone().masked_scatter_(_m(lib), s),
}


def _grads(lib, name):
    x, s = _x(lib, True), _s(lib, True)
    y = GRADS[name](lib, x, s)
    w = lib.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)), requires_grad=True)
    inputs = [x, s, w]
    first = lib.autograd.grad((y * w).sum(), inputs, create_graph=True, allow_unused=True)
    used = [g for g in first if g is not None and g.requires_grad]
    second = lib.autograd.grad(sum((g * g).sum() for g in used), inputs, allow_unused=True)
    node = y.grad_fn
    saved = sorted(n for n in dir(node) if n.startswith("_saved"))
    return (
        y.tolist(),
        type(node).__name__,
        saved,
        [None if g is None else type(g.grad_fn).__name__ for g in first],
        [None if g is None else g.tolist() for g in first],
        [None if g is None else g.tolist() for g in second],
    )


@pytest.mark.parametrize("name", GRADS)
def test_gradients_and_second_derivatives_match_torch(torch, name):
    got, expected = _grads(og, name), _grads(torch, name)
    assert got[1:4] == expected[1:4]
    pairs = [(got[0], expected[0])] + list(zip(got[4] + got[5], expected[4] + expected[5]))
    for a, b in pairs:
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12, atol=1e-12)


def _tangent(lib, name):
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(5)
    with fw.dual_level():
        dx = fw.make_dual(_x(lib), lib.tensor(rng.standard_normal((3, 4))))
        ds = fw.make_dual(_s(lib), lib.tensor(rng.standard_normal(12)))
        y = GRADS[name](lib, dx, ds)
        return fw.unpack_dual(y).tangent.tolist()


@pytest.mark.parametrize("name", GRADS)
def test_forward_ad_tangents_match_torch(torch, name):
    np.testing.assert_allclose(np.array(_tangent(og, name)), np.array(_tangent(torch, name)))


def test_saved_fields_hold_torch_values(torch):
    def scenario(lib):
        x, s = _x(lib, True), _s(lib, True)
        a = x.masked_select(_m(lib))
        b = x.masked_scatter(_m(lib), s)
        c = x.take(_i(lib))
        d = x.put(lib.tensor([0, 0, 5]), s[:3], True)
        return (
            (a.grad_fn._saved_mask.tolist(), a.grad_fn._saved_self.tolist()),
            (b.grad_fn._saved_mask.tolist(), tuple(b.grad_fn._saved_source_sym_sizes)),
            (c.grad_fn._saved_index.tolist(), c.grad_fn._saved_self.tolist()),
            (d.grad_fn._saved_index.tolist(), d.grad_fn._saved_accumulate),
            d.grad_fn._saved_source.tolist(),
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.masked_select(_m(lib)).sum().backward(),
        lambda lib, x: x.masked_scatter(_m(lib), _s(lib, True)).sum().backward(),
        lambda lib, x: x.take(_i(lib)).sum().backward(),
        lambda lib, x: x.put(lib.tensor([0, 1]), _s(lib, True)[:2], True).sum().backward(),
        lambda lib, x: lib.nonzero(x, as_tuple=True),
        lambda lib, x: x.argwhere(),
    ],
    ids=["masked_select", "masked_scatter", "take", "put_accumulate", "nonzero_tuple", "argwhere"],
)
def test_dispatch_mode_sees_torch_calls(torch, fn):
    def scenario(lib):
        x = _x(lib, True)
        return aten_log(lib, lambda: fn(lib, x))

    assert scenario(og) == scenario(torch)


# ---- errors ----------------------------------------------------------------------------------

ERRORS = {
    "masked_select_long_mask": (
        RuntimeError,
        "masked_select: expected BoolTensor for mask",
        lambda lib: _x(lib).masked_select(_m(lib).long()),
    ),
    "masked_select_broadcast": (
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4)",
        lambda lib: _x(lib).masked_select(lib.ones(3, dtype=lib.bool)),
    ),
    "masked_select_out_dtype": (
        RuntimeError,
        "masked_select(): self and result must have the same scalar type",
        lambda lib: lib.masked_select(_x(lib), _m(lib), out=lib.empty(0)),
    ),
    "masked_scatter_uint8_mask": (
        RuntimeError,
        "masked_scatter_ only supports boolean masks, but got mask with dtype Byte",
        lambda lib: _x(lib).masked_scatter(_m(lib).to(lib.uint8), _s(lib)),
    ),
    "masked_scatter_dtype_before_mask": (
        RuntimeError,
        "masked_scatter: expected self and source to have same dtypes but gotDouble and Float",
        lambda lib: _x(lib).masked_scatter(_m(lib).long(), _s(lib).float()),
    ),
    "masked_scatter_broadcast_before_dtype": (
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4)",
        lambda lib: _x(lib).masked_scatter(lib.ones(3, dtype=lib.bool), _s(lib).float()),
    ),
    "masked_scatter_small_source": (
        RuntimeError,
        "Number of elements of source < number of ones in mask",
        lambda lib: _x(lib).masked_scatter(_m(lib), _s(lib)[:3]),
    ),
    "masked_scatter_inplace_mask_larger": (
        RuntimeError,
        "The expanded size of the tensor (1) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [1, 4].  Tensor sizes: [2, 4]",
        lambda lib: _x(lib)[:1].clone().masked_scatter_(lib.ones(2, 4, dtype=lib.long), _s(lib)),
    ),
    "masked_scatter_inplace_dtype_first": (
        RuntimeError,
        "masked_scatter: expected self and source to have same dtypes",
        lambda lib: _x(lib)[:1]
        .clone()
        .masked_scatter_(lib.ones(2, 4, dtype=lib.bool), _s(lib).float()),
    ),
    "masked_scatter_inplace_mask_more_dims": (
        RuntimeError,
        "expand(CPUBoolType{[2, 3, 4]}, size=[3, 4]): the number of sizes provided (2) must be "
        "greater or equal to the number of dimensions in the tensor (3)",
        lambda lib: _x(lib).masked_scatter_(lib.ones(2, 3, 4, dtype=lib.bool), _s(lib)),
    ),
    "masked_scatter_backward_sizes": (
        RuntimeError,
        "shape '[2]' is invalid for input of size 9",
        lambda lib: lib.ops.aten.masked_scatter_backward(_x(lib), _m(lib), [2]),
    ),
    "nonzero_out_dtype": (
        RuntimeError,
        "nonzero: Expected out tensor to have scalar type Long but got scalar typeInt",
        lambda lib: lib.nonzero(_x(lib), out=lib.empty(0, dtype=lib.int32)),
    ),
    "nonzero_tuple_with_out": (
        RuntimeError,
        "nonzero does not support the out kwarg when as_tuple is True",
        lambda lib: lib.nonzero(_x(lib), as_tuple=True, out=lib.empty(0, dtype=lib.long)),
    ),
    "nonzero_as_tuple_int": (
        TypeError,
        "nonzero(): argument 'as_tuple' must be bool, not int",
        lambda lib: lib.nonzero(_x(lib), as_tuple=1),
    ),
    "nonzero_static_negative_size": (
        RuntimeError,
        "nonzero_static: 'size' must be an non-negative integer",
        lambda lib: _x(lib).nonzero_static(size=-1),
    ),
    "nonzero_static_out_dtype": (
        RuntimeError,
        "nonzero_static: Expected out tensor to have scalar type Long but got scalar typeFloat",
        lambda lib: lib.nonzero_static(_x(lib), size=2, out=lib.empty(0)),
    ),
    "take_out_of_range": (
        IndexError,
        "out of range: tried to access index 12 on a tensor of 12 elements.",
        lambda lib: _x(lib).take(lib.tensor([0, 12])),
    ),
    "take_negative_out_of_range": (
        IndexError,
        "out of range: tried to access index -13 on a tensor of 12 elements.",
        lambda lib: _x(lib).take(lib.tensor([-13])),
    ),
    "take_int32_index": (
        RuntimeError,
        "take(): Expected a long tensor for index, but got Int",
        lambda lib: _x(lib).take(lib.tensor([1], dtype=lib.int32)),
    ),
    "take_from_empty": (
        IndexError,
        "take(): tried to take from an empty tensor",
        lambda lib: lib.zeros(0).take(lib.tensor([0])),
    ),
    "take_out_dtype": (
        RuntimeError,
        "take(): self and out expected to have the same dtype, but got self.dtype = Double and "
        "out.dtype = Float",
        lambda lib: lib.take(_x(lib), lib.tensor([100]), out=lib.empty(0)),
    ),
    "put_out_of_range": (
        IndexError,
        "out of range: tried to access index 12 on a tensor of 12 elements.",
        lambda lib: _x(lib).put(lib.tensor([12]), _s(lib)[:1]),
    ),
    "put_int32_index_first": (
        RuntimeError,
        "put_(): Expected a long tensor for index, but got Int",
        lambda lib: _x(lib).put(lib.tensor([1, 2], dtype=lib.int32), _s(lib)[:1].float()),
    ),
    "put_dtype_before_numel": (
        RuntimeError,
        "put_(): self and source expected to have the same dtype, but got self.dtype = Double "
        "and source.dtype = Float",
        lambda lib: _x(lib).put(lib.tensor([1, 2]), _s(lib)[:1].float()),
    ),
    "put_numel": (
        IndexError,
        "put_(): Expected source and index to have the same number of elements, but got "
        "source.numel() = 1, index.numel() = 2",
        lambda lib: _x(lib).put(lib.tensor([1, 2]), _s(lib)[:1]),
    ),
    "put_into_empty": (
        IndexError,
        "put_(): Tried to put elements into an empty tensor",
        lambda lib: lib.zeros(0).put(lib.tensor([5]), lib.tensor([9.0])),
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    exc_type, phrase, fn = ERRORS[name]
    assert_same_error(torch, fn, exc_type, phrase)


def test_refused_writes_leave_self_unchanged():
    """torch writes what it can before it finds a bad position or too few source elements;
    opgrad checks first (no half-updated state)."""
    y = _x(og)
    with pytest.raises(IndexError, match="tried to access index 12"):
        y.put_(og.tensor([0, 12]), _s(og)[:2])
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        y.masked_scatter_(_m(og), _s(og)[:3])
    assert y.tolist() == _x(og).tolist() and y._version == 0
