"""F.pad (every mode), pixel_shuffle, pixel_unshuffle and channel_shuffle against torch:
the ops each mode records, double backward, dtypes and errors. Values, gradients,
second derivatives and tangents on torch's samples are in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
import opgrad.nn.functional as F
from torch_oracle import (
    assert_same,
    assert_same_error,
    node_type_name,
    outcome,
    result_scenario,
)


def _functional(lib):
    return lib.nn.functional


def _input(lib, shape=(2, 3, 4, 5)):
    data = np.random.default_rng(7).standard_normal(shape)
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize(
    "pad, mode, node",
    [
        ((1, 2), "constant", "ConstantPadNdBackward0"),
        ((1, 2, 0, 1), "reflect", "ReflectionPad2DBackward0"),
        ((1, 2, 0, 1, 1, 1), "reflect", "ReflectionPad3DBackward0"),
        ((1, 1, 2, 1, 0, 1), "replicate", "ReplicationPad3DBackward0"),
        ((1, 2, 3, 1), "circular", "CopySlices"),
        ((-1, 2, 0, -2), "circular", "CopySlices"),
    ],
)
def test_pad_records_torch_node_and_gradient(torch, pad, mode, node):
    def scenario(lib):
        x = _input(lib)
        y = _functional(lib).pad(x, pad, mode=mode)
        g = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (grad,) = lib.autograd.grad(y, x, g)
        return node_type_name(y.grad_fn), y.tolist(), grad.tolist()

    assert scenario(og)[0].endswith(node)
    assert_same(torch, lambda lib: scenario(lib)[1:])
    assert node_type_name(torch.nn.functional.pad(_input(torch), pad, mode=mode).grad_fn).endswith(
        node
    )


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_double_backward_records_backward_backward(torch, mode):
    def scenario(lib):
        x = _input(lib)
        y = _functional(lib).pad(x, (1, 2, 2, 1), mode=mode)
        g = lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(y, x, g, create_graph=True)
        (gg,) = lib.autograd.grad((grad * grad).sum(), g)
        return node_type_name(grad.grad_fn), gg.tolist()

    assert_same(torch, scenario)


def test_constant_pad_casts_the_value_to_an_integer_tensor(torch):
    assert_same(
        torch, result_scenario(lambda lib, t: lib.nn.functional.pad(t([1, 2]), (1, 1), value=1.5))
    )


def test_replicate_accepts_a_zero_value(torch):
    assert_same(
        torch,
        result_scenario(
            lambda lib, t: lib.nn.functional.pad(
                t([[[1.0, 2.0]]]), (1, 1), mode="replicate", value=0.0
            )
        ),
    )


def test_padding_of_zero_size_batch(torch):
    def scenario(lib):
        x = lib.zeros((0, 2, 3), dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.pad(x, (1, 1), mode="reflect")
        y.sum().backward()
        return tuple(y.shape), tuple(x.grad.shape)

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda F, x: F.pad(x, (1, 2, 3)), RuntimeError, "divisible by 2"),
        (lambda F, x: F.pad(x, (1,) * 8), RuntimeError, "less than or equal to two times"),
        (lambda F, x: F.pad(x, (-2, -2)), RuntimeError, "length must be non-negative"),
        (
            lambda F, x: F.pad(x, (3, 3), mode="reflect"),
            RuntimeError,
            "Padding size should be less",
        ),
        (lambda F, x: F.pad(x, (1,) * 6, mode="reflect"), NotImplementedError, "not supported"),
        (lambda F, x: F.pad(x, (1, 1), mode="bogus"), NotImplementedError, "Unrecognised padding"),
        (
            lambda F, x: F.pad(x, (1, 1), mode="replicate", value=2.0),
            RuntimeError,
            "value argument",
        ),
        (lambda F, x: F.pad(x, (4, 1), mode="circular"), RuntimeError, "wrapping around"),
        (lambda F, x: F.pad(x, [1, 1.5]), TypeError, "tuple of ints"),
        (lambda F, x: F.pixel_shuffle(x[0], 2), RuntimeError, "at least 3 dimensions"),
        (lambda F, x: F.pixel_shuffle(x[None], 2), RuntimeError, "divisible by the square"),
        (lambda F, x: F.pixel_unshuffle(x[None], 2), RuntimeError, "height to be divisible"),
        (lambda F, x: F.channel_shuffle(x[None], 2), RuntimeError, "divisible by groups"),
    ],
)
def test_errors_match_torch(torch, call, exc, phrase):
    data = np.arange(6.0).reshape(1, 3, 2)
    assert_same_error(torch, lambda lib: call(lib.nn.functional, lib.tensor(data)), exc, phrase)


@pytest.mark.parametrize(
    "name, factor", [("pixel_shuffle", 2), ("pixel_unshuffle", 2), ("channel_shuffle", 2)]
)
def test_pixel_rearrangements_match_torch(torch, name, factor):
    def scenario(lib):
        x = _input(lib, (2, 8, 4, 6))
        y = getattr(lib.nn.functional, name)(x, factor)
        y.backward(lib.arange(y.numel(), dtype=lib.float64).reshape(tuple(y.shape)))
        return node_type_name(y.grad_fn), y.tolist(), x.grad.tolist(), y.is_contiguous()

    assert_same(torch, scenario)


REPLICATE_CROPS = [
    ((1, 2, 3), (-2, -2)),
    ((1, 2, 3, 4), (0, 0, -2, -2)),
    ((1, 2, 3, 4), (-3, -2, 0, 0)),
    ((1, 2, 3, 4), (-3, -2, -2, -2)),
    ((1, 2, 3, 4, 5), (0, 0, 0, 0, -2, -2)),
    ((1, 2, 3, 4, 5), (0, 0, -3, -2, 0, 0)),
    ((1, 2, 3, 4, 5), (-3, -3, 0, 0, 0, 0)),
    ((1, 2, 3, 4, 5), (-3, -3, -3, -3, -3, -3)),
    ((1, 2, 3, 4), (0, 0, -3, 0)),
    ((1, 2, 3, 4), (-4, 0, 0, 0)),
    ((1, 2, 3, 4), (-1, -1, -1, -1)),
]


@pytest.mark.parametrize("shape, pad", REPLICATE_CROPS, ids=str)
def test_replicate_pad_cropping_matches_torch(torch, shape, pad):
    """Too small only when every padded size is below 1 (with each rank's own text); else a
    negative size fails as the tensor is made and a zero size pads to an empty result."""

    def scenario(lib):
        x = lib.ones(shape, requires_grad=True)
        y = lib.nn.functional.pad(x, pad, mode="replicate")
        (grad,) = lib.autograd.grad(y.sum(), x)
        return tuple(y.shape), grad.sum().item()

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))
