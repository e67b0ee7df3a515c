"""The softmax family of opgrad.nn.functional against torch: edge values, dtypes,
errors and the implicit-dim deprecation warning (OpInfo samples: test_opinfo.py)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import opgrad as og
import opgrad.nn.functional as F
from torch_oracle import assert_same, assert_same_error, assert_same_tensor, result_scenario

INF, NAN = float("inf"), float("nan")


def test_import_opgrad_does_not_import_nn():
    code = "import sys, opgrad; print('opgrad.nn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_nn_functional_is_reachable_as_an_attribute():
    assert og.nn.functional is F


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize(
    "values",
    [
        [[1.0, 2.0, 3.0], [-INF, 0.0, 1.0]],
        [[-INF, -INF, -INF], [INF, 1.0, 2.0]],
        [[NAN, 1.0, 2.0], [1e308, -1e308, 0.0]],
    ],
    ids=["minus_inf", "all_minus_inf_and_inf", "nan_and_huge"],
)
def test_edge_values_match_torch(torch, name, values):
    def run(L):
        return getattr(L.nn.functional, name)(L.tensor(values, dtype=L.float64), dim=1)

    assert_same_tensor(run(og), run(torch))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((), 0), ((), -1), ((0, 3), 0), ((2, 0), 1), ((0,), 0)])
def test_zero_dim_and_empty_inputs_match_torch(torch, name, shape, dim):
    data = np.arange(float(np.prod(shape))).reshape(shape) * 0.5
    assert_same(torch, result_scenario(lambda L, T: getattr(L, name)(L.tensor(data), dim)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((3, 5), 1), ((5, 33), 1), ((4, 7), 0), ((2, 3, 9), 1)])
def test_float16_matches_torch(torch, name, shape, dim):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float16) * 3
    got = getattr(og.tensor(data), name)(dim)
    expected = getattr(torch.tensor(data), name)(dim)
    assert_same_tensor(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_integer_input_is_refused_with_the_kernel_name(torch, name, dim):
    assert_same_error(
        torch,
        lambda L: getattr(L, name)(L.tensor([[1, 2], [3, 4]]), dim),
        NotImplementedError,
        "not implemented for 'Long'",
    )


@pytest.mark.parametrize("name", ["_softmax", "_log_softmax"])
def test_half_to_float_is_refused_on_cpu(torch, name):
    assert_same_error(
        torch,
        lambda L: getattr(L, name)(L.ones(2, 3, dtype=L.half), 1, True),
        RuntimeError,
        "softmax with half to float conversion is not supported on CPU",
    )


def test_dim_out_of_range(torch):
    assert_same_error(
        torch, lambda L: L.ones(2, 3).softmax(2), IndexError, "Dimension out of range"
    )


def test_dtype_argument_casts_before_the_softmax(torch):
    def scenario(L):
        x = L.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
        y = L.nn.functional.log_softmax(x, 1, dtype=L.float64)
        return str(y.dtype).split(".")[1], type(y.grad_fn.next_functions[0][0]).__name__

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("ndim, dim", [(0, 0), (1, 0), (2, 1), (3, 0), (4, 1)])
def test_implicit_dim_warns_and_picks_torch_dim(torch, name, ndim, dim):
    def scenario(L):
        x = L.ones([2] * ndim)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(L.nn.functional, name)(x)
        (w,) = caught
        return str(w.message), w.category.__name__, y.tolist()

    got, expected = scenario(og), scenario(torch)
    assert got == expected
    assert got[2] == getattr(torch.nn.functional, name)(torch.ones([2] * ndim), dim).tolist()


def test_implicit_dim_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.softmax(og.ones(2, 3))
        line = sys._getframe().f_lineno - 1
    assert caught[0].filename == __file__ and caught[0].lineno == line


def test_torch_function_mode_sees_the_nn_function(torch):
    def scenario(L):
        seen = []

        class Mode(L.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        with Mode():
            L.nn.functional.softmax(L.ones(2, 3), dim=1)
        return seen

    assert_same(torch, scenario)


# ---- logsumexp --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[INF, 1.0], [-INF, -INF], [NAN, 1.0], [1e308, 1e308], [-INF, 0.0]],
    ids=["inf", "all_minus_inf", "nan", "huge", "one_minus_inf"],
)
def test_logsumexp_edge_values_match_torch(torch, values):
    def run(L):
        return L.logsumexp(L.tensor(values, dtype=L.float64), 0)

    assert_same_tensor(run(og), run(torch))


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.logsumexp(L.tensor([[1, 2], [3, 4]]), 1),
        lambda L: L.logsumexp(L.tensor([True, False]), 0),
        lambda L: L.logsumexp(L.tensor(2.0), 0),
        lambda L: L.logsumexp(L.ones(0, 3), 0),
        lambda L: L.logsumexp(L.ones(0, 3), 1),
        lambda L: L.logsumexp(L.ones(2, 3, dtype=L.half), 1),
        lambda L: L.ones(2, 3).logsumexp((0, 1), keepdim=True),
    ],
    ids=["int", "bool", "zero_dim", "empty_reduced", "empty_kept", "float16", "two_dims"],
)
def test_logsumexp_dtypes_and_shapes_match_torch(torch, call):
    assert_same(torch, result_scenario(lambda L, T: call(L)))


def test_logsumexp_repeated_dim_is_refused(torch):
    assert_same_error(
        torch,
        lambda L: L.logsumexp(L.ones(2, 3), (0, 0)),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    )


def test_method_with_positional_keepdim_is_not_read_as_a_dim_list(torch):
    assert_same(torch, result_scenario(lambda L, T: T([[1.0, 2.0], [3.0, 4.0]]).sum(1, True)))


# ---- exponential_ and gumbel_softmax: torch's random stream -----------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("shape", [(5,), (40, 37)])
def test_exponential_draws_torch_values_for_a_seed(torch, dtype, shape):
    def draw(L):
        L.manual_seed(7)
        return L.empty(shape, dtype=getattr(L, dtype)).exponential_(1.5)

    assert_same_tensor(draw(og), draw(torch), rtol=0, atol=0)


def test_exponential_fills_a_transposed_tensor_in_memory_order(torch):
    def draw(L):
        L.manual_seed(0)
        return L.zeros(2, 3).t().exponential_()

    assert_same_tensor(draw(og), draw(torch), rtol=0, atol=0)


def test_exponential_uses_a_given_generator(torch):
    def draw(L):
        gen = L.Generator().manual_seed(3)
        return L.zeros(4, dtype=L.float64).exponential_(generator=gen)

    assert_same_tensor(draw(og), draw(torch), rtol=0, atol=0)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda L: L.zeros(3, dtype=L.int64).exponential_(), RuntimeError, "continuous"),
        (lambda L: L.zeros(3).exponential_(-1.0), RuntimeError, "expects lambda > 0.0"),
        (lambda L: L.zeros(3).exponential_(0.0), RuntimeError, "expects lambda > 0.0"),
    ],
    ids=["integer", "negative", "zero"],
)
def test_exponential_refuses_bad_input(torch, call, exc, phrase):
    assert_same_error(torch, call, exc, phrase)


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_draws_torch_sample_and_graph(torch, hard, dim):
    data = np.random.default_rng(1).standard_normal((3, 5))

    def run(L):
        L.manual_seed(5)
        x = L.tensor(data, requires_grad=True)
        y = L.nn.functional.gumbel_softmax(x, tau=0.5, hard=hard, dim=dim)
        (g,) = L.autograd.grad((y * y).sum(), x)
        chain = [type(y.grad_fn).__name__]
        chain += [type(n).__name__ for n, _ in y.grad_fn.next_functions]
        return y, g, chain

    (y, g, chain), (ty, tg, tchain) = run(og), run(torch)
    assert_same_tensor(y, ty)
    assert_same_tensor(g, tg)
    assert chain == tchain


def test_gumbel_softmax_eps_warns_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.gumbel_softmax(og.ones(2, 3), eps=1e-3)
        line = sys._getframe().f_lineno - 1
    assert str(caught[0].message) == "`eps` parameter is deprecated and has no effect."
    assert caught[0].filename == __file__ and caught[0].lineno == line
