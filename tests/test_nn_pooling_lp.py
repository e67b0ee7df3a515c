"""opgrad.nn.functional's power-average poolings (lp_pool1d/2d/3d) against torch: values,
gradients, second derivatives, forward-mode tangents, the grad_fn chain of torch's
decomposition (pow, avg_pool, sign * relu(abs), mul, pow), the aten ops a dispatch mode
sees, and errors."""

from __future__ import annotations

import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import aten_log, grad_fn_chain, outcome

GRAPHS = {
    "lp_pool1d_p2": ([(2, 3, 8)], lambda F, lib, x: F.lp_pool1d(x, 2, 2)),
    "lp_pool1d_p3_stride_ceil": (
        [(2, 3, 9)],
        lambda F, lib, x: F.lp_pool1d(x.abs() + 0.5, 3, 3, 2, ceil_mode=True),
    ),
    "lp_pool1d_fractional_p_unbatched": (
        [(3, 7)],
        lambda F, lib, x: F.lp_pool1d(x.abs() + 0.5, 1.5, 3, 1),
    ),
    "lp_pool1d_inf": ([(2, 3, 8)], lambda F, lib, x: F.lp_pool1d(x, float("inf"), 2)),
    "lp_pool1d_minus_inf": ([(2, 3, 8)], lambda F, lib, x: F.lp_pool1d(x, -float("inf"), 3, 2)),
    "lp_pool2d_p2": ([(2, 3, 6, 6)], lambda F, lib, x: F.lp_pool2d(x, 2, 2)),
    "lp_pool2d_rectangular_stride_ceil": (
        [(1, 2, 7, 8)],
        lambda F, lib, x: F.lp_pool2d(x.abs() + 0.5, 2.5, (3, 2), (2, 3), ceil_mode=True),
    ),
    "lp_pool2d_inf": ([(2, 3, 6, 6)], lambda F, lib, x: F.lp_pool2d(x, float("inf"), 3, 2)),
    "lp_pool2d_unbatched": ([(3, 5, 5)], lambda F, lib, x: F.lp_pool2d(x, 2, 2, 1)),
    "lp_pool3d_p2": ([(1, 2, 4, 4, 4)], lambda F, lib, x: F.lp_pool3d(x, 2, 2)),
    "lp_pool3d_stride": (
        [(1, 2, 5, 4, 6)],
        lambda F, lib, x: F.lp_pool3d(x.abs() + 0.5, 3, (2, 2, 3), 1),
    ),
    "lp_pool3d_minus_inf": (
        [(1, 2, 4, 4, 4)],
        lambda F, lib, x: F.lp_pool3d(x, -float("inf"), 2),
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


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_grad_fn_chain_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    _, got = run_graph(og, fn, specs, (name,))
    _, expected = run_graph(torch, fn, specs, (name,))
    assert grad_fn_chain(got.grad_fn) == grad_fn_chain(expected.grad_fn)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_dispatch_mode_sees_torch_ops(torch, name):
    specs, fn = GRAPHS[name]

    def ops(lib):
        inputs = make_inputs(lib, specs, (name,))
        log = aten_log(lib, lambda: fn(lib.nn.functional, lib, *inputs).sum().backward())
        return [op for op in log if op != "aten.detach.default"]

    assert ops(og) == ops(torch)


def test_all_zero_window_has_zero_gradient(torch):
    """sign * relu(abs) keeps an all-zero window's value and gradient at zero."""

    def scenario(lib):
        x = lib.tensor([[[0.0, 0.0, 1.0, -2.0]]], requires_grad=True)
        y = lib.nn.functional.lp_pool1d(x, 2, 2)
        y.sum().backward()
        return y.tolist(), str(x.grad.tolist())

    assert scenario(og) == scenario(torch)


ERRORS = {
    "lp2_kernel_length": lambda F, lib: F.lp_pool2d(lib.zeros(1, 4, 4), 2, (2, 2, 2)),
    "lp3_kernel_length": lambda F, lib: F.lp_pool3d(lib.zeros(1, 4, 4, 4), 2, (2, 2)),
    "lp1_dims": lambda F, lib: F.lp_pool1d(lib.zeros(4), 2, 2),
    "lp2_too_small": lambda F, lib: F.lp_pool2d(lib.zeros(1, 4, 4), 2, 5),
    "lp1_inf_too_small": lambda F, lib: F.lp_pool1d(lib.zeros(1, 4), float("inf"), 5),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    expected = outcome(lambda: ERRORS[name](torch.nn.functional, torch))
    assert expected[0] != "ok"
    assert outcome(lambda: ERRORS[name](og.nn.functional, og)) == expected
