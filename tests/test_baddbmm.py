"""baddbmm (function, method, in place and out=) against torch: values, gradients, second
derivatives, tangents, the node and its saved fields, dtypes and every refusal. torch's own
baddbmm samples run in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import aten_log, assert_same, assert_same_error, result_scenario

B1, B2 = (2, 3, 4), (2, 4, 5)

GRAPHS = {
    "full_self": ([(2, 3, 5), B1, B2], lambda F, lib, s, a, b: lib.baddbmm(s, a, b)),
    "broadcast_self": ([(5,), B1, B2], lambda F, lib, s, a, b: lib.baddbmm(s, a, b)),
    "broadcast_self_rows": ([(3, 1), B1, B2], lambda F, lib, s, a, b: s.baddbmm(a, b)),
    "beta_alpha": (
        [(1, 3, 5), B1, B2],
        lambda F, lib, s, a, b: lib.baddbmm(s, a, b, beta=0.5, alpha=-2.5),
    ),
    "beta_zero": ([(2, 3, 5), B1, B2], lambda F, lib, s, a, b: lib.baddbmm(s, a, b, beta=0)),
    "only_batch2_requires_grad": (
        [((5,), False), (B1, False), B2],
        lambda F, lib, s, a, b: lib.baddbmm(s, a, b, alpha=3),
    ),
    "only_self_requires_grad": (
        [(5,), (B1, False), (B2, False)],
        lambda F, lib, s, a, b: lib.baddbmm(s, a, b, beta=2),
    ),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_graph(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_forward_mode_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_tangent(torch, fn, specs, (name,))


def test_node_saves_alpha_batch1_batch2_beta(torch):
    def saved(lib):
        s = lib.ones(5, requires_grad=True)
        a = lib.ones(*B1, requires_grad=True)
        y = lib.baddbmm(s, a, lib.ones(*B2), beta=0.5, alpha=2)
        fields = sorted(n for n in dir(y.grad_fn) if n.startswith("_saved"))
        return type(y.grad_fn).__name__, fields, y.grad_fn._saved_alpha, y.grad_fn._saved_beta

    assert saved(og) == saved(torch)


def test_beta_zero_ignores_nan_and_inf_in_self(torch):
    def fn(lib, tensor):
        s = tensor([float("nan"), float("inf"), -float("inf"), 1.0, 2.0])
        return lib.baddbmm(s, lib.ones(*B1), lib.ones(*B2), beta=0, alpha=0.5)

    assert_same(torch, result_scenario(fn))


@pytest.mark.parametrize(
    "dtype, beta, alpha",
    [
        ("int64", 1.5, 2.5),
        ("int64", -1.5, 0.5),
        ("int32", True, 3),
        ("uint8", 1, -1),
        ("int8", 2, 3),
        ("float16", 0.5, 3),
        ("float64", 0.25, 4),
    ],
)
def test_dtypes_and_scalars_match_torch(torch, dtype, beta, alpha):
    rng = np.random.default_rng(3)
    data = [rng.integers(-3, 4, size=s) for s in ((3, 5), B1, B2)]

    def fn(lib, tensor):
        s, a, b = (tensor(d).to(getattr(lib, dtype)) for d in data)
        return lib.baddbmm(s, a, b, beta=beta, alpha=alpha)

    assert_same(torch, result_scenario(fn))


def test_empty_contraction_gives_beta_self(torch):
    def fn(lib, tensor):
        return lib.baddbmm(lib.ones(5), lib.ones(2, 3, 0), lib.ones(2, 0, 5), beta=2)

    assert_same(torch, result_scenario(fn))


ERRORS = {
    "self_not_broadcastable": (
        lambda lib: lib.baddbmm(lib.ones(3, 3, 5), lib.ones(*B1), lib.ones(*B2)),
        RuntimeError,
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
        "dimension 0.  Target sizes: [2, 3, 5]",
    ),
    "self_too_many_dims": (
        lambda lib: lib.baddbmm(lib.ones(1, 1, 1, 5), lib.ones(*B1), lib.ones(*B2)),
        RuntimeError,
        "the number of sizes provided (3) must be greater or equal",
    ),
    "batch2_wrong_batch": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(3, 4, 5)),
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].",
    ),
    "batch2_wrong_contraction": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(2, 3, 5)),
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3].",
    ),
    "input_dtype": (
        lambda lib: lib.baddbmm(lib.ones(5, dtype=lib.float64), lib.ones(*B1), lib.ones(*B2)),
        RuntimeError,
        "Input dtypes must be the same, got: input double, batch1: float, batch2: float",
    ),
    "input_dtype_long": (
        lambda lib: lib.baddbmm(lib.ones(5, dtype=lib.int64), lib.ones(*B1), lib.ones(*B2)),
        RuntimeError,
        "Input dtypes must be the same, got: input long int, batch1: float, batch2: float",
    ),
    "batch2_dtype": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(*B2, dtype=lib.float64)),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    "batch1_not_3d": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(3, 4), lib.ones(*B2)),
        RuntimeError,
        "batch1 must be a 3D tensor",
    ),
    "batch2_not_3d": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(2, 4, 5, 1)),
        RuntimeError,
        "batch2 must be a 3D tensor",
    ),
    "batch2_2d_has_no_dim_2": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(4, 5)),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    "batch1_1d_has_no_dim_1": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(3), lib.ones(*B2)),
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
    ),
    "batch1_0d": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.tensor(1.0), lib.ones(*B2)),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
    ),
    "bool": (
        lambda lib: lib.baddbmm(*(lib.ones(*s, dtype=lib.bool) for s in ((5,), B1, B2))),
        NotImplementedError,
        "\"baddbmm\" not implemented for 'Bool'",
    ),
    "alpha_overflows_float": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(*B2), alpha=1e300),
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    "complex_alpha_for_float": (
        lambda lib: lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(*B2), alpha=1j),
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    "beta_overflows_int": (
        lambda lib: lib.baddbmm(
            *(lib.ones(*s, dtype=lib.int32) for s in ((5,), B1, B2)), beta=2**40
        ),
        RuntimeError,
        "value cannot be converted to type int without overflow",
    ),
    "nan_beta_for_long": (
        lambda lib: lib.baddbmm(
            *(lib.ones(*s, dtype=lib.int64) for s in ((5,), B1, B2)), beta=float("nan")
        ),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusal_matches_torch(torch, name):
    fn, exc, phrase = ERRORS[name]
    assert_same_error(torch, fn, exc, phrase)


def test_method_and_keywords(torch):
    def fn(lib, tensor):
        s = tensor(np.arange(5.0))
        a = tensor(np.arange(24.0).reshape(B1))
        b = tensor(np.arange(40.0).reshape(B2) / 7)
        return s.baddbmm(batch1=a, batch2=b, alpha=0.5, beta=-1)

    assert_same(torch, result_scenario(fn))


def test_in_place_shares_the_node_and_bumps_the_version(torch):
    def run(lib):
        a = lib.ones(*B1, requires_grad=True)
        s = lib.ones(2, 3, 5)
        before = s._version
        y = s.baddbmm_(a, lib.ones(*B2), beta=0.5)
        y.sum().backward()
        return (
            y is s,
            s._version - before,
            type(y.grad_fn).__name__,
            y.grad_fn._saved_beta,
            s.tolist(),
            a.grad.tolist(),
        )

    assert run(og) == run(torch)


def test_in_place_on_a_leaf_that_requires_grad_is_refused(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(2, 3, 5, requires_grad=True).baddbmm_(lib.ones(*B1), lib.ones(*B2)),
        RuntimeError,
        "a leaf Variable that requires grad is being used in an in-place operation.",
    )


def test_out_writes_and_bumps_the_version(torch):
    def run(lib):
        out = lib.empty(2, 3, 5)
        before = out._version
        r = lib.baddbmm(lib.ones(5), lib.ones(*B1), lib.ones(*B2), beta=2, out=out)
        return r is out, out._version > before, out.tolist()

    assert run(og) == run(torch)


def test_out_of_another_dtype_is_refused(torch):
    assert_same_error(
        torch,
        lambda lib: lib.baddbmm(
            lib.ones(5), lib.ones(*B1), lib.ones(*B2), out=lib.empty(2, 3, 5, dtype=lib.float64)
        ),
        RuntimeError,
        "Expected out tensor to have dtype float, but got double instead",
    )


def test_out_refuses_inputs_that_require_grad(torch):
    assert_same_error(
        torch,
        lambda lib: lib.baddbmm(
            lib.ones(5, requires_grad=True), lib.ones(*B1), lib.ones(*B2), out=lib.empty(2, 3, 5)
        ),
        RuntimeError,
        "baddbmm(): functions with out=... arguments don't support automatic differentiation",
    )


def test_dispatch_mode_sees_baddbmm_and_its_backward(torch):
    def ops(lib):
        s = lib.ones(5, dtype=lib.float64, requires_grad=True)
        a = lib.ones(*B1, dtype=lib.float64, requires_grad=True)
        b = lib.ones(*B2, dtype=lib.float64, requires_grad=True)
        log = aten_log(lib, lambda: lib.baddbmm(s, a, b, alpha=2).sum().backward())
        return [op for op in log if op not in ("aten.detach.default",)]

    assert ops(og) == ops(torch)
