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


# ---- grid_sample ----------------------------------------------------------------------------------

MODES_2D = [
    (mode, padding, align)
    for mode in ("bilinear", "nearest", "bicubic")
    for padding in ("zeros", "border", "reflection")
    for align in (False, True)
]
MODES_3D = [m for m in MODES_2D if m[0] != "bicubic"]


def _grid_inputs(lib, nd: int, key):
    rng = np.random.default_rng(key)
    x = rng.standard_normal([2, 3] + [4, 5, 3][:nd])
    grid = rng.uniform(-1.3, 1.3, [2] + [3, 2, 4][:nd] + [nd])
    return lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)


def _sample_and_grads(lib, nd, mode, padding, align):
    x, grid = _grid_inputs(lib, nd, 11)
    y = lib.nn.functional.grid_sample(x, grid, mode, padding, align)
    gout = lib.tensor(np.random.default_rng(12).standard_normal(tuple(y.shape)))
    gx, gg = lib.autograd.grad(y, (x, grid), gout)
    return type(y.grad_fn).__name__, y.detach().numpy(), gx.numpy(), gg.numpy()


@pytest.mark.parametrize(
    "nd, mode, padding, align",
    [(2, *m) for m in MODES_2D] + [(3, *m) for m in MODES_3D],
    ids=[f"{nd}d-{m}-{p}-{a}" for nd, ms in ((2, MODES_2D), (3, MODES_3D)) for m, p, a in ms],
)
def test_grid_sample_values_and_gradients_match_torch(torch, nd, mode, padding, align):
    got = _sample_and_grads(og, nd, mode, padding, align)
    expected = _sample_and_grads(torch, nd, mode, padding, align)
    assert got[0] == expected[0]
    for g, e in zip(got[1:], expected[1:]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_nodes_and_saved_fields_read_as_torch(torch, nd):
    def nodes(lib):
        x, grid = _grid_inputs(lib, nd, 13)
        y = lib.nn.functional.grid_sample(x, grid, "nearest", "border", True)
        gx, _ = lib.autograd.grad(y.sum(), (x, grid), create_graph=True)
        return y.grad_fn, gx.grad_fn

    def scalars(node):
        names = [n for n in dir(node) if n.startswith("_saved_")]
        fields = {n: getattr(node, n) for n in names}
        return type(node).__name__, {
            n: (tuple(v.shape) if hasattr(v, "shape") else v) for n, v in fields.items()
        }

    for got, expected in zip(nodes(og), nodes(torch)):
        assert scalars(got) == scalars(expected)


def _second_derivatives(lib, nd, mode, padding, align, which):
    """Gradients of (grad_output, input, grid) of a weighted sum of grid_sample's gradients,
    grad_input's (``which`` has "I"), grad_grid's ("G") or both; None where undefined."""
    x, grid = _grid_inputs(lib, nd, 15)
    y = lib.nn.functional.grid_sample(x, grid, mode, padding, align)
    rng = np.random.default_rng(16)
    gout = lib.tensor(rng.standard_normal(tuple(y.shape)), requires_grad=True)
    gx, gg = lib.autograd.grad(y, (x, grid), gout, create_graph=True)
    loss = 0
    if "I" in which:
        loss = loss + (gx * lib.tensor(rng.standard_normal(tuple(gx.shape)))).sum()
    if "G" in which:
        loss = loss + (gg * lib.tensor(rng.standard_normal(tuple(gg.shape)))).sum()
    extra = {"materialize_grads": False} if lib is not og else {}
    grads = lib.autograd.grad(loss, (gout, x, grid), allow_unused=True, **extra)
    return [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("which", ["I", "G", "IG"])
@pytest.mark.parametrize(
    "nd, mode, padding, align",
    [(2, *m) for m in MODES_2D] + [(3, *m) for m in MODES_3D],
    ids=[f"{nd}d-{m}-{p}-{a}" for nd, ms in ((2, MODES_2D), (3, MODES_3D)) for m, p, a in ms],
)
def test_grid_sample_second_derivative_matches_torch(torch, nd, mode, padding, align, which):
    # the undefined ones too: a nearest sampling's grad_grid has no derivative at all
    got = _second_derivatives(og, nd, mode, padding, align, which)
    expected = _second_derivatives(torch, nd, mode, padding, align, which)
    assert [g is None for g in got] == [e is None for e in expected]
    for g, e in zip(got, expected):
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-12)


def test_grid_sample_grad_input_derivative_stays_differentiable(torch):
    # what grad_input's gradient feeds runs through aten ops: a third derivative exists
    def third(lib):
        x, grid = _grid_inputs(lib, 2, 17)
        y = lib.nn.functional.grid_sample(x, grid, "bicubic", "zeros", False)
        gx, _ = lib.autograd.grad((y * y).sum(), (x, grid), create_graph=True)
        (gg,) = lib.autograd.grad((gx * gx).sum(), (grid,), create_graph=True)
        return lib.autograd.grad((gg * gg).sum(), (x,))[0].numpy()

    np.testing.assert_allclose(third(og), third(torch), rtol=1e-10, atol=1e-11)


def test_grid_sample_third_derivative_through_grad_grid_is_refused():
    # torch builds that graph; opgrad's numpy part has none and says so instead
    x, grid = _grid_inputs(og, 2, 18)
    y = og.nn.functional.grid_sample(x, grid, align_corners=False)
    _, gg = og.autograd.grad((y * y).sum(), (x, grid), create_graph=True)
    with pytest.raises(NotImplementedError, match="third derivative"):
        og.autograd.grad((gg * gg).sum(), (x, grid), create_graph=True)
    # without create_graph the same second derivative is computed
    assert og.autograd.grad((gg * gg).sum(), (x, grid))[1].shape == grid.shape


def test_grid_sample_gradgradcheck():
    x, grid = _grid_inputs(og, 2, 19)

    def sample(x, grid):
        return og.nn.functional.grid_sample(x, grid, "bicubic", "reflection", True)

    assert og.autograd.gradgradcheck(sample, (x, grid))


def test_grid_sample_forward_ad_is_refused_as_torch(torch):
    def call(lib):
        fw = lib.autograd.forward_ad
        x, grid = _grid_inputs(lib, 2, 15)
        with fw.dual_level():
            dual = fw.make_dual(x.detach(), lib.ones_like(x))
            return lib.nn.functional.grid_sample(dual, grid.detach(), align_corners=False)

    expected = pytest.raises(NotImplementedError, call, torch)
    with pytest.raises(NotImplementedError, match="grid_sampler_2d that does not support it"):
        call(og)
    assert "grid_sampler_2d that does not support it" in str(expected.value)


def test_grid_sample_output_mask_leaves_unwanted_gradient_undefined(torch):
    def run(lib):
        x, grid = _grid_inputs(lib, 2, 16)
        gout = lib.ones(2, 3, 3, 2, dtype=lib.float64)
        gi, gg = lib.ops.aten.grid_sampler_2d_backward(gout, x, grid, 0, 0, False, [False, True])
        return gi is None, gg.detach().numpy()

    (gnone, gv), (enone, ev) = run(og), run(torch)
    assert gnone and enone
    np.testing.assert_allclose(gv, ev, rtol=1e-12)


def test_grid_sample_dispatch_mode_sees_torch_ops(torch):
    def ops(lib):
        x, grid = _grid_inputs(lib, 2, 17)
        F = lib.nn.functional
        log = aten_log(lib, lambda: F.grid_sample(x, grid, align_corners=True).sum().backward())
        return [op for op in log if op not in ("aten.detach.default", "aten.add_.Tensor")]

    assert ops(og) == ops(torch)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_grid_sample_reduced_precision_matches_torch(torch, dtype):
    def run(lib):
        x, grid = _grid_inputs(lib, 2, 18)
        dt = getattr(lib, dtype)
        y = lib.nn.functional.grid_sample(
            x.detach().to(dt), grid.detach().to(dt), "bicubic", align_corners=False
        )
        return str(y.dtype).split(".")[1], y.double().numpy()

    (gd, gv), (ed, ev) = run(og), run(torch)
    assert gd == ed
    tol = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(gv, ev, rtol=tol, atol=tol)


def test_grid_sample_empty_batch_and_channels_are_allowed(torch):
    def shapes(lib):
        F = lib.nn.functional
        a = F.grid_sample(lib.zeros(0, 2, 3, 3), lib.zeros(0, 2, 2, 2), align_corners=False)
        b = F.grid_sample(lib.zeros(1, 0, 3, 3), lib.zeros(1, 2, 2, 2), align_corners=False)
        return tuple(a.shape), tuple(b.shape)

    assert shapes(og) == shapes(torch)


def test_grid_sample_warns_without_align_corners_as_torch(torch):
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2))
        return [(w.category, str(w.message), w.filename, w.lineno) for w in caught]

    got, expected = run(og), run(torch)
    assert got == expected and len(got) == 1 and got[0][2] == __file__


