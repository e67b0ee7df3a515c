"""Numbers a dtype cannot hold are refused as PyTorch refuses them: NaN, inf or
out-of-range values into integer tensors, finite values beyond a float dtype's range,
Python ints no Scalar holds. Bool tensors take anything. Every entry point that
converts a number to a tensor's dtype is checked against torch side by side."""

import numpy as np
import pytest

from opgrad import scalar_fit
from torch_oracle import assert_same, result_scenario

NAN, INF = float("nan"), float("inf")
VALUES = [
    NAN, INF, -INF, 2**63, 2**31, -(2**63) - 1, 2**64, 1e30, 1e40, -1, 2.5, np.int64(2**40),
    300, -129, 70000.0, 65519.0,
]  # fmt: skip
DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool", "float16", "float32", "float64"]
MASK = [True, False]


def _set(index):
    def assign(lib, tensor, x, value):
        x[index(lib)] = value
        return x

    return assign


# (id, fn(lib, tensor, x, value)) where x is a [2] tensor of the dtype under test
ENTRY_POINTS = [
    ("fill_", lambda lib, tensor, x, v: x.fill_(v)),
    ("full", lambda lib, tensor, x, v: lib.full((2,), v, dtype=x.dtype)),
    ("new_full", lambda lib, tensor, x, v: x.new_full((2,), v)),
    ("full_like", lambda lib, tensor, x, v: lib.full_like(x, v)),
    ("masked_fill", lambda lib, tensor, x, v: x.masked_fill(tensor(MASK), v)),
    ("masked_fill_", lambda lib, tensor, x, v: x.masked_fill_(tensor(MASK), v)),
    ("masked_fill_0dim_tensor", lambda lib, tensor, x, v: x.masked_fill(tensor(MASK), tensor(v))),
    ("setitem_int", _set(lambda lib: 0)),
    ("setitem_slice", _set(lambda lib: slice(None))),
    ("setitem_mask", _set(lambda lib: lib.tensor(MASK))),
    ("setitem_list", _set(lambda lib: [0])),
    ("tensor_list", lambda lib, tensor, x, v: tensor([v, 1], dtype=x.dtype)),
    ("tensor_0dim", lambda lib, tensor, x, v: tensor(v, dtype=x.dtype)),
    ("clamp_min", lambda lib, tensor, x, v: x.clamp(min=v)),
    ("clamp_max", lambda lib, tensor, x, v: x.clamp(max=v)),
    ("scalar_tensor", lambda lib, tensor, x, v: lib.scalar_tensor(v, dtype=x.dtype)),
    ("where_scalar_other", lambda lib, tensor, x, v: lib.where(tensor(MASK), x, v)),
    ("where_scalar_self", lambda lib, tensor, x, v: lib.where(tensor(MASK), v, x)),
    ("pow_exponent", lambda lib, tensor, x, v: x**v),
]


def _nan_safe(scenario):
    """``scenario`` with NaN values spelled out (NaN != NaN would fail equal results)."""

    def run(lib):
        result = scenario(lib)
        if result[0] != "ok":
            return result
        values = np.asarray(result[1], dtype=object)
        spelled = [("nan" if isinstance(v, float) and v != v else v) for v in values.ravel()]
        return (result[0], spelled) + result[2:]

    return run


def _value_id(value) -> str:
    return f"np_{value}" if isinstance(value, np.generic) else repr(value)


def _cases():
    for name, fn in ENTRY_POINTS:
        for value in VALUES:
            if name == "masked_fill_0dim_tensor" and isinstance(value, int) and abs(value) >= 2**63:
                continue  # tensor() of that int raises before masked_fill runs: see tensor_0dim
            for dtype in DTYPES:
                yield pytest.param(fn, value, dtype, id=f"{name}-{_value_id(value)}-{dtype}")


@pytest.mark.parametrize("fn, value, dtype", list(_cases()))
def test_number_into_dtype_matches_torch(torch, fn, value, dtype):
    def scenario(lib, tensor):
        return fn(lib, tensor, lib.zeros(2, dtype=getattr(lib, dtype)), value)

    assert_same(torch, _nan_safe(result_scenario(scenario)))


def test_fill_with_a_0dim_tensor_value_casts_without_a_check(torch):
    def scenario(lib, tensor):
        return lib.zeros(2, dtype=lib.int32).fill_(tensor(2.0**40, dtype=lib.float64))

    assert_same(torch, result_scenario(scenario))


def test_full_without_dtype_infers_int64_from_a_numpy_integer(torch):
    assert_same(torch, result_scenario(lambda lib, tensor: lib.full((2,), np.int64(2**40))))


