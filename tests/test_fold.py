"""F.unfold and F.fold (aten::im2col / aten::col2im) against torch: values, gradients,
second derivatives, tangents, nodes and saved fields, unbatched inputs, dtypes and every
refusal. torch's own unfold samples run in test_opinfo.py."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import aten_log, assert_same_error

GRAPHS = {
    "unfold": ([(2, 3, 5, 6)], lambda F, lib, x: F.unfold(x, 2)),
    "unfold_all_params": (
        [(2, 2, 6, 7)],
        lambda F, lib, x: F.unfold(x, (3, 2), dilation=(2, 1), padding=(1, 2), stride=(2, 3)),
    ),
    "unfold_unbatched": ([(3, 5, 4)], lambda F, lib, x: F.unfold(x, (2, 3), padding=1)),
    "fold": ([(2, 12, 12)], lambda F, lib, x: F.fold(x, (4, 5), 2)),
    "fold_overlapping_all_params": (
        [(2, 12, 15)],
        lambda F, lib, x: F.fold(x, (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
    ),
    "fold_unbatched": ([(8, 4)], lambda F, lib, x: F.fold(x, [3, 4], 2, padding=(1, 0), stride=2)),
    "fold_of_unfold": (
        [(1, 2, 4, 5)],
        lambda F, lib, x: F.fold(F.unfold(x, 3, 1, 1), (4, 5), 3, 1, 1),
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


def _nodes(lib, call, shape):
    x = lib.ones(*shape, dtype=lib.float64, requires_grad=True)
    y = call(lib.nn.functional, x)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    return y.grad_fn, g.grad_fn


def _saved(node):
    return {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}


@pytest.mark.parametrize(
    "call, shape",
    [
        (lambda F, x: F.unfold(x, (2, 3), 2, 1, (1, 2)), (2, 3, 5, 6)),
        (lambda F, x: F.fold(x, (4, 5), 2, stride=1), (2, 8, 12)),
    ],
    ids=["unfold", "fold"],
)
def test_nodes_and_saved_fields_read_as_torch(torch, call, shape):
    for got, expected in zip(_nodes(og, call, shape), _nodes(torch, call, shape)):
        assert type(got).__name__ == type(expected).__name__
        assert _saved(got) == _saved(expected)


def test_dispatch_mode_sees_torch_ops(torch):
    def ops(lib):
        x = lib.ones(1, 2, 4, 4, dtype=lib.float64, requires_grad=True)
        F = lib.nn.functional
        log = aten_log(lib, lambda: F.fold(F.unfold(x, 2), (4, 4), 2).sum().backward())
        return [op for op in log if op not in ("aten.detach.default", "aten.add_.Tensor")]

    assert ops(og) == ops(torch)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bool"])
def test_values_are_bit_exact_in_every_dtype(torch, dtype):
    # overlapping blocks: fold's sums round as torch's do, in the same order
    data = np.random.default_rng(3).standard_normal((2, 3, 6, 7)) * 10

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor(data).to(getattr(lib, dtype))
        cols = F.unfold(x, (3, 2), dilation=(1, 2), padding=1)
        back = F.fold(cols, (6, 7), (3, 2), dilation=(1, 2), padding=1)
        return cols.to(lib.float64).numpy(), back.to(lib.float64).numpy(), str(back.dtype)

    got, expected = run(og), run(torch)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[2].split(".")[1] == expected[2].split(".")[1]


def test_empty_batch_is_allowed(torch):
    def shapes(lib):
        F = lib.nn.functional
        cols = F.unfold(lib.zeros(0, 3, 5, 6), 2)
        return tuple(cols.shape), tuple(F.fold(lib.zeros(0, 12, 12), (4, 5), 2).shape)

    assert shapes(og) == shapes(torch)


def test_channels_last_input_unfolds_to_a_contiguous_result(torch):
    data = np.random.default_rng(5).standard_normal((2, 3, 5, 4))

    def run(lib):
        x = lib.tensor(data).contiguous(memory_format=lib.channels_last)
        cols = lib.nn.functional.unfold(x, 2, padding=1)
        return cols.stride(), cols.numpy()

    (gs, gv), (es, ev) = run(og), run(torch)
    assert gs == es
    np.testing.assert_array_equal(gv, ev)


# ---- errors -------------------------------------------------------------------------------

UNFOLD_ERRORS = [
    ("kernel_zero", RuntimeError, "kernel size should be greater than zero", {"kernel_size": 0}),
    ("dilation_zero", RuntimeError, "dilation should be greater than zero", {"dilation": 0}),
    ("padding_negative", RuntimeError, "padding should be non-negative", {"padding": -1}),
    ("stride_zero", RuntimeError, "stride should be greater than zero", {"stride": 0}),
    (
        "kernel_length",
        RuntimeError,
        "It is expected kernel_size equals to 2",
        {"kernel_size": (2, 2, 2)},
    ),
    ("dilation_length", RuntimeError, "It is expected dilation equals to 2", {"dilation": [1]}),
    ("padding_length", RuntimeError, "It is expected padding equals to 2", {"padding": [1]}),
    ("stride_length", RuntimeError, "It is expected stride equals to 2", {"stride": [1]}),
    ("too_big", RuntimeError, "but its components must be at least one", {"kernel_size": (7, 9)}),
]


@pytest.mark.parametrize(
    "name, exc, phrase, kwargs", UNFOLD_ERRORS, ids=[e[0] for e in UNFOLD_ERRORS]
)
def test_unfold_errors_match_torch(torch, name, exc, phrase, kwargs):
    kwargs = {"kernel_size": 2, **kwargs}
    assert_same_error(
        torch, lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 5, 6), **kwargs), exc, phrase
    )


UNFOLD_SHAPE_ERRORS = [
    ("five_d", RuntimeError, "Expected 3D or 4D (batch mode) tensor", (1, 2, 3, 4, 5)),
    ("zero_channels", RuntimeError, "Expected 3D or 4D (batch mode) tensor", (2, 0, 5, 6)),
    (
        "zero_height",
        RuntimeError,
        "other non-zero dimensions for input, but got: [2, 3, 0, 6]",
        (2, 3, 0, 6),
    ),
    ("unbatched_zero_channels", RuntimeError, "Expected 3D or 4D", (0, 5, 6)),
    ("two_d", IndexError, "Dimension out of range", (5, 6)),
    ("one_d", IndexError, "Dimension out of range", (5,)),
    ("zero_d", IndexError, "Dimension specified as 1 but tensor has no dimensions", ()),
]


@pytest.mark.parametrize(
    "name, exc, phrase, shape", UNFOLD_SHAPE_ERRORS, ids=[e[0] for e in UNFOLD_SHAPE_ERRORS]
)
def test_unfold_input_shape_errors_match_torch(torch, name, exc, phrase, shape):
    assert_same_error(torch, lambda lib: lib.nn.functional.unfold(lib.zeros(shape), 2), exc, phrase)


FOLD_ERRORS = [
    ("kernel_zero", RuntimeError, "kernel size should be greater than zero", {"kernel_size": 0}),
    # fold checks stride before dilation, unlike unfold
    ("stride_and_dilation", RuntimeError, "stride should be greater", {"stride": 0, "dilation": 0}),
    ("dilation_zero", RuntimeError, "dilation should be greater than zero", {"dilation": 0}),
    ("padding_negative", RuntimeError, "padding should be non-negative", {"padding": -1}),
    (
        "output_length",
        RuntimeError,
        "It is expected output_size equals to 2",
        {"output_size": (4, 5, 1)},
    ),
    ("kernel_length", RuntimeError, "It is expected kernel_size equals to 2", {"kernel_size": [2]}),
    (
        "not_divisible",
        RuntimeError,
        "to be divisible by the product of kernel_size",
        {"kernel_size": 3},
    ),
    (
        "block_count",
        RuntimeError,
        "expected size of input's dimension 2 to match",
        {"output_size": (4, 6)},
    ),
    ("no_blocks", RuntimeError, "sliding blocks 0 * 0 = 0", {"output_size": 1}),
]


@pytest.mark.parametrize("name, exc, phrase, kwargs", FOLD_ERRORS, ids=[e[0] for e in FOLD_ERRORS])
def test_fold_errors_match_torch(torch, name, exc, phrase, kwargs):
    kwargs = {"output_size": (4, 5), "kernel_size": 2, **kwargs}
    assert_same_error(
        torch, lambda lib: lib.nn.functional.fold(lib.zeros(2, 12, 12), **kwargs), exc, phrase
    )


FOLD_OP_ERRORS = [
    ("one_d", "Expected 2D or 3D (batch mode) tensor", (4,), [2, 2], [0, 0]),
    ("four_d", "but got: [4, 1, 1, 1]", (4, 1, 1, 1), [2, 2], [0, 0]),
    ("no_blocks", "but got: [2, 4, 0]", (2, 4, 0), [1, 1], [0, 0]),
    ("negative_output", "Expected output spatial size to be positive", (2, 4, 4), [-1, -1], [2, 2]),
    ("too_small", "which is too small (non-positive)", (2, 4, 1), [0, 0], [0, 0]),
]


@pytest.mark.parametrize(
    "name, phrase, shape, output_size, padding", FOLD_OP_ERRORS, ids=[e[0] for e in FOLD_OP_ERRORS]
)
def test_col2im_shape_errors_match_torch(torch, name, phrase, shape, output_size, padding):
    def call(lib):
        x = lib.zeros(*shape)
        return lib.ops.aten.col2im(x, output_size, [2, 2], [1, 1], padding, [1, 1])

    assert_same_error(torch, call, RuntimeError, phrase)


@pytest.mark.parametrize("fn", ["unfold", "fold"])
def test_integer_inputs_are_refused(torch, fn):
    def call(lib):
        F = lib.nn.functional
        if fn == "unfold":
            return F.unfold(lib.arange(72).reshape(2, 3, 3, 4), 2)
        return F.fold(lib.arange(144).reshape(2, 12, 6), (3, 4), 2)

    assert_same_error(torch, call, NotImplementedError, "not implemented for 'Long'")
