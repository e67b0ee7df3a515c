"""The losses of opgrad.nn.functional against torch: every reduction, the modes of
cross_entropy and nll_loss, dtypes, edge values and errors (OpInfo samples:
test_opinfo.py; graphs and derivatives on ordinary inputs: test_ops_vs_torch.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    assert_same,
    assert_same_error,
    assert_same_saved_fields,
    assert_same_tensor,
    next_function_names,
    outcome,
)

REDUCTIONS = ["none", "mean", "sum"]
RNG = np.random.default_rng(13)
LOGITS = RNG.standard_normal((4, 5))
CLASSES = np.array([1, 0, 4, 2])
PROBS = RNG.random((4, 5))
CLASS_WEIGHT = RNG.random(5) + 0.5


def _leaf(lib, data, dtype="float64"):
    return lib.tensor(np.array(data), dtype=getattr(lib, dtype), requires_grad=True)


def _loss_and_grads(lib, fn, *leaves):
    loss = fn(lib, *leaves)
    weights = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
    grads = lib.autograd.grad((loss * weights).sum(), leaves, allow_unused=True, retain_graph=True)
    return loss, grads


def _compare(torch, fn, *arrays, rtol=1e-12, atol=1e-14):
    """Value, gradients, grad_fn name, next functions and saved fields as torch's."""
    got_leaves = [_leaf(og, a) for a in arrays]
    exp_leaves = [_leaf(torch, a) for a in arrays]
    got, got_grads = _loss_and_grads(og, fn, *got_leaves)
    expected, exp_grads = _loss_and_grads(torch, fn, *exp_leaves)
    assert_same_tensor(got, expected, rtol=rtol, atol=atol)
    for g, e in zip(got_grads, exp_grads):
        assert (g is None) == (e is None)
        if e is not None:
            assert_same_tensor(g, e, rtol=rtol, atol=atol)
    assert got.grad_fn.name() == expected.grad_fn.name()
    assert next_function_names(got.grad_fn) == [
        (n.replace("torch::", "opgrad::") if n else n, i)
        for n, i in next_function_names(expected.grad_fn)
    ]
    assert_same_saved_fields(
        torch, got.grad_fn, expected.grad_fn, got_leaves, exp_leaves, what="loss"
    )


# ---- cross_entropy and nll_loss ------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices_match_torch(torch, reduction, ignore_index, weighted):
    def fn(lib, x):
        weight = lib.tensor(CLASS_WEIGHT) if weighted else None
        return lib.nn.functional.cross_entropy(
            x, lib.tensor(CLASSES), weight, ignore_index=ignore_index, reduction=reduction
        )

    _compare(torch, fn, LOGITS)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 0])
def test_cross_entropy_label_smoothing_matches_torch(torch, reduction, weighted, ignore_index):
    def fn(lib, x):
        weight = lib.tensor(CLASS_WEIGHT) if weighted else None
        target = lib.tensor(CLASSES)
        return lib.nn.functional.cross_entropy(
            x, target, weight, ignore_index=ignore_index, reduction=reduction, label_smoothing=0.15
        )

    _compare(torch, fn, LOGITS)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.4])
def test_cross_entropy_class_probabilities_match_torch(torch, reduction, weighted, label_smoothing):
    def fn(lib, x, p):
        weight = lib.tensor(CLASS_WEIGHT) if weighted else None
        return lib.nn.functional.cross_entropy(
            x, p, weight, reduction=reduction, label_smoothing=label_smoothing
        )

    _compare(torch, fn, LOGITS, PROBS)


