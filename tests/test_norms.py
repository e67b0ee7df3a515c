"""torch.norm, Tensor.norm, torch.linalg.vector_norm (with out=) and torch.linalg.matrix_norm
against torch: values, gradients and node names, the aten ops each call reaches, gradients at
a zero vector and at tied maxima, and errors. The spectral norms ('nuc', 2, -2) need an SVD
opgrad lacks: they are refused. torch's OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math

import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same, assert_same_error, dtype_name, vals

DATA = [[1.5, -2.0, 0.5, 3.0], [2.0, 0.25, -1.0, 4.0], [-0.5, 1.0, 2.5, -3.0]]
INF = math.inf


def _rounded(value):
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value if value is None else round(value, 9)


def _value_and_grad(call, data=DATA, dtype="float64"):
    """A scenario: ``call(lib, x)``'s values, dtype, node name and the gradient of its sum."""

    def scenario(lib):
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        y = call(lib, x)
        node = y.grad_fn.name() if y.grad_fn is not None else None
        grad = None
        if y.requires_grad:
            (grad,) = lib.autograd.grad(y.sum(), x, allow_unused=True)
        return _rounded(vals(y)), dtype_name(y.dtype), node, _rounded(vals(grad))

    return scenario


NORM_CALLS = [
    lambda lib, x: lib.norm(x),
    lambda lib, x: x.norm(),
    lambda lib, x: x.norm(3),
    lambda lib, x: x.norm(1, 1, True),
    lambda lib, x: lib.norm(x, None, 0),
    lambda lib, x: lib.norm(x, "fro", (0, 1)),
    lambda lib, x: lib.norm(x, INF, 1),
    lambda lib, x: lib.norm(x, -INF),
    lambda lib, x: lib.norm(x, 0, 1),
    lambda lib, x: lib.norm(x, 0.5, -1),
    lambda lib, x: lib.norm(x, 2, dtype=lib.float64),
    lambda lib, x: lib.norm(x.float(), "fro", 1, dtype=lib.float64),
]


@pytest.mark.parametrize("call", NORM_CALLS)
def test_norm_follows_torch(torch, call):
    assert_same(torch, _value_and_grad(call))


VECTOR_NORM_CALLS = [
    lambda lib, x: lib.linalg.vector_norm(x),
    lambda lib, x: lib.linalg.vector_norm(x, 2.5, (0, 1)),
    lambda lib, x: lib.linalg.vector_norm(x, 1, -1, True),
    lambda lib, x: lib.linalg.vector_norm(x, INF, 0),
    lambda lib, x: lib.linalg.vector_norm(x, -1.5, 1),
    lambda lib, x: lib.linalg.vector_norm(x.float(), dtype=lib.float64),
]


@pytest.mark.parametrize("call", VECTOR_NORM_CALLS)
def test_vector_norm_follows_torch(torch, call):
    assert_same(torch, _value_and_grad(call))


MATRIX_NORM_CALLS = [
    lambda lib, x: lib.linalg.matrix_norm(x),
    lambda lib, x: lib.linalg.matrix_norm(x, 1),
    lambda lib, x: lib.linalg.matrix_norm(x, -1),
    lambda lib, x: lib.linalg.matrix_norm(x, INF),
    lambda lib, x: lib.linalg.matrix_norm(x, -INF, keepdim=True),
    lambda lib, x: lib.linalg.matrix_norm(x, 1, (1, 0)),
    lambda lib, x: lib.linalg.matrix_norm(x, INF, (-1, 0), True),
    lambda lib, x: lib.linalg.matrix_norm(x.reshape(3, 2, 2), 1, (0, 2)),
    lambda lib, x: lib.linalg.matrix_norm(x.float(), 1, dtype=lib.float64),
    lambda lib, x: lib.linalg.matrix_norm(x, "fro", (1, 0), True),
]


@pytest.mark.parametrize("call", MATRIX_NORM_CALLS)
def test_matrix_norm_follows_torch(torch, call):
    assert_same(torch, _value_and_grad(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.norm(),
        lambda lib, x: lib.norm(x, 3, 1),
        lambda lib, x: lib.norm(x, "fro", 0, True),
        lambda lib, x: lib.norm(x, 2, 1, out=lib.empty(0, dtype=lib.float64)),
        lambda lib, x: lib.linalg.vector_norm(x, 2.5, (0, 1)),
        lambda lib, x: lib.linalg.matrix_norm(x),
        lambda lib, x: lib.linalg.matrix_norm(x, 1),
        lambda lib, x: lib.linalg.matrix_norm(x, -INF, keepdim=True),
        lambda lib, x: lib.linalg.matrix_norm(x, 1, (1, 0), dtype=lib.float64),
    ],
)
def test_calls_reach_torchs_aten_ops(torch, call):
    def scenario(lib):
        x = lib.tensor(DATA, dtype=lib.float64)
        return aten_log(lib, lambda: call(lib, x))

    assert_same(torch, scenario)


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, INF, -INF, 0, -2])
def test_gradient_of_the_norm_of_a_zero_vector(torch, ord):
    assert_same(torch, _value_and_grad(lambda lib, x: lib.linalg.vector_norm(x, ord), [0.0] * 4))


