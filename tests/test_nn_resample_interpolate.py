"""opgrad.nn.functional.interpolate and the deprecated upsample functions against torch:
values (bit for bit where PyTorch's arithmetic is reproduced), gradients, second
derivatives, tangents, grad_fn chains, saved fields, the aten ops a dispatch mode sees,
memory formats, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent, make_inputs, run_graph
from torch_oracle import assert_same_error, aten_log, grad_fn_chain

GRAPHS = {
    "nearest1d_size": ([(2, 3, 5)], lambda F, lib, x: F.interpolate(x, size=7)),
    "nearest1d_scale": ([(2, 3, 5)], lambda F, lib, x: F.interpolate(x, scale_factor=2.5)),
    "nearest2d_scale": ([(2, 3, 5, 4)], lambda F, lib, x: F.interpolate(x, scale_factor=1.7)),
    "nearest3d": ([(1, 2, 3, 4, 3)], lambda F, lib, x: F.interpolate(x, size=(5, 3, 7))),
    "nearest_exact2d": (
        [(2, 3, 5, 4)],
        lambda F, lib, x: F.interpolate(x, size=(3, 9), mode="nearest-exact"),
    ),
    "nearest_exact3d_scale": (
        [(1, 2, 3, 4, 3)],
        lambda F, lib, x: F.interpolate(x, scale_factor=(1.5, 0.8, 2), mode="nearest-exact"),
    ),
    "linear": ([(2, 3, 5)], lambda F, lib, x: F.interpolate(x, size=9, mode="linear")),
    "linear_align_corners_scale": (
        [(2, 3, 5)],
        lambda F, lib, x: F.interpolate(x, scale_factor=1.7, mode="linear", align_corners=True),
    ),
    "bilinear_scale": (
        [(2, 3, 5, 4)],
        lambda F, lib, x: F.interpolate(x, scale_factor=(1.5, 2.3), mode="bilinear"),
    ),
    "bilinear_recompute": (
        [(2, 3, 5, 4)],
        lambda F, lib, x: F.interpolate(
            x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True
        ),
    ),
    "bilinear_down": ([(1, 2, 9, 8)], lambda F, lib, x: F.interpolate(x, (4, 3), mode="bilinear")),
    "trilinear": (
        [(1, 2, 3, 4, 3)],
        lambda F, lib, x: F.interpolate(x, size=(5, 3, 6), mode="trilinear", align_corners=True),
    ),
    "bicubic": ([(2, 2, 5, 4)], lambda F, lib, x: F.interpolate(x, size=(7, 9), mode="bicubic")),
    "bicubic_align_corners_down": (
        [(1, 2, 8, 9)],
        lambda F, lib, x: F.interpolate(x, scale_factor=0.6, mode="bicubic", align_corners=True),
    ),
    "area1d": ([(2, 3, 7)], lambda F, lib, x: F.interpolate(x, size=3, mode="area")),
    "area2d_scale": (
        [(2, 3, 7, 6)],
        lambda F, lib, x: F.interpolate(x, scale_factor=0.5, mode="area"),
    ),
}


def _quiet(fn):
    def run(F, lib, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(F, lib, x)

    return run


GRAPHS.update(
    {
        "upsample": ([(2, 3, 4, 4)], _quiet(lambda F, lib, x: F.upsample(x, 6, None, "bicubic"))),
        "upsample_nearest": ([(2, 3, 4, 4)], _quiet(lambda F, lib, x: F.upsample_nearest(x, 7))),
        "upsample_bilinear": (
            [(2, 3, 4, 4)],
            _quiet(lambda F, lib, x: F.upsample_bilinear(x, scale_factor=2)),
        ),
    }
)


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
        return [op for op in log if op not in ("aten.detach.default", "aten.add_.Tensor")]

    assert ops(og) == ops(torch)


def _saved(node):
    return {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.interpolate(x, scale_factor=(1.5, 2.0), mode="bilinear"),
        lambda F, x: F.interpolate(x, size=(3, 7), mode="bicubic", align_corners=True),
        lambda F, x: F.interpolate(x, scale_factor=2.5),
        lambda F, x: F.interpolate(x, size=6, mode="nearest-exact"),
    ],
    ids=["bilinear", "bicubic", "nearest", "nearest_exact"],
)
def test_saved_fields_and_double_backward_node_read_as_torch(torch, call):
    def nodes(lib):
        x = lib.ones(1, 2, 4, 3, dtype=lib.float64, requires_grad=True)
        y = call(lib.nn.functional, x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        return y.grad_fn, g.grad_fn

    for got, expected in zip(nodes(og), nodes(torch)):
        assert type(got).__name__ == type(expected).__name__
        assert _saved(got) == _saved(expected)


# ---- values bit for bit ---------------------------------------------------------------------

BIT_EXACT = [
    ("nearest", 1, {}),
    ("nearest", 2, {}),
    ("nearest", 3, {}),
    ("nearest-exact", 1, {}),
    ("nearest-exact", 2, {}),
    ("nearest-exact", 3, {}),
    ("linear", 1, {"align_corners": False}),
    ("linear", 1, {"align_corners": True}),
    ("trilinear", 3, {"align_corners": False}),
    ("bicubic", 2, {"align_corners": False}),
    ("bicubic", 2, {"align_corners": True}),
]


@pytest.mark.parametrize("mode, nd, extra", BIT_EXACT, ids=[f"{m}{n}d{e}" for m, n, e in BIT_EXACT])
def test_float32_forward_is_bit_exact(torch, mode, nd, extra):
    rng = np.random.default_rng(nd)
    for trial in range(12):
        shape = (2, 3) + tuple(int(v) for v in rng.integers(1, 9, nd))
        x = rng.standard_normal(shape).astype(np.float32)
        if trial % 2:
            kwargs = {"scale_factor": [float(v) for v in rng.uniform(0.5, 3.0, nd)]}
        else:
            kwargs = {"size": [int(v) for v in rng.integers(1, 14, nd)]}
        got = og.nn.functional.interpolate(og.tensor(x), mode=mode, **kwargs, **extra)
        want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kwargs, **extra)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_indices_match_torch_for_many_sizes(torch, mode):
    # the 1-d forward and the backward compute their source indices differently in torch
    for dtype in ("float32", "float64"):
        for n_in in range(1, 25):
            x = np.arange(n_in, dtype=dtype).reshape(1, 1, n_in)
            for n_out in range(1, 60):
                got = og.nn.functional.interpolate(og.tensor(x), size=n_out, mode=mode)
                want = torch.nn.functional.interpolate(torch.tensor(x), size=n_out, mode=mode)
                np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_backward_routes_gradient_as_torch(torch, mode):
    def grad(lib):
        x = lib.zeros(2, 1, 7, 3, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(15, 7), mode=mode)
        y.backward(lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape))
        return x.grad.numpy()

    np.testing.assert_allclose(grad(og), grad(torch), rtol=1e-13)


@pytest.mark.parametrize("dtype", ["float16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_reduced_float_inputs_match_torch(torch, dtype, mode):
    x = np.random.default_rng(4).standard_normal((2, 3, 5, 4))

    def run(lib):
        t = lib.tensor(x).to(getattr(lib, dtype))
        y = lib.nn.functional.interpolate(t, size=(7, 6), mode=mode)
        return str(y.dtype).split(".")[1], y.float().numpy()

    (gd, gv), (ed, ev) = run(og), run(torch)
    assert gd == ed
    np.testing.assert_allclose(gv, ev, rtol=1e-2, atol=1e-2)


def test_uint8_nearest_matches_torch(torch):
    x = np.random.default_rng(5).integers(0, 255, (1, 3, 5, 4)).astype(np.uint8)

    def run(lib):
        return lib.nn.functional.interpolate(lib.tensor(x), scale_factor=1.6).numpy()

    np.testing.assert_array_equal(run(og), run(torch))


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_channels_last_input_gives_channels_last_output(torch, mode):
    x = np.random.default_rng(6).standard_normal((2, 3, 5, 4))

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        c = t.contiguous(memory_format=lib.channels_last)
        y = lib.nn.functional.interpolate(c, size=(7, 6), mode=mode)
        y.backward(lib.ones_like(y))
        return y.stride(), y.detach().numpy(), t.grad.numpy()

    (gs, gv, gg), (es, ev, eg) = run(og), run(torch)
    assert gs == es
    np.testing.assert_allclose(gv, ev, rtol=1e-12)
    np.testing.assert_allclose(gg, eg, rtol=1e-12)


def test_empty_batch_is_allowed(torch):
    def run(lib):
        y = lib.nn.functional.interpolate(lib.zeros(0, 2, 3, 4), size=(5, 6), mode="bilinear")
        return tuple(y.shape)

    assert run(og) == run(torch)


# ---- warnings ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_functions_warn_at_the_caller(torch, name):
    def run(lib):
        x = lib.zeros(1, 1, 2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, name)(x, size=4)
        return [(w.category, str(w.message), w.filename) for w in caught]

    got, expected = run(og), run(torch)
    assert got == expected and len(got) == 1
    assert got[0][2] == __file__


def test_interpolate_does_not_warn(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        og.nn.functional.interpolate(og.zeros(1, 1, 2, 2), size=4, mode="bilinear")


# ---- errors --------------------------------------------------------------------------------

ERRORS = [
    (
        "no_size",
        ValueError,
        "either size or scale_factor should be defined",
        lambda F, x: F.interpolate(x),
    ),
    ("both", ValueError, "only one of size or scale_factor", lambda F, x: F.interpolate(x, 3, 2)),
    (
        "align_corners_nearest",
        ValueError,
        "align_corners option can only be set with the interpolating modes",
        lambda F, x: F.interpolate(x, 3, align_corners=True),
    ),
    (
        "align_corners_area",
        ValueError,
        "align_corners option can only be set",
        lambda F, x: F.interpolate(x, 3, mode="area", align_corners=False),
    ),
    (
        "recompute_with_size",
        ValueError,
        "recompute_scale_factor is not meaningful with an explicit size.",
        lambda F, x: F.interpolate(x, 3, recompute_scale_factor=True),
    ),
    (
        "antialias_nearest",
        ValueError,
        "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
        lambda F, x: F.interpolate(x, 3, antialias=True),
    ),
    (
        "size_length",
        ValueError,
        "Input and output must have the same number of spatial dimensions",
        lambda F, x: F.interpolate(x, (3, 3, 3)),
    ),
    (
        "scale_length",
        ValueError,
        "Input and scale_factor must have the same number of spatial dimensions",
        lambda F, x: F.interpolate(x, scale_factor=(3, 3, 3)),
    ),
    (
        "float_size",
        TypeError,
        "expected size to be one of int or Tuple[int]",
        lambda F, x: F.interpolate(x, (2.0, 3)),
    ),
    (
        "unknown_mode",
        NotImplementedError,
        "Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D)",
        lambda F, x: F.interpolate(x, 3, mode="foo"),
    ),
    (
        "linear_on_4d",
        NotImplementedError,
        "Got 4D input, but linear mode needs 3D input",
        lambda F, x: F.interpolate(x, 3, mode="linear"),
    ),
    (
        "rank_2",
        NotImplementedError,
        "Only 3D, 4D and 5D input Tensors supported (got 2D)",
        lambda F, x: F.interpolate(x[0, 0], 3),
    ),
    (
        "bicubic_on_5d",
        NotImplementedError,
        "(got 5D) for the modes",
        lambda F, x: F.interpolate(x[None], 3, mode="bicubic"),
    ),
    (
        "lanczos",
        ValueError,
        "Lanczos mode requires antialias=True",
        lambda F, x: F.interpolate(x, 3, mode="lanczos"),
    ),
    (
        "zero_size",
        RuntimeError,
        "Input and output sizes should be greater than 0, but got input (H: 4, W: 5) output (H: 0, W: 0)",
        lambda F, x: F.interpolate(x, 0),
    ),
    (
        "zero_scale",
        RuntimeError,
        "Input and output sizes should be greater than 0",
        lambda F, x: F.interpolate(x, scale_factor=0.1, mode="bilinear"),
    ),
]


@pytest.mark.parametrize("name, exc, phrase, call", ERRORS, ids=[e[0] for e in ERRORS])
def test_interpolate_errors_match_torch(torch, name, exc, phrase, call):
    assert_same_error(
        torch, lambda lib: call(lib.nn.functional, lib.zeros(2, 3, 4, 5)), exc, phrase
    )


def _aten(lib):
    return lib.ops.aten


OP_ERRORS = [
    (
        "output_size_length",
        RuntimeError,
        "It is expected output_size equals to 2, but got size 1",
        lambda A, lib: A.upsample_nearest2d(lib.zeros(2, 3, 4, 5), [3]),
    ),
    (
        "input_rank",
        RuntimeError,
        "It is expected input_size equals to 4, but got size 3",
        lambda A, lib: A.upsample_bilinear2d(lib.zeros(3, 4, 5), [3, 3], False),
    ),
    (
        "empty_channels",
        RuntimeError,
        "Non-empty 4D data tensor expected but got a tensor with sizes [2, 0, 4, 5]",
        lambda A, lib: A.upsample_nearest2d(lib.zeros(2, 0, 4, 5), [3, 3]),
    ),
    (
        "empty_width_1d",
        RuntimeError,
        "but got input (W: 0) and output (W: 3)",
        lambda A, lib: A.upsample_linear1d(lib.zeros(2, 3, 0), [3], False),
    ),
    (
        "zero_output_3d",
        RuntimeError,
        "input (D: 3, H: 4, W: 5) output (D: 0, H: 3, W: 3)",
        lambda A, lib: A.upsample_nearest3d(lib.zeros(1, 2, 3, 4, 5), [0, 3, 3]),
    ),
    (
        "int64_nearest2d",
        NotImplementedError,
        "\"upsample_nearest2d_channels_last\" not implemented for 'Long'",
        lambda A, lib: A.upsample_nearest2d(lib.zeros(2, 3, 4, 5, dtype=lib.int64), [3, 3]),
    ),
    (
        "bool_nearest1d",
        NotImplementedError,
        "\"compute_indices_weights_nearest\" not implemented for 'Bool'",
        lambda A, lib: A.upsample_nearest1d(lib.zeros(2, 3, 4, dtype=lib.bool), [3]),
    ),
    (
        "uint8_linear1d",
        NotImplementedError,
        "\"compute_indices_weights_linear\" not implemented for 'Byte'",
        lambda A, lib: A.upsample_linear1d(lib.zeros(2, 3, 4, dtype=lib.uint8), [3], False),
    ),
    (
        "int64_bicubic",
        NotImplementedError,
        "\"compute_indices_weights_cubic\" not implemented for 'Long'",
        lambda A, lib: A.upsample_bicubic2d(lib.zeros(2, 3, 4, 4, dtype=lib.int64), [3, 3], False),
    ),
    (
        "vec_neither",
        RuntimeError,
        "Must specify exactly one of output_size and scale_factors",
        lambda A, lib: A.upsample_nearest2d.vec(lib.zeros(2, 3, 4, 5), None, None),
    ),
    (
        "vec_both",
        RuntimeError,
        "Must specify exactly one of output_size and scale_factors",
        lambda A, lib: A.upsample_nearest2d.vec(lib.zeros(2, 3, 4, 5), [3, 3], [2.0, 2.0]),
    ),
    (
        "vec_scale_length",
        RuntimeError,
        "Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions",
        lambda A, lib: A.upsample_nearest2d.vec(lib.zeros(2, 3, 4, 5), None, [2.0]),
    ),
    (
        "vec_negative_scale",
        RuntimeError,
        "output (H: -8, W: 10)",
        lambda A, lib: A.upsample_nearest2d.vec(lib.zeros(2, 3, 4, 5), None, [-2.0, 2.0]),
    ),
    (
        "backward_grad_rank",
        RuntimeError,
        "Expected grad_output to be a tensor of dimension 4 but got: dimension 3",
        lambda A, lib: A.upsample_bilinear2d_backward(
            lib.zeros(2, 3, 3), [3, 3], [2, 3, 4, 5], False
        ),
    ),
    (
        "backward_grad_shape",
        RuntimeError,
        "Expected grad_output to have the same shape as output; output.size(3) = 3 but got grad_output.size(3) = 4",
        lambda A, lib: A.upsample_nearest2d_backward(lib.zeros(2, 3, 3, 4), [3, 3], [2, 3, 4, 5]),
    ),
    (
        "backward_1d_shape",
        RuntimeError,
        "Expected a tensor of dimension 3 and tensor.size[2] == 2 but got: dimension 3 and tensor.size[2] = 3",
        lambda A, lib: A.upsample_linear1d_backward(lib.zeros(1, 2, 3), [2], [1, 2, 3], False),
    ),
    (
        "backward_int",
        NotImplementedError,
        "\"upsample_nearest2d_backward\" not implemented for 'Long'",
        lambda A, lib: A.upsample_nearest2d_backward(
            lib.zeros(1, 2, 2, 2, dtype=lib.int64), [2, 2], [1, 2, 3, 3]
        ),
    ),
]


@pytest.mark.parametrize("name, exc, phrase, call", OP_ERRORS, ids=[e[0] for e in OP_ERRORS])
def test_aten_op_errors_match_torch(torch, name, exc, phrase, call):
    assert_same_error(torch, lambda lib: call(_aten(lib), lib), exc, phrase)
