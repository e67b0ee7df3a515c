"""``x.pow_(t)`` and ``x **= t`` with a Tensor exponent: aten.pow_.Tensor, PowBackward1, and
torch's rule that the result type must be castable to self's dtype."""

import itertools

import pytest

from torch_oracle import aten_log, assert_same, result_scenario

DTYPES = ["bool", "int32", "int64", "float32", "float64"]


@pytest.mark.parametrize("self_dtype, exponent_dtype", list(itertools.product(DTYPES, DTYPES)))
def test_pow_inplace_tensor_exponent_matches_torch_for_every_dtype_pair(
    torch, self_dtype, exponent_dtype
):
    def scenario(lib, tensor):
        x = tensor([1, 2, 3], dtype=getattr(lib, self_dtype))
        return x.pow_(tensor([2, 1, 0], dtype=getattr(lib, exponent_dtype)))

    assert_same(torch, result_scenario(scenario))


def test_ipow_with_a_tensor_exponent_matches_torch(torch):
    def scenario(lib, tensor):
        x = tensor([1.0, 2.0, 3.0])
        x **= tensor([2.0, 3.0, 0.0])
        return x

    assert_same(torch, result_scenario(scenario))


def test_pow_inplace_tensor_exponent_refuses_a_broadcast_that_grows_self(torch):
    assert_same(torch, result_scenario(lambda lib, tensor: lib.ones(2).pow_(lib.ones(2, 2))))


def test_pow_inplace_tensor_exponent_records_powbackward1_and_gives_torchs_gradients(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        e = lib.tensor([2.0, 3.0], requires_grad=True)
        y = x.clone()
        y.pow_(e)
        name, version = type(y.grad_fn).__name__, y._version
        y.sum().backward()
        return name, version, x.grad.tolist(), e.grad.tolist()

    assert_same(torch, scenario)


def test_pow_inplace_tensor_exponent_is_aten_pow__tensor_to_a_dispatch_mode(torch):
    def scenario(lib):
        x, e = lib.tensor([1.0, 2.0]), lib.tensor(2.0)
        return aten_log(lib, lambda: x.pow_(e))

    assert_same(torch, scenario)


POW_EXPONENTS = [
    ("float32", 1e39),
    ("float32", -1e39),
    ("float64", 1e300),
    ("int64", 1e300),
    ("uint8", 300),
    ("int8", -200),
    ("float16", 7e4),
]


@pytest.mark.parametrize("dtype, exponent", POW_EXPONENTS, ids=str)
@pytest.mark.parametrize("inplace", [False, True])
def test_pow_scalar_exponent_range_is_checked_only_where_torch_checks_it(
    torch, dtype, exponent, inplace
):
    # torch refuses an exponent the result's dtype cannot hold only for integral and float16
    # results; float32 ** 1e39 is inf and 0, not an error
    def scenario(lib, tensor):
        base = tensor([0, 1, 2], dtype=getattr(lib, dtype))
        return base.pow_(exponent) if inplace else base**exponent

    assert_same(torch, result_scenario(scenario))
