"""opgrad.nn.functional's max unpoolings (max_unpool1d/2d/3d) against torch: values,
gradients, second derivatives, forward-mode tangents, grad_fn chains and saved fields, the
aten ops a dispatch mode sees in the forward, the output sizes torch's Python accepts, and
errors."""

from __future__ import annotations

import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import aten_log, grad_fn_chain, outcome


def _unpool(pool, unpool, kernel, stride=None, padding=0, **kwargs):
    """A scenario: indices from pooling the first input, unpooling of the second."""

    def fn(F, lib, source, values):
        _, indices = getattr(F, pool)(source, kernel, stride, padding, return_indices=True)
        return getattr(F, unpool)(values, indices, kernel, stride, padding, **kwargs)

    return fn


# Windows that do not overlap, so no two values share an index (torch documents which
# of them wins as undefined; test_equal_indices_keep_the_last_value checks the forward).
GRAPHS = {
    "max_unpool1d": ([((2, 3, 8), False), (2, 3, 4)], _unpool("max_pool1d", "max_unpool1d", 2)),
    "max_unpool1d_overlapping_output_size": (
        [((2, 3, 9), False), (2, 3, 3)],
        _unpool("max_pool1d", "max_unpool1d", 3, 3, 1, output_size=[2, 3, 9]),
    ),
    "max_unpool1d_unbatched": (
        [((3, 9), False), (3, 3)],
        _unpool("max_pool1d", "max_unpool1d", 3),
    ),
    "max_unpool2d": (
        [((2, 3, 6, 6), False), (2, 3, 3, 3)],
        _unpool("max_pool2d", "max_unpool2d", 2),
    ),
    "max_unpool2d_padded_output_size": (
        [((1, 2, 7, 6), False), (1, 2, 3, 2)],
        _unpool("max_pool2d", "max_unpool2d", 3, 3, 1, output_size=(7, 6)),
    ),
    "max_unpool2d_unbatched": (
        [((3, 4, 4), False), (3, 2, 2)],
        _unpool("max_pool2d", "max_unpool2d", 2),
    ),
    "max_unpool3d": (
        [((1, 2, 4, 4, 4), False), (1, 2, 2, 2, 2)],
        _unpool("max_pool3d", "max_unpool3d", 2),
    ),
    "max_unpool3d_padded_unbatched": (
        [((2, 5, 4, 5), False), (2, 2, 2, 2)],
        _unpool("max_pool3d", "max_unpool3d", 3, 3, 1, output_size=(5, 4, 5)),
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
def test_grad_fn_chain_and_strides_match_torch(torch, name):
    specs, fn = GRAPHS[name]
    _, got = run_graph(og, fn, specs, (name,))
    _, expected = run_graph(torch, fn, specs, (name,))
    assert grad_fn_chain(got.grad_fn) == grad_fn_chain(expected.grad_fn)
    assert got.stride() == expected.stride()


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_dispatch_mode_sees_torch_forward_ops(torch, name):
    """The forward's aten calls. (The backward's differ: torch reads the gradient at the
    indices with gather, which opgrad does not have yet; it indexes instead.)"""
    specs, fn = GRAPHS[name]

    def ops(lib):
        inputs = make_inputs(lib, specs, (name,))
        log = aten_log(lib, lambda: fn(lib.nn.functional, lib, *inputs))
        return [op for op in log if op != "aten.detach.default"]

    assert ops(og) == ops(torch)


def test_equal_indices_keep_the_last_value(torch):
    def scenario(lib):
        x = lib.tensor([[[1.0, 2.0, 3.0, 4.0]]])
        return lib.nn.functional.max_unpool1d(x, lib.tensor([[[0, 0, 1, 1]]]), 2).tolist()

    assert scenario(og) == scenario(torch)


def test_channels_last_input_unpools_channels_last_in_2d_only(torch):
    def scenario(lib):
        F = lib.nn.functional
        x2 = lib.zeros(2, 3, 2, 2).to(memory_format=lib.channels_last)
        x3 = lib.zeros(2, 3, 2, 2, 2).to(memory_format=lib.channels_last_3d)
        i2 = lib.zeros(2, 3, 2, 2, dtype=lib.int64)
        i3 = lib.zeros(2, 3, 2, 2, 2, dtype=lib.int64)
        return F.max_unpool2d(x2, i2, 2).stride(), F.max_unpool3d(x3, i3, 2).stride()

    assert scenario(og) == scenario(torch)


def test_empty_output_skips_the_index_check(torch):
    def scenario(lib):
        x = lib.zeros(2, 3, 2, 2)
        y = lib.nn.functional.max_unpool2d(x, lib.full((2, 3, 2, 2), 7), 1, 1, 1)
        return tuple(y.shape)

    assert scenario(og) == scenario(torch)


def _long(lib, *shape):
    return lib.zeros(*shape, dtype=lib.int64)


ERRORS = {
    "u1_output_size_out_of_range": lambda F, lib: F.max_unpool1d(
        lib.zeros(2, 3, 4), _long(lib, 2, 3, 4), 2, output_size=(12,)
    ),
    "u1_output_size_length": lambda F, lib: F.max_unpool1d(
        lib.zeros(2, 3, 4), _long(lib, 2, 3, 4), 2, output_size=(1, 2)
    ),
    "u1_index_too_big": lambda F, lib: F.max_unpool1d(
        lib.zeros(2, 3, 4), _long(lib, 2, 3, 4) + 20, 2
    ),
    "u1_index_negative": lambda F, lib: F.max_unpool1d(
        lib.zeros(2, 3, 4), _long(lib, 2, 3, 4) - 1, 2
    ),
    "u1_float_indices": lambda F, lib: F.max_unpool1d(lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), 2),
    "u1_int32_indices": lambda F, lib: F.max_unpool1d(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.int32), 2
    ),
    "u1_shape_mismatch": lambda F, lib: F.max_unpool1d(lib.zeros(2, 3, 4), _long(lib, 2, 3, 3), 2),
    "u1_dims": lambda F, lib: F.max_unpool1d(lib.zeros(1, 2, 3, 4), _long(lib, 1, 2, 3, 4), 2),
    "u1_integer_input": lambda F, lib: F.max_unpool1d(_long(lib, 2, 3, 4), _long(lib, 2, 3, 4), 2),
    "u2_dims": lambda F, lib: F.max_unpool2d(lib.zeros(4, 4), _long(lib, 4, 4), 2),
    "u2_empty_channels": lambda F, lib: F.max_unpool2d(
        lib.zeros(2, 0, 4, 4), _long(lib, 2, 0, 4, 4), 2
    ),
    "u2_index_too_big": lambda F, lib: F.max_unpool2d(
        lib.zeros(2, 3, 2, 2), _long(lib, 2, 3, 2, 2) + 16, 2
    ),
    "u2_shape_mismatch": lambda F, lib: F.max_unpool2d(
        lib.zeros(2, 3, 2, 2), _long(lib, 2, 3, 2, 3), 2
    ),
    "u2_float_indices": lambda F, lib: F.max_unpool2d(
        lib.zeros(2, 3, 2, 2), lib.zeros(2, 3, 2, 2), 2
    ),
    "u2_integer_input": lambda F, lib: F.max_unpool2d(
        _long(lib, 2, 3, 2, 2), _long(lib, 2, 3, 2, 2), 2
    ),
    "u2_negative_output_size": lambda F, lib: F.max_unpool2d(
        lib.zeros(1, 1, 1, 1), _long(lib, 1, 1, 1, 1), 1, 1, 1
    ),
    "u3_dims": lambda F, lib: F.max_unpool3d(lib.zeros(2, 2, 2), _long(lib, 2, 2, 2), 2),
    "u3_index_too_big": lambda F, lib: F.max_unpool3d(
        lib.zeros(1, 2, 2, 2, 2), _long(lib, 1, 2, 2, 2, 2) + 64, 2
    ),
    "u3_shape_mismatch": lambda F, lib: F.max_unpool3d(
        lib.zeros(1, 2, 2, 2, 2), _long(lib, 1, 2, 2, 2, 3), 2
    ),
    "u3_empty_channels": lambda F, lib: F.max_unpool3d(
        lib.zeros(1, 0, 2, 2, 2), _long(lib, 1, 0, 2, 2, 2), 2
    ),
    "u3_stride_zero": lambda F, lib: F.max_unpool3d(
        lib.zeros(1, 2, 2, 2, 2), _long(lib, 1, 2, 2, 2, 2), 2, 0
    ),
    "u3_integer_input": lambda F, lib: F.max_unpool3d(
        _long(lib, 1, 2, 2, 2, 2), _long(lib, 1, 2, 2, 2, 2), 2
    ),
    "u3_float_indices": lambda F, lib: F.max_unpool3d(
        lib.zeros(1, 2, 2, 2, 2), lib.zeros(1, 2, 2, 2, 2), 2
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    expected = outcome(lambda: ERRORS[name](torch.nn.functional, torch))
    assert expected[0] != "ok"
    assert outcome(lambda: ERRORS[name](og.nn.functional, og)) == expected