@pytest.mark.parametrize("ord", [INF, -INF])
def test_inf_norm_shares_the_gradient_among_ties(torch, ord):
    data = [[3.0, -3.0, 1.0], [-2.0, 0.5, 2.0]]
    assert_same(torch, _value_and_grad(lambda lib, x: lib.linalg.vector_norm(x, ord), data))
    assert_same(torch, _value_and_grad(lambda lib, x: lib.linalg.vector_norm(x, ord, 1), data))


@pytest.mark.parametrize("ord", [1, INF])
def test_matrix_norm_gradient_at_tied_columns(torch, ord):
    data = [[1.0, -1.0], [2.0, 2.0]]
    assert_same(torch, _value_and_grad(lambda lib, x: lib.linalg.matrix_norm(x, ord), data))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 0)])
@pytest.mark.parametrize("ord", [1, -1, INF, -INF, "fro"])
def test_matrix_norm_of_empty_matrices(torch, shape, ord):
    def scenario(lib):
        x = lib.zeros(shape, requires_grad=True)
        try:
            y = lib.linalg.matrix_norm(x, ord)
        except Exception as exc:  # noqa: BLE001 - the type and text are compared
            return type(exc).__name__, str(exc)
        return vals(y), y.grad_fn.name() if y.grad_fn is not None else None

    assert_same(torch, scenario)


def test_vector_norm_out_writes_into_out(torch):
    def scenario(lib):
        out = lib.empty(0)
        result = lib.linalg.vector_norm(lib.tensor(DATA), 2, 1, out=out)
        return result is out, _rounded(vals(out))

    assert_same(torch, scenario)


def test_matrix_norm_out_writes_into_out(torch):
    def scenario(lib):
        out = lib.empty(0)
        result = lib.linalg.matrix_norm(lib.tensor(DATA), 1, out=out)
        return result is out, _rounded(vals(out))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib: lib.norm(lib.ones(3, dtype=lib.long)), RuntimeError, "floating point"),
        (lambda lib: lib.norm(lib.ones(2, 3, 4), "fro", (0, 1, 2)), RuntimeError, "2-tuple"),
        (lambda lib: lib.norm(lib.ones(2, 3), "foo"), RuntimeError, "not supported"),
        (lambda lib: lib.norm(lib.ones(2, 3), "nuc", 1), RuntimeError, "2-tuple"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3)), RuntimeError, "at least 2 dim"),
        (
            lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4), 1, (1, -1)),
            RuntimeError,
            "must be different",
        ),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4), 1, (0,)), RuntimeError, "2-tuple"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4), 1, (0, 2)), IndexError, "out of range"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4), 3), RuntimeError, "Order 3 not"),
        (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4), "foo"), RuntimeError, "Order foo"),
        (
            lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.long), 1),
            RuntimeError,
            "floating point",
        ),
        (
            lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2).double(), dtype=lib.float32),
            RuntimeError,
            "without narrowing",
        ),
        (
            lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), 1, out=lib.empty(0).double()),
            RuntimeError,
            "expected out tensor dtype",
        ),
        (
            lambda lib: lib.linalg.vector_norm(lib.ones(3), out=lib.empty(0).double()),
            RuntimeError,
            "Expected out tensor to have dtype",
        ),
        (
            lambda lib: lib.linalg.vector_norm(lib.ones(3, requires_grad=True), out=lib.empty(0)),
            RuntimeError,
            "don't support automatic differentiation",
        ),
        (lambda lib: lib.linalg.vector_norm(lib.ones(3, 4), 2, (0, 0)), RuntimeError, "multiple"),
        (lambda lib: lib.linalg.matrix_norm(lib.zeros(3, 0), -1), IndexError, "non-zero size"),
    ],
)
def test_bad_inputs_raise_torchs_errors(torch, call, exc_type, phrase):
    assert_same_error(torch, call, exc_type, phrase)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4, dtype=lib.float64), "nuc"),
        lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4, dtype=lib.float64), 2),
        lambda lib: lib.linalg.matrix_norm(lib.ones(3, 4, dtype=lib.float64), -2.0),
        lambda lib: lib.norm(lib.ones(3, 4, dtype=lib.float64), "nuc"),
    ],
)
def test_spectral_norms_of_a_rank_one_matrix_match_torch(torch, call):
    """Their values, dtypes and nodes (test_svd.py has the rest)."""

    def scenario(lib):
        result = call(lib)
        return round(result.item(), 10), str(result.dtype).split(".")[-1]

    assert_same(torch, scenario)


