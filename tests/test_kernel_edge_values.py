"""CPU kernels that take a fast path must give PyTorch's bits on edge values.

threshold_backward multiplies the gradient's bits by a per-element 0-or-1 instead of
calling np.where from 2,048 elements on; these cases, small and tiled past that
size, pin what that must not change: the sign of masked zeros, non-finite
gradients at masked positions, NaN inputs, integral gradients, strided inputs.
"""

import math

import numpy as np
import pytest


def _bits(values):
    return [(math.copysign(1.0, v), v) if not math.isnan(v) else ("nan",) for v in values]


GRADS = [-1.0, 2.0, float("nan"), float("inf"), -float("inf"), -0.0, 3.0]
INPUTS = [0.0, 1.0, 0.0, -2.0, 5.0, 1.0, float("nan")]


@pytest.mark.parametrize("repeats", [1, 600])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("threshold", [0, 0.5, -1.0])
def test_threshold_backward_edge_values(torch, dtype, threshold, repeats):
    import opgrad as og

    grad = np.tile(np.array(GRADS, dtype=dtype), repeats)
    inputs = np.tile(np.array(INPUTS, dtype=dtype), repeats)
    expected = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(grad), torch.from_numpy(inputs), threshold
    )
    got = og.ops.aten.threshold_backward.default(
        og.from_numpy(grad), og.from_numpy(inputs), threshold
    )
    assert _bits(got.tolist()) == _bits(expected.tolist())
    assert str(got.dtype) == str(expected.dtype).replace("torch", "opgrad")


def test_threshold_backward_all_finite_fast_path_keeps_positive_zeros(torch):
    import opgrad as og

    grad = np.tile(np.array([-1.0, -2.0, 3.0], dtype="float32"), 2000)
    inputs = np.tile(np.array([0.0, 1.0, 0.0], dtype="float32"), 2000)
    got = og.ops.aten.threshold_backward.default(og.from_numpy(grad), og.from_numpy(inputs), 0)
    expected = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(grad), torch.from_numpy(inputs), 0
    )
    assert _bits(got.tolist()) == _bits(expected.tolist())
    assert repr(got) == repr(expected).replace("torch", "opgrad")


def test_threshold_backward_integral(torch):
    import opgrad as og

    grad, inputs = np.array([1, -2, 3]), np.array([0, 1, -1])
    got = og.ops.aten.threshold_backward.default(og.from_numpy(grad), og.from_numpy(inputs), 0)
    expected = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(grad), torch.from_numpy(inputs), 0
    )
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("transpose", ["grad", "input", "both"])
def test_threshold_backward_strided_operands(torch, transpose):
    import opgrad as og

    rng = np.random.default_rng(0)
    grad = rng.standard_normal((64, 48)).astype("float32")
    inputs = rng.standard_normal((64, 48)).astype("float32")
    grad.flat[::7] = -0.0
    if transpose in ("grad", "both"):
        grad = np.ascontiguousarray(grad.T).T
    if transpose in ("input", "both"):
        inputs = np.ascontiguousarray(inputs.T).T
    got = og.ops.aten.threshold_backward.default(og.from_numpy(grad), og.from_numpy(inputs), 0)
    expected = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(grad), torch.from_numpy(inputs), 0
    )
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(expected.numpy()))
    assert np.array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("layout", ["column-major", "permuted 3-d", "mixed"])
def test_threshold_backward_keeps_torchs_layout(torch, layout):
    import opgrad as og

    rng = np.random.default_rng(1)
    if layout == "column-major":
        grad = np.asfortranarray(rng.standard_normal((64, 48)).astype("float32"))
        inputs = np.asfortranarray(rng.standard_normal((64, 48)).astype("float32"))
    elif layout == "permuted 3-d":
        grad = rng.standard_normal((8, 16, 32)).astype("float32").transpose(2, 0, 1)
        inputs = rng.standard_normal((8, 16, 32)).astype("float32").transpose(2, 0, 1)
    else:
        grad = np.asfortranarray(rng.standard_normal((64, 48)).astype("float32"))
        inputs = rng.standard_normal((64, 48)).astype("float32")
    got = og.ops.aten.threshold_backward.default(og.from_numpy(grad), og.from_numpy(inputs), 0)
    expected = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(grad), torch.from_numpy(inputs), 0
    )
    assert np.array_equal(got.numpy(), expected.numpy())
    if layout != "mixed":  # torch and numpy pick different layouts for mixed operands
        assert got.stride() == expected.stride()


EDGES = [0.0, -0.0, 1.5, -2.25, 1e-30, -1e30, 3e38, float("nan"), float("inf"), -float("inf")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [1, 2, 1.0, 2.0])
def test_pow_by_one_or_two_takes_torchs_bits_and_layout(torch, dtype, exponent):
    # exponents 2 and 1 are a multiply and a copy, not np.power
    values = np.array(EDGES * 2, dtype=dtype).reshape(4, 5)

    def scenario(lib):
        x = lib.from_numpy(values.copy()).t()
        y = x**exponent
        x.zero_()  # y is a new tensor: unchanged
        return _bits(y.flatten().tolist()), y.stride(), str(y.dtype).split(".")[1]

    assert scenario(torch) == scenario(__import__("opgrad"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mean_backward_of_a_scalar_gradient_matches_torch(torch, dtype):
    # the 0-dim gradient's quotient is computed once and filled in
    def scenario(lib):
        x = lib.from_numpy(np.array(EDGES[:6] * 2, dtype=dtype)).reshape(3, 4).requires_grad_()
        x.mean().backward(lib.tensor(0.7, dtype=getattr(lib, dtype)))
        return _bits(x.grad.flatten().tolist()), x.grad.stride()

    assert scenario(torch) == scenario(__import__("opgrad"))
