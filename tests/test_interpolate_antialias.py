"""interpolate(..., antialias=True) and mode="lanczos" against torch: the ops
_upsample_{bilinear,bicubic,lanczos}2d_aa and their backward ops: values, gradients, second
derivatives, tangents, grad_fn chains and saved fields, the aten calls a dispatch mode sees,
memory formats, PyTorch's quirks (one-pixel-wide outputs, unchanged axes) and errors."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import assert_same_error, aten_log, grad_fn_chain


def _aa(mode, **kwargs):
    return lambda F, lib, x: F.interpolate(x, mode=mode, antialias=True, **kwargs)


GRAPHS = {
    "bilinear_down_size": ([(2, 3, 9, 8)], _aa("bilinear", size=(4, 3))),
    "bilinear_up_size": ([(1, 2, 4, 5)], _aa("bilinear", size=(7, 9))),
    "bilinear_scale": ([(2, 2, 9, 8)], _aa("bilinear", scale_factor=(0.45, 1.6))),
    "bilinear_align_corners": (
        [(1, 2, 9, 7)],
        _aa("bilinear", size=(4, 5), align_corners=True),
    ),
    "bilinear_recompute": (
        [(1, 2, 9, 8)],
        _aa("bilinear", scale_factor=0.45, recompute_scale_factor=True),
    ),
    "bicubic_down_size": ([(2, 2, 11, 9)], _aa("bicubic", size=(3, 4))),
    "bicubic_up_scale": ([(1, 2, 4, 5)], _aa("bicubic", scale_factor=2.3)),
    "bicubic_align_corners_scale": (
        [(1, 2, 9, 7)],
        _aa("bicubic", scale_factor=(0.6, 0.8), align_corners=True),
    ),
    "lanczos_down": ([(1, 2, 12, 10)], _aa("lanczos", size=(5, 4))),
    "lanczos_up_scale": ([(1, 2, 4, 5)], _aa("lanczos", scale_factor=(1.5, 2.2))),
    "one_pixel_wide": ([(2, 3, 9, 6)], _aa("bilinear", size=(4, 1))),
    "unchanged_height_with_scale": ([(1, 2, 5, 9)], _aa("bicubic", scale_factor=(1.1, 0.5))),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_graph(torch, fn, specs, (name,), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_forward_mode_matches_torch(torch, name):
    specs, fn = GRAPHS[name]
    assert_same_tangent(torch, fn, specs, (name,), rtol=1e-12, atol=1e-13)


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
        return [op for op in log if op not in ("aten.detach.default", "aten.add_.Tensor")]

    assert ops(og) == ops(torch)


def _saved(node):
    return {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_nodes_and_double_backward_nodes_read_as_torch(torch, mode):
    def nodes(lib):
        x = lib.ones(1, 2, 7, 6, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.interpolate(x, scale_factor=(0.5, 1.5), mode=mode, antialias=True)
        (g,) = lib.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(y, x, lib.ones_like(y, requires_grad=True), create_graph=True)
        return y.grad_fn, h.grad_fn

    for got, expected in zip(nodes(og), nodes(torch)):
        assert type(got).__name__ == type(expected).__name__
        assert _saved(got) == _saved(expected)


# ---- values over many sizes ----------------------------------------------------------------

_OPS = ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "_upsample_lanczos2d_aa"]


def _random_calls(seed, count):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        op = _OPS[trial % 3]
        h, w = (int(v) for v in rng.integers(1, 20, 2))
        align_corners = bool(rng.integers(0, 2))
        if trial % 3 == 0:
            scales = [float(v) for v in rng.uniform(0.2, 3.0, 2)]
            size = [max(1, int(h * scales[0])), max(1, int(w * scales[1]))]
        else:
            scales = [None, None]
            size = [int(v) for v in rng.integers(1, 25, 2)]
        yield op, (2, 3, h, w), size, align_corners, scales


@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-12, 1e-13), ("float32", 2e-6, 2e-6)])
def test_forward_matches_torch_over_many_sizes(torch, dtype, rtol, atol):
    rng = np.random.default_rng(11)
    for op, shape, size, align_corners, scales in _random_calls(1, 240):
        x = rng.standard_normal(shape).astype(dtype)
        got = getattr(og.ops.aten, op)(og.tensor(x), size, align_corners, *scales)
        want = getattr(torch.ops.aten, op)(torch.tensor(x), size, align_corners, *scales)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol)


def test_backward_op_matches_torch_over_many_sizes(torch):
    rng = np.random.default_rng(12)
    for op, shape, size, align_corners, scales in _random_calls(2, 150):
        g = rng.standard_normal(shape[:2] + tuple(size))
        args = (size, list(shape), align_corners, *scales)
        got = getattr(og.ops.aten, op + "_backward")(og.tensor(g), *args)
        want = getattr(torch.ops.aten, op + "_backward")(torch.tensor(g), *args)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)


def test_one_pixel_wide_output_repeats_the_first_row_as_torch(torch):
    # PyTorch's height pass reads the first output row's taps for every row here
    x = np.arange(2 * 3 * 6 * 4, dtype=np.float64).reshape(2, 3, 6, 4) ** 2

    def run(lib, channels_last):
        t = lib.tensor(x)
        if channels_last:
            t = t.contiguous(memory_format=lib.channels_last)
        return lib.ops.aten._upsample_bilinear2d_aa(t, [3, 1], False).numpy()

    for channels_last in (False, True):
        np.testing.assert_allclose(run(og, channels_last), run(torch, channels_last), rtol=1e-13)
    assert (run(og, False) == run(og, False)[:, :, :1]).all()
    assert not (run(og, True) == run(og, True)[:, :, :1]).all()


def test_unchanged_axis_is_copied_forward_but_weighted_backward(torch):
    # the forward leaves an axis of unchanged size alone whatever its scale; the backward
    # applies that scale's weights (so it is not the forward's adjoint there)
    x = np.random.default_rng(13).standard_normal((1, 2, 5, 8))

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = lib.ops.aten._upsample_bicubic2d_aa(t, [5, 4], False, 1.3, 0.5)
        y.backward(lib.ones_like(y))
        return y.detach().numpy(), t.grad.numpy()

    (gv, gg), (ev, eg) = run(og), run(torch)
    np.testing.assert_allclose(gv, ev, rtol=1e-13)
    np.testing.assert_allclose(gg, eg, rtol=1e-12)


def test_same_size_is_a_copy_for_any_dtype(torch):
    def run(lib):
        x = lib.arange(2 * 3 * 4 * 5, dtype=lib.int32).reshape(2, 3, 4, 5)
        y = lib.ops.aten._upsample_bilinear2d_aa(x, [4, 5], False)
        return str(y.dtype).split(".")[1], y.numpy()

    (gd, gv), (ed, ev) = run(og), run(torch)
    assert gd == ed
    np.testing.assert_array_equal(gv, ev)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_channels_last_layout_follows_torch(torch, mode):
    x = np.random.default_rng(14).standard_normal((2, 3, 7, 6))

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        c = t.contiguous(memory_format=lib.channels_last)
        y = lib.nn.functional.interpolate(c, size=(4, 9), mode=mode, antialias=True)
        (g,) = lib.autograd.grad(y, c, lib.ones_like(y).contiguous(memory_format=lib.channels_last))
        return y.stride(), g.stride(), y.detach().numpy(), g.numpy()

    (gs, ggs, gv, gg), (es, egs, ev, eg) = run(og), run(torch)
    assert (gs, ggs) == (es, egs)
    np.testing.assert_allclose(gv, ev, rtol=1e-12)
    np.testing.assert_allclose(gg, eg, rtol=1e-12)


def test_empty_batch_is_allowed(torch):
    def run(lib):
        y = lib.nn.functional.interpolate(
            lib.zeros(0, 2, 6, 4), size=(3, 5), mode="bicubic", antialias=True
        )
        return tuple(y.shape)

    assert run(og) == run(torch)


def test_packet_picks_vec_overload_for_scale_factors(torch):
    x = np.random.default_rng(15).standard_normal((1, 2, 6, 9))

    def run(lib):
        return lib.ops.aten._upsample_bilinear2d_aa(
            lib.tensor(x), output_size=None, align_corners=False, scale_factors=[0.7, 0.4]
        ).numpy()

    np.testing.assert_allclose(run(og), run(torch), rtol=1e-13)


def test_lanczos_op_takes_align_corners_below_interpolate(torch):
    x = np.random.default_rng(16).standard_normal((1, 1, 8, 7))

    def run(lib):
        return lib.ops.aten._upsample_lanczos2d_aa(lib.tensor(x), [3, 5], True).numpy()

    np.testing.assert_allclose(run(og), run(torch), rtol=1e-13)


# ---- errors --------------------------------------------------------------------------------

ERRORS = [
    (
        "half",
        NotImplementedError,
        "\"compute_index_ranges_weights\" not implemented for 'Half'",
        lambda lib: lib.nn.functional.interpolate(
            lib.zeros(1, 1, 4, 4, dtype=lib.float16), size=2, mode="bilinear", antialias=True
        ),
    ),
    (
        "int32",
        NotImplementedError,
        "\"compute_index_ranges_weights\" not implemented for 'Int'",
        lambda lib: lib.ops.aten._upsample_bicubic2d_aa(
            lib.zeros(1, 1, 4, 4, dtype=lib.int32), [4, 3], False
        ),
    ),
    (
        "five_d",
        ValueError,
        "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
        "a 4-D tensor as input",
        lambda lib: lib.nn.functional.interpolate(
            lib.zeros(1, 1, 2, 4, 4), size=2, mode="trilinear", antialias=True
        ),
    ),
    (
        "lanczos_align_corners",
        ValueError,
        "Lanczos mode does not support align_corners=True",
        lambda lib: lib.nn.functional.interpolate(
            lib.zeros(1, 1, 4, 4), size=2, mode="lanczos", antialias=True, align_corners=True
        ),
    ),
    (
        "lanczos_3d",
        NotImplementedError,
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D)",
        lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4), size=2, mode="lanczos"),
    ),
    (
        "empty_channels",
        RuntimeError,
        "Non-empty 4D data tensor expected but got a tensor with sizes [1, 0, 4, 4]",
        lambda lib: lib.ops.aten._upsample_bilinear2d_aa(lib.zeros(1, 0, 4, 4), [2, 2], False),
    ),
    (
        "zero_output",
        RuntimeError,
        "Input and output sizes should be greater than 0, but got input (H: 4, W: 4) output "
        "(H: 0, W: 2)",
        lambda lib: lib.ops.aten._upsample_bilinear2d_aa(lib.zeros(1, 1, 4, 4), [0, 2], False),
    ),
    (
        "output_size_length",
        RuntimeError,
        "It is expected output_size equals to 2, but got size 1",
        lambda lib: lib.ops.aten._upsample_lanczos2d_aa(lib.zeros(1, 1, 4, 4), [2], False),
    ),
    (
        "vec_both",
        RuntimeError,
        "Must specify exactly one of output_size and scale_factors",
        lambda lib: lib.ops.aten._upsample_bicubic2d_aa.vec(
            lib.zeros(1, 1, 4, 4), [2, 2], False, [0.5, 0.5]
        ),
    ),
    (
        "backward_half",
        NotImplementedError,
        "\"upsample_bilinear2d_aa_backward_cpu\" not implemented for 'Half'",
        lambda lib: lib.ops.aten._upsample_bilinear2d_aa_backward(
            lib.zeros(1, 1, 2, 2, dtype=lib.float16), [2, 2], [1, 1, 4, 4], False
        ),
    ),
    (
        "backward_shape",
        RuntimeError,
        "Expected grad_output to have the same shape as output; output.size(3) = 3 but got "
        "grad_output.size(3) = 2",
        lambda lib: lib.ops.aten._upsample_bicubic2d_aa_backward(
            lib.zeros(1, 1, 2, 2), [2, 3], [1, 1, 4, 4], False
        ),
    ),
    (
        "backward_rank",
        RuntimeError,
        "Expected grad_output to be a tensor of dimension 4 but got: dimension 3",
        lambda lib: lib.ops.aten._upsample_lanczos2d_aa_backward(
            lib.zeros(1, 2, 2), [2, 2], [1, 1, 4, 4], False
        ),
    ),
]


@pytest.mark.parametrize("name, exc, phrase, call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch, name, exc, phrase, call):
    assert_same_error(torch, call, exc, phrase)


@pytest.mark.parametrize(
    "op, output_size, input_size, extra",
    [
        ("upsample_nearest2d_backward", [4, 9], [2, 3, 7, 6], ()),
        ("upsample_bilinear2d_backward", [4, 9], [2, 3, 7, 6], (False,)),
        ("upsample_bicubic2d_backward", [4, 9], [2, 3, 7, 6], (False,)),
        ("upsample_nearest3d_backward", [4, 9, 2], [2, 3, 7, 6, 3], ()),
        ("_upsample_nearest_exact3d_backward", [4, 9, 2], [2, 3, 7, 6, 3], ()),
        ("upsample_trilinear3d_backward", [4, 9, 2], [2, 3, 7, 6, 3], (False,)),
    ],
)
def test_plain_upsample_backward_layout_follows_torch(torch, op, output_size, input_size, extra):
    # the bicubic and 3-d nearest backward kernels allocate contiguous, the others follow
    # a channels-last grad_output
    def run(lib):
        fmt = lib.channels_last if len(output_size) == 2 else lib.channels_last_3d
        g = lib.ones(input_size[:2] + output_size, dtype=lib.float64)
        g = g.contiguous(memory_format=fmt)
        return getattr(lib.ops.aten, op)(g, output_size, input_size, *extra).stride()

    assert run(og) == run(torch)


@pytest.mark.parametrize("size", [[1, 1], [1, 3], [4, 1]])
def test_channels_last_strides_of_size_one_outputs_follow_torch(torch, size):
    # a channels-last output with size-1 dims gets PyTorch's strides for them
    def run(lib):
        x = lib.ones(2, 3, 6, 5, dtype=lib.float64).contiguous(memory_format=lib.channels_last)
        return lib.ops.aten._upsample_bilinear2d_aa(x, size, False).stride()

    assert run(og) == run(torch)


def test_channels_last_size_one_strides_hold_for_other_kernels_too(torch):
    # the same layout helper serves max pooling
    def run(lib):
        x = lib.ones(2, 3, 6, 5).contiguous(memory_format=lib.channels_last)
        return lib.nn.functional.max_pool2d(x, 6, ceil_mode=True).stride()

    assert run(og) == run(torch)
