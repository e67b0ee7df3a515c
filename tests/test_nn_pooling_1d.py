"""opgrad.nn.functional's 1-d poolings (max, average, adaptive average, adaptive max) and
the adaptive max poolings in 2-d and 3-d, against torch: values, indices, gradients,
second derivatives, forward-mode tangents, grad_fn chains, saved fields, the aten ops a
dispatch mode sees, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import aten_log, grad_fn_chain, outcome

GRAPHS = {
    "max_pool1d": ([(2, 3, 8)], lambda F, lib, x: F.max_pool1d(x, 2)),
    "max_pool1d_padded_dilated_ceil": (
        [(2, 3, 9)],
        lambda F, lib, x: F.max_pool1d(x, 3, 2, 1, 2, ceil_mode=True),
    ),
    "max_pool1d_unbatched": ([(3, 7)], lambda F, lib, x: F.max_pool1d(x, 3, 1)),
    "max_pool1d_return_indices": (
        [(2, 3, 9)],
        lambda F, lib, x: F.max_pool1d(x, 3, 2, 1, return_indices=True)[0],
    ),
    "max_pool1d_with_indices": (
        [(2, 3, 9)],
        lambda F, lib, x: F.max_pool1d_with_indices(x, 2)[0],
    ),
    "avg_pool1d": ([(2, 3, 8)], lambda F, lib, x: F.avg_pool1d(x, 2)),
    "avg_pool1d_padding_exclude_ceil": (
        [(2, 3, 9)],
        lambda F, lib, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    ),
    "avg_pool1d_unbatched": ([(3, 7)], lambda F, lib, x: F.avg_pool1d(x, 3, 1, 1)),
    "adaptive_avg_pool1d": ([(2, 3, 9)], lambda F, lib, x: F.adaptive_avg_pool1d(x, 4)),
    "adaptive_avg_pool1d_one": ([(2, 3, 9)], lambda F, lib, x: F.adaptive_avg_pool1d(x, 1)),
    "adaptive_avg_pool1d_unbatched": ([(3, 5)], lambda F, lib, x: F.adaptive_avg_pool1d(x, 7)),
    "adaptive_max_pool1d": ([(2, 3, 9)], lambda F, lib, x: F.adaptive_max_pool1d(x, 4)),
    "adaptive_max_pool1d_indices": (
        [(3, 5)],
        lambda F, lib, x: F.adaptive_max_pool1d(x, 7, return_indices=True)[0],
    ),
    "adaptive_max_pool2d": ([(2, 3, 7, 9)], lambda F, lib, x: F.adaptive_max_pool2d(x, (3, 4))),
    "adaptive_max_pool2d_none_unbatched": (
        [(3, 7, 5)],
        lambda F, lib, x: F.adaptive_max_pool2d(x, (None, 2)),
    ),
    "adaptive_max_pool2d_larger_output": (
        [(1, 2, 3, 2)],
        lambda F, lib, x: F.adaptive_max_pool2d(x, 5, True)[0],
    ),
    "adaptive_max_pool3d": (
        [(1, 2, 5, 4, 6)],
        lambda F, lib, x: F.adaptive_max_pool3d(x, (2, 3, 4)),
    ),
    "adaptive_max_pool3d_unbatched": (
        [(2, 3, 5, 4)],
        lambda F, lib, x: F.adaptive_max_pool3d(x, 2, return_indices=True)[0],
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


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_result_strides_and_views_match_torch(torch, name):
    specs, fn = GRAPHS[name]

    def layout(lib, requires_grad):
        (x,) = make_inputs(lib, specs, (name,))
        y = fn(lib.nn.functional, lib, x.requires_grad_(requires_grad))
        return tuple(y.stride()), y._base is not None

    for requires_grad in (True, False):
        assert layout(og, requires_grad) == layout(torch, requires_grad)


def test_max_pool1d_without_grad_runs_its_own_kernel(torch):
    """No gradient and nothing watching: PyTorch's 1-d kernel, which refuses integers and
    returns no view."""

    def scenario(lib, dtype):
        x = lib.arange(12).view(2, 6).to(getattr(lib, dtype))
        y = lib.nn.functional.max_pool1d(x, 2)
        return y.tolist(), y._base is None

    for dtype in ("int64", "float32", "float16"):
        assert outcome(lambda: scenario(og, dtype)) == outcome(lambda: scenario(torch, dtype))


def test_max_pool1d_under_a_mode_takes_the_indices_path(torch):
    """A dispatch mode sees max_pool2d_with_indices even without a gradient, and integer
    inputs then pool (the 2-d kernel takes them)."""

    def scenario(lib):
        x = lib.arange(12).view(2, 6)
        out = []
        log = aten_log(lib, lambda: out.append(lib.nn.functional.max_pool1d(x, 2).tolist()))
        return log, out

    assert scenario(og) == scenario(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.max_pool1d(x, 4, 2, 1, ceil_mode=True, return_indices=True),
        lambda F, x: F.adaptive_max_pool1d(x, 4, return_indices=True),
        lambda F, x: F.adaptive_max_pool2d(x.view(1, 1, 2, 6), (2, 3), return_indices=True),
        lambda F, x: F.adaptive_max_pool3d(x.view(1, 1, 2, 2, 3), (1, 2, 2), True),
    ],
    ids=["max_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"],
)
def test_indices_of_ties_and_nans_match_torch(torch, call):
    nan, inf = float("nan"), float("inf")
    data = [[1.0, 5.0, 5.0, -inf, nan, 1.0, nan, 0.0, -1.0, nan, 3.0, 3.0]]

    def scenario(lib):
        values, indices = call(lib.nn.functional, lib.tensor(data))
        return str(values.tolist()), indices.tolist(), str(indices.dtype).split(".")[-1]

    assert scenario(og) == scenario(torch)


def test_adaptive_max_pool_windows_of_minus_infinity_point_at_their_start(torch):
    def scenario(lib):
        x = lib.full((1, 1, 5), -float("inf"))
        return lib.nn.functional.adaptive_max_pool1d(x, 2, True)[1].tolist()

    assert scenario(og) == scenario(torch)


def test_adaptive_max_pool2d_keeps_channels_last_and_3d_does_not(torch):
    def scenario(lib):
        F = lib.nn.functional
        x2 = lib.zeros(2, 3, 4, 4).to(memory_format=lib.channels_last)
        x3 = lib.zeros(2, 3, 4, 4, 4).to(memory_format=lib.channels_last_3d)
        return [
            (tuple(v.stride()), tuple(i.stride()))
            for v, i in (F.adaptive_max_pool2d(x2, 3, True), F.adaptive_max_pool3d(x3, 3, True))
        ]

    assert scenario(og) == scenario(torch)


def test_saved_fields_read_as_torch(torch):
    def nodes(lib):
        x = lib.zeros(2, 3, 6, requires_grad=True)
        F = lib.nn.functional
        y = F.max_pool1d(x, 3, 2, 1)
        return [
            y.grad_fn,
            y.grad_fn.next_functions[0][0],
            y.grad_fn.next_functions[0][0].next_functions[0][0],
            F.adaptive_max_pool2d(x, 2).grad_fn,
            F.adaptive_max_pool3d(x.view(1, 2, 3, 6), 2).grad_fn,
        ]

    from torch_oracle import torch_signed

    for got, expected in zip(nodes(og), nodes(torch)):
        assert type(got).__name__ == type(expected).__name__
        names = [n for n in dir(expected) if n.startswith("_saved_")]
        assert names == [n for n in dir(got) if n.startswith("_saved_")]
        for n in names:
            value = getattr(expected, n)
            if isinstance(value, torch.Tensor):
                assert getattr(got, n).tolist() == value.tolist(), n
            else:
                assert getattr(got, n) == torch_signed(value), n


ERRORS = {
    "max_dims": lambda F, lib: F.max_pool1d(lib.zeros(1, 2, 3, 4), 2),
    "max_unbatched_1d": lambda F, lib: F.max_pool1d(lib.zeros(4), 2),
    "max_empty_length": lambda F, lib: F.max_pool1d(lib.zeros(2, 0), 2),
    "max_empty_channels": lambda F, lib: F.max_pool1d(lib.zeros(0, 4), 2),
    "max_kernel_length": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), (2, 2)),
    "max_stride_length": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, (1, 1)),
    "max_padding_length": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, 1, (1, 1)),
    "max_dilation_length": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, 1, 0, (1, 1)),
    "max_kernel_zero": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 0),
    "max_stride_zero": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, 0),
    "max_padding_negative": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, padding=-1),
    "max_padding_too_big": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, padding=2),
    "max_dilation_zero": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 2, dilation=0),
    "max_output_empty": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 5),
    "max_output_empty_grad": lambda F, lib: F.max_pool1d(lib.zeros(2, 4, requires_grad=True), 5),
    "max_bool": lambda F, lib: F.max_pool1d(lib.zeros(2, 4, dtype=lib.bool), 2),
    "max_indices_dims": lambda F, lib: F.max_pool1d(lib.zeros(1, 2, 3, 4), 2, return_indices=True),
    "max_indices_kernel_length": lambda F, lib: F.max_pool1d(
        lib.zeros(2, 4), (2, 2), return_indices=True
    ),
    "max_indices_dilation_length": lambda F, lib: F.max_pool1d_with_indices(
        lib.zeros(2, 4), 2, 1, 0, (1, 1)
    ),
    "max_indices_empty": lambda F, lib: F.max_pool1d(lib.zeros(2, 0), 2, return_indices=True),
    "max_indices_output_empty": lambda F, lib: F.max_pool1d(
        lib.zeros(2, 4), 5, return_indices=True
    ),
    "max_indices_kernel_zero": lambda F, lib: F.max_pool1d(lib.zeros(2, 4), 0, return_indices=True),
    "max_indices_bool": lambda F, lib: F.max_pool1d(
        lib.zeros(2, 4, dtype=lib.bool), 2, return_indices=True
    ),
    "avg_dims": lambda F, lib: F.avg_pool1d(lib.zeros(1, 2, 3, 4), 2),
    "avg_kernel_length": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), (2, 2)),
    "avg_stride_length": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 2, (1, 1)),
    "avg_padding_length": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 2, 1, (1, 1)),
    "avg_empty_length": lambda F, lib: F.avg_pool1d(lib.zeros(2, 0), 2),
    "avg_output_empty": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 5),
    "avg_padding_too_big": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 2, padding=2),
    "avg_stride_zero": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 2, 0),
    "avg_int32": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4, dtype=lib.int32), 2),
    "adaptive_avg_dims": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(4), 2),
    "adaptive_avg_size_length": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(2, 4), (2, 2)),
    "adaptive_avg_empty": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(2, 0), 2),
    "adaptive_avg_none": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(2, 4), None),
    "adaptive_avg_negative": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(2, 4), -1),
    "adaptive_avg_int64": lambda F, lib: F.adaptive_avg_pool1d(lib.zeros(2, 4, dtype=lib.int64), 2),
    "adaptive_avg_int64_global": lambda F, lib: F.adaptive_avg_pool1d(
        lib.zeros(2, 4, dtype=lib.int64), 1
    ),
    "adaptive_max1_dims": lambda F, lib: F.adaptive_max_pool1d(lib.zeros(4), 2),
    "adaptive_max1_size_length": lambda F, lib: F.adaptive_max_pool1d(lib.zeros(2, 4), (2, 2)),
    "adaptive_max1_empty": lambda F, lib: F.adaptive_max_pool1d(lib.zeros(2, 0), 2),
    "adaptive_max1_negative": lambda F, lib: F.adaptive_max_pool1d(lib.zeros(2, 4), -1),
    "adaptive_max1_none": lambda F, lib: F.adaptive_max_pool1d(lib.zeros(2, 4), None),
    "adaptive_max1_int64": lambda F, lib: F.adaptive_max_pool1d(
        lib.zeros(2, 4, dtype=lib.int64), 2
    ),
    "adaptive_max2_dims": lambda F, lib: F.adaptive_max_pool2d(lib.zeros(4, 4), 2),
    "adaptive_max2_empty": lambda F, lib: F.adaptive_max_pool2d(lib.zeros(2, 0, 4), 2),
    "adaptive_max2_empty_channels": lambda F, lib: F.adaptive_max_pool2d(lib.zeros(2, 0, 4, 4), 2),
    "adaptive_max2_size_length": lambda F, lib: F.adaptive_max_pool2d(
        lib.zeros(2, 4, 4), (2, 2, 2)
    ),
    "adaptive_max2_negative": lambda F, lib: F.adaptive_max_pool2d(lib.zeros(2, 4, 4), (2, -1)),
    "adaptive_max2_int32": lambda F, lib: F.adaptive_max_pool2d(
        lib.zeros(2, 4, 4, dtype=lib.int32), 2
    ),
    "adaptive_max3_dims": lambda F, lib: F.adaptive_max_pool3d(lib.zeros(4, 4, 4), 2),
    "adaptive_max3_empty": lambda F, lib: F.adaptive_max_pool3d(lib.zeros(2, 0, 4, 4), 2),
    "adaptive_max3_size_length": lambda F, lib: F.adaptive_max_pool3d(
        lib.zeros(1, 2, 4, 4, 4), (2, 2)
    ),
    "adaptive_max3_int64": lambda F, lib: F.adaptive_max_pool3d(
        lib.zeros(2, 4, 4, 4, dtype=lib.int64), 2
    ),
    # the 2-d and 3-d checks the 1-d poolings reach
    "max_indices_padding_negative": lambda F, lib: F.max_pool1d(
        lib.zeros(2, 4), 2, padding=-1, return_indices=True
    ),
    "avg_padding_negative": lambda F, lib: F.avg_pool1d(lib.zeros(2, 4), 2, padding=-1),
    "max2_padding_negative": lambda F, lib: F.max_pool2d(lib.zeros(1, 4, 4), 2, padding=-1),
    "avg3_padding_negative": lambda F, lib: F.avg_pool3d(lib.zeros(1, 4, 4, 4), 2, padding=-1),
    "max2_bool": lambda F, lib: F.max_pool2d(lib.zeros(1, 4, 4, dtype=lib.bool), 2),
    "max3_bool": lambda F, lib: F.max_pool3d(lib.zeros(1, 4, 4, 4, dtype=lib.bool), 2),
    "adaptive_avg2_negative": lambda F, lib: F.adaptive_avg_pool2d(lib.zeros(1, 4, 4), (2, -1)),
    "adaptive_avg3_negative": lambda F, lib: F.adaptive_avg_pool3d(
        lib.zeros(1, 4, 4, 4), (2, -1, 3)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    """The same exception type and text as torch."""
    expected = outcome(lambda: ERRORS[name](torch.nn.functional, torch))
    assert expected[0] != "ok"
    assert outcome(lambda: ERRORS[name](og.nn.functional, og)) == expected


EDGE_SHAPES = {
    "max_pool1d_empty_batch": lambda F, x: F.max_pool1d(x.view(0, 2, 4), 2),
    "avg_pool1d_empty_batch": lambda F, x: F.avg_pool1d(x.view(0, 2, 4), 2),
    "adaptive_avg_pool1d_empty_channels": lambda F, x: F.adaptive_avg_pool1d(x.view(0, 4), 2),
    "adaptive_max_pool1d_empty_channels": lambda F, x: F.adaptive_max_pool1d(x.view(0, 4), 2),
    "adaptive_max_pool2d_zero_output": lambda F, x: F.adaptive_max_pool2d(x.view(0, 4, 4), 2),
    "adaptive_max_pool2d_empty_batch": lambda F, x: F.adaptive_max_pool2d(
        x.view(0, 2, 4, 4), (2, 0)
    ),
    "adaptive_max_pool3d_empty_batch": lambda F, x: F.adaptive_max_pool3d(x.view(0, 2, 4, 4), 2),
}


@pytest.mark.parametrize("name", sorted(EDGE_SHAPES))
def test_empty_inputs_and_outputs_match_torch(torch, name):
    def scenario(lib):
        y = EDGE_SHAPES[name](lib.nn.functional, lib.zeros(0))
        return tuple(y.shape), str(y.dtype).split(".")[-1]

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))
