"""F.fractional_max_pool2d/3d against torch: the samples drawn from the default generator
when none are given, output_size or output_ratio, unbatched input, ties and NaN, the nodes
and saved fields, and the errors. torch's OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, assert_same_error, assert_same_saved_fields, vals


def _pool(lib, shape, kernel, nd, *, seed=0, values=None, **kwargs):
    data = np.random.default_rng(seed).standard_normal(shape) if values is None else values
    x = lib.tensor(data, requires_grad=True)
    lib.manual_seed(11)
    pool = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
    return x, pool(x, kernel, return_indices=True, **kwargs)


CASES = [
    ((2, 3, 9, 9), 3, 2, dict(output_size=(4, 3))),
    ((3, 9, 8), (2, 3), 2, dict(output_ratio=(0.5, 0.5))),
    ((2, 2, 7, 6, 7), (2, 3, 4), 3, dict(output_ratio=(0.5, 0.5, 0.5))),
    ((2, 6, 5, 4), 2, 3, dict(output_size=(3, 2, 2))),
]


@pytest.mark.parametrize("shape, kernel, nd, kwargs", CASES)
def test_drawn_samples_values_indices_and_gradients(torch, shape, kernel, nd, kwargs):
    def scenario(lib):
        x, (out, idx) = _pool(lib, shape, kernel, nd, **kwargs)
        grad_out = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        grad_out.requires_grad_()
        (g,) = lib.autograd.grad(out, x, grad_out, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), grad_out)
        names = (out.grad_fn.name(), g.grad_fn.name())
        return names, vals(out), vals(idx), vals(g), vals(gg)

    assert_same(torch, scenario)


@pytest.mark.parametrize("nd", [2, 3])
def test_saved_fields(torch, nd):
    shape = (1, 2) + (6,) * nd
    got, expected = _pool(og, shape, 2, nd, output_size=3), _pool(
        torch, shape, 2, nd, output_size=3
    )
    assert_same_saved_fields(
        torch, got[1][0].grad_fn, expected[1][0].grad_fn, (got[0],), (expected[0],), what=f"{nd}d"
    )


def test_ties_keep_the_first_maximum_and_nan_the_last(torch):
    values = np.zeros((1, 1, 6, 6))
    values[0, 0, 1, 1] = values[0, 0, 4, 4] = np.nan
    values[0, 0, 2, 3] = values[0, 0, 3, 3] = 5.0

    def scenario(lib):
        x, (out, idx) = _pool(lib, (1, 1, 6, 6), 3, 2, values=values, output_size=3)
        return repr(vals(out)), vals(idx)

    assert_same(torch, scenario)


def test_given_samples_are_used_and_the_generator_is_untouched(torch):
    def scenario(lib):
        lib.manual_seed(3)
        x = lib.tensor(np.random.default_rng(2).standard_normal((2, 2, 8, 8)))
        samples = lib.tensor([[[0.1, 0.9], [0.5, 0.5]], [[0.99, 0.0], [0.3, 0.7]]])
        out = lib.nn.functional.fractional_max_pool2d(
            x, 2, output_size=5, _random_samples=samples.double()
        )
        return vals(out), vals(lib.rand(2))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda F, x: F.fractional_max_pool2d(x, 2), ValueError, "requires specifying either"),
        (
            lambda F, x: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
            ValueError,
            "output_ratio to either be",
        ),
        (lambda F, x: F.fractional_max_pool2d(x, 8, output_size=2), RuntimeError, "pool height"),
        (
            lambda F, x: F.fractional_max_pool2d(x[0, 0], 2, output_size=2),
            IndexError,
            "Dimension out of range",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(x[0, 0], 2, output_size=2, _random_samples=x[0]),
            RuntimeError,
            "Expected 3D or 4D tensor",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(x[:, :0], 2, output_size=2),
            RuntimeError,
            "non-zero",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=x[0, 0]),
            RuntimeError,
            "Expect _random_samples to have 3 dimensions",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(
                x, 2, output_size=2, _random_samples=x[:1, :, :1, :2].squeeze(2).float()
            ),
            RuntimeError,
            "same dtype as input",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(
                x, 2, output_size=2, _random_samples=x[:1, :, 0, :2]
            ),
            RuntimeError,
            "no less then input batch size",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(
                x, 2, output_size=2, _random_samples=x[:, :1, 0, :2]
            ),
            RuntimeError,
            "size(1) equals to input channel size",
        ),
        (
            lambda F, x: F.fractional_max_pool2d(
                x, 2, output_size=2, _random_samples=x[:, :, 0, :3]
            ),
            RuntimeError,
            "size(2) equals to 2; got 3",
        ),
        (
            lambda F, x: F.fractional_max_pool3d(x[0], 2, output_size=2, _random_samples=x[0]),
            RuntimeError,
            "4D or 5D",
        ),
        (
            lambda F, x: F.fractional_max_pool3d(
                x[None, :, :, :3], (1, 2, 6), output_size=(1, 2, 2)
            ),
            RuntimeError,
            "pool width 6 too large",
        ),
        (
            lambda F, x: F.fractional_max_pool3d(x[None], (1, 2, 2), output_size=2),
            RuntimeError,
            "pool time 1 too large relative to input time 2",
        ),
    ],
)
def test_errors(torch, call, exc, phrase):
    def scenario(lib):
        x = lib.tensor(np.random.default_rng(0).standard_normal((2, 2, 7, 7)))
        return call(lib.nn.functional, x)

    assert_same_error(torch, scenario, exc, phrase)
