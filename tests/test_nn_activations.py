"""The activations of opgrad.nn.functional against torch: dtypes, edge values, in-place
forms, errors and the backward ops' own behaviour (OpInfo samples: test_opinfo.py; graph
and derivatives on ordinary inputs: test_ops_vs_torch.py)."""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
import opgrad.nn.functional as F
from torch_oracle import aten_log, assert_same, assert_same_error, assert_same_tensor, outcome

INF, NAN = float("inf"), float("nan")

# name -> a call on a tensor (F is the library's nn.functional)
ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "relu6": lambda F, x: F.relu6(x),
    "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.3),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x),
    "softplus": lambda F, x: F.softplus(x, 2, 3),
    "softsign": lambda F, x: F.softsign(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -2.0, 1.5),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "softshrink": lambda F, x: F.softshrink(x, 1.0),
    "hardshrink": lambda F, x: F.hardshrink(x, 1.0),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "glu": lambda F, x: F.glu(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
}
EDGE = [-INF, -50.0, -3.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 25.0, INF, NAN]


def run(lib, name, data):
    return ACTIVATIONS[name](lib.nn.functional, lib.tensor(data))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_edge_values_match_torch(torch, name):
    data = np.array(EDGE + EDGE[::-1], dtype=np.float64).reshape(2, -1)
    assert_same_tensor(run(og, name, data), run(torch, name, data), rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reduced_precision_matches_torch(torch, name, dtype):
    data = (np.random.default_rng(3).standard_normal((4, 6)) * 3).astype(dtype)
    got, expected = run(og, name, data), run(torch, name, data)
    ulp = float(np.finfo(dtype).eps)
    assert_same_tensor(got, expected, rtol=2 * ulp, atol=2 * ulp)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("values", [[[-1, 2], [3, -4]], [[True, False], [False, True]]])
def test_integer_and_bool_inputs_match_torch(torch, name, values):
    def scenario(lib):
        kind, value = outcome(lambda: ACTIVATIONS[name](lib.nn.functional, lib.tensor(values)))
        if kind == "ok":
            return kind, np.round(value.tolist(), 6).tolist(), str(value.dtype).split(".")[1]
        return kind, value

    assert_same(torch, scenario)


INPLACE = {
    "relu": lambda F, x: F.relu(x, inplace=True),
    "relu_": lambda F, x: F.relu_(x),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "elu": lambda F, x: F.elu(x, 0.7, inplace=True),
    "elu_": lambda F, x: F.elu_(x, 0.7),
    "selu": lambda F, x: F.selu(x, inplace=True),
    "selu_": lambda F, x: F.selu_(x),
    "celu": lambda F, x: F.celu(x, 0.3, inplace=True),
    "celu_": lambda F, x: F.celu_(x, 0.3),
    "silu": lambda F, x: F.silu(x, inplace=True),
    "mish": lambda F, x: F.mish(x, inplace=True),
    "hardtanh": lambda F, x: F.hardtanh(x, inplace=True),
    "hardtanh_": lambda F, x: F.hardtanh_(x, -0.5, 0.5),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "leaky_relu_": lambda F, x: F.leaky_relu_(x, 0.2),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0, inplace=True),
    "threshold_": lambda F, x: F.threshold_(x, 0.5, -2.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_form_writes_its_input_as_torch(torch, name):
    data = np.linspace(-4, 4, 12).reshape(3, 4)

    def scenario(lib):
        leaf = lib.tensor(data, requires_grad=True)
        x = leaf * 1
        y = INPLACE[name](lib.nn.functional, x)
        (g,) = lib.autograd.grad((y * y).sum(), leaf)
        return (y is x, x._version, type(y.grad_fn).__name__), y, g

    (got, y, g), (expected, ty, tg) = scenario(og), scenario(torch)
    assert got == expected
    assert_same_tensor(y, ty, rtol=1e-15, atol=0)
    assert_same_tensor(g, tg, rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", ["relu", "elu", "hardtanh", "leaky_relu", "threshold"])
def test_inplace_on_a_leaf_requiring_grad_is_refused(torch, name):
    assert_same_error(
        torch,
        lambda lib: INPLACE[name](lib.nn.functional, lib.ones(3, requires_grad=True)),
        RuntimeError,
        "a leaf Variable that requires grad is being used in an in-place operation.",
    )


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (lambda F, x: F.gelu(x, approximate="foo"), RuntimeError, "must be either none or tanh"),
        (lambda F, x: F.glu(x[:3]), RuntimeError, "Halving dimension must be even"),
        (lambda F, x: F.glu(x[0]), RuntimeError, "glu does not support scalars"),
        (lambda F, x: F.celu(x, 0.0), RuntimeError, "alpha cannot be 0 for CELU"),
        (lambda F, x: F.softshrink(x, -1.0), RuntimeError, "lambda must be in range"),
        (lambda F, x: F.hardtanh(x, 2.0, 1.0), ValueError, "min_val cannot be greater"),
        (
            lambda F, x: F.elu(x * 1, -1.0, inplace=True).sum().backward(),
            RuntimeError,
            "In-place elu backward calculation is triggered with a negative slope",
        ),
        (
            lambda F, x: F.leaky_relu(x * 1, -1.0, inplace=True).sum().backward(),
            RuntimeError,
            "In-place leakyReLu backward calculation is triggered with a negative slope",
        ),
    ],
    ids=[
        "gelu_approximate",
        "glu_odd",
        "glu_scalar",
        "celu_zero_alpha",
        "softshrink_negative",
        "hardtanh_bounds",
        "elu_inplace_negative_alpha",
        "leaky_relu_inplace_negative_slope",
    ],
)
def test_bad_arguments_are_refused_as_torch(torch, call, exc, phrase):
    assert_same_error(
        torch,
        lambda lib: call(lib.nn.functional, lib.tensor([-1.0, 0.5, 2.0, 3.0], requires_grad=True)),
        exc,
        phrase,
    )


@pytest.mark.parametrize("name", ["silu", "mish"])
def test_first_order_backward_uses_the_backward_kernel(torch, name):
    """Without create_graph the node calls aten.<name>_backward, as PyTorch's does."""

    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.nn.functional, name)(x)
        log = aten_log(lib, lambda: y.sum().backward())
        return [op for op in log if "backward" in op], x.grad

    (log, grad), (torch_log, torch_grad) = scenario(og), scenario(torch)
    assert log == torch_log
    assert_same_tensor(grad, torch_grad, rtol=1e-15, atol=0)


