"""opgrad.nn.functional's linear and normalisation functions against torch: values,
gradients, second derivatives, forward-mode tangents, grad_fn chains and saved fields,
running-stat updates and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import (
    assert_same_error,
    assert_same_tensor,
    aten_log,
    next_function_names,
    outcome,
)

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
    "bilinear_bias": (
        [(4, 3), (4, 5), (6, 3, 5), (6,)],
        lambda F, lib, x1, x2, w, b: F.bilinear(x1, x2, w, b),
    ),
    "bilinear_batched": (
        [(2, 3, 3), (2, 3, 5), (6, 3, 5)],
        lambda F, lib, x1, x2, w: F.bilinear(x1, x2, w),
    ),
    "bilinear_1d_frozen_weight": (
        [(3,), (5,), ((2, 3, 5), False)],
        lambda F, lib, x1, x2, w: lib.bilinear(x1, x2, w),
    ),
    "local_response_norm_3d": (
        [(2, 5, 4)],
        lambda F, lib, x: F.local_response_norm(x, 3),
    ),
    "local_response_norm_4d": (
        [(2, 6, 3, 4)],
        lambda F, lib, x: F.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0),
    ),
    "local_response_norm_5d": (
        [(2, 4, 2, 2, 3)],
        lambda F, lib, x: F.local_response_norm(x, 5),
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
    "batch_norm_train": (
        [(4, 3, 5), (3,), (3,)],
        lambda F, lib, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    ),
    "batch_norm_train_running": (
        [(4, 3), ((3,), False), ((3,), False), (3,)],
        lambda F, lib, x, rm, rv, w: F.batch_norm(x, rm, rv.abs() + 1, w, training=True),
    ),
    "batch_norm_eval": (
        [(4, 3, 2, 2), ((3,), False), ((3,), False), (3,), (3,)],
        lambda F, lib, x, rm, rv, w, b: F.batch_norm(x, rm, rv.abs() + 1, w, b, eps=1e-3),
    ),
    "batch_norm_eval_no_affine": (
        [(4, 3), ((3,), False), ((3,), False)],
        lambda F, lib, x, rm, rv: F.batch_norm(x, rm, rv.abs() + 1),
    ),
    "instance_norm": (
        [(2, 3, 5), (3,), (3,)],
        lambda F, lib, x, w, b: F.instance_norm(x, weight=w, bias=b),
    ),
    "instance_norm_running": (
        [(2, 3, 4), ((3,), False), ((3,), False)],
        lambda F, lib, x, rm, rv: F.instance_norm(x, rm, rv.abs() + 1),
    ),
    "group_norm": (
        [(4, 6, 5), (6,), (6,)],
        lambda F, lib, x, w, b: F.group_norm(x, 3, w, b),
    ),
    "group_norm_no_affine_4d": (
        [(2, 4, 3, 2)],
        lambda F, lib, x: F.group_norm(x, 2, eps=1e-3),
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


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize(
    "beta, alpha",
    [(0.5, 1), (1.5, 2.7), (-0.5, -1.5), (True, False), (1, -1), (1, -255), (1, 255.9)],
)
def test_addmm_on_integers_truncates_beta_and_alpha_as_torch(torch, dtype, beta, alpha):
    """Truncated toward zero; a negative float refused for uint8, a negative int wrapped."""

    def scenario(lib):
        s = lib.tensor([[1, 2], [3, 4]], dtype=getattr(lib, dtype))
        return lib.addmm(s, s, s, beta=beta, alpha=alpha).tolist()

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))


def test_addmm_on_int64_wraps_as_torch(torch):
    def scenario(lib):
        big = lib.tensor([[3_000_000_000]])
        return lib.addmm(lib.tensor([[10**9]]), big, big + 10**9)

    assert_same_tensor(scenario(og), scenario(torch))


@pytest.mark.parametrize("beta", [300, 1e30, float("nan")])
def test_addmm_refuses_a_beta_the_integer_dtype_cannot_hold(torch, beta):
    def scenario(lib):
        u = lib.ones(2, 2, dtype=lib.uint8)
        return lib.addmm(u, u, u, beta=beta)

    assert_same_error(torch, scenario, RuntimeError, "without overflow")


def test_addmm_refuses_bool_after_the_broadcast_check(torch):
    def scenario(shape):
        return lambda lib: lib.addmm(
            *(lib.ones(s, dtype=lib.bool) for s in (shape, (2, 2), (2, 2)))
        )

    assert_same_error(torch, scenario((2, 2)), NotImplementedError, "not implemented for 'Bool'")
    og_error = outcome(lambda: scenario((3, 2, 3))(og))
    torch_error = outcome(lambda: scenario((3, 2, 3))(torch))
    assert og_error[0] == torch_error[0] == "RuntimeError"
    assert "must be greater or equal to the number of dimensions" in og_error[1]


def test_addmm_broadcast_error_names_the_tensor_type_as_torch(torch):
    def scenario(lib):
        return lib.addmm(*(lib.ones(s, dtype=lib.int64) for s in ((3, 2, 3), (2, 2), (2, 2))))

    assert_same_error(torch, scenario, RuntimeError, "expand(")


BILINEAR_ERRORS = {
    "ranks": ([(4, 3), (4, 2, 5), (6, 3, 5)], "input dimensions do not match"),
    "batch": ([(2, 3), (3, 4), (5, 3, 4)], "input batch dimensions do not match at dim 0"),
    "input1": ([(2, 3), (2, 4), (5, 4, 4)], "input1 size does not match weight size"),
    "input2": ([(2, 3), (2, 4), (5, 3, 5)], "input2 size does not match weight size"),
    "bias": ([(2, 3), (2, 4), (5, 3, 4), (4,)], "bias size does not match weight size"),
    "weight_2d": ([(2, 3), (2, 4), (3, 4)], "input1 size does not match weight size"),
}


@pytest.mark.parametrize("name", BILINEAR_ERRORS)
def test_bilinear_errors_match_torch(torch, name):
    shapes, phrase = BILINEAR_ERRORS[name]

    def scenario(lib):
        return lib.nn.functional.bilinear(*(lib.zeros(s) for s in shapes))

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_bilinear_reaches_trilinear_as_torch(torch):
    def scenario(lib):
        args = [lib.ones(s) for s in ((2, 3, 3), (2, 3, 5), (6, 3, 5), (6,))]
        return aten_log(lib, lambda: lib.nn.functional.bilinear(*args))

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("shape", [(2, 6, 3, 4), (2, 5, 4)], ids=str)
def test_local_response_norm_calls_torch_ops(torch, shape):
    def scenario(lib):
        x = lib.ones(shape)
        return aten_log(lib, lambda: lib.nn.functional.local_response_norm(x, 3))

    assert scenario(og) == scenario(torch)


def test_local_response_norm_edge_cases_match_torch(torch):
    def scenario(lib):
        empty = lib.ones(1, 3, 0)
        return lib.nn.functional.local_response_norm(empty, 2) is empty

    assert scenario(og) == scenario(torch) is True
    assert outcome(lambda: og.nn.functional.local_response_norm(og.ones(2, 3), 2)) == outcome(
        lambda: torch.nn.functional.local_response_norm(torch.ones(2, 3), 2)
    )


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


# ---- batch norm ------------------------------------------------------------------------------


def _running(lib, training, momentum=0.1):
    g = np.random.default_rng(7)
    x = lib.tensor(g.standard_normal((5, 3, 4)))
    rm, rv = lib.tensor(g.standard_normal(3)), lib.tensor(g.random(3) + 0.5)
    lib.nn.functional.batch_norm(x, rm, rv, training=training, momentum=momentum)
    return rm, rv


@pytest.mark.parametrize("momentum", [0.1, 0.7])
def test_batch_norm_training_updates_running_stats_in_place_as_torch(torch, momentum):
    (rm, rv), (erm, erv) = _running(og, True, momentum), _running(torch, True, momentum)
    assert_same_tensor(rm, erm, rtol=1e-12, atol=1e-12)
    assert_same_tensor(rv, erv, rtol=1e-12, atol=1e-12)  # unbiased variance
    assert (rm._version, rv._version) == (erm._version, erv._version)


def test_batch_norm_eval_leaves_running_stats_alone(torch):
    (rm, rv), (erm, erv) = _running(og, False), _running(torch, False)
    assert_same_tensor(rm, erm, rtol=0, atol=0)
    assert_same_tensor(rv, erv, rtol=0, atol=0)


def test_instance_norm_updates_running_stats_as_torch(torch):
    def scenario(lib):
        g = np.random.default_rng(8)
        x = lib.tensor(g.standard_normal((2, 3, 4)))
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        lib.nn.functional.instance_norm(x, rm, rv, momentum=0.3)
        return rm.tolist(), rv.tolist(), rm._version, rv._version

    got, expected = scenario(og), scenario(torch)
    assert got[2:] == expected[2:]
    np.testing.assert_allclose(got[:2], expected[:2], rtol=1e-12)


def test_native_batch_norm_eval_saves_empty_statistics(torch):
    def scenario(lib):
        x = lib.ones(4, 3, dtype=lib.float64, requires_grad=True)
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        out = lib.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5)
        return [tuple(t.shape) for t in out], out[0].grad_fn._saved_training

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize(
    "shape, training, kwargs, error, phrase",
    [
        ((1, 6), True, {}, ValueError, "Expected more than 1 value per channel when training"),
        ((2, 6), True, {"rm": 5}, RuntimeError, "running_mean should contain 6 elements not 5"),
        ((2, 6), True, {"w": 5}, RuntimeError, "weight should contain 6 elements not 5"),
        ((2, 6), False, {"none": True}, RuntimeError, "running_mean must be defined"),
    ],
)
def test_batch_norm_errors_match_torch(torch, shape, training, kwargs, error, phrase):
    def scenario(lib):
        rm = None if kwargs.get("none") else lib.zeros(kwargs.get("rm", 6))
        rv = None if kwargs.get("none") else lib.ones(6)
        w = lib.ones(kwargs["w"]) if "w" in kwargs else None
        return lib.nn.functional.batch_norm(lib.zeros(shape), rm, rv, w, training=training)

    assert_same_error(torch, scenario, error, phrase)


def test_batch_norm_double_backward_node_matches_torch(torch):
    def build(lib):
        x = lib.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
        y = lib.nn.functional.batch_norm(x, None, None, training=True)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return g.grad_fn

    got, expected = build(og), build(torch)
    assert chain(got) == chain(expected)


def test_instance_norm_needs_spatial_size_when_training(torch):
    def scenario(lib):
        return lib.nn.functional.instance_norm(lib.zeros(2, 6, 1))

    assert_same_error(torch, scenario, ValueError, "Expected more than 1 spatial element")


# ---- group norm ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "groups, weight, phrase",
    [
        (4, None, "Expected number of channels in input to be divisible by num_groups"),
        (3, 5, "Expected weight to be a vector of size equal to the number of channels"),
    ],
)
def test_group_norm_errors_match_torch(torch, groups, weight, phrase):
    def scenario(lib):
        w = lib.ones(weight) if weight else None
        return lib.nn.functional.group_norm(lib.zeros(2, 6, 3), groups, w)

    assert_same_error(torch, scenario, RuntimeError, phrase)


def test_group_norm_statistics_are_differentiable_as_torch(torch):
    def scenario(lib):
        x = lib.tensor(np.random.default_rng(9).standard_normal((2, 4, 3)), requires_grad=True)
        out, mean, rstd = lib.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
        (g,) = lib.autograd.grad(out.sum() + (mean * 3).sum() + (rstd * rstd).sum(), x)
        return g

    assert_same_tensor(scenario(og), scenario(torch), rtol=1e-10, atol=1e-12)


def test_native_group_norm_backward_is_not_differentiable(torch):
    def scenario(lib):
        g = np.random.default_rng(10)
        x = lib.tensor(g.standard_normal((2, 4, 3)), requires_grad=True)
        m, r = lib.tensor(g.standard_normal((2, 2))), lib.tensor(g.random((2, 2)) + 1)
        w = lib.tensor(g.standard_normal(4))
        out = lib.ops.aten.native_group_norm_backward(
            lib.ones(2, 4, 3, dtype=lib.float64), x, m, r, w, 2, 4, 3, 2, [True, True, True]
        )
        assert type(out[0].grad_fn).__name__ == "NotImplemented"
        out[0].sum().backward()

    assert_same_error(torch, scenario, RuntimeError, "derivative for aten::native_group_norm")


# ---- rms_norm, normalize and the vector norm under it --------------------------------------

RMS_AND_NORMALIZE = {
    "rms_norm": ([(2, 3, 4)], lambda F, lib, x: F.rms_norm(x, (4,))),
    "rms_norm_weight_two_dims_eps": (
        [(2, 3, 4), (3, 4)],
        lambda F, lib, x, w: F.rms_norm(x, (3, 4), w, 1e-3),
    ),
    "torch_rms_norm": ([(5, 3), (3,)], lambda F, lib, x, w: lib.rms_norm(x, [3], w, 0.5)),
    "normalize": ([(2, 3, 4)], lambda F, lib, x: F.normalize(x)),
    "normalize_p1_last_dim": ([(2, 3, 4)], lambda F, lib, x: F.normalize(x, 1.0, -1, 1e-3)),
    "normalize_inf": ([(2, 3, 4)], lambda F, lib, x: F.normalize(x, float("inf"), 0)),
    "normalize_p3": ([(3, 4)], lambda F, lib, x: F.normalize(x, 3.0, 1)),
    "normalize_p_half": ([(3, 4)], lambda F, lib, x: F.normalize(x, 0.5, 1)),
    "normalize_p_1_5": ([(3, 4)], lambda F, lib, x: F.normalize(x, 1.5, 0)),
}


@pytest.mark.parametrize("name", sorted(RMS_AND_NORMALIZE))
def test_rms_norm_and_normalize_graphs_match_torch(torch, name):
    specs, fn = RMS_AND_NORMALIZE[name]
    assert_same_graph(torch, fn, specs, ("rms", name))


@pytest.mark.parametrize("name", sorted(RMS_AND_NORMALIZE))
def test_rms_norm_and_normalize_tangents_match_torch(torch, name):
    specs, fn = RMS_AND_NORMALIZE[name]
    assert_same_tangent(torch, fn, specs, ("rms", name))


def _aten_calls(lib, fn):
    from torch_oracle import aten_log

    return [entry.split(".", 1)[1] for entry in aten_log(lib, fn)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rms_norm_makes_torch_calls_and_upcasts_half(torch, dtype):
    def scenario(lib):
        x = lib.randn(2, 3, 4).to(getattr(lib, dtype)).requires_grad_()
        w = lib.randn(4).to(getattr(lib, dtype))
        calls = _aten_calls(lib, lambda: lib.nn.functional.rms_norm(x, (4,), w, 1e-3))
        out = lib.nn.functional.rms_norm(x, (4,), w, 1e-3)
        return calls, str(out.dtype).split(".")[-1], out.grad_fn.name()

    assert scenario(og) == scenario(torch)


def test_rms_norm_half_values_match_torch(torch):
    def scenario(lib):
        x = lib.tensor(np.random.default_rng(3).standard_normal((4, 6)), dtype=lib.float16)
        return lib.nn.functional.rms_norm(x, (6,))

    assert_same_tensor(scenario(og), scenario(torch), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf")])
def test_normalize_makes_torch_calls(torch, p):
    def scenario(lib):
        x = lib.randn(2, 3, 4, requires_grad=True)
        return _aten_calls(lib, lambda: lib.nn.functional.normalize(x, p, 2))

    assert scenario(og) == scenario(torch)


def test_normalize_of_zero_rows_is_zero_with_zero_gradient(torch):
    def scenario(lib):
        x = lib.zeros(2, 3, requires_grad=True)
        y = lib.nn.functional.normalize(x)
        (g,) = lib.autograd.grad(y.sum(), x)
        return y.tolist(), g.tolist()

    assert scenario(og) == scenario(torch)


def test_normalize_writes_out(torch):
    def scenario(lib):
        x = lib.tensor([[3.0, 4.0], [1.0, 0.0]])
        out = lib.empty(2, 2)
        result = lib.nn.functional.normalize(x, out=out)
        return result is out, out.tolist()

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, 1.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("dim, keepdim", [(None, False), ([1], False), ([0, 2], True)])
def test_linalg_vector_norm_matches_torch(torch, ord, dim, keepdim):
    def scenario(lib):
        data = np.random.default_rng(5).standard_normal((3, 4, 2))
        data[0, 1] = 0.0
        x = lib.tensor(data, requires_grad=True)
        call = lib.linalg.vector_norm if lib is torch else lib.linalg_vector_norm
        y = call(x, ord, dim, keepdim)
        grads = lib.autograd.grad(y.sum(), x, allow_unused=True)
        return y, grads[0], y.grad_fn.name(), sorted(n for n in dir(y.grad_fn) if "_saved" in n)

    got, exp = scenario(og), scenario(torch)
    assert_same_tensor(got[0], exp[0], rtol=1e-12, atol=1e-14)
    assert (got[1] is None) == (exp[1] is None)
    if exp[1] is not None:
        assert_same_tensor(got[1], exp[1], rtol=1e-12, atol=1e-14)
    assert got[2:] == exp[2:]


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 1.5, float("inf")])
def test_linalg_vector_norm_tangent_matches_torch(torch, ord):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        rng = np.random.default_rng(6)
        x, t = lib.tensor(rng.standard_normal((3, 4))), lib.tensor(rng.standard_normal((3, 4)))
        call = lib.linalg.vector_norm if lib is torch else lib.linalg_vector_norm
        with fwAD.dual_level():
            y = call(fwAD.make_dual(x, t), ord, [1], False)
            return fwAD.unpack_dual(y).tangent

    assert_same_tensor(scenario(og), scenario(torch), rtol=1e-12, atol=1e-14)


NORM_ERRORS = {
    "rms_norm_shape": (
        lambda T: T.nn.functional.rms_norm(T.ones(2, 4), (3, 5)),
        RuntimeError,
        "expected input with shape [*3, 5], but got input of size[2, 4]",
    ),
    "rms_norm_weight_shape": (
        lambda T: T.nn.functional.rms_norm(T.ones(2, 4), (4,), T.ones(3)),
        RuntimeError,
        "Expected weight to be of same shape as normalized_shape",
    ),
    "rms_norm_empty_shape": (
        lambda T: T.nn.functional.rms_norm(T.ones(2, 4), ()),
        RuntimeError,
        "Expected normalized_shape to be at least 1-dimensional",
    ),
    "rms_norm_integer": (
        lambda T: T.nn.functional.rms_norm(T.ones(2, 4, dtype=T.int64), (4,)),
        NotImplementedError,
        "\"rms_norm\" not implemented for 'Long'",
    ),
    "vector_norm_integer": (
        lambda T: T.nn.functional.normalize(T.ones(2, 4, dtype=T.int64)),
        RuntimeError,
        "Expected a floating point or complex tensor as input. Got Long",
    ),
    "vector_norm_inf_of_empty_dim": (
        lambda T: T.nn.functional.normalize(T.ones(2, 0, 3), float("inf"), -2),
        RuntimeError,
        "cannot compute the inf norm on the dimension -2because this dimension is empty",
    ),
    "vector_norm_inf_of_empty": (
        lambda T: (T.linalg.vector_norm if T.__name__ == "torch" else T.linalg_vector_norm)(
            T.ones(0, 2), -float("inf")
        ),
        RuntimeError,
        "cannot compute the -inf norm on an empty tensor",
    ),
}


@pytest.mark.parametrize("name", sorted(NORM_ERRORS))
def test_rms_norm_and_normalize_errors_match_torch(torch, name):
    fn, exc_type, phrase = NORM_ERRORS[name]
    assert_same_error(torch, fn, exc_type, phrase)


def test_clamp_min_nodes_match_torch(torch):
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        m = lib.tensor([0.5, 0.5, 0.5], requires_grad=True)
        y0, y1 = lib.clamp_min(x, 0.5), lib.clamp_min(x, m)
        g = lib.autograd.grad((y0 * 2 + y1 * 3).sum(), (x, m))
        names = [y.grad_fn.name() for y in (y0, y1)]
        return y0.tolist(), y1.tolist(), [t.tolist() for t in g], names

    assert scenario(og) == scenario(torch)


def test_isnan_matches_torch(torch):
    def scenario(lib):
        x = lib.tensor([1.0, float("nan"), float("inf")])
        return lib.isnan(x).tolist(), lib.isnan(lib.tensor([1, 2])).tolist()

    assert scenario(og) == scenario(torch)


def test_clamp_min_inplace_and_out_forms_match_torch(torch):
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0])
        m = lib.tensor([0.0, 1.0, 1.0])
        a, b = x.clone().clamp_min_(0.25), x.clone().clamp_min_(m)
        out0, out1 = lib.empty(3), lib.empty(3)
        lib.clamp_min(x, 0.25, out=out0)
        lib.clamp_min(x, m, out=out1)
        return [t.tolist() for t in (a, b, out0, out1)]

    assert scenario(og) == scenario(torch)
