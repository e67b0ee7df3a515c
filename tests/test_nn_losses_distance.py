"""cosine_similarity, pairwise_distance and the losses built on them (cosine_embedding_loss,
triplet_margin_loss, triplet_margin_with_distance_loss) against torch: values, gradients,
graphs and saved fields (NormBackward1, MinimumBackward0), double backward, the aten calls a
dispatch mode sees, errors. OpInfo samples: test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from test_nn_losses import REDUCTIONS, _compare, _leaf
from torch_oracle import aten_log, assert_same_error, assert_same_tensor, outcome

RNG = np.random.default_rng(1313)
A = RNG.standard_normal((4, 5))
P = RNG.standard_normal((4, 5))
N = A * 0.5 + RNG.standard_normal((4, 5)) * 0.3
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("dim", [1, 0, -1])
@pytest.mark.parametrize("eps", [1e-8, 2.5])
def test_cosine_similarity_matches_torch(torch, dim, eps):
    _compare(torch, lambda L, a, b: F(L).cosine_similarity(a, b, dim=dim, eps=eps), A, P)


def test_cosine_similarity_broadcasts_as_torch(torch):
    _compare(torch, lambda L, a, b: F(L).cosine_similarity(a, b), A[:, None, :], P[None, :2, :])


def test_cosine_similarity_converts_integral_inputs_as_torch(torch):
    def fn(L, a):
        return F(L).cosine_similarity(a, L.tensor([1, -2, 3, 0, 5]), dim=-1)

    _compare(torch, fn, A)


@pytest.mark.parametrize("p", [2.0, 1.0, 3, 0.5, float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_matches_torch(torch, p, keepdim):
    _compare(torch, lambda L, a, b: F(L).pairwise_distance(a, b, p=p, keepdim=keepdim), A, P)


def test_pairwise_distance_of_vectors_and_broadcast_rows_as_torch(torch):
    _compare(torch, lambda L, a, b: F(L).pairwise_distance(a, b, eps=0.1), A[0], P)


def test_norm_scalaropt_dim_saves_torch_fields(torch):
    def fn(L, a):
        return L.ops.aten.norm.ScalarOpt_dim(a, 3.0, [0], True)

    _compare(torch, fn, A)


def test_minimum_splits_ties_as_torch(torch):
    b = P.copy()
    b[0, :3] = A[0, :3]
    _compare(torch, lambda L, a, c: L.minimum(a, c), A, b)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4, -0.3])
def test_cosine_embedding_loss_matches_torch(torch, reduction, margin):
    def fn(L, a, b):
        target = L.tensor(SIGNS, dtype=L.float64)
        return F(L).cosine_embedding_loss(a, b, target, margin=margin, reduction=reduction)

    _compare(torch, fn, A, P)


def test_cosine_embedding_loss_of_one_pair_as_torch(torch):
    def fn(L, a, b):
        return F(L).cosine_embedding_loss(a, b, L.tensor(-1.0, dtype=L.float64), margin=-0.5)

    _compare(torch, fn, A[0], P[0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, swap", [(2, False), (1, True), (3.0, True), (2.0, True)])
def test_triplet_margin_loss_matches_torch(torch, reduction, p, swap):
    def fn(L, a, pos, neg):
        return F(L).triplet_margin_loss(
            a, pos, neg, margin=0.8, p=p, swap=swap, reduction=reduction
        )

    _compare(torch, fn, A, P, N)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("custom", [False, True])
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(torch, reduction, custom, swap):
    def fn(L, a, pos, neg):
        distance = (lambda u, v: (u - v).abs().sum(-1)) if custom else None
        return F(L).triplet_margin_with_distance_loss(
            a, pos, neg, distance_function=distance, margin=1.5, swap=swap, reduction=reduction
        )

    _compare(torch, fn, A, P, N)


@pytest.mark.parametrize("name", ["cosine_similarity", "pairwise_distance", "cosine_embedding"])
def test_double_backward_matches_torch(torch, name):
    calls = {
        "cosine_similarity": lambda L, a, b: F(L).cosine_similarity(a, b),
        "pairwise_distance": lambda L, a, b: F(L).pairwise_distance(a, b, p=3),
        "cosine_embedding": lambda L, a, b: F(L).cosine_embedding_loss(
            a, b, L.tensor(SIGNS, dtype=L.float64), margin=-0.9
        ),
    }

    def scenario(lib):
        a, b = _leaf(lib, A), _leaf(lib, P)
        loss = calls[name](lib, a, b).sum()
        ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
        return lib.autograd.grad((ga * ga).sum() + (gb * gb * gb).sum(), (a, b))

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=1e-9, atol=1e-12)


# norm_backward (linalg_vector_norm_backward, the norm family's helper) computes masked_fill
# out of place where torch calls masked_fill_: those cases compare the forward calls only
MODE_CASES = {
    "cosine_similarity_forward": lambda L, x: F(L).cosine_similarity(x, x * 2 + 1),
    "cosine_embedding_loss": lambda L, x: F(L).cosine_embedding_loss(
        x, x.sin(), L.tensor(SIGNS, dtype=L.float64), margin=0.1
    ),
    "triplet_margin_loss_forward": lambda L, x: F(L).triplet_margin_loss(
        x, x * 2 + 1, x.sin(), swap=True
    ),
}


@pytest.mark.parametrize("name", sorted(MODE_CASES))
def test_dispatch_mode_sees_torch_aten_calls(torch, name):
    def run(lib):
        x = _leaf(lib, A)
        if name.endswith("_forward"):
            return aten_log(lib, lambda: MODE_CASES[name](lib, x))
        return aten_log(lib, lambda: MODE_CASES[name](lib, x).sum().backward())

    assert run(og) == run(torch)


ERRORS = {
    "cosine_similarity_integral": (
        lambda Fn, T: Fn.cosine_similarity(
            T.ones(2, 3, dtype=T.int64), T.ones(2, 3, dtype=T.int64)
        ),
        RuntimeError,
        "expected common dtype to be floating point, yet common dtype is Long",
    ),
    "cosine_similarity_shapes": (
        lambda Fn, T: Fn.cosine_similarity(T.ones(2, 3), T.ones(4, 3)),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (4)",
    ),
    "norm_integral": (
        lambda Fn, T: T.ops.aten.norm.ScalarOpt_dim(T.ones(2, 3, dtype=T.int64), 2, [1]),
        RuntimeError,
        "norm(): input dtype should be either floating point or complex. Got Long instead.",
    ),
    "cosine_embedding_2d_target": (
        lambda Fn, T: Fn.cosine_embedding_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2, 3)),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    ),
    "cosine_embedding_1d_target_1d_inputs": (
        lambda Fn, T: Fn.cosine_embedding_loss(T.ones(3), T.ones(3), T.ones(3)),
        RuntimeError,
        "1D target tensor expects 2D input tensors, but found inputs with sizes [3] and [3].",
    ),
    "cosine_embedding_0d_target_2d_inputs": (
        lambda Fn, T: Fn.cosine_embedding_loss(T.ones(2, 3), T.ones(2, 3), T.tensor(1.0)),
        RuntimeError,
        "0D target tensor expects 1D input tensors, but found inputs with sizes [2, 3] and [2, 3].",
    ),
    "triplet_dims": (
        lambda Fn, T: Fn.triplet_margin_loss(T.ones(2, 3), T.ones(2, 3), T.ones(3)),
        RuntimeError,
        "anchor 2D, positive 2D, and negative 1D inputs",
    ),
    "triplet_margin_not_positive": (
        lambda Fn, T: Fn.triplet_margin_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2, 3), margin=0),
        ValueError,
        "margin must be greater than 0, got 0",
    ),
    "triplet_with_distance_dims": (
        lambda Fn, T: Fn.triplet_margin_with_distance_loss(T.ones(2, 3), T.ones(3), T.ones(3)),
        RuntimeError,
        "anchor 2D, positive 1D, and negative 1D inputs",
    ),
    "triplet_with_distance_bad_reduction": (
        lambda Fn, T: Fn.triplet_margin_with_distance_loss(
            T.ones(3), T.ones(3), T.ones(3), reduction="avg"
        ),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "triplet_with_distance_margin": (
        lambda Fn, T: Fn.triplet_margin_with_distance_loss(
            T.ones(3), T.ones(3), T.ones(3), margin=-1.0
        ),
        ValueError,
        "margin must be greater than 0, got -1.0",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    fn, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, lambda lib: fn(F(lib), lib), exc_type, phrase)


# ---- pdist -----------------------------------------------------------------------------------


def _pdist_rows(lib):
    base = np.random.default_rng(0).standard_normal((5, 3))
    base[3] = base[1]  # a zero distance
    base[4, 0] = base[2, 0]  # a zero difference in one coordinate
    return lib.tensor(base, requires_grad=True)


@pytest.mark.parametrize("p", [2, 1, 0, float("inf"), 1.5, 0.5, 3])
def test_pdist_values_and_gradient_match_torch(torch, p):
    """Each p's own gradient rule, including zero distances and zero differences."""

    def scenario(lib):
        x = _pdist_rows(lib)
        y = lib.nn.functional.pdist(x, p)
        (grad,) = lib.autograd.grad((y * lib.arange(10.0, dtype=lib.float64)).sum(), x)
        return y, grad, y.grad_fn.name(), y.grad_fn._saved_p

    got, expected = scenario(og), scenario(torch)
    assert_same_tensor(got[0], expected[0].detach(), rtol=1e-12)
    assert_same_tensor(got[1], expected[1], rtol=1e-10, atol=1e-12)
    assert got[2:] == expected[2:]