def test_hardsigmoid_backward_has_no_derivative(torch):
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        kind, text = outcome(lambda: lib.autograd.grad(g.sum(), x))
        return type(g.grad_fn).__name__, g.grad_fn.name().split("::")[-1], kind, text

    assert_same(torch, scenario)


def test_threshold_is_named_as_torch_names_it(torch):
    assert F.threshold.__name__ == torch.nn.functional.threshold.__name__ == "_threshold"


def test_bindings_take_input_by_keyword(torch):
    def scenario(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64)
        F = lib.nn.functional
        results = [
            F.gelu(input=x),
            F.softplus(input=x, beta=2),
            F.softshrink(input=x, lambd=0.6),
            F.elu_(input=x.clone()),
            F.hardtanh_(input=x.clone()),
            F.leaky_relu_(input=x.clone()),
        ]
        return np.round([r.tolist() for r in results], 12).tolist()

    assert_same(torch, scenario)


def test_torch_namespace_functions_are_the_nn_functional_ones():
    for name in ("relu_", "selu_", "celu_", "threshold_", "hardshrink"):
        assert getattr(F, name) is getattr(og, name), name


def test_threshold_converts_numbers_to_an_integer_tensor_type(torch):
    assert_same(
        torch,
        lambda lib: lib.nn.functional.threshold(lib.tensor([-2, -1, 0, 1, 2]), -1.5, 0.5).tolist(),
    )


# ---- rrelu: torch's random slopes ---------------------------------------------------------

