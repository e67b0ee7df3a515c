"""opgrad.nn.functional's poolings against torch: values, indices, gradients, second
derivatives, forward-mode tangents, grad_fn chains, saved fields, the aten ops a
dispatch mode sees, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import assert_same_error, aten_log, grad_fn_chain, outcome

GRAPHS = {
    "max_pool2d": ([(2, 3, 6, 6)], lambda F, lib, x: F.max_pool2d(x, 2)),
    "max_pool2d_overlapping": (
        [(2, 3, 7, 6)],
        lambda F, lib, x: F.max_pool2d(x, 3, stride=2, padding=1),
    ),
    "max_pool2d_dilation_ceil": (
        [(1, 2, 9, 8)],
        lambda F, lib, x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), (2, 1), ceil_mode=True),
    ),
    "max_pool2d_unbatched": ([(3, 5, 5)], lambda F, lib, x: F.max_pool2d(x, 2, 1)),
    "max_pool2d_return_indices": (
        [(2, 2, 5, 5)],
        lambda F, lib, x: F.max_pool2d(x, 2, return_indices=True)[0],
    ),
    "max_pool3d": ([(1, 2, 4, 5, 4)], lambda F, lib, x: F.max_pool3d(x, 2, padding=1)),
    "avg_pool2d": ([(2, 3, 6, 6)], lambda F, lib, x: F.avg_pool2d(x, 2)),
    "avg_pool2d_padding_exclude": (
        [(2, 3, 7, 6)],
        lambda F, lib, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    ),
    "avg_pool2d_ceil": (
        [(1, 2, 7, 8)],
        lambda F, lib, x: F.avg_pool2d(x, (3, 2), (2, 3), (1, 0), ceil_mode=True),
    ),
    "avg_pool2d_divisor": (
        [(2, 2, 6, 6)],
        lambda F, lib, x: F.avg_pool2d(x, 3, 1, 1, divisor_override=5),
    ),
    "avg_pool3d": ([(1, 2, 4, 5, 4)], lambda F, lib, x: F.avg_pool3d(x, 2, padding=1)),
    "adaptive_avg_pool2d_one": ([(2, 3, 5, 4)], lambda F, lib, x: F.adaptive_avg_pool2d(x, 1)),
    "adaptive_avg_pool2d": ([(2, 3, 7, 5)], lambda F, lib, x: F.adaptive_avg_pool2d(x, (3, 2))),
    "adaptive_avg_pool2d_none": (
        [(2, 3, 7, 5)],
        lambda F, lib, x: F.adaptive_avg_pool2d(x, (None, 3)),
    ),
    "adaptive_avg_pool2d_unbatched": (
        [(3, 7, 5)],
        lambda F, lib, x: F.adaptive_avg_pool2d(x, 4),
    ),
    "adaptive_avg_pool3d": (
        [(1, 2, 5, 4, 6)],
        lambda F, lib, x: F.adaptive_avg_pool3d(x, (2, 3, 4)),
    ),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_graph(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_forward_mode_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_tangent(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_grad_fn_chain_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    _, got = run_graph(og, fn, specs, (name,))
    _, expected = run_graph(torch, fn, specs, (name,))
    assert grad_fn_chain(got.grad_fn) == grad_fn_chain(expected.grad_fn)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_dispatch_mode_sees_torch_ops(torch, name):
    specs, fn = GRAPHS[name]

    def ops(lib):
        inputs = make_inputs(lib, specs, (name,))
        log = aten_log(lib, lambda: fn(lib.nn.functional, lib, *inputs).sum().backward())
        return [op for op in log if op != "aten.detach.default"]

    assert ops(og) == ops(torch)


def test_max_pool_indices_match_torch(torch):
    data = np.random.default_rng(3).standard_normal((2, 3, 7, 6))

    def run(lib):
        return lib.nn.functional.max_pool2d(
            lib.tensor(data), 3, 2, 1, 2, ceil_mode=True, return_indices=True
        )

    (gv, gi), (ev, ei) = run(og), run(torch)
    assert gi.dtype == og.int64
    assert gi.tolist() == ei.tolist() and gv.tolist() == ev.tolist()


def test_max_pool_ties_and_nans_pick_torch_positions(torch):
    data = np.array([[[[1.0, 5.0, 5.0, 2.0, np.nan, 1.0, np.nan, 0.0]]]])

    def run(lib):
        v, i = lib.nn.functional.max_pool2d(lib.tensor(data), (1, 4), return_indices=True)
        return str(v.tolist()), i.tolist()

    assert run(og) == run(torch)


def test_saved_fields_read_as_torch(torch):
    def nodes(lib):
        x = lib.zeros(1, 2, 6, 6, requires_grad=True)
        F = lib.nn.functional
        return F.max_pool2d(x, 2).grad_fn, F.avg_pool2d(x, 3, 1, 1, False, False, 4).grad_fn

    for got, expected in zip(nodes(og), nodes(torch)):
        assert type(got).__name__ == type(expected).__name__
        names = [n for n in dir(expected) if n.startswith("_saved_") and n != "_saved_self"]
        names = [n for n in names if n != "_saved_result1"]
        for n in names:
            assert getattr(got, n) == getattr(expected, n), n


POOL_ERRORS = [
    (
        "pad_too_big",
        lambda F, lib: F.max_pool2d(lib.zeros(2, 3, 8, 8), 2, padding=2),
        "pad should be at most half of effective kernel size",
    ),
    (
        "avg_pad_too_big",
        lambda F, lib: F.avg_pool2d(lib.zeros(2, 3, 8, 8), 2, padding=2),
        "pad should be at most half of effective kernel size",
    ),
    (
        "output_too_small",
        lambda F, lib: F.max_pool2d(lib.zeros(2, 3, 8, 8), 9),
        "Output size is too small",
    ),
    (
        "input_dims",
        lambda F, lib: F.max_pool2d(lib.zeros(8, 8), 2),
        "non-empty 3D or 4D (batch mode) tensor expected for input",
    ),
    (
        "kernel_length",
        lambda F, lib: F.max_pool2d(lib.zeros(2, 3, 8, 8), (2, 2, 2)),
        "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
    ),
    (
        "stride_zero",
        lambda F, lib: F.max_pool2d(lib.zeros(2, 3, 8, 8), 2, 0),
        "stride should not be zero",
    ),
    (
        "divisor_zero",
        lambda F, lib: F.avg_pool2d(lib.zeros(2, 3, 8, 8), 2, divisor_override=0),
        "divisor must be not zero",
    ),
    (
        "adaptive_dims",
        lambda F, lib: F.adaptive_avg_pool2d(lib.zeros(8, 8), 2),
        "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [8, 8]",
    ),
    (
        "adaptive_size",
        lambda F, lib: F.adaptive_avg_pool2d(lib.zeros(2, 3, 8, 8), (2, 2, 2)),
        "adaptive_avg_pool2d: output_size must be 2",
    ),
]


@pytest.mark.parametrize("name, call, phrase", POOL_ERRORS, ids=[e[0] for e in POOL_ERRORS])
def test_errors_match_torch(torch, name, call, phrase):
    assert_same_error(torch, lambda lib: call(lib.nn.functional, lib), RuntimeError, phrase)


INTEGER_POOLS = {
    "avg2": lambda F, x: F.avg_pool2d(x, 2),
    "avg2_padded": lambda F, x: F.avg_pool2d(x, 3, 1, 1),
    "avg2_no_pad_count": lambda F, x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
    "avg2_divisor": lambda F, x: F.avg_pool2d(x, 2, divisor_override=3),
    "avg2_negative_divisor": lambda F, x: F.avg_pool2d(x, 2, divisor_override=-2),
    "avg3": lambda F, x: F.avg_pool3d(x, (1, 2, 2)),
    "adaptive2": lambda F, x: F.adaptive_avg_pool2d(x, 3),
    "adaptive2_global": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive3": lambda F, x: F.adaptive_avg_pool3d(x, 2),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16", "bool"])
@pytest.mark.parametrize("name", INTEGER_POOLS)
def test_average_pools_on_integers_match_torch(torch, name, dtype):
    """int64 averages truncate toward zero; other integer dtypes and the adaptive pools
    refuse, with the kernel's name."""
    values = [[-7, 5, -3, 2], [4, -9, 6, 1], [-1, 0, 8, -5], [3, 3, -2, 7]]

    def scenario(lib):
        x = lib.tensor([[values]])
        x = (x.abs() if dtype == "uint8" else x).to(getattr(lib, dtype))
        return INTEGER_POOLS[name](lib.nn.functional, x).tolist()

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))


