"""The dropouts of opgrad.nn.functional and the bernoulli ops under them, against torch:
for one seed the same mask, values and gradients, the same grad_fn chain and aten calls,
the input itself back where torch gives it, and torch's errors and warnings.

The masks match where torch's CPU bernoulli_ runs its default kernel (one uniform double
per element from the mt19937 stream). torch's MKL build on an Intel CPU draws a float p's
mask from MKL's own stream instead: those comparisons are skipped there."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    aten_log,
    assert_same,
    assert_same_error,
    dtype_name,
    outcome,
    torch_draws_bernoulli_from_mkl,
)


@pytest.fixture
def same_stream(torch):
    if torch_draws_bernoulli_from_mkl():
        pytest.skip("torch draws bernoulli_'s mask from MKL's stream on this Intel CPU")
    return torch


def _chain(y):
    """grad_fn names down the first input of each node."""
    names, node = [], y.grad_fn
    while node is not None:
        names.append(node.name().split("::")[-1])
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def _scenario(fn, dtype="float32", shape=(2, 3, 4, 5), seed=0):
    """Values, gradient, grad_fn chain and whether the result is the input, for one seed."""

    def scenario(lib):
        lib.manual_seed(seed)
        x = lib.randn(*shape, dtype=getattr(lib, dtype)).requires_grad_()
        y = fn(lib.nn.functional, lib, x)
        if y.requires_grad:
            y.sum().backward()
        grad = None if x.grad is None else x.grad.double().tolist()
        return y.detach().double().tolist(), dtype_name(y.dtype), grad, _chain(y), y is x

    return scenario


TRAINING = {
    "dropout": lambda F, T, x: F.dropout(x, 0.3),
    "dropout_inplace": lambda F, T, x: F.dropout(x.clone(), 0.6, inplace=True),
    "dropout_p1": lambda F, T, x: F.dropout(x, 1.0),
    "dropout_p1_inplace": lambda F, T, x: F.dropout(x * 1, 1.0, inplace=True),
    "dropout1d": lambda F, T, x: F.dropout1d(x[0], 0.3),
    "dropout1d_unbatched": lambda F, T, x: F.dropout1d(x[0, 0], 0.3),
    "dropout1d_unbatched_inplace": lambda F, T, x: F.dropout1d(x[0, 0].clone(), 0.3, True, True),
    "dropout2d": lambda F, T, x: F.dropout2d(x, 0.3),
    "dropout2d_inplace": lambda F, T, x: F.dropout2d(x * 1, 0.3, True, True),
    "dropout3d_unbatched": lambda F, T, x: F.dropout3d(x, 0.3),
    "dropout3d_inplace": lambda F, T, x: F.dropout3d(x * 1, 0.3, True, True),
    "alpha_dropout": lambda F, T, x: F.alpha_dropout(x, 0.3, True),
    "alpha_dropout_inplace": lambda F, T, x: F.alpha_dropout(x * 1, 0.3, True, True),
    "alpha_dropout_p1": lambda F, T, x: F.alpha_dropout(x, 1.0, True),
    "feature_alpha_dropout": lambda F, T, x: F.feature_alpha_dropout(x, 0.3, True),
    "feature_alpha_dropout_inplace": lambda F, T, x: F.feature_alpha_dropout(
        x * 1, 0.2, True, True
    ),
    "torch_dropout": lambda F, T, x: T.dropout(x, 0.25, True),
    "torch_feature_dropout_": lambda F, T, x: T.feature_dropout_(x * 1, 0.25, True),
    "torch_alpha_dropout_": lambda F, T, x: T.alpha_dropout_(x * 1, 0.25, True),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(TRAINING))
def test_training_dropout_draws_torch_mask_for_one_seed(same_stream, name, dtype):
    assert_same(same_stream, _scenario(TRAINING[name], dtype))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dropout_of_a_large_tensor_keeps_torch_elements(same_stream, seed):
    fn = TRAINING["dropout"]
    assert_same(same_stream, _scenario(fn, "float32", (64, 129), seed))


IDENTITY = {
    "dropout_eval": lambda F, T, x: F.dropout(x, 0.3, training=False),
    "dropout_p0": lambda F, T, x: F.dropout(x, 0.0),
    "dropout_inplace_eval": lambda F, T, x: F.dropout(x, 0.3, False, True),
    "alpha_dropout_default_eval": lambda F, T, x: F.alpha_dropout(x, 0.3),
    "feature_alpha_dropout_default_eval": lambda F, T, x: F.feature_alpha_dropout(x, 0.3),
    "dropout2d_eval": lambda F, T, x: F.dropout2d(x, 0.3, training=False),
}


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_eval_mode_and_p0_give_the_input_itself(torch, name):
    scenario = _scenario(IDENTITY[name])
    assert scenario(torch)[-1] is True
    assert_same(torch, scenario)


def test_feature_dropout_in_eval_mode_skips_the_dimension_check(torch):
    scenario = _scenario(lambda F, T, x: T.feature_dropout(x, 0.5, False), shape=(5,))
    assert scenario(torch)[-1] is True
    assert_same(torch, scenario)


def test_dropout_of_an_empty_tensor_gives_the_input_itself(torch):
    assert_same(torch, _scenario(TRAINING["dropout"], shape=(0, 3)))


ATEN_CALLS = {
    "dropout": lambda F, T, x: F.dropout(x, 0.3),
    "dropout_inplace": lambda F, T, x: F.dropout(x.clone(), 0.3, inplace=True),
    "dropout_p1": lambda F, T, x: F.dropout(x, 1.0),
    "dropout3d_unbatched": lambda F, T, x: F.dropout3d(x, 0.3),
    "alpha_dropout": lambda F, T, x: F.alpha_dropout(x, 0.3, True),
    "feature_alpha_dropout_inplace": lambda F, T, x: F.feature_alpha_dropout(
        x.clone(), 0.3, True, True
    ),
}


@pytest.mark.parametrize("name", sorted(ATEN_CALLS))
def test_dropout_makes_torch_aten_calls(torch, name):
    def scenario(lib):
        x = lib.randn(2, 3, 4, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log = aten_log(lib, lambda: ATEN_CALLS[name](lib.nn.functional, lib, x))
        return [entry.split(".", 1)[1] for entry in log]

    assert_same(torch, scenario)


def test_dropout_gradient_of_gradient_matches_torch(same_stream):
    def scenario(lib):
        lib.manual_seed(4)
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.alpha_dropout(x * x, 0.4, True)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g.tolist(), gg.tolist()

    assert_same(same_stream, scenario)


ERRORS = {
    "p_above_one": (lambda F, T: F.dropout(T.ones(3), 1.5), ValueError, "has to be between 0"),
    "p_below_zero_2d": (lambda F, T: F.dropout2d(T.ones(2, 3), -0.1), ValueError, "but got -0.1"),
    "aten_p_out_of_range": (
        lambda F, T: T.dropout(T.ones(3), -0.5, True),
        RuntimeError,
        "dropout probability has to be between 0 and 1, but got -0.5",
    ),
    "integer_input": (
        lambda F, T: F.dropout(T.ones(3, dtype=T.int64), 0.5),
        RuntimeError,
        "can't be cast to the desired output type Long",
    ),
    "integer_alpha": (
        lambda F, T: F.alpha_dropout(T.ones(3, dtype=T.int64), 0.5, True),
        RuntimeError,
        "can't be cast to the desired output type Long",
    ),
    "feature_dropout_1d": (
        lambda F, T: T.feature_dropout(T.ones(3), 0.5, True),
        RuntimeError,
        "Feature dropout requires at least 2 dimensions in the input",
    ),
    "feature_alpha_dropout_1d": (
        lambda F, T: F.feature_alpha_dropout(T.ones(3), 0.5, True),
        RuntimeError,
        "Feature dropout requires at least 2 dimensions in the input",
    ),
    "dropout1d_4d": (
        lambda F, T: F.dropout1d(T.ones(1, 2, 3, 4), 0.5),
        RuntimeError,
        "dropout1d: Expected 2D or 3D input, but received a 4D input",
    ),
    "inplace_on_leaf": (
        lambda F, T: F.dropout(T.ones(3, requires_grad=True), 0.5, inplace=True),
        RuntimeError,
        "a leaf Variable that requires grad is being used in an in-place operation",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_dropout_errors_match_torch(torch, name):
    fn, exc_type, phrase = ERRORS[name]
    assert_same_error(torch, lambda lib: fn(lib.nn.functional, lib), exc_type, phrase)


@pytest.mark.parametrize(
    "fn",
    [
        lambda F, T: F.dropout2d(T.ones(2, 3, 4), 0.5),
        lambda F, T: F.dropout2d(T.ones(3), 0.5, training=False),
        lambda F, T: F.dropout3d(T.ones(2, 3), 0.5),
        lambda F, T: F.dropout2d(T.ones(1, 2, 2, 2), 0.5),
    ],
    ids=["dropout2d_3d", "dropout2d_1d", "dropout3d_2d", "dropout2d_4d_silent"],
)
def test_dropout2d_and_3d_warn_as_torch(torch, fn):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib.nn.functional, lib)
        return [(str(w.message), w.filename, w.category.__name__) for w in caught]

    assert_same(torch, scenario)


# ---- the bernoulli ops -------------------------------------------------------------------


def _bernoulli_scenario(fn, seed=7):
    def scenario(lib):
        lib.manual_seed(seed)
        out = fn(lib)
        return out.tolist(), dtype_name(out.dtype), tuple(out.shape)

    return scenario


SAME_STREAM_BERNOULLI = {
    "float_p": lambda T: T.empty(50).bernoulli_(0.3),
    "float_p_default": lambda T: T.empty(50, dtype=T.float64).bernoulli_(),
    "float_p_float16": lambda T: T.empty(50, dtype=T.float16).bernoulli_(0.6),
    "float_p_int64_self": lambda T: T.empty(50, dtype=T.int64).bernoulli_(0.6),
    "float_p_bool_self": lambda T: T.empty(50, dtype=T.bool).bernoulli_(0.6),
    "float_p_transposed_self": lambda T: T.empty(5, 4).t().bernoulli_(0.5),
}

# a Tensor p always takes the default kernel
ANY_STREAM_BERNOULLI = {
    "tensor_p_float32": lambda T: T.empty(40).bernoulli_((T.arange(40) / 39)),
    "tensor_p_float64": lambda T: T.empty(40).bernoulli_((T.arange(40) / 39).double()),
    "tensor_p_float16": lambda T: T.empty(40).bernoulli_((T.arange(40) / 39).half()),
    "tensor_p_broadcast": lambda T: T.empty(4, 5).bernoulli_(T.tensor([0.2, 0.4, 0.6, 0.8, 1.0])),
    "tensor_p_transposed_self": lambda T: T.empty(5, 4).t().bernoulli_(T.full((4, 5), 0.5)),
    "functional": lambda T: T.bernoulli((T.arange(40) / 39).double()),
    "functional_float32": lambda T: T.bernoulli((T.arange(40) / 39)),
}


@pytest.mark.parametrize("name", sorted(SAME_STREAM_BERNOULLI))
def test_bernoulli_float_p_draws_torch_values(same_stream, name):
    assert_same(same_stream, _bernoulli_scenario(SAME_STREAM_BERNOULLI[name]))


@pytest.mark.parametrize("name", sorted(ANY_STREAM_BERNOULLI))
def test_bernoulli_tensor_p_draws_torch_values(torch, name):
    assert_same(torch, _bernoulli_scenario(ANY_STREAM_BERNOULLI[name]))


NODES = {
    "bernoulli_float": lambda T, x: x.clone().bernoulli_(0.3),
    "bernoulli_tensor": lambda T, x: x.clone().bernoulli_(x.detach().sigmoid()),
    "bernoulli_tensor_p_requires_grad": lambda T, x: x.detach().clone().bernoulli_(x.sigmoid()),
    "bernoulli": lambda T, x: T.bernoulli(x.sigmoid()),
    "div_scalar_inplace": lambda T, x: T.ops.aten.div_.Scalar(x.clone(), 4.0),
    "mul_scalar_inplace": lambda T, x: T.ops.aten.mul_.Scalar(x.clone(), 3.0),
    "add_scalar_inplace": lambda T, x: T.ops.aten.add_.Scalar(x.clone(), 3.0, 2),
    "sub_scalar_inplace": lambda T, x: T.ops.aten.sub_.Scalar(x.clone(), 3.0, 2),
}


@pytest.mark.parametrize("name", sorted(NODES))
def test_random_and_scalar_inplace_nodes_match_torch(torch, name):
    def scenario(lib):
        lib.manual_seed(1)
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        y = NODES[name](lib, x)
        (g,) = lib.autograd.grad(y.sum(), x, allow_unused=True)
        saved = sorted(n for n in dir(y.grad_fn) if n.startswith("_saved"))
        return y.tolist(), None if g is None else g.tolist(), y.grad_fn.name(), saved

    assert_same(torch, scenario)


BERNOULLI_ERRORS = {
    "p_above_one": (lambda T: T.empty(3).bernoulli_(1.5), RuntimeError, "but got p=1.5"),
    "p_nan": (lambda T: T.empty(3).bernoulli_(float("nan")), RuntimeError, "but got p=nan"),
    "tensor_p_out_of_range": (
        lambda T: T.empty(3).bernoulli_(T.tensor([0.5, 1.5, 0.2])),
        RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true",
    ),
    "integer_tensor_p": (
        lambda T: T.empty(3).bernoulli_(T.tensor([1, 0, 1])),
        NotImplementedError,
        "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
    ),
    "integer_functional": (
        lambda T: T.bernoulli(T.tensor([1, 0, 1])),
        NotImplementedError,
        "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
    ),
    "tensor_p_does_not_broadcast": (
        lambda T: T.empty(3, 2).bernoulli_(T.tensor([1.0, 0.0, 1.0])),
        RuntimeError,
        "must match the existing size",
    ),
    "overlapping_self": (
        lambda T: T.empty(3).expand(2, 3).bernoulli_(0.5),
        RuntimeError,
        "more than one element of the written-to tensor refers to a single memory location",
    ),
}


@pytest.mark.parametrize("name", sorted(BERNOULLI_ERRORS))
def test_bernoulli_errors_match_torch(torch, name):
    fn, exc_type, phrase = BERNOULLI_ERRORS[name]
    assert_same_error(torch, fn, exc_type, phrase)


def test_bernoulli_error_leaves_self_untouched():
    x = og.ones(3)
    before = x._version
    kind, _ = outcome(lambda: x.bernoulli_(og.tensor([0.5, 1.5, 0.2])))
    assert kind == "RuntimeError"
    assert x.tolist() == [1.0, 1.0, 1.0] and x._version == before


def test_bernoulli_mask_frequency_is_p():
    og.manual_seed(0)
    mask = og.empty(100_000).bernoulli_(0.3)
    assert abs(float(np.asarray(mask.numpy()).mean()) - 0.3) < 0.01