# ---- dist and renorm -----------------------------------------------------------------------

OTHER = [0.5, 1.0, -1.0, 2.0]


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, INF, -INF])
def test_dist_follows_torch(torch, p):
    def scenario(lib):
        x = lib.tensor(DATA, dtype=lib.float64, requires_grad=True)
        other = lib.tensor(OTHER, dtype=lib.float64, requires_grad=True)
        y = lib.dist(x, other, p)
        grads = lib.autograd.grad(y, (x, other))
        saved = sorted(n for n in dir(y.grad_fn) if n.startswith("_saved"))
        return _rounded(vals(y)), y.grad_fn.name(), saved, [_rounded(vals(g)) for g in grads]

    assert_same(torch, scenario)


def test_dist_of_equal_tensors_has_a_zero_gradient(torch):
    assert_same(torch, _value_and_grad(lambda lib, x: lib.dist(x, x.detach()), [[1.0, 2.0]]))


def test_dist_promotes_its_inputs(torch):
    def scenario(lib):
        y = lib.dist(lib.ones(2), lib.tensor([3, 1]))
        z = lib.dist(lib.ones(2), lib.ones(2, dtype=lib.float64))
        return vals(y), dtype_name(y.dtype), dtype_name(z.dtype)

    assert_same(torch, scenario)


def test_dist_p0_gradient_fails_as_torchs(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([0.0, 2.0], requires_grad=True)
        return lib.autograd.grad(lib.dist(x, y, 0), (x, y))

    assert_same_error(torch, scenario, RuntimeError, "Expected a proper Tensor")


@pytest.mark.parametrize(
    "p, dim, maxnorm", [(2, 0, 3.0), (1, 1, 2.0), (3, -1, 1.0), (INF, 0, 2.5), (2, 0, 100.0)]
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_renorm_follows_torch(torch, p, dim, maxnorm, dtype):
    def call(lib, x):
        return lib.renorm(x, p, dim, maxnorm) ** 2

    assert_same(torch, _value_and_grad(call, dtype=dtype))


def test_renorm_saves_torchs_fields(torch):
    def scenario(lib):
        x = lib.tensor(DATA, requires_grad=True)
        node = lib.renorm(x, 2, 0, 1.0).grad_fn
        return node.name(), sorted(n for n in dir(node) if n.startswith("_saved"))

    assert_same(torch, scenario)


def test_renorm_in_place_and_out(torch):
    def scenario(lib):
        x = lib.tensor(DATA)
        returned = x.renorm_(2, 0, 1.0)
        out = lib.empty(0)
        written = lib.renorm(lib.tensor(DATA), 1, 1, 2.0, out=out)
        y = lib.tensor(DATA, requires_grad=True) * 1
        y.renorm_(2, 0, 1.0)
        return (
            returned is x,
            _rounded(vals(x)),
            written is out,
            _rounded(vals(out)),
            y.grad_fn.name(),
        )

    assert_same(torch, scenario)


def test_renorm_tangent_follows_torch(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor(DATA, dtype=lib.float64), lib.ones(3, 4).double())
            return _rounded(vals(fwAD.unpack_dual(lib.renorm(x, 2, 0, 2.0)).tangent))

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "call, exc_type, phrase",
    [
        (lambda lib: lib.dist(lib.ones(2), lib.ones(3)), RuntimeError, "must match the size"),
        (
            lambda lib: lib.dist(lib.ones(2, dtype=lib.long), lib.ones(2, dtype=lib.long)),
            RuntimeError,
            "floating point",
        ),
        (lambda lib: lib.renorm(lib.ones(3), 2, 0, 1), RuntimeError, "at least 2 dimensions"),
        (lambda lib: lib.renorm(lib.ones(3, 2), 0, 0, 1), RuntimeError, "non-positive-norm"),
        (lambda lib: lib.renorm(lib.ones(3, 2), 2, 0, -0.5), RuntimeError, "maxnorm to be >= 0"),
        (lambda lib: lib.renorm(lib.ones(3, 2), 2, 2, 1), IndexError, "out of range"),
        (
            lambda lib: lib.renorm(lib.ones(3, 2, dtype=lib.long), 2, 0, 1),
            RuntimeError,
            "floating point",
        ),
        (
            lambda lib: lib.renorm(lib.ones(3, 2), 2, 0, 1, out=lib.empty(0, dtype=lib.float64)),
            RuntimeError,
            "Expected out tensor to have dtype",
        ),
    ],
)
def test_dist_and_renorm_errors_as_torchs(torch, call, exc_type, phrase):
    assert_same_error(torch, call, exc_type, phrase)
