"""The elementwise losses of opgrad.nn.functional against torch: smooth_l1, huber, soft margin,
kl_div, poisson and gaussian NLL, margin ranking, hinge embedding, multilabel soft margin
(every reduction, their options, graphs and saved fields, double backward, float16, the aten
calls a dispatch mode sees, errors). OpInfo samples: test_opinfo.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from test_nn_losses import REDUCTIONS, _compare, _leaf
from torch_oracle import aten_log, assert_same, assert_same_error, assert_same_tensor, outcome

RNG = np.random.default_rng(2013)
X = RNG.standard_normal((3, 4)) * 1.5
T = RNG.standard_normal((3, 4)) * 1.5
SIGNS = np.sign(RNG.standard_normal((3, 4)))
LABELS = (RNG.random((3, 4)) > 0.5).astype(np.float64)
RATES = np.abs(T) * 3


def F(lib):
    return lib.nn.functional


def _target(lib, array):
    return lib.tensor(array, dtype=lib.float64)


# ---- smooth_l1, huber, soft margin: ops with nodes of their own ------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.4, 0.0, 5])
def test_smooth_l1_loss_matches_torch(torch, reduction, beta):
    _compare(torch, lambda L, a, b: F(L).smooth_l1_loss(a, b, reduction=reduction, beta=beta), X, T)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [1.0, 0.4, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_huber_loss_matches_torch(torch, reduction, delta, weighted):
    def fn(L, a, b):
        weight = _target(L, np.abs(X) + 0.1) if weighted else None
        return F(L).huber_loss(a, b, reduction=reduction, delta=delta, weight=weight)

    _compare(torch, fn, X, T)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss_matches_torch(torch, reduction):
    _compare(
        torch, lambda L, a: F(L).soft_margin_loss(a, _target(L, SIGNS), reduction=reduction), X
    )


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "soft_margin_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_double_backward_matches_torch(torch, name, reduction):
    """The backward ops' own formulas (grad_output, self and target), through create_graph."""
    kwargs = {"smooth_l1_loss": {"beta": 0.8}, "huber_loss": {"delta": 0.8}}.get(name, {})

    def scenario(lib):
        a = _leaf(lib, X)
        b = _leaf(lib, T) if name != "soft_margin_loss" else _target(lib, SIGNS)
        loss = getattr(F(lib), name)(a, b, reduction=reduction, **kwargs)
        weights = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
        w = _leaf(lib, np.ones(()))
        (ga,) = lib.autograd.grad((loss * weights * w).sum(), a, create_graph=True)
        inputs = [a, w] + ([b] if b.requires_grad else [])
        return lib.autograd.grad((ga * ga * ga).sum(), inputs, allow_unused=True)

    for got, expected in zip(scenario(og), scenario(torch)):
        assert (got is None) == (expected is None)
        if expected is not None:
            assert_same_tensor(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "soft_margin_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_float16_computes_as_torch(torch, name, reduction):
    """float16: torch's Half kernels (smooth_l1's op by op, soft margin's chain of ops)."""
    x16 = (RNG.standard_normal(64) * 2).astype(np.float16)
    t16 = (RNG.standard_normal(64) * 2).astype(np.float16)
    kwargs = {"smooth_l1_loss": {"beta": 0.7}, "huber_loss": {"delta": 0.7}}.get(name, {})

    def scenario(lib):
        x = lib.tensor(x16, requires_grad=True)
        t = lib.tensor(np.sign(t16) if name == "soft_margin_loss" else t16)
        loss = getattr(F(lib), name)(x, t, reduction=reduction, **kwargs)
        (g,) = lib.autograd.grad(loss.sum(), x)
        return loss, g

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=0, atol=0)


def test_huber_loss_lands_in_the_dtype_of_input_as_torch(torch):
    def scenario(lib):
        x = lib.tensor(X, dtype=lib.float32)
        return lib.ops.aten.huber_loss(x, lib.tensor(T), 0, 0.5)

    assert_same_tensor(scenario(og), scenario(torch), rtol=1e-6)


# ---- kl_div, poisson_nll_loss, margin ranking, hinge: torch's composites --------------------


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(torch, reduction, log_target):
    probs = np.abs(T) * (T > -1)  # zeros where the target has no mass

    def fn(L, a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return F(L).kl_div(a, b, reduction=reduction, log_target=log_target)

    _compare(torch, fn, X, T if log_target else probs)


def test_kl_div_batchmean_of_a_0_dim_input_is_the_sum_as_torch(torch):
    _compare(torch, lambda L, a, b: F(L).kl_div(a, b, reduction="batchmean"), X[0, 0], 0.3)


def test_kl_div_mean_warns_as_torch(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F(lib).kl_div(lib.tensor(X), lib.tensor(RATES))
        return [(w.category.__name__, str(w.message), w.filename == __file__) for w in caught]

    got = scenario(og)
    assert got == scenario(torch) and len(got) == 1


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "log_input, full", [(True, False), (False, False), (True, True), (False, True)]
)
def test_poisson_nll_loss_matches_torch(torch, reduction, log_input, full):
    def fn(L, a, b):
        rate = a if log_input else a.abs()
        return F(L).poisson_nll_loss(rate, b, log_input=log_input, full=full, reduction=reduction)

    _compare(torch, fn, X, RATES)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.7])
