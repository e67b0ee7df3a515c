"""select_scatter, slice_scatter, diagonal_scatter and as_strided_scatter against torch:
values (src cast to self's dtype, negative indices and dims, the result keeping self's
strides), slice_scatter's out=, gradients, second derivatives, tangents, node names, saved
fields, the aten calls a mode sees, and torch's checks (exception type and text)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same, assert_same_error, result_scenario


def _x(lib, rg=False):
    return lib.tensor(np.arange(12.0).reshape(3, 4) - 4, dtype=lib.float64, requires_grad=rg)


def _s(lib, n, rg=False):
    return lib.tensor(np.arange(100.0, 100.0 + n), dtype=lib.float64, requires_grad=rg)


VALUES = {
    "select_scatter": lambda lib, T: _x(lib).select_scatter(_s(lib, 4), 0, 1),
    "select_scatter_negative": lambda lib, T: lib.select_scatter(_x(lib), _s(lib, 3), -1, -1),
    "select_scatter_casts_src": lambda lib, T: _x(lib).long().select_scatter(_s(lib, 4), 0, 0),
    "select_scatter_1d": lambda lib, T: lib.zeros(3).select_scatter(T(5.0), 0, 1),
    "slice_scatter": lambda lib, T: _x(lib).slice_scatter(_s(lib, 6).reshape(3, 2), 1, 1, None, 2),
    "slice_scatter_defaults": lambda lib, T: _x(lib).slice_scatter(_x(lib) * 2),
    "slice_scatter_negative_start": lambda lib, T: lib.slice_scatter(
        _x(lib), _s(lib, 8).reshape(2, 4), 0, -2
    ),
    "diagonal_scatter": lambda lib, T: _x(lib).diagonal_scatter(_s(lib, 3)),
    "diagonal_scatter_offset": lambda lib, T: _x(lib).diagonal_scatter(_s(lib, 3), 1),
    "diagonal_scatter_negative_offset": lambda lib, T: lib.diagonal_scatter(
        _x(lib), _s(lib, 2), -1, 1, 0
    ),
    "as_strided_scatter": lambda lib, T: _x(lib).as_strided_scatter(_s(lib, 2), (2,), (3,), 1),
    "as_strided_scatter_2d": lambda lib, T: lib.as_strided_scatter(
        _x(lib), _s(lib, 4).reshape(2, 2), (2, 2), (4, 2)
    ),
}


@pytest.mark.parametrize("name", VALUES)
def test_values_match_torch(torch, name):
    assert_same(torch, result_scenario(VALUES[name]))


def test_results_keep_self_strides(torch):
    def scenario(lib):
        x = _x(lib)
        gapped = lib.zeros(6, 8, dtype=lib.float64)[::2, ::2]
        return [
            r.stride()
            for r in (
                x.t().select_scatter(_s(lib, 3), 0, 1),
                x.t().slice_scatter(x.t()[:2], 0, 0, 2),
                gapped.slice_scatter(gapped[:1], 0, 0, 1),
                gapped.diagonal_scatter(_s(lib, 3)),
                gapped.select_scatter(_s(lib, 4), 0, 0),
            )
        ]

    assert_same(torch, scenario)


def test_slice_scatter_out(torch):
    def scenario(lib):
        o = lib.empty(0, dtype=lib.float64)
        r = lib.slice_scatter(_x(lib), _s(lib, 4).reshape(1, 4), 0, 1, 2, out=o)
        return r is o, o.tolist()

    assert_same(torch, scenario)


GRADS = {
    "select_scatter": lambda lib, x, s: x.select_scatter(s[:4], 0, 1),
    "slice_scatter": lambda lib, x, s: x.slice_scatter(s[:6].reshape(3, 2), 1, 1, None, 2),
    "diagonal_scatter": lambda lib, x, s: x.diagonal_scatter(s[:3], 1),
    "as_strided_scatter": lambda lib, x, s: x.as_strided_scatter(s[:2], (2,), (3,), 1),
}


def _grads(lib, name):
    x, s = _x(lib, True), _s(lib, 6, True)
    y = GRADS[name](lib, x, s)
    w = lib.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)), requires_grad=True)
    first = lib.autograd.grad((y * w).sum(), [x, s, w], create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), [x, s, w], allow_unused=True)
    node = y.grad_fn
    saved = {n: getattr(node, n) for n in dir(node) if n.startswith("_saved")}
    return (
        type(node).__name__,
        saved,
        y.tolist(),
        [g.tolist() for g in first],
        [None if g is None else g.tolist() for g in second],
    )


@pytest.mark.parametrize("name", GRADS)
def test_gradients_and_second_derivatives_match_torch(torch, name):
    """as_strided_scatter's gradient for self is torch's (see derivatives.yaml)."""
    got, expected = _grads(og, name), _grads(torch, name)
    assert got == expected


def _tangent(lib, name):
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(5)
    with fw.dual_level():
        dx = fw.make_dual(_x(lib), lib.tensor(rng.standard_normal((3, 4))))
        ds = fw.make_dual(_s(lib, 6), lib.tensor(rng.standard_normal(6)))
        return fw.unpack_dual(GRADS[name](lib, dx, ds)).tangent.tolist()


@pytest.mark.parametrize("name", GRADS)
def test_forward_ad_tangents_match_torch(torch, name):
    assert _tangent(og, name) == _tangent(torch, name)


@pytest.mark.parametrize("name", GRADS)
def test_dispatch_mode_sees_torch_calls(torch, name):
    def scenario(lib):
        x, s = _x(lib, True), _s(lib, 6, True)
        return aten_log(lib, lambda: GRADS[name](lib, x, s).sum().backward())

    assert scenario(og) == scenario(torch)


ERRORS = {
    "select_scatter_src_shape": (
        RuntimeError,
        "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]",
        lambda lib: _x(lib).select_scatter(_s(lib, 3), 0, 1),
    ),
    "select_scatter_index": (
        IndexError,
        "select(): index 3 out of range for tensor of size [3, 4] at dimension 0",
        lambda lib: _x(lib).select_scatter(_s(lib, 4), 0, 3),
    ),
    "select_scatter_dim": (
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        lambda lib: _x(lib).select_scatter(_s(lib, 4), 2, 0),
    ),
    "slice_scatter_src_shape": (
        RuntimeError,
        "expected src to have a size equal to the slice of self. src size = [4], slice size = "
        "[3, 4]",
        lambda lib: _x(lib).slice_scatter(_s(lib, 4)),
    ),
    "slice_scatter_step": (
        RuntimeError,
        "slice step must be positive",
        lambda lib: _x(lib).slice_scatter(_x(lib), 0, None, None, 0),
    ),
    "slice_scatter_out_dtype": (
        RuntimeError,
        "Expected out tensor to have dtype double, but got float instead",
        lambda lib: lib.slice_scatter(_x(lib), _x(lib), out=lib.empty(0)),
    ),
    "diagonal_scatter_dims": (
        RuntimeError,
        "diagonal dimensions cannot be identical 1, 1",
        lambda lib: _x(lib).diagonal_scatter(_s(lib, 3), 0, 1, 1),
    ),
    "as_strided_scatter_bounds": (
        RuntimeError,
        "setStorage: sizes [2], strides [30], storage offset 1, and itemsize 8 requiring a "
        "storage size of 256 are out of bounds for storage of size 96",
        lambda lib: _x(lib).as_strided_scatter(_s(lib, 2), (2,), (30,), 1),
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    exc_type, phrase, fn = ERRORS[name]
    assert_same_error(torch, fn, exc_type, phrase)


def test_as_strided_scatter_refuses_a_noncontiguous_self_that_requires_grad(torch):
    for lib in (og, torch):
        with pytest.raises(RuntimeError, match="only supported for contiguous inputs"):
            _x(lib, True).t().as_strided_scatter(_s(lib, 2), (2,), (3,), 1)