GRID_ERRORS = [
    (
        "mode",
        ValueError,
        "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'x'",
        (1, 1, 3, 3),
        (1, 2, 2, 2),
        {"mode": "x"},
    ),
    (
        "padding_mode",
        ValueError,
        "expected padding_mode to be 'zeros', 'border', or 'reflection'",
        (1, 1, 3, 3),
        (1, 2, 2, 2),
        {"padding_mode": "x"},
    ),
    (
        "last_dim",
        RuntimeError,
        "expected grid to have size 2 in last dimension",
        (1, 1, 3, 3),
        (1, 2, 2, 1),
        {},
    ),
    (
        "batch",
        RuntimeError,
        "expected grid and input to have same batch size",
        (1, 1, 3, 3),
        (2, 2, 2, 2),
        {},
    ),
    (
        "unbatched",
        RuntimeError,
        "expected grid and input to have same batch size",
        (1, 3, 3),
        (2, 2, 2),
        {},
    ),
    (
        "grid_rank",
        RuntimeError,
        "expected grid to have size 3 in last dimension",
        (1, 1, 3, 3, 3),
        (1, 2, 2, 2),
        {},
    ),
    (
        "bicubic_3d",
        RuntimeError,
        "bicubic interpolation only supports 4D input",
        (1, 1, 3, 3, 3),
        (1, 2, 2, 2, 3),
        {"mode": "bicubic"},
    ),
    ("empty_spatial", RuntimeError, "with dimension 2 being empty", (1, 1, 0, 3), (1, 2, 2, 2), {}),
]


@pytest.mark.parametrize(
    "name, exc, phrase, xshape, gshape, kwargs", GRID_ERRORS, ids=[e[0] for e in GRID_ERRORS]
)
def test_grid_sample_errors_match_torch(torch, name, exc, phrase, xshape, gshape, kwargs):
    def call(lib):
        F = lib.nn.functional
        return F.grid_sample(lib.zeros(xshape), lib.zeros(gshape), align_corners=False, **kwargs)

    assert_same_error(torch, call, exc, phrase)


@pytest.mark.parametrize("case", ["dtype_mismatch", "integer"])
def test_grid_sample_dtype_errors_match_torch(torch, case):
    def call(lib):
        x = lib.zeros(1, 1, 3, 3, dtype=lib.float64 if case == "dtype_mismatch" else lib.int64)
        grid = lib.zeros(1, 2, 2, 2, dtype=lib.float32 if case == "dtype_mismatch" else lib.int64)
        return lib.nn.functional.grid_sample(x, grid, align_corners=False)

    exc = RuntimeError if case == "dtype_mismatch" else NotImplementedError
    phrase = "expected scalar type Double but found Float" if exc is RuntimeError else "'Long'"
    assert_same_error(torch, call, exc, phrase)