@pytest.mark.parametrize("shape", [(5,), (2, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2), (2, 5, 0)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_any_rank_matches_torch(torch, shape, reduction):
    logits = RNG.standard_normal(shape)
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = np.random.default_rng(len(shape)).integers(0, 5, target_shape)

    def fn(lib, x):
        return lib.nn.functional.cross_entropy(x, lib.tensor(target), reduction=reduction)

    _compare(torch, fn, logits)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_2d_target_with_ignore_index_matches_torch(torch, reduction):
    logits = RNG.standard_normal((2, 3, 2, 2))
    target = np.array([[[0, 2], [1, -1]], [[2, -1], [1, 2]]])

    def fn(lib, x):
        weight = lib.tensor([0.5, 2.0, 1.0], dtype=lib.float64)
        return lib.nn.functional.nll_loss(
            x, lib.tensor(target), weight, ignore_index=-1, reduction=reduction
        )

    _compare(torch, fn, logits)


def test_nll_loss_of_only_ignored_targets_is_nan_as_torch(torch):
    def fn(lib, x):
        return lib.nn.functional.nll_loss(x, lib.tensor([-100, -100]))

    _compare(torch, fn, LOGITS[:2])


def test_nll_loss_forward_returns_total_weight_as_torch(torch):
    def scenario(lib):
        x = lib.tensor(LOGITS)
        results = []
        for reduction in (0, 1, 2):
            out, total = lib.ops.aten.nll_loss_forward(x, lib.tensor(CLASSES), None, reduction, 1)
            results.append((out.tolist(), total.tolist(), str(total.dtype).split(".")[1]))
        return results

    assert_same(torch, scenario)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cross_entropy_reduced_precision_matches_torch(torch, dtype):
    def fn(lib):
        x = lib.tensor(LOGITS, dtype=getattr(lib, dtype))
        return lib.nn.functional.cross_entropy(x, lib.tensor(CLASSES))

    got, expected = fn(og), fn(torch)
    assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-2)


def test_nll_loss_double_backward_matches_torch(torch):
    def scenario(lib):
        x = _leaf(lib, LOGITS)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(CLASSES))
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return gg

    assert_same_tensor(scenario(og), scenario(torch), rtol=1e-10, atol=1e-12)


NLL_ERRORS = {
    "target_out_of_bounds": (
        lambda F, T: F.nll_loss(T.tensor(LOGITS), T.tensor([1, 2, 7, 0])),
        IndexError,
        "Target 7 is out of bounds",
    ),
    "negative_target": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor([1, -3, 0, 0])),
        IndexError,
        "Target -3 is out of bounds",
    ),
    "target_out_of_bounds_2d": (
        lambda F, T: F.nll_loss(T.zeros(2, 3, 2, 2), T.full((2, 2, 2), 3)),
        IndexError,
        "Target 3 is out of bounds",
    ),
    "bad_reduction": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(CLASSES), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "int_target": (
        lambda F, T: F.nll_loss(T.tensor(LOGITS), T.tensor(CLASSES, dtype=T.int32)),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Int",
    ),
    "float_index_target": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(CLASSES, dtype=T.float32)),
        RuntimeError,
        "expected target dtype to be Long or Byte",
    ),
    "integer_probabilities": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.ones(4, 5, dtype=T.int64)),
        RuntimeError,
        "Expected floating point type for target with class probabilities",
    ),
    "ignore_index_with_probabilities": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(PROBS), ignore_index=1),
        RuntimeError,
        "ignore_index is not supported for floating point target",
    ),
    "label_smoothing_above_one": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(CLASSES), label_smoothing=1.5),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0",
    ),
    "batch_mismatch": (
        lambda F, T: F.nll_loss(T.tensor(LOGITS), T.tensor([1, 2])),
        ValueError,
        "Expected input batch_size (4) to match target batch_size (2).",
    ),
    "spatial_mismatch": (
        lambda F, T: F.nll_loss(T.zeros(2, 3, 4), T.zeros(2, 5, dtype=T.int64)),
        RuntimeError,
        "Expected target size [2, 4], got [2, 5]",
    ),
    "spatial_mismatch_2d": (
        lambda F, T: F.nll_loss(T.zeros(2, 3, 4, 5), T.zeros(2, 4, 4, dtype=T.int64)),
        RuntimeError,
        "size mismatch",
    ),
    "zero_dim_input": (
        lambda F, T: F.nll_loss(T.tensor(1.0), T.tensor(1)),
        ValueError,
        "Expected 1 or more dimensions (got 0)",
    ),
    "wrong_weight_size": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(CLASSES), T.ones(3)),
        RuntimeError,
        "weight tensor should be defined either for all 5 classes",
    ),
    "wrong_weight_size_probabilities": (
        lambda F, T: F.cross_entropy(T.tensor(LOGITS), T.tensor(PROBS), T.ones(3)),
        RuntimeError,
        "cross_entropy: weight tensor should be defined",
    ),
    "weight_dtype": (
        lambda F, T: F.nll_loss(T.zeros(2, 5), T.tensor([1, 2]), T.ones(5, dtype=T.float64)),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    "weight_requires_grad": (
        lambda F, T: F.cross_entropy(
            T.tensor(LOGITS), T.tensor(CLASSES), T.ones(5, dtype=T.float64, requires_grad=True)
        ),
        RuntimeError,
        "is not differentiable with respect to argument 'weight'",
    ),
    "integer_input": (
        lambda F, T: F.nll_loss(T.ones(2, 3, dtype=T.int64), T.tensor([0, 1])),
        NotImplementedError,
        "not implemented for 'Long'",
    ),
}


