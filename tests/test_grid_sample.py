"""F.affine_grid (aten::affine_grid_generator) and F.grid_sample against torch: values (bit
for bit where torch's arithmetic is reproduced), gradients, second derivatives, tangents,
nodes and saved fields, the aten ops a dispatch mode sees, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opgrad as og
from norm_scenarios import assert_same_graph, assert_same_tangent
from torch_oracle import aten_log, assert_same_error

# ---- affine_grid ------------------------------------------------------------------------------

AFFINE_GRAPHS = {
    "2d": ([(2, 2, 3)], lambda F, lib, t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False)),
    "2d_align_corners": ([(2, 2, 3)], lambda F, lib, t: F.affine_grid(t, [2, 1, 5, 3], True)),
    "3d": ([(2, 3, 4)], lambda F, lib, t: F.affine_grid(t, [2, 3, 3, 4, 2], False)),
    "3d_align_corners": ([(1, 3, 4)], lambda F, lib, t: F.affine_grid(t, (1, 2, 2, 3, 5), True)),
}


@pytest.mark.parametrize("name", sorted(AFFINE_GRAPHS))
def test_affine_grid_graph_matches_torch(torch, name):
    specs, fn = AFFINE_GRAPHS[name]
    assert_same_graph(torch, fn, specs, (name,))


@pytest.mark.parametrize("name", sorted(AFFINE_GRAPHS))
def test_affine_grid_forward_mode_matches_torch(torch, name):
    specs, fn = AFFINE_GRAPHS[name]
    assert_same_tangent(torch, fn, specs, (name,))


def test_affine_grid_backward_is_a_differentiable_composite(torch):
    # no node of its own: the gradient's graph ends in the batched product's nodes
    def chain(lib):
        theta = lib.ones(2, 2, 3, dtype=lib.float64, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, [2, 1, 3, 4], align_corners=False)
        v = lib.ones(2, 3, 4, 2, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(grid, theta, v, create_graph=True)
        saved = {n: getattr(grid.grad_fn, n) for n in dir(grid.grad_fn) if n.startswith("_saved")}
        return type(grid.grad_fn).__name__, saved, type(g.grad_fn).__name__

    assert chain(og) == chain(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_values_are_bit_exact(torch, dtype, align_corners):
    rng = np.random.default_rng(8)
    for size in ([2, 3, 4, 5], [3, 1, 13, 17], [2, 1, 1, 7], [2, 3, 3, 4, 5], [1, 1, 9, 1, 31]):
        theta = rng.standard_normal((size[0], len(size) - 2, len(size) - 1)).astype(dtype)
        got = og.nn.functional.affine_grid(og.tensor(theta), size, align_corners)
        want = torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_affine_grid_generator_in_other_dtypes_matches_torch(torch, dtype):
    theta = np.random.default_rng(9).standard_normal((2, 2, 3)) * 3

    def run(lib):
        t = lib.tensor(theta).to(getattr(lib, dtype))
        grid = lib.affine_grid_generator(t, [2, 1, 4, 7], False)
        return str(grid.dtype).split(".")[1], grid.double().numpy()

    (gd, gv), (ed, ev) = run(og), run(torch)
    assert gd == ed
    np.testing.assert_allclose(gv, ev, rtol=1e-3, atol=1e-3)


def test_affine_grid_empty_batch_is_allowed(torch):
    def shape(lib):
        return tuple(lib.affine_grid_generator(lib.zeros(0, 2, 3), [0, 3, 2, 5], False).shape)

    assert shape(og) == shape(torch)


def _warnings(lib, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(lib.nn.functional, lib.zeros(2, 2, 3))
    return [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


@pytest.mark.parametrize(
    "call",
    [
        lambda F, t: F.affine_grid(t, [2, 3, 4, 5]),
        lambda F, t: F.affine_grid(t, [2, 3, 1, 5], True),
    ],
    ids=["align_corners_default", "unit_size_align_corners"],
)
def test_affine_grid_warns_at_the_caller_as_torch(torch, call):
    got, expected = _warnings(og, call), _warnings(torch, call)
    assert got == expected and len(got) == 1
    assert got[0][2] == __file__


def test_affine_grid_does_not_warn_with_align_corners_given(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        og.nn.functional.affine_grid(og.zeros(2, 2, 3), [2, 3, 4, 5], False)


AFFINE_ERRORS = [
    (
        "integer_theta",
        ValueError,
        "Expected theta to have floating point type",
        (2, 2, 3),
        "int64",
        [2, 3, 4, 5],
    ),
    (
        "theta_for_3d",
        ValueError,
        "Expected a batch of 2D affine matrices of shape Nx2x3",
        (2, 3, 4),
        "float32",
        [2, 3, 4, 5],
    ),
    (
        "theta_for_2d",
        ValueError,
        "Expected a batch of 3D affine matrices of shape Nx3x4",
        (2, 2, 3),
        "float32",
        [2, 3, 4, 5, 6],
    ),
    (
        "size_3d",
        NotImplementedError,
        "affine_grid only supports 4D and 5D sizes",
        (2, 2, 3),
        "float32",
        [2, 3, 4],
    ),
    (
        "zero_size",
        ValueError,
        "Expected non-zero, positive output size. Got [2, 3, 0, 5]",
        (2, 2, 3),
        "float32",
        [2, 3, 0, 5],
    ),
    (
        "batch_mismatch",
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor",
        (3, 2, 3),
        "float32",
        [2, 3, 4, 5],
    ),
]


@pytest.mark.parametrize(
    "name, exc, phrase, shape, dtype, size", AFFINE_ERRORS, ids=[e[0] for e in AFFINE_ERRORS]
)
def test_affine_grid_errors_match_torch(torch, name, exc, phrase, shape, dtype, size):
    def call(lib):
        theta = lib.zeros(shape, dtype=getattr(lib, dtype))
        return lib.nn.functional.affine_grid(theta, size, align_corners=True)

    assert_same_error(torch, call, exc, phrase)


def test_affine_grid_error_prints_size_objects_as_torch(torch):
    def call(lib):
        return lib.nn.functional.affine_grid(lib.zeros(2, 3, 4), lib.Size([2, 3, 4, 5]), False)

    assert_same_error(torch, call, ValueError, "Size([2, 3, 4]).")


GENERATOR_ERRORS = [
    (
        "size_rank",
        "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.",
        (2, 2, 3),
        [2, 3, 4],
    ),
    (
        "theta_columns",
        "first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3]",
        (2, 2, 3),
        [2, 3, 4, 5, 6],
    ),
    (
        "theta_rows",
        "shape '[2, 4, 5, 2]' is invalid for input of size 120",
        (2, 3, 3),
        [2, 3, 4, 5],
    ),
    ("theta_4d", "batch2 must be a 3D tensor", (2, 2, 3, 1), [2, 3, 4, 5]),
]


@pytest.mark.parametrize(
    "name, phrase, shape, size", GENERATOR_ERRORS, ids=[e[0] for e in GENERATOR_ERRORS]
)
def test_affine_grid_generator_errors_match_torch(torch, name, phrase, shape, size):
    assert_same_error(
        torch,
        lambda lib: lib.affine_grid_generator(lib.zeros(shape), size, False),
        RuntimeError,
        phrase,
    )


def test_affine_grid_generator_with_2d_theta_raises_index_error_as_torch(torch):
    assert_same_error(
        torch,
        lambda lib: lib.affine_grid_generator(lib.zeros(2, 3), [2, 3, 4, 5], False),
        IndexError,
        "Dimension out of range",
    )
