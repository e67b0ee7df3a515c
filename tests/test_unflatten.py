"""unflatten (function and method) against torch: a view recorded as ViewBackward0, its
values, gradients, tangents, the aten calls a dispatch mode sees, and every refusal.
torch's own unflatten samples run in test_opinfo.py."""

from __future__ import annotations

import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import aten_log, assert_same_error

GRAPHS = {
    "split_last": ([(3, 6)], lambda F, lib, x: x.unflatten(1, (2, 3))),
    "negative_dim_inferred": ([(3, 6)], lambda F, lib, x: lib.unflatten(x, -1, (-1, 2))),
    "first_dim_three_ways": ([(12, 2)], lambda F, lib, x: x.unflatten(0, [2, 3, 2])),
    "ones_inserted": ([(4, 5)], lambda F, lib, x: x.unflatten(1, (1, 5, 1))),
    "noncontiguous": ([(6, 4)], lambda F, lib, x: x.t().unflatten(1, (3, 2))),
    "keywords": ([(2, 6)], lambda F, lib, x: lib.unflatten(x, dim=1, sizes=(3, -1))),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_graph(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_forward_mode_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_tangent(torch, fn, specs, (name,))


def test_result_is_a_view_recorded_as_view_backward(torch):
    def facts(lib):
        x = lib.ones(3, 6, requires_grad=True)
        y = x.unflatten(1, (2, 3))
        return (
            tuple(y.shape),
            y._base is x,
            type(y.grad_fn).__name__,
            tuple(y.grad_fn._saved_self_sym_sizes),
        )

    assert facts(og) == facts(torch)


def test_writes_through_the_view_reach_the_input(torch):
    def run(lib):
        x = lib.zeros(2, 6)
        x.unflatten(1, (3, 2))[1, 2, 0] = 5.0
        return x.tolist(), x._version

    assert run(og) == run(torch)


def test_empty_dim_splits(torch):
    def shape(lib):
        return tuple(lib.zeros(3, 0).unflatten(1, (2, 0)).shape)

    assert shape(og) == shape(torch)


def test_dispatch_mode_sees_the_view_call(torch):
    def ops(lib):
        x = lib.ones(3, 6, dtype=lib.float64, requires_grad=True)
        return aten_log(lib, lambda: x.unflatten(1, (-1, 2)).sum().backward())

    assert ops(og) == ops(torch)


ERRORS = {
    "empty_sizes": (
        lambda lib: lib.ones(3, 6).unflatten(1, ()),
        "unflatten: sizes must be non-empty",
    ),
    "sizes_do_not_multiply_up": (
        lambda lib: lib.ones(3, 6).unflatten(1, (4, 2)),
        "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the "
        "input tensor",
    ),
    "inferred_size_does_not_divide": (
        lambda lib: lib.ones(3, 6).unflatten(-1, (-1, 4)),
        "unflatten: Provided sizes [-1, 4] don't multiply up to the size of dim 1 (6)",
    ),
    "zero_with_inferred_size": (
        lambda lib: lib.ones(3, 6).unflatten(1, (0, -1)),
        "unflatten: Provided sizes [0, -1] don't multiply up to the size of dim 1 (6)",
    ),
    "two_inferred_sizes": (
        lambda lib: lib.ones(3, 6).unflatten(1, (-1, -1)),
        "unflatten got an unexpected error:\nonly one dimension can be inferred",
    ),
    "negative_size": (
        lambda lib: lib.ones(3, 6).unflatten(1, (-2, 3)),
        "unflatten got an unexpected error:\ninvalid shape dimension -2 at index 0 of shape [-2, 3]",
    ),
    "ambiguous_inferred_size_of_an_empty_dim": (
        lambda lib: lib.zeros(3, 0).unflatten(1, (0, -1)),
        "unflatten got an unexpected error:\ncannot reshape tensor of 0 elements into shape "
        "[0, -1] because the unspecified dimension size -1 can be any value and is ambiguous",
    ),
    "zero_dim_tensor": (
        lambda lib: lib.tensor(5.0).unflatten(0, [1]),
        "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_refusal_matches_torch(torch, name):
    fn, phrase = ERRORS[name]

    def key_phrase(lib):
        try:
            fn(lib)
        except RuntimeError as exc:
            # torch appends its C++ stack to the wrapped message; the message itself is compared
            raise RuntimeError(str(exc).split("\nException raised from")[0]) from None

    assert_same_error(torch, key_phrase, RuntimeError, phrase)


def test_dim_out_of_range_is_an_index_error(torch):
    assert_same_error(
        torch,
        lambda lib: lib.ones(3, 6).unflatten(2, (3, 2)),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    )
