"""opgrad.nn.functional's linear and normalisation functions against torch: values,
gradients, second derivatives, forward-mode tangents, grad_fn chains and saved fields,
running-stat updates and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import assert_same_error, assert_same_tensor, next_function_names

# name -> (input specs, call): specs are shapes (requires grad) or (shape, False) or None
GRAPHS = {
    "linear_2d_bias": ([(3, 4), (5, 4), (5,)], lambda F, lib, x, w, b: F.linear(x, w, b)),
    "linear_2d": ([(3, 4), (5, 4)], lambda F, lib, x, w: F.linear(x, w)),
    "linear_3d_bias": ([(2, 3, 4), (5, 4), (5,)], lambda F, lib, x, w, b: F.linear(x, w, b)),
    "linear_1d_bias": ([(4,), (5, 4), (5,)], lambda F, lib, x, w, b: F.linear(x, w, b)),
    "linear_3d": ([(2, 3, 4), (5, 4)], lambda F, lib, x, w: F.linear(x, w)),
    "linear_4d_bias_transposed": (
        [(2, 4, 3, 2), (5, 4), (5,)],
        lambda F, lib, x, w, b: F.linear(x.transpose(1, 3), w, b),
    ),
    "layer_norm": (
        [(2, 3, 4), (4,), (4,)],
        lambda F, lib, x, w, b: F.layer_norm(x, (4,), w, b),
    ),
    "layer_norm_two_dims_no_affine": (
        [(2, 3, 4)],
        lambda F, lib, x: F.layer_norm(x, (3, 4), eps=1e-3),
    ),
    "layer_norm_weight_only": (
        [(5, 3), (3,)],
        lambda F, lib, x, w: F.layer_norm(x, [3], w),
    ),
    "layer_norm_frozen_input": (
        [((4, 3), False), (3,), (3,)],
        lambda F, lib, x, w, b: F.layer_norm(x, [3], w, b),
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


def chain(fn):
    names, todo = [], [fn]
    while todo:
        node = todo.pop(0)
        if node is None:
            continue
        names.append(type(node).__name__)
        todo += [f for f, _ in node.next_functions]
    return names


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_grad_fn_chain_matches_torch(torch, name):
    from norm_scenarios import run_graph

    specs, fn = GRAPHS[name]
    _, got = run_graph(og, fn, specs, (name,))
    _, expected = run_graph(torch, fn, specs, (name,))
    assert chain(got.grad_fn) == chain(expected.grad_fn)


# ---- linear --------------------------------------------------------------------------------


def test_linear_2d_with_bias_is_addmm(torch):
    x, w, b = og.randn(3, 4), og.randn(5, 4, requires_grad=True), og.randn(5)
    y = og.nn.functional.linear(x, w, b)
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    assert y.grad_fn._saved_alpha == 1 and y.grad_fn._saved_beta == 1


def test_addmm_scales_with_beta_and_alpha(torch):
    def scenario(lib):
        g = np.random.default_rng(0)
        s, a, b = (lib.tensor(g.standard_normal(sh)) for sh in ((5,), (3, 4), (4, 5)))
        return lib.addmm(s, a, b, beta=0.5, alpha=-2).reshape(-1).tolist()

    assert scenario(og) == pytest.approx(scenario(torch), rel=1e-12)


@pytest.mark.parametrize(
    "shapes, phrase",
    [
        (((5,), (3, 4), (3, 5)), "shapes cannot be multiplied"),
        (((5,), (4,), (4, 5)), "mat1 must be a matrix"),
        (((4,), (3, 4), (4, 5)), "The expanded size of the tensor"),
    ],
)
def test_addmm_errors_match_torch(torch, shapes, phrase):
    def scenario(lib):
        return lib.addmm(*(lib.zeros(s) for s in shapes))

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_linear_shape_mismatch_matches_torch(torch):
    def scenario(lib):
        return lib.nn.functional.linear(lib.zeros(3, 4), lib.zeros(5, 3))

    assert_same_error(torch, scenario, RuntimeError, "shapes cannot be multiplied")


# ---- layer norm ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, normalized, weight, phrase",
    [
        ((2, 3, 5), (4,), None, "Given normalized_shape="),
        ((2, 3, 4), (4,), (3,), "Expected weight to be of same shape"),
        ((2, 3, 4), (), None, "Expected normalized_shape to be at least 1-dimensional"),
    ],
)
def test_layer_norm_errors_match_torch(torch, shape, normalized, weight, phrase):
    def scenario(lib):
        w = lib.ones(weight) if weight else None
        return lib.nn.functional.layer_norm(lib.zeros(shape), normalized, w)

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_native_layer_norm_returns_torch_statistics(torch):
    data = np.random.default_rng(1).standard_normal((3, 2, 4))
    got = og.native_layer_norm(og.tensor(data), [2, 4], None, None, 1e-5)
    expected = torch.native_layer_norm(torch.tensor(data), [2, 4], None, None, 1e-5)
    for g, e in zip(got, expected):
        assert_same_tensor(g, e, rtol=1e-12, atol=1e-12)


def test_layer_norm_double_backward_node_matches_torch(torch):
    def build(lib):
        x = lib.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
        w = lib.tensor(np.random.default_rng(3).standard_normal(4), requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (4,), w)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        return g.grad_fn

    got, expected = build(og), build(torch)
    assert type(got).__name__ == type(expected).__name__ == "NativeLayerNormBackwardBackward0"
    assert next_function_names(got) == next_function_names(expected)


def test_native_layer_norm_backward_mean_has_no_derivative(torch):
    def scenario(lib):
        x = lib.tensor(np.random.default_rng(4).standard_normal((3, 4)))
        mean = lib.zeros(3, 1, dtype=lib.float64, requires_grad=True)
        rstd = lib.ones(3, 1, dtype=lib.float64)
        out = lib.ops.aten.native_layer_norm_backward(
            lib.ones(3, 4, dtype=lib.float64), x, [4], mean, rstd, None, None, [True, False, False]
        )
        out[0].sum().backward()

    assert_same_error(torch, scenario, NotImplementedError, "native_layer_norm_backward mean")


def test_native_layer_norm_backward_leaves_unmasked_results_undefined(torch):
    def scenario(lib):
        x = lib.tensor(np.random.default_rng(5).standard_normal((3, 4)))
        out = lib.ops.aten.native_layer_norm_backward(
            lib.ones(3, 4, dtype=lib.float64),
            x,
            [4],
            lib.zeros(3, 1, dtype=lib.float64),
            lib.ones(3, 1, dtype=lib.float64),
            lib.ones(4, dtype=lib.float64),
            None,
            [False, True, False],
        )
        return [None if t is None else t.tolist() for t in out]

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_layer_norm_reduced_precision_matches_torch(torch, dtype):
    data = (np.random.default_rng(6).standard_normal((4, 8)) * 3 + 1).astype(dtype)
    got = og.nn.functional.layer_norm(og.tensor(data), (8,))
    expected = torch.nn.functional.layer_norm(torch.tensor(data), (8,))
    eps = float(np.finfo(dtype).eps)
    assert_same_tensor(got, expected, rtol=4 * eps, atol=4 * eps)
