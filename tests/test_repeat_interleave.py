"""repeat_interleave with an int count, as torch 2.13 composes it on CPU: unsqueeze,
expand, a contiguous clone and a view (the last node ViewBackward0), the flattened
input without ``dim``; its errors in torch's order. (A tensor of counts is not there
yet: it needs index_select.)"""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same_error


def _leaf(lib, shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(data, requires_grad=True)


CASES = {
    "dim": ((2, 3), (2,), {"dim": 1}),
    "negative_dim": ((2, 3), (3,), {"dim": -2}),
    "no_dim_flattens": ((2, 3), (2,), {}),
    "vector_no_dim": ((4,), (3,), {}),
    "scalar_no_dim": ((), (3,), {}),
    "zero_repeats": ((2, 3), (0,), {"dim": 0}),
    "empty_input": ((0, 3), (2,), {"dim": 0}),
    "output_size": ((2, 3), (2,), {"dim": 0, "output_size": 4}),
    "heads_of_attention": ((1, 2, 5, 4), (2, -3), {}),
}


def _run(lib, name, transposed=False):
    shape, args, kwargs = CASES[name]
    x = _leaf(lib, shape)
    source = x.t() if transposed else x
    y = source.repeat_interleave(*args, **kwargs)
    grad = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    (gx,) = lib.autograd.grad(y, [x], grad) if y.requires_grad else (None,)
    return y, gx


@pytest.mark.parametrize("name", CASES)
def test_values_strides_gradient_and_node_match_torch(torch, name):
    (y, gx), (ty, tgx) = _run(og, name), _run(torch, name)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert y.stride() == ty.stride()
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    if tgx is not None:
        np.testing.assert_array_equal(gx.numpy(), tgx.numpy())


def test_a_transposed_input_without_dim_is_reshaped_as_torch(torch):
    (y, gx), (ty, tgx) = _run(og, "no_dim_flattens", True), _run(torch, "no_dim_flattens", True)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(gx.numpy(), tgx.numpy())


@pytest.mark.parametrize("name", ["dim", "no_dim_flattens", "scalar_no_dim", "output_size"])
def test_dispatch_mode_sees_torch_calls(torch, name):
    shape, args, kwargs = CASES[name]

    def scenario(lib):
        x = _leaf(lib, shape)
        return aten_log(lib, lambda: x.repeat_interleave(*args, **kwargs))

    assert scenario(og) == scenario(torch)


def test_function_form_matches_the_method(torch):
    def scenario(lib):
        return lib.repeat_interleave(lib.tensor([1.0, 2.0]), 3).tolist()

    assert scenario(og) == scenario(torch)


ERRORS = {
    "negative_repeats": (RuntimeError, "Repeats must be non-negative", (-1,), {"dim": 0}),
    "output_size_mismatch": (
        RuntimeError,
        "repeat_interleave: Invalid output_size, expected 4 but got 5",
        (2,),
        {"dim": 0, "output_size": 5},
    ),
    "dim_out_of_range": (IndexError, "Dimension out of range", (2,), {"dim": 2}),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    exc_type, phrase, args, kwargs = ERRORS[name]
    assert_same_error(
        torch, lambda lib: _leaf(lib, (2, 3)).repeat_interleave(*args, **kwargs), exc_type, phrase
    )


@pytest.mark.parametrize("repeats", [2.0, True])
def test_a_count_that_is_not_an_int_is_refused_as_torch_refuses_it(torch, repeats):
    for lib in (og, torch):
        with pytest.raises(TypeError, match="repeat_interleave"):
            _leaf(lib, (2, 3)).repeat_interleave(repeats, dim=0)
