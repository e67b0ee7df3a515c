"""opgrad.nn.functional's convolutions against torch: values, gradients, second
derivatives (ConvolutionBackwardBackward0), forward-mode tangents, grad_fn chains, saved
fields, the aten ops a dispatch mode sees, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, run_graph
from torch_oracle import (
    assert_same_error,
    assert_same_tensor,
    aten_log,
    grad_fn_chain,
    next_function_names,
)

# name -> (input specs, call): specs are shapes (requires grad) or (shape, False)
GRAPHS = {
    "conv2d_bias_padding": (
        [(2, 3, 6, 5), (4, 3, 3, 3), (4,)],
        lambda F, lib, x, w, b: F.conv2d(x, w, b, padding=1),
    ),
    "conv2d_stride_dilation_groups": (
        [(2, 4, 9, 7), (6, 2, 3, 2)],
        lambda F, lib, x, w: F.conv2d(x, w, None, (2, 1), (1, 2), (2, 1), 2),
    ),
    "conv2d_depthwise": (
        [(1, 3, 5, 5), (3, 1, 3, 3), (3,)],
        lambda F, lib, x, w, b: F.conv2d(x, w, b, stride=2, groups=3),
    ),
    "conv2d_same_odd": (
        [(2, 3, 6, 5), (4, 3, 3, 3)],
        lambda F, lib, x, w: F.conv2d(x, w, padding="same", dilation=2),
    ),
    "conv2d_same_even": (
        [(2, 3, 6, 5), (4, 3, 2, 4), (4,)],
        lambda F, lib, x, w, b: F.conv2d(x, w, b, padding="same"),
    ),
    "conv2d_valid": (
        [(2, 3, 6, 5), (4, 3, 2, 2)],
        lambda F, lib, x, w: F.conv2d(x, w, padding="valid", stride=2),
    ),
    "conv2d_unbatched": (
        [(3, 6, 5), (4, 3, 3, 3), (4,)],
        lambda F, lib, x, w, b: F.conv2d(x, w, b),
    ),
    "conv2d_frozen_weight": (
        [(2, 3, 5, 5), ((4, 3, 3, 3), False)],
        lambda F, lib, x, w: F.conv2d(x, w),
    ),
    "conv2d_frozen_input": (
        [((2, 3, 5, 5), False), (4, 3, 3, 3), (4,)],
        lambda F, lib, x, w, b: F.conv2d(x, w, b),
    ),
    "conv1d": (
        [(2, 4, 9), (6, 2, 3), (6,)],
        lambda F, lib, x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
    ),
    "conv1d_same_even": (
        [(2, 2, 7), (3, 2, 4)],
        lambda F, lib, x, w: F.conv1d(x, w, padding="same", dilation=3),
    ),
    "conv3d": (
        [(1, 2, 4, 5, 4), (3, 2, 2, 3, 2), (3,)],
        lambda F, lib, x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
    ),
    "conv_transpose2d": (
        [(2, 4, 4, 3), (4, 3, 3, 3), (6,)],
        lambda F, lib, x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2),
    ),
    "conv_transpose2d_dilated": (
        [(1, 2, 3, 4), (2, 3, 2, 3)],
        lambda F, lib, x, w: F.conv_transpose2d(x, w, stride=(1, 2), dilation=(2, 1)),
    ),
    "conv_transpose1d": (
        [(2, 4, 5), (4, 3, 3)],
        lambda F, lib, x, w: F.conv_transpose1d(x, w, stride=3, padding=1, output_padding=1),
    ),
    "conv_transpose3d": (
        [(1, 2, 3, 2, 3), (2, 2, 2, 1, 2), (2,)],
        lambda F, lib, x, w, b: F.conv_transpose3d(x, w, b, stride=2),
    ),
}


@pytest.fixture(autouse=True)
def _quiet_same_padding_warning():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Using padding='same'")
        yield


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
        from norm_scenarios import make_inputs

        inputs = make_inputs(lib, specs, (name,))
        log = aten_log(lib, lambda: fn(lib.nn.functional, lib, *inputs).sum().backward())
        return [op for op in log if op != "aten.detach.default"]

    assert ops(og) == ops(torch)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_low_precision_forward_matches_torch(torch, dtype):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))

    def run(lib):
        d = getattr(lib, dtype)
        return lib.nn.functional.conv2d(lib.tensor(x).to(d), lib.tensor(w).to(d), padding=1)

    got, expected = run(og), run(torch)
    assert str(got.dtype).split(".")[-1] == dtype
    tol = 1e-5 if dtype == "float32" else 5e-2
    assert_same_tensor(got.float(), expected.float(), rtol=tol, atol=tol)


def test_integer_convolution_matches_torch(torch):
    def run(lib):
        x = lib.tensor(np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5) % 7)
        w = lib.tensor(np.arange(4 * 3 * 2 * 2).reshape(4, 3, 2, 2) % 5)
        return lib.nn.functional.conv2d(x, w, stride=2)

    got, expected = run(og), run(torch)
    assert got.dtype == og.int64
    assert got.tolist() == expected.tolist()


def test_empty_batch_convolves_to_an_empty_output(torch):
    def run(lib):
        return lib.nn.functional.conv2d(lib.zeros(0, 3, 5, 5), lib.zeros(4, 3, 3, 3))

    assert tuple(run(og).shape) == tuple(run(torch).shape) == (0, 4, 3, 3)


def test_saved_fields_read_as_torch(torch):
    def node(lib):
        x = lib.zeros(1, 2, 5, 5, requires_grad=True)
        w = lib.zeros(3, 2, 3, 3, requires_grad=True)
        return lib.nn.functional.conv2d(x, w, lib.zeros(3), padding=1).grad_fn

    got, expected = node(og), node(torch)
    for field in ("bias_sym_sizes_opt", "dilation", "groups", "output_padding", "padding"):
        assert getattr(got, "_saved_" + field) == getattr(expected, "_saved_" + field)
    assert got._saved_stride == expected._saved_stride and got._saved_transposed is False


def test_absent_bias_sizes_read_as_torch(torch):
    """conv2d passes its absent bias on as an undefined tensor (sizes (0,)); a direct
    convolution call with None saves None."""

    def sizes(lib):
        x = lib.zeros(1, 2, 5, 5, requires_grad=True)
        w = lib.zeros(3, 2, 3, 3)
        direct = lib.ops.aten.convolution(x, w, None, [1], [0], [1], False, [0], 1)
        through_conv2d = lib.nn.functional.conv2d(x, w)
        return [y.grad_fn._saved_bias_sym_sizes_opt for y in (direct, through_conv2d)]

    assert sizes(og) == sizes(torch) == [None, (0,)]


def test_double_backward_node_matches_torch(torch):
    def build(lib):
        rng = np.random.default_rng(6)
        x = lib.tensor(rng.standard_normal((2, 3, 5, 5)), requires_grad=True)
        w = lib.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.conv2d(x, w).sum(), x, create_graph=True)
        return g.grad_fn

    got, expected = build(og), build(torch)
    assert type(got).__name__ == type(expected).__name__ == "ConvolutionBackwardBackward0"
    assert next_function_names(got) == next_function_names(expected)
    for field in ("dilation", "groups", "output_padding", "padding", "stride", "transposed"):
        assert getattr(got, "_saved_" + field) == getattr(expected, "_saved_" + field)


def test_same_padding_with_even_kernel_warns_once_at_the_callers_line(monkeypatch):
    from opgrad import conv_decompositions

    monkeypatch.setattr(conv_decompositions, "_warned_even_same_padding", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            og.nn.functional.conv2d(og.zeros(1, 1, 4, 4), og.zeros(1, 1, 2, 2), padding="same")
    assert [w.filename for w in caught] == [__file__]
    assert "Using padding='same' with even kernel lengths and odd dilation" in str(
        caught[0].message
    )


ERRORS = [
    (
        "input_channels",
        lambda F, lib: F.conv2d(lib.zeros(2, 8, 8, 8), lib.zeros(4, 3, 3, 3)),
        "to have 3 channels, but got 8 channels instead",
    ),
    (
        "groups_channels",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), groups=2),
        "to have 6 channels",
    ),
    (
        "groups_divide",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 1, 3, 3), groups=3),
        "expected weight to be divisible by 3",
    ),
    (
        "groups_at_least",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), groups=5),
        "expected weight to be at least 5",
    ),
    (
        "weight_dims",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3)),
        "expected stride to be a single integer value or a list of 1 values",
    ),
    (
        "input_dims",
        lambda F, lib: F.conv2d(lib.zeros(8, 8), lib.zeros(4, 3, 3, 3)),
        "Expected 3D (unbatched) or 4D (batched) input to conv2d",
    ),
    (
        "bias_size",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), lib.zeros(3)),
        "expected bias to be 1-dimensional with 4 elements",
    ),
    (
        "stride",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), stride=0),
        "non-positive stride is not supported",
    ),
    (
        "padding",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), padding=-1),
        "negative padding is not supported",
    ),
    (
        "dilation",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), dilation=0),
        "non-positive dilation is not supported",
    ),
    (
        "kernel_too_big",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 2, 2), lib.zeros(4, 3, 3, 3)),
        "Kernel size can't be greater than actual input size",
    ),
    (
        "same_strided",
        lambda F, lib: F.conv2d(
            lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), padding="same", stride=2
        ),
        "padding='same' is not supported for strided convolutions",
    ),
    (
        "bad_padding_string",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), padding="full"),
        "Invalid padding string: 'full'",
    ),
    (
        "dtype_mismatch",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3, dtype=lib.float64)),
        "should be the same or input should be a MKLDNN tensor",
    ),
    (
        "padding_length",
        lambda F, lib: F.conv2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3), padding=(1, 2, 3)),
        "expected padding to be a single integer value or a list of 2 values",
    ),
    (
        "transposed_channels",
        lambda F, lib: F.conv_transpose2d(lib.zeros(2, 3, 8, 8), lib.zeros(4, 3, 3, 3)),
        "Given transposed=1, weight of size [4, 3, 3, 3]",
    ),
    (
        "output_padding",
        lambda F, lib: F.conv_transpose2d(
            lib.zeros(2, 3, 8, 8), lib.zeros(3, 4, 3, 3), stride=2, output_padding=2
        ),
        "output padding must be smaller than either stride or dilation",
    ),
    (
        "bool",
        lambda F, lib: F.conv2d(
            lib.zeros(2, 3, 8, 8, dtype=lib.bool), lib.zeros(4, 3, 3, 3, dtype=lib.bool)
        ),
        "not implemented for 'Bool'",
    ),
]


@pytest.mark.parametrize("name, call, phrase", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch, name, call, phrase):
    exc = NotImplementedError if name == "bool" else RuntimeError
    assert_same_error(torch, lambda lib: call(lib.nn.functional, lib), exc, phrase)


def test_convolution_op_checks_weight_rank(torch):
    def scenario(lib):
        x = lib.zeros(2, 3, 8, 8)
        return lib.ops.aten.convolution(x, lib.zeros(4, 3), None, [1], [0], [1], False, [0], 1)

    assert_same_error(torch, scenario, RuntimeError, "weight should have at least three dimensions")


def test_constant_pad_nd_matches_torch(torch):
    assert_same_graph(
        torch, lambda F, lib, x: lib.constant_pad_nd(x, [1, -2, 0, 3], 0.5), [(2, 3, 4)], ("pad",)
    )