PDIST_EDGES = {
    "one_row": lambda lib: tuple(lib.nn.functional.pdist(lib.ones(1, 2)).shape),
    "no_rows": lambda lib: tuple(lib.nn.functional.pdist(lib.ones(0, 2)).shape),
    "no_columns": lambda lib: lib.nn.functional.pdist(lib.zeros(3, 0)).tolist(),
    "transposed": lambda lib: lib.nn.functional.pdist(lib.arange(6.0).reshape(3, 2).t()).tolist(),
    "calls": lambda lib: aten_log(lib, lambda: lib.nn.functional.pdist(lib.ones(3, 2).t(), 1.5)),
}


@pytest.mark.parametrize("name", PDIST_EDGES)
def test_pdist_edges_match_torch(torch, name):
    assert PDIST_EDGES[name](og) == PDIST_EDGES[name](torch)


@pytest.mark.parametrize(
    "make, phrase",
    [
        (lambda lib: lib.nn.functional.pdist(lib.ones(3)), "pdist only supports 2D tensors"),
        (lambda lib: lib.nn.functional.pdist(lib.ones(3, 2), -1), "non-negative p values"),
        (lambda lib: lib.nn.functional.pdist(lib.ones(3, 2).long()), "floating-point dtypes"),
    ],
)
def test_pdist_errors_match_torch(torch, make, phrase):
    assert_same_error(torch, make, RuntimeError, phrase)


def test_pdist_has_no_double_backward_as_torch(torch):
    def scenario(lib):
        x = _pdist_rows(lib)
        (grad,) = lib.autograd.grad(lib.nn.functional.pdist(x).sum(), x, create_graph=True)
        grad.sum().backward()

    got, expected = outcome(lambda: scenario(og)), outcome(lambda: scenario(torch))
    assert (
        got[0] == expected[0] and "_pdist_backward" in got[1] and "_pdist_backward" in expected[1]
    )