def test_margin_ranking_loss_matches_torch(torch, reduction, margin):
    def fn(L, a, b):
        return F(L).margin_ranking_loss(a, b, _target(L, SIGNS), margin=margin, reduction=reduction)

    _compare(torch, fn, X, T)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_hinge_embedding_loss_matches_torch(torch, reduction, margin):
    def fn(L, a):
        return F(L).hinge_embedding_loss(a, _target(L, SIGNS), margin=margin, reduction=reduction)

    _compare(torch, fn, X)


# ---- gaussian_nll_loss and multilabel_soft_margin_loss: torch's Python ---------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", ["same", "last_dim_dropped", "one_dim_of_1"])
def test_gaussian_nll_loss_matches_torch(torch, reduction, full, var_shape):
    var = {"same": RATES, "last_dim_dropped": RATES[:, 0], "one_dim_of_1": RATES[:1]}[var_shape]

    def fn(L, a, b, v):
        return F(L).gaussian_nll_loss(a, b, v, full=full, eps=1e-3, reduction=reduction)

    _compare(torch, fn, X, T, var)


def test_gaussian_nll_loss_takes_a_float_var_as_torch(torch):
    _compare(torch, lambda L, a, b: F(L).gaussian_nll_loss(a, b, 0.25, reduction="none"), X, T)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss_matches_torch(torch, reduction, weighted):
    def fn(L, a, b):
        weight = _target(L, np.linspace(0.5, 2.0, 4)) if weighted else None
        return F(L).multilabel_soft_margin_loss(a, b, weight, reduction=reduction)

    _compare(torch, fn, X, LABELS)


# ---- what a dispatch mode sees --------------------------------------------------------------

MODE_CASES = {
    "hinge": lambda L, x: F(L).hinge_embedding_loss(x, _target(L, SIGNS)),
    "margin_ranking": lambda L, x: F(L).margin_ranking_loss(x, x * 2, _target(L, SIGNS)),
    "kl_div": lambda L, x: F(L).kl_div(x, _target(L, RATES), reduction="sum"),
    "kl_div_log_target": lambda L, x: F(L).kl_div(x, x * 2, reduction="sum", log_target=True),
    "poisson_full": lambda L, x: F(L).poisson_nll_loss(x, _target(L, RATES), full=True),
    "poisson_rate": lambda L, x: F(L).poisson_nll_loss(x.abs(), _target(L, RATES), False),
    "smooth_l1": lambda L, x: F(L).smooth_l1_loss(x, _target(L, T)),
    "soft_margin": lambda L, x: F(L).soft_margin_loss(x, _target(L, SIGNS)),
}


@pytest.mark.parametrize("name", sorted(MODE_CASES))
def test_dispatch_mode_sees_torch_aten_calls(torch, name):
    """Forward and backward, in torch's order (C++'s `margin - x` is empty_like, fill_, sub_)."""

    def run(lib):
        return aten_log(lib, lambda: MODE_CASES[name](lib, _leaf(lib, X)).sum().backward())

    assert run(og) == run(torch)


# ---- legacy arguments and errors -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["soft_margin_loss", "kl_div", "poisson_nll_loss", "hinge_embedding_loss"]
)
def test_legacy_size_average_and_reduce_pick_torch_reduction(torch, name):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            target = lib.tensor(SIGNS if name != "kl_div" else RATES)
            kind, value = outcome(
                lambda: getattr(F(lib), name)(lib.tensor(X), target, size_average=False)
            )
        return kind, np.round(value.tolist(), 10).tolist(), [str(w.message) for w in caught]

    assert_same(torch, scenario)


def _gaussian(T, var, **kwargs):
    return lambda Fn: Fn.gaussian_nll_loss(T.ones(2, 3), T.zeros(2, 3), var, **kwargs)


