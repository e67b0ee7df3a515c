"""F.embedding and F.one_hot against torch: padding_idx, scale_grad_by_freq, max_norm's
in-place renorm, double backward, node names, saved fields and errors. torch's
embedding OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, assert_same_error, assert_same_saved_fields, result_scenario

WEIGHT = np.random.default_rng(3).standard_normal((6, 3))
INDICES = [[0, 2, 2], [5, 1, 0]]


def _run(lib, **kwargs):
    weight = lib.tensor(WEIGHT.copy(), requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor(INDICES), weight, **kwargs)
    grad_out = lib.tensor(
        np.random.default_rng(4).standard_normal(tuple(out.shape)), requires_grad=True
    )
    (grad,) = lib.autograd.grad(out, weight, grad_out, create_graph=True)
    (grad_grad,) = lib.autograd.grad((grad * grad).sum(), grad_out)
    return weight, out, grad, grad_grad


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"padding_idx": 2},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
        {"scale_grad_by_freq": True, "padding_idx": 0},
    ],
)
def test_embedding_values_gradients_and_double_backward(torch, kwargs):
    def scenario(lib):
        _, out, grad, grad_grad = _run(lib, **kwargs)
        names = (out.grad_fn.name(), grad.grad_fn.name())
        return names, out.tolist(), grad.tolist(), grad_grad.tolist()

    assert_same(torch, scenario)


def test_embedding_saves_torch_fields(torch):
    got, expected = _run(og, padding_idx=2)[1], _run(torch, padding_idx=2)[1]
    assert_same_saved_fields(torch, got.grad_fn, expected.grad_fn, what="EmbeddingBackward0")


@pytest.mark.parametrize("kwargs", [{"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_max_norm_renormalises_the_weight_in_place_unrecorded(torch, kwargs):
    def scenario(lib):
        weight, out, grad, _ = _run(lib, **kwargs)
        return weight._version, weight.tolist(), out.grad_fn.name(), grad.tolist()

    assert_same(torch, scenario)


def test_sparse_gradients_are_refused():
    weight = og.tensor(WEIGHT, requires_grad=True)
    out = og.nn.functional.embedding(og.tensor([1]), weight, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda F, t, w: F.embedding(t([1.0]), w), RuntimeError, "'indices' to have one of"),
        (lambda F, t, w: F.embedding(t([6]), w), IndexError, "index out of range"),
        (lambda F, t, w: F.embedding(t([-1]), w), IndexError, "index out of range"),
        (lambda F, t, w: F.embedding(t([1]), w[0]), RuntimeError, "must be 2-D"),
        (lambda F, t, w: F.embedding(t([1]), w, padding_idx=6), AssertionError, "Padding_idx"),
        (lambda F, t, w: F.embedding(t([1]), w, padding_idx=-7), AssertionError, "Padding_idx"),
        (lambda F, t, w: F.one_hot(t([1.0])), RuntimeError, "LongTensor"),
        (lambda F, t, w: F.one_hot(t([-1])), RuntimeError, "non-negative"),
        (lambda F, t, w: F.one_hot(t([3]), 2), RuntimeError, "smaller than num_classes"),
        (lambda F, t, w: F.one_hot(t([], dtype=w.dtype).long()), RuntimeError, "empty tensor"),
    ],
)
def test_errors_match_torch(torch, call, exc, phrase):
    assert_same_error(
        torch, lambda lib: call(lib.nn.functional, lib.tensor, lib.tensor(WEIGHT)), exc, phrase
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, t: lib.nn.functional.one_hot(t([[1, 0], [2, 1]])),
        lambda lib, t: lib.nn.functional.one_hot(t([1, 0]), 4),
        lambda lib, t: lib.nn.functional.one_hot(t([], dtype=lib.int64), 3),
        lambda lib, t: lib.nn.functional.embedding(t(2), t(WEIGHT)),
        lambda lib, t: lib.nn.functional.embedding(t([1], dtype=lib.int32), t(WEIGHT)),
    ],
)
def test_results_match_torch(torch, make):
    assert_same(torch, result_scenario(make))


@pytest.mark.parametrize("shape", [(0,), (2, 0)], ids=str)
@pytest.mark.parametrize(
    "kwargs", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True}], ids=["plain", "pad", "freq"]
)
def test_embedding_of_no_indices_has_a_zero_gradient_as_torch(torch, shape, kwargs):
    def scenario(lib):
        w = lib.ones(5, 3, requires_grad=True)
        y = lib.nn.functional.embedding(lib.zeros(shape, dtype=lib.long), w, **kwargs)
        (grad,) = lib.autograd.grad(y.sum(), w)
        return tuple(y.shape), grad.tolist()

    assert scenario(og) == scenario(torch)