RRELU_DATA = np.array([[-2.0, 0.5, -0.0, 3.0], [NAN, -1.0, 0.0, -INF]])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True], ids=["out_of_place", "inplace"])
def test_rrelu_training_draws_torch_slopes(torch, dtype, inplace):
    def run(lib):
        lib.manual_seed(11)
        x = lib.tensor(RRELU_DATA, dtype=getattr(lib, dtype), requires_grad=True) * 1
        y = lib.nn.functional.rrelu(x, 0.1, 0.6, training=True, inplace=inplace)
        return y, y.grad_fn._saved_noise, type(y.grad_fn).__name__

    (y, noise, node), (ty, tnoise, tnode) = run(og), run(torch)
    assert node == tnode
    assert_same_tensor(y, ty, rtol=0, atol=0)
    assert_same_tensor(noise, tnoise, rtol=0, atol=0)


def test_rrelu_training_gradient_is_the_noise(torch):
    def run(lib):
        lib.manual_seed(2)
        x = lib.tensor(np.linspace(-2, 2, 8), requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.rrelu(x, training=True).sum(), x)
        return g

    assert_same_tensor(run(og), run(torch), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_rrelu_eval_uses_the_mean_slope_and_draws_nothing(torch, dtype):
    def run(lib):
        lib.manual_seed(5)
        y = lib.nn.functional.rrelu(lib.tensor(RRELU_DATA, dtype=getattr(lib, dtype)), 0.2, 0.7)
        return y, lib.rand(3)

    (y, after), (ty, tafter) = run(og), run(torch)
    assert_same_tensor(y, ty, rtol=1e-15, atol=0)
    assert_same_tensor(after, tafter, rtol=0, atol=0)


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (
            lambda L: L.nn.functional.rrelu(L.ones(3), 0.5, 0.1),
            RuntimeError,
            "Lower bound should be less than or equal to the upper bound",
        ),
        (
            lambda L: L.ops.aten.rrelu_with_noise(L.ones(3), L.zeros(3, requires_grad=True)),
            RuntimeError,
            "is not differentiable with respect to argument 'noise'",
        ),
        (
            lambda L: L.nn.functional.rrelu(L.ones(3, dtype=L.half), training=True),
            NotImplementedError,
            "\"rrelu_with_noise_out_cpu\" not implemented for 'Half'",
        ),
    ],
    ids=["bounds", "noise_requires_grad", "float16_training"],
)
def test_rrelu_refuses_bad_arguments(torch, call, exc, phrase):
    assert_same_error(torch, call, exc, phrase)


def test_rrelu_inplace_has_no_forward_ad(torch):
    def scenario(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.ones(3), lib.ones(3))
            return outcome(lambda: lib.nn.functional.rrelu(x * 1, inplace=True))

    assert_same(torch, scenario)


def test_logsigmoid_saves_its_buffer(torch):
    def scenario(lib):
        x = lib.tensor([-30.0, -1.0, 0.0, 2.0, 40.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.logsigmoid(x)
        buffer = y.grad_fn._saved_buffer
        return type(y.grad_fn).__name__, buffer.requires_grad, np.round(buffer.tolist(), 14)

    got, expected = scenario(og), scenario(torch)
    assert got[:2] == expected[:2]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-13)


@pytest.mark.parametrize(
    "weight, shape, phrase",
    [
        ([0.1, 0.2], (2, 3), "Mismatch of parameter numbers and input channel size"),
        ([[0.1]], (2, 1), "Expected `weight` to be a scalar or 1D tensor"),
        ([0.1, 0.2], (), "Not allow zero-dim input tensor."),
    ],
    ids=["channels", "weight_2d", "zero_dim_input"],
)
def test_prelu_refuses_bad_weights(torch, weight, shape, phrase):
    assert_same_error(
        torch,
        lambda L: L.nn.functional.prelu(L.ones(shape), L.tensor(weight)),
        RuntimeError,
        phrase,
    )


def test_prelu_refuses_mixed_dtypes(torch):
    assert_same_error(
        torch,
        lambda L: L.prelu(L.ones(3), L.tensor([1])),
        RuntimeError,
        "prelu: Type promoting not supported. Got Float and Long",
    )