@pytest.mark.parametrize("name", sorted(NLL_ERRORS))
def test_cross_entropy_and_nll_loss_errors_match_torch(torch, name):
    fn, exc_type, phrase = NLL_ERRORS[name]
    assert_same_error(torch, lambda lib: fn(lib.nn.functional, lib), exc_type, phrase)


# ---- mse, l1 and binary cross entropy --------------------------------------------------------

PAIR = (RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_losses_match_torch(torch, name, reduction):
    def fn(lib, a, b):
        return getattr(lib.nn.functional, name)(a, b, reduction=reduction)

    _compare(torch, fn, *PAIR)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_pointwise_losses_match_torch(torch, name, reduction):
    def fn(lib, a, b):
        weight = lib.tensor(np.abs(PAIR[0]) + 0.1)
        return getattr(lib.nn.functional, name)(a, b, reduction=reduction, weight=weight)

    _compare(torch, fn, *PAIR)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_broadcast_target_warns_and_expands_as_torch(torch, name):
    def scenario(lib):
        a, b = _leaf(lib, PAIR[0]), _leaf(lib, PAIR[1][0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = getattr(lib.nn.functional, name)(a, b)
        (g,) = lib.autograd.grad(loss, b)
        texts = [str(w.message).replace("torch", "LIB").replace("opgrad", "LIB") for w in caught]
        return texts, loss.item(), g.tolist()

    got, expected = scenario(og), scenario(torch)
    assert got[0] == expected[0] and len(got[0]) == 1
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_torch(torch, reduction, weighted):
    probs = np.clip(RNG.random((3, 4)), 0.05, 0.95)

    def fn(lib, p, t):
        weight = lib.tensor(np.linspace(0.5, 2, 4)) if weighted else None
        return lib.nn.functional.binary_cross_entropy(p, t, weight, reduction=reduction)

    _compare(torch, fn, probs, RNG.random((3, 4)))


def test_binary_cross_entropy_clamps_the_log_at_minus_100_as_torch(torch):
    def fn(lib, p, t):
        return lib.nn.functional.binary_cross_entropy(p, t, reduction="none")

    _compare(torch, fn, np.array([0.0, 1.0, 0.5, 1.0]), np.array([1.0, 0.0, 0.5, 1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", ["none", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits_matches_torch(torch, reduction, weights):
    def fn(lib, x, t):
        weight = (
            lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=lib.float64)
            if weights in ("weight", "both")
            else None
        )
        pos = (
            lib.tensor([3.0, 0.5, 1.0, 2.0], dtype=lib.float64)
            if weights in ("pos_weight", "both")
            else None
        )
        return lib.nn.functional.binary_cross_entropy_with_logits(
            x, t, weight, reduction=reduction, pos_weight=pos
        )

    _compare(torch, fn, RNG.standard_normal((3, 4)) * 4, RNG.random((3, 4)))


@pytest.mark.parametrize("name", ["mse_loss", "binary_cross_entropy", "bce_with_logits"])
def test_loss_double_backward_matches_torch(torch, name):
    calls = {
        "mse_loss": lambda F, a, b: F.mse_loss(a, b),
        "binary_cross_entropy": lambda F, a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
        "bce_with_logits": lambda F, a, b: F.binary_cross_entropy_with_logits(
            a, b.sigmoid(), pos_weight=a.detach().abs()
        ),
    }

    def scenario(lib):
        a, b = _leaf(lib, PAIR[0]), _leaf(lib, PAIR[1])
        loss = calls[name](lib.nn.functional, a, b)
        ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
        return lib.autograd.grad((ga * ga).sum() + (gb * gb * gb).sum(), (a, b))

    for got, expected in zip(scenario(og), scenario(torch)):
        assert_same_tensor(got, expected, rtol=1e-9, atol=1e-12)


POINTWISE_ERRORS = {
    "mse_bad_reduction": (
        lambda F, T: F.mse_loss(T.ones(2), T.ones(2), reduction="bad"),
        ValueError,
        "bad is not a valid value for reduction",
    ),
    "l1_bad_reduction": (
        lambda F, T: F.l1_loss(T.ones(2), T.ones(2), reduction="bad"),
        ValueError,
        "bad is not a valid value for reduction",
    ),
    "mse_shape_mismatch": (
        lambda F, T: F.mse_loss(T.ones(3, 4), T.ones(2, 4)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2)",
    ),
    "mse_integer": (
        lambda F, T: F.mse_loss(T.tensor([1, 2]), T.tensor([2, 4])),
        NotImplementedError,
        "\"mse_cpu\" not implemented for 'Long'",
    ),
    "l1_integer_mean": (
        lambda F, T: F.l1_loss(T.tensor([1, 2]), T.tensor([2, 4])),
        RuntimeError,
        "mean(): could not infer output dtype",
    ),
    "weighted_mse_bad_weight": (
        lambda F, T: F.mse_loss(T.ones(2), T.ones(2), weight=T.ones(3)),
        ValueError,
        "Weights and input must have the same size.",
    ),
    "bce_out_of_range": (
        lambda F, T: F.binary_cross_entropy(T.tensor([0.5, 1.5]), T.tensor([1.0, 0.0])),
        RuntimeError,
        "all elements of input should be between 0 and 1",
    ),
    "bce_size_mismatch": (
        lambda F, T: F.binary_cross_entropy(T.full((3, 4), 0.5), T.ones(4)),
        ValueError,
        "that is different to the input size",
    ),
    "bce_dtype_mismatch": (
        lambda F, T: F.binary_cross_entropy(
            T.full((2,), 0.5, dtype=T.float64), T.ones(2, dtype=T.float32)
        ),
        RuntimeError,
        "Found dtype Float but expected Double",
    ),
    "bce_weight_requires_grad": (
        lambda F, T: F.binary_cross_entropy(
            T.full((2,), 0.5), T.ones(2), T.ones(2, requires_grad=True)
        ),
        RuntimeError,
        "is not differentiable with respect to argument 'weight'",
    ),
    "bce_logits_size_mismatch": (
        lambda F, T: F.binary_cross_entropy_with_logits(T.ones(3, 4), T.ones(4)),
        ValueError,
        "must be the same as input size",
    ),
    "bce_logits_pos_weight_requires_grad": (
        lambda F, T: F.binary_cross_entropy_with_logits(
            T.ones(2), T.ones(2), pos_weight=T.ones(2, requires_grad=True)
        ),
        RuntimeError,
        "is not differentiable with respect to argument 'pos_weight'",
    ),
}


@pytest.mark.parametrize("name", sorted(POINTWISE_ERRORS))
def test_pointwise_loss_errors_match_torch(torch, name):
    fn, exc_type, phrase = POINTWISE_ERRORS[name]
    assert_same_error(torch, lambda lib: fn(lib.nn.functional, lib), exc_type, phrase)


# ---- legacy arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True)])
def test_legacy_size_average_and_reduce_pick_torch_reduction(torch, size_average, reduce):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kind, value = outcome(
                lambda: lib.nn.functional.cross_entropy(
                    lib.tensor(LOGITS),
                    lib.tensor(CLASSES),
                    size_average=size_average,
                    reduce=reduce,
                )
            )
        messages = [str(w.message) for w in caught]
        return kind, np.round(value.tolist(), 12).tolist(), messages

    assert_same(torch, scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("targets", [[1, 1, 1, 1], [1, 0, 1, 4], [-3, -3, -3, -3]])
def test_nll_loss_with_every_or_some_targets_ignored_matches_torch_silently(
    torch, targets, dtype
):
    # all ignored: a 0/0 mean, nan without any numpy warning, and a nan gradient
    def scenario(lib):
        x = _leaf(lib, LOGITS, dtype)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = lib.nn.functional.nll_loss(x, lib.tensor(targets), ignore_index=targets[0])
            (g,) = lib.autograd.grad(loss, x)
        return [str(w.message) for w in caught], loss.item(), g.numpy()

    got, expected = scenario(og), scenario(torch)
    assert got[0] == expected[0] == []
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)