def test_alpha_beyond_float32_is_refused_for_float32_results(torch):
    def scenario(lib, tensor):
        return lib.ones(2).add(lib.ones(2), alpha=1e40)

    assert_same(torch, result_scenario(scenario))


def test_inplace_op_refuses_the_result_type_before_computing(torch):
    # the cast check comes first: the bound's own overflow is never reached
    assert_same(
        torch, result_scenario(lambda lib, tensor: lib.zeros(2, dtype=lib.int64).pow_(1e40))
    )


# the fit rule and its texts for the narrow dtypes, value by value
NARROW = [
    ("uint8", [-255, 255, 2.5, -1], [-256, 256, 255.5, -1.0, NAN, INF]),
    ("int8", [-128, 127, -128.9 + 0.9], [-129, 128, 127.5, -128.9, NAN]),
    ("int16", [-(2**15), 2**15 - 1], [2**15, 70000.0, NAN]),
    ("float16", [65504.0, NAN, INF, -INF], [65505.0, 65520.0, 1e40, 2**63]),
]


@pytest.mark.parametrize("name, fitting, overflowing", NARROW, ids=[n[0] for n in NARROW])
def test_fit_rule_and_text_match_torch_for_narrow_dtypes(torch, name, fitting, overflowing):
    np_dtype = np.dtype(name)
    torch_dtype = getattr(torch, name)
    for value in fitting:
        torch.zeros(2, dtype=torch_dtype).fill_(value)  # torch takes it
        scalar_fit.check_fits(value, np_dtype)
    for value in overflowing:
        with pytest.raises(RuntimeError) as expected:
            torch.zeros(2, dtype=torch_dtype).fill_(value)
        with pytest.raises(RuntimeError) as got:
            scalar_fit.check_fits(value, np_dtype)
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16"])
def test_tensor_data_check_names_the_dtype_as_torch_tensor_does(torch, name):
    values = np.array([1.0, 1e6])
    with pytest.raises(RuntimeError) as expected:
        torch.tensor(values.tolist(), dtype=getattr(torch, name))
    with pytest.raises(RuntimeError) as got:
        scalar_fit.check_array_fits(values, np.dtype(name))
    assert str(got.value) == str(expected.value)


# ---- Python ints beyond int64: uint64 Scalars, or PyTorch's OverflowError -------------------
# A Python int in [2**63, 2**64) is a uint64 Scalar in PyTorch: it wraps into an integer
# tensor's dtype, is a float for a float tensor, and meets a bool tensor with PyTorch's
# promotion error; an int beyond uint64 (or below int64) raises OverflowError.

BIG_INTS = [2**63, 2**64 - 1, 2**64, -(2**63) - 1]
BIG_INT_DTYPES = ["bool", "uint8", "int8", "int64", "float16", "float32", "float64"]
BIG_INT_OPS = {
    "x + v": lambda L, x, v: x + v,
    "v + x": lambda L, x, v: v + x,
    "x * v": lambda L, x, v: x * v,
    "v - x": lambda L, x, v: v - x,
    "x / v": lambda L, x, v: x / v,
    "x == v": lambda L, x, v: x == v,
    "x < v": lambda L, x, v: x < v,
    "v ** x": lambda L, x, v: v**x,
    "x += v": lambda L, x, v: x.__iadd__(v),
    "mul(x, v)": lambda L, x, v: L.mul(x, v),
    "aten.add.Scalar": lambda L, x, v: L.ops.aten.add.Scalar(x, v),
    "aten.mul.Tensor": lambda L, x, v: L.ops.aten.mul.Tensor(x, v),
    "clamp max": lambda L, x, v: x.clamp(max=v),
    "masked_fill": lambda L, x, v: x.masked_fill(x > 1, v),
}


@pytest.mark.parametrize("dtype", BIG_INT_DTYPES)
@pytest.mark.parametrize("value", BIG_INTS, ids=repr)
@pytest.mark.parametrize("op", list(BIG_INT_OPS))
def test_python_int_beyond_int64_is_a_uint64_scalar_as_in_torch(torch, op, value, dtype):
    def scenario(lib, tensor):
        return BIG_INT_OPS[op](lib, tensor([1, 2], dtype=getattr(lib, dtype)), value)

    assert_same(torch, result_scenario(scenario))


def test_uint64_scalar_in_a_graph_is_saved_as_the_number(torch):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2**63
        y.sum().backward()
        return y.tolist(), x.grad.tolist()

    assert_same(torch, scenario)
