"""multi_margin_loss and multilabel_margin_loss against torch: every reduction, p, margin and
weight, vector inputs, the NotImplemented double backward and forward AD, errors (OpInfo
samples: test_opinfo.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from test_nn_losses import REDUCTIONS, _compare, _leaf
from torch_oracle import assert_same_error, assert_same_tensor, outcome

RNG = np.random.default_rng(4242)
SCORES = RNG.standard_normal((5, 4)) * 0.8
CLASSES = np.array([1, 0, 3, 3, 2])
LABELS = np.array(
    [[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0], [-1, 2, 2, 2], [2, 2, 1, -1]]
)  # entries after the first -1 do not count; repeats count once


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("margin", [1.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_matches_torch(torch, reduction, p, margin, weighted):
    def fn(L, x):
        weight = L.tensor([0.5, 2.0, 1.0, 1.5], dtype=L.float64) if weighted else None
        return F(L).multi_margin_loss(
            x, L.tensor(CLASSES), p=p, margin=margin, weight=weight, reduction=reduction
        )

    _compare(torch, fn, SCORES)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target_shape", [(), (1,)])
def test_multi_margin_loss_of_one_vector_as_torch(torch, reduction, target_shape):
    def fn(L, x):
        return F(L).multi_margin_loss(x, L.tensor(np.full(target_shape, 2)), reduction=reduction)

    _compare(torch, fn, SCORES[0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_matches_torch(torch, reduction):
    _compare(
        torch,
        lambda L, x: F(L).multilabel_margin_loss(x, L.tensor(LABELS), reduction=reduction),
        SCORES,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_of_one_vector_as_torch(torch, reduction):
    def fn(L, x):
        return F(L).multilabel_margin_loss(x, L.tensor(LABELS[0]), reduction=reduction)

    _compare(torch, fn, SCORES[0])


def test_multilabel_margin_loss_forward_returns_is_target_as_torch(torch):
    def scenario(lib):
        x = _leaf(lib, SCORES)
        output, is_target = lib.ops.aten.multilabel_margin_loss_forward(x, lib.tensor(LABELS), 0)
        return output, is_target, output.grad_fn._saved_is_target

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_float32_matches_torch(torch, name):
    target = CLASSES if name == "multi_margin_loss" else LABELS

    def scenario(lib):
        x = lib.tensor(SCORES, dtype=lib.float32, requires_grad=True)
        loss = getattr(F(lib), name)(x, lib.tensor(target), reduction="none")
        (g,) = lib.autograd.grad((loss * lib.arange(5.0)).sum(), x)
        return loss, g

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_double_backward_is_not_implemented_as_torch(torch, name):
    target = CLASSES if name == "multi_margin_loss" else LABELS

    def scenario(lib):
        x = _leaf(lib, SCORES)
        (g,) = lib.autograd.grad(getattr(F(lib), name)(x, lib.tensor(target)), x, create_graph=True)
        kind, text = outcome(lambda: lib.autograd.grad(g.sum(), x))
        return type(g.grad_fn).__name__, kind, text

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_forward_ad_is_not_implemented_as_torch(torch, name):
    target = CLASSES if name == "multi_margin_loss" else LABELS

    def scenario(lib):
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(
                lib.tensor(SCORES), lib.ones(5, 4, dtype=lib.float64)
            )
            kind, text = outcome(lambda: getattr(F(lib), name)(x, lib.tensor(target)))
        return kind, text.split("\n")[0]

    assert scenario(og) == scenario(torch)


ERRORS = {
    "multi_margin_target_out_of_range": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 3])),
        RuntimeError,
        "target out of range",
    ),
    "multi_margin_target_size": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1, 2])),
        RuntimeError,
        "Expected target size [2], but got [3]. Input has shape [2, 3].",
    ),
    "multi_margin_p": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1]), p=3),
        ValueError,
        "only p == 1 and p == 2 supported",
    ),
    "multi_margin_aten_p": (
        lambda Fn, T: T.ops.aten.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1]), 3),
        RuntimeError,
        "only p == 1 and p == 2 supported",
    ),
    "multi_margin_weight_dims": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1]), weight=T.ones(1, 3)),
        ValueError,
        "weight must be one-dimensional",
    ),
    "multi_margin_weight_size": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1]), weight=T.ones(2)),
        RuntimeError,
        "inconsistent weight size, expected 3 but got [2]",
    ),
    "multi_margin_weight_dtype": (
        lambda Fn, T: Fn.multi_margin_loss(
            T.ones(2, 3), T.tensor([0, 1]), weight=T.ones(3, dtype=T.float64)
        ),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    "multi_margin_weight_requires_grad": (
        lambda Fn, T: Fn.multi_margin_loss(
            T.ones(2, 3), T.tensor([0, 1]), weight=T.ones(3, requires_grad=True)
        ),
        RuntimeError,
        "not differentiable with respect to argument 'weight'",
    ),
    "multi_margin_int_target": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3), T.tensor([0, 1], dtype=T.int32)),
        RuntimeError,
        "expected scalar type Long but found Int",
    ),
    "multi_margin_half": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 3, dtype=T.float16), T.tensor([0, 1])),
        NotImplementedError,
        "\"multi_margin_loss_cpu_kernel\" not implemented for 'Half'",
    ),
    "multi_margin_empty": (
        lambda Fn, T: Fn.multi_margin_loss(T.ones(2, 0), T.tensor([0, 1])),
        RuntimeError,
        "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 0]",
    ),
    "multilabel_target_size": (
        lambda Fn, T: Fn.multilabel_margin_loss(T.ones(2, 3), T.zeros(2, 2, dtype=T.int64)),
        RuntimeError,
        "inconsistent target size: [2, 2] for input of size: [2, 3]",
    ),
    "multilabel_target_out_of_range": (
        lambda Fn, T: Fn.multilabel_margin_loss(T.ones(2, 3), T.full((2, 3), 3)),
        RuntimeError,
        "argument #2 'target' is out of range",
    ),
    "multilabel_target_below_minus_one": (
        lambda Fn, T: Fn.multilabel_margin_loss(T.ones(2, 3), T.full((2, 3), -2)),
        RuntimeError,
        "argument #2 'target' is out of range",
    ),
    "multilabel_3d": (
        lambda Fn, T: Fn.multilabel_margin_loss(T.ones(2, 3, 4), T.zeros(2, 3, 4, dtype=T.int64)),
        RuntimeError,
        "Expected non-empty vector or matrix with optional 0-dim batch size",
    ),
    "multilabel_int_input": (
        lambda Fn, T: Fn.multilabel_margin_loss(
            T.ones(2, 3, dtype=T.int32), T.zeros(2, 3, dtype=T.int64)
        ),
        NotImplementedError,
        "\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Int'",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    fn, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, lambda lib: fn(F(lib), lib), exc_type, phrase)


def test_multilabel_margin_loss_refuses_float16_as_torch(torch):
    assert_same_error(
        torch,
        lambda lib: F(lib).multilabel_margin_loss(
            lib.ones(2, 3, dtype=lib.float16), lib.zeros(2, 3, dtype=lib.int64)
        ),
        NotImplementedError,
        "\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Half'",
    )