ERRORS = {
    "smooth_l1_negative_beta": (
        lambda Fn, T: Fn.smooth_l1_loss(T.ones(2), T.ones(2), beta=-0.5),
        RuntimeError,
        "smooth_l1_loss does not support negative values for beta.",
    ),
    "smooth_l1_integer": (
        lambda Fn, T: Fn.smooth_l1_loss(T.tensor([1, 2]), T.tensor([2, 4])),
        NotImplementedError,
        "\"smooth_l1_cpu\" not implemented for 'Long'",
    ),
    "huber_zero_delta": (
        lambda Fn, T: Fn.huber_loss(T.ones(2), T.ones(2), delta=0.0),
        RuntimeError,
        "huber_loss does not support non-positive values for delta.",
    ),
    "huber_integer": (
        lambda Fn, T: Fn.huber_loss(T.tensor([1, 2]), T.tensor([2, 4])),
        NotImplementedError,
        "\"huber_cpu\" not implemented for 'Long'",
    ),
    "huber_bad_weight": (
        lambda Fn, T: Fn.huber_loss(T.ones(2), T.ones(2), weight=T.ones(3)),
        ValueError,
        "Weights and input must have the same size.",
    ),
    "huber_weighted_bad_reduction": (
        lambda Fn, T: Fn.huber_loss(T.ones(2), T.ones(2), reduction="avg", weight=T.ones(2)),
        ValueError,
        "Invalid reduction mode: avg. Expected one of 'none', 'mean', 'sum'.",
    ),
    "soft_margin_target_requires_grad": (
        lambda Fn, T: Fn.soft_margin_loss(T.ones(2), T.ones(2, requires_grad=True)),
        RuntimeError,
        "not differentiable with respect to argument 'target'",
    ),
    "soft_margin_integer_input": (
        lambda Fn, T: Fn.soft_margin_loss(T.tensor([1, 2]), T.ones(2)),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    "soft_margin_bad_reduction": (
        lambda Fn, T: Fn.soft_margin_loss(T.ones(2), T.ones(2), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "kl_div_integer": (
        lambda Fn, T: Fn.kl_div(T.tensor([1, 2]), T.tensor([1, 2]), reduction="sum"),
        RuntimeError,
        "kl_div: Integral inputs not supported.",
    ),
    "kl_div_bad_reduction": (
        lambda Fn, T: Fn.kl_div(T.ones(2), T.ones(2), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "poisson_bad_reduction": (
        lambda Fn, T: Fn.poisson_nll_loss(T.ones(2), T.ones(2), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "gaussian_negative_var": (
        lambda Fn, T: _gaussian(T, T.tensor([[1.0], [-1.0]]))(Fn),
        ValueError,
        "var has negative entry/entries",
    ),
    "gaussian_negative_float_var": (
        lambda Fn, T: _gaussian(T, -0.5)(Fn),
        ValueError,
        "var has negative entry/entries",
    ),
    "gaussian_var_of_incorrect_size": (
        lambda Fn, T: _gaussian(T, T.ones(3, 2))(Fn),
        ValueError,
        "var is of incorrect size",
    ),
    "gaussian_bad_reduction": (
        lambda Fn, T: _gaussian(T, T.ones(2, 3), reduction="avg")(Fn),
        ValueError,
        "avg is not valid",
    ),
    "margin_ranking_dims": (
        lambda Fn, T: Fn.margin_ranking_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2)),
        RuntimeError,
        "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
        "input1: LIB.Size([2, 3]), input2: LIB.Size([2, 3]), target: LIB.Size([2])",
    ),
    "multilabel_soft_margin_bad_reduction": (
        lambda Fn, T: Fn.multilabel_soft_margin_loss(T.ones(2, 3), T.ones(2, 3), reduction="x"),
        ValueError,
        "x is not valid",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    fn, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, lambda lib: fn(F(lib), lib), exc_type, phrase)


# ---- binary_cross_entropy's two epsilons -----------------------------------------------------


def test_binary_cross_entropy_epsilons_are_torch_float_and_double(torch):
    """At x = 0 and 1 the clamp decides the gradient: the kernel's is float32(1e-12)
    (Loss.cpp's C float), the double-backward formulas' the double 1e-12
    (FunctionsManual.cpp). Swapping them changes the results in the 9th digit."""

    def scenario(lib):
        x = _leaf(lib, [0.0, 1.0, 0.3])
        t = _leaf(lib, [0.25, 0.75, 0.5])
        loss = F(lib).binary_cross_entropy(x, t, reduction="sum")
        (gx,) = lib.autograd.grad(loss, x, create_graph=True)
        ggx, ggt = lib.autograd.grad(gx.sum(), (x, t))
        return gx, ggx, ggt

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "mse_loss"])
def test_size_mismatch_warning_points_at_the_caller_as_torch(torch, name):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(F(lib), name)(lib.tensor(X), lib.tensor(T[0]))
        return [
            (str(w.message).replace("torch", "LIB").replace("opgrad", "LIB"), w.filename)
            for w in caught
        ]

    got = scenario(og)
    assert got == scenario(torch) and got[0][1] == __file__