EMPTY_SHAPES = [
    (2, 0, 3),
    (0, 2, 3, 3),
    (2, 3, 0, 3),
    (2, 0, 3, 3),
    (2, 3),
    (1, 1, 2, 2, 2, 2),
    (0, 2, 2, 3, 3),
    (1, 2, 0, 3, 3),
]
SHAPE_POOLS = {
    "max2": lambda F, x: F.max_pool2d(x, 1),
    "avg2": lambda F, x: F.avg_pool2d(x, 1),
    "adaptive2": lambda F, x: F.adaptive_avg_pool2d(x, 2),
    "adaptive2_global": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "max3": lambda F, x: F.max_pool3d(x, 1),
    "avg3": lambda F, x: F.avg_pool3d(x, 1),
    "adaptive3": lambda F, x: F.adaptive_avg_pool3d(x, 2),
    "adaptive3_global": lambda F, x: F.adaptive_avg_pool3d(x, 1),
}


@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
@pytest.mark.parametrize("name", SHAPE_POOLS)
def test_pool_input_shapes_and_empty_sizes_match_torch(torch, name, shape):
    """An empty batch pools to an empty result; any other empty size or a wrong number of
    dimensions gets torch's error for that pooling."""

    def scenario(lib):
        y = SHAPE_POOLS[name](lib.nn.functional, lib.ones(shape))
        return tuple(y.shape), y.sum().item() if y.numel() else None

    got, expected = outcome(lambda: scenario(og)), outcome(lambda: scenario(torch))
    if expected[0] == "ok" and expected[1][1] is not None and expected[1][1] != expected[1][1]:
        assert got[0] == "ok" and got[1][0] == expected[1][0] and got[1][1] != got[1][1]  # NaN
    else:
        assert got == expected
