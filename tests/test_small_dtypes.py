"""uint8, int8, int16 and float16 against PyTorch: the dtype objects and their names,
the promotion lattice over every pair and operand tier, integer wrap-around, float16
values computed as torch computes them (float32 inside, one rounding), the ops opgrad has
on each dtype, conversions, indexing with the new dtypes, autograd in float16 and the
float16 random stream.
"""

import itertools
import subprocess
import sys
import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, dtype_name, outcome, result_scenario

ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
NEW = ("uint8", "int8", "int16", "float16")
INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")


# ---- the dtype objects -------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_dtype_attributes_match_torch(torch, name):
    def scenario(lib):
        d = getattr(lib, name)
        return repr(d).split(".")[1], str(d), d.is_floating_point, d.is_signed, d.itemsize

    got, expected = scenario(og), scenario(torch)
    assert got[0] == expected[0] and got[2:] == expected[2:]
    assert got[1] == expected[1].replace("torch.", "opgrad.")


@pytest.mark.parametrize("alias", ["half", "short", "float", "double", "int", "long"])
def test_dtype_aliases_match_torch(torch, alias):
    assert dtype_name(getattr(og, alias)) == dtype_name(getattr(torch, alias))


@pytest.mark.parametrize("method", ["byte", "char", "short", "half", "int", "long", "bool"])
def test_conversion_methods_match_torch(torch, method):
    assert_same(
        torch, result_scenario(lambda lib, T: getattr(T([1.5, -1.5, 300.0, 0.0]), method)())
    )


@pytest.mark.parametrize("name", NEW)
def test_names_in_error_messages_match_torch(torch, name):
    def scenario(lib):
        x = lib.ones(2, dtype=getattr(lib, name))
        return [
            outcome(lambda: lib.mm(lib.ones(2, 2), x.reshape(2, 1))),  # C++ type name
            outcome(lambda: lib.dot(lib.ones(2), x)),  # ScalarType name
            outcome(lambda: x.__setitem__(0, "a")),  # legacy tensor type
            outcome(lambda: setattr(lib.ones(2), "grad", x)),
            outcome(lambda: lib.ones(2).index_put_((lib.tensor([0]),), x[0])),
        ]

    assert_same(torch, scenario)


REPRS = {
    "float16": [1.5, -2.25, 1000.0],
    "float16 wide range": [0.0001, 65504.0],
    "float16 non-finite": [float("nan"), float("inf"), -float("inf"), 1.0],
    "float16 integers": [1.0, 2.0, 3.0],
    "uint8": [255, 0, 7],
    "int8": [-128, 127],
    "int16": [-32768, 5],
}


@pytest.mark.parametrize("name", list(REPRS))
def test_repr_matches_torch(torch, name):
    dtype = name.split()[0]
    assert_same(
        torch,
        lambda lib: repr(lib.tensor(REPRS[name], dtype=getattr(lib, dtype))).replace(
            lib.__name__, "LIB"
        ),
    )


# ---- promotion ---------------------------------------------------------------------------


def test_promote_types_table_matches_torch(torch):
    def table(lib):
        return {
            (a, b): dtype_name(lib.promote_types(getattr(lib, a), getattr(lib, b)))
            for a, b in itertools.product(ALL, ALL)
        }

    assert table(og) == table(torch)


def _operand(lib, name: str, tier: str):
    """One operand of a dtype in a tier: a dimensioned tensor, a 0-dim tensor, or a Python
    number (bool, int, float: the only wrapped numbers there are)."""
    if tier == "number":
        return {"bool": True, "int64": 3, "float64": 2.5}[name]
    value = lib.ones(2, dtype=getattr(lib, name))
    return value if tier == "dim" else value[0]


TIERS = ["dim", "0-dim", "number"]
TIER_PAIRS = [(a, b) for a in TIERS for b in TIERS if (a, b) != ("number", "number")]


@pytest.mark.parametrize("tiers", TIER_PAIRS, ids=lambda t: "-".join(t))
def test_result_type_table_matches_torch(torch, tiers):
    def table(lib):
        result = {}
        for a, b in itertools.product(ALL, ALL):
            if (tiers[0] == "number" and a not in ("bool", "int64", "float64")) or (
                tiers[1] == "number" and b not in ("bool", "int64", "float64")
            ):
                continue
            x, y = _operand(lib, a, tiers[0]), _operand(lib, b, tiers[1])
            # what result_type says, and what an op gives
            result[a, b] = dtype_name(lib.result_type(x, y)), outcome(lambda: x * y)[0]
            if isinstance(x, lib.Tensor):
                result[a, b] += (dtype_name(lib.mul(x, y).dtype),)
        return result

    assert table(og) == table(torch)


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_result_type_follows_the_default_dtype(torch, default):
    def scenario(lib):
        lib.set_default_dtype(getattr(lib, default))
        try:
            return [
                dtype_name((lib.ones(2, dtype=getattr(lib, name)) * 2.5).dtype) for name in ALL
            ] + [dtype_name(lib.tensor([1.5]).dtype), dtype_name(lib.result_type(1, 2.5))]
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(torch, scenario)


def test_promote_types_refuses_what_is_no_dtype(torch):
    assert outcome(lambda: og.promote_types(og.uint8, 1))[0] == "TypeError"
    assert outcome(lambda: torch.promote_types(torch.uint8, 1))[0] == "TypeError"


# ---- integer wrap-around -----------------------------------------------------------------

WRAP = {
    "uint8 250 + 10": lambda lib, T: T([250], dtype=lib.uint8) + 10,
    "uint8 250 + uint8 10": lambda lib, T: T([250], dtype=lib.uint8) + T([10], dtype=lib.uint8),
    "uint8 3 - 5": lambda lib, T: T([3], dtype=lib.uint8) - 5,
    "uint8 16 * 20": lambda lib, T: T([16], dtype=lib.uint8) * 20,
    "uint8 + 300": lambda lib, T: T([1, 2], dtype=lib.uint8) + 300,
    "uint8 * 1000": lambda lib, T: T([1, 2], dtype=lib.uint8) * 1000,
    "uint8 neg": lambda lib, T: -T([0, 1, 255], dtype=lib.uint8),
    "uint8 += int64": lambda lib, T: T([200], dtype=lib.uint8).add_(T([100])),
    "uint8 += int8": lambda lib, T: T([1, 2, 3], dtype=lib.uint8).add_(T([-1], dtype=lib.int8)),
    "int8 127 + 1": lambda lib, T: T([127], dtype=lib.int8) + 1,
    "int8 -128 - 1": lambda lib, T: T([-128], dtype=lib.int8) - 1,
    "int8 abs -128": lambda lib, T: T([-128, -3], dtype=lib.int8).abs(),
    "int8 neg -128": lambda lib, T: -T([-128], dtype=lib.int8),
    "int8 0-dim 127 + 1": lambda lib, T: T(127, dtype=lib.int8) + 1,
    "int8 + 2**40": lambda lib, T: T([1, 2], dtype=lib.int8) + 2**40,
    "int16 32767 + 1": lambda lib, T: T([32767], dtype=lib.int16) + 1,
    "int16 * int16": lambda lib, T: T([300], dtype=lib.int16) * T([300], dtype=lib.int16),
    "int16 pow": lambda lib, T: T([3], dtype=lib.int16) ** 15,
    "int8 ** 127": lambda lib, T: T([-3, 2], dtype=lib.int8) ** 127,
    "uint8 ** 255": lambda lib, T: T([3], dtype=lib.uint8) ** 255,
    "2 ** uint8": lambda lib, T: 2 ** T([1, 10], dtype=lib.uint8),
    "300 ** uint8": lambda lib, T: 300 ** T([1, 2, 3], dtype=lib.uint8),
    "uint8 ** 300": lambda lib, T: T([1], dtype=lib.uint8) ** 300,
    "uint8 ** -1": lambda lib, T: T([1], dtype=lib.uint8) ** -1,
    "uint8 sum (int64)": lambda lib, T: T([200, 200], dtype=lib.uint8).sum(),
    "uint8 sum as uint8": lambda lib, T: T([200, 200], dtype=lib.uint8).sum(dtype=lib.uint8),
    "int8 sum as int8": lambda lib, T: T([100, 100, 100], dtype=lib.int8).sum(dtype=lib.int8),
    "int8 matmul": lambda lib, T: T([[100, 100]], dtype=lib.int8) @ T([[2], [1]], dtype=lib.int8),
    # a Python number is cast to the tensor's dtype before comparing
    "uint8 == 257": lambda lib, T: T([1, 2], dtype=lib.uint8) == 257,
    "uint8 < -1": lambda lib, T: T([1, 255], dtype=lib.uint8) < -1,
    "int8 == 2**63": lambda lib, T: T([0, 1], dtype=lib.int8) == 2**63 - 1,
    "uint8 >= 2.5": lambda lib, T: T([2, 3], dtype=lib.uint8) >= 2.5,
    # the Scalar overloads wrap too, and check alpha as torch
    "add.Scalar 300": lambda lib, T: lib.ops.aten.add.Scalar(T([1, 2], dtype=lib.uint8), 300),
    "sub.Scalar 300": lambda lib, T: lib.ops.aten.sub.Scalar(T([1, 2], dtype=lib.uint8), 300),
    "rsub.Scalar 300": lambda lib, T: lib.ops.aten.rsub.Scalar(T([1, 2], dtype=lib.uint8), 300),
    "mul.Scalar 300": lambda lib, T: lib.ops.aten.mul.Scalar(T([1, 2], dtype=lib.uint8), 300),
    "eq.Scalar 257": lambda lib, T: lib.ops.aten.eq.Scalar(T([1, 2], dtype=lib.uint8), 257),
    "uint8 alpha -1": lambda lib, T: T([1], dtype=lib.uint8).add(T([1], dtype=lib.uint8), alpha=-1),
    "uint8 alpha 300": lambda lib, T: T([1], dtype=lib.uint8).add(
        T([1], dtype=lib.uint8), alpha=300
    ),
    "int8 sub alpha 128": lambda lib, T: T([1], dtype=lib.int8).sub(
        T([1], dtype=lib.int8), alpha=128
    ),
    "int8 sub alpha -128": lambda lib, T: T([1], dtype=lib.int8).sub(
        T([1], dtype=lib.int8), alpha=-128
    ),
    "int8 rsub alpha -128": lambda lib, T: lib.rsub(
        T([1], dtype=lib.int8), T([1], dtype=lib.int8), alpha=-128
    ),
    "uint8 sub alpha 256": lambda lib, T: T([1], dtype=lib.uint8).sub(
        T([1], dtype=lib.uint8), alpha=256
    ),
    "int64 sub alpha lowest": lambda lib, T: T([1]).sub(T([1]), alpha=-(2**63)),
    "sub.Scalar int8 alpha 128": lambda lib, T: lib.ops.aten.sub.Scalar(
        T([1], dtype=lib.int8), 1, 128
    ),
    "int16 alpha 40000": lambda lib, T: T([1], dtype=lib.int16).add(
        T([1], dtype=lib.int16), alpha=40000
    ),
    "float16 alpha 1e5": lambda lib, T: T([1.0], dtype=lib.half).add(
        T([1.0], dtype=lib.half), alpha=1e5
    ),
    "float16 ** 1e10": lambda lib, T: T([1.0], dtype=lib.half) ** 1e10,
}


# fills and bounds that fit the dtype are converted as torch converts them (out-of-range
# ones are the overflow checks' business)
_CLOSE_TO_A_TIE = 1 + 2**-11 + 2**-30  # rounds to 1.0 through float32, to 1.001 directly
FILLS = {
    "uint8 fill_ -1": lambda lib, T: lib.ones(2, dtype=lib.uint8).fill_(-1),
    "uint8 full -1": lambda lib, T: lib.full((2,), -1, dtype=lib.uint8),
    "uint8 full_like -2": lambda lib, T: lib.full_like(lib.ones(2, dtype=lib.uint8), -2),
    "uint8 masked_fill -1": lambda lib, T: lib.ones(2, dtype=lib.uint8).masked_fill(
        T([True, False]), -1
    ),
    "uint8 clamp(-1, 3)": lambda lib, T: lib.ones(2, dtype=lib.uint8).clamp(-1, 3),
    "uint8 where -1": lambda lib, T: lib.where(T([True, False]), lib.ones(2, dtype=lib.uint8), -1),
    "int8 fill_ 2.7": lambda lib, T: lib.ones(2, dtype=lib.int8).fill_(2.7),
    "float16 full": lambda lib, T: lib.full((1,), _CLOSE_TO_A_TIE, dtype=lib.half),
    "float16 fill_": lambda lib, T: lib.ones(1, dtype=lib.half).fill_(_CLOSE_TO_A_TIE),
    "float16 clamp": lambda lib, T: lib.zeros(1, dtype=lib.half).clamp(_CLOSE_TO_A_TIE),
    "float16 scalar_tensor": lambda lib, T: lib.scalar_tensor(_CLOSE_TO_A_TIE, dtype=lib.half),
    "float16 masked_fill": lambda lib, T: lib.ones(2, dtype=lib.half).masked_fill(
        T([True, False]), _CLOSE_TO_A_TIE
    ),
}


@pytest.mark.parametrize("name", list(FILLS))
def test_fill_value_is_converted_as_torch(torch, name):
    assert_same(torch, result_scenario(FILLS[name]))


@pytest.mark.parametrize("name", list(WRAP))
def test_integer_arithmetic_wraps_around_as_torch(torch, name):
    assert_same(torch, result_scenario(WRAP[name]))


_OVERFLOWING_OPS = """
import opgrad as og
u = og.tensor([250, 255], dtype=og.uint8)
i = og.tensor([127, -128], dtype=og.int8)
s = og.tensor([32767], dtype=og.int16)
h = og.tensor([60000.0, -60000.0], dtype=og.float16)
results = [u + 10, u * 3, -u, i + 1, i - 1, -i, i.abs(), s * 2, og.tensor(127, dtype=og.int8) + 1,
           h * 2, h + h, h.exp(), og.tensor([1e300]).half(), og.tensor([300.5, -1.5]).byte(),
           og.tensor([70000.0], dtype=og.float16), h.sum(), u.sum(dtype=og.uint8)]
print("ok")
"""


def test_overflow_is_silent_as_in_torch():
    # a fresh program, with only the warning filters opgrad installs: any numpy
    # RuntimeWarning reaching the user fails it
    run = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", _OVERFLOWING_OPS],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and run.stdout == "ok\n", run.stderr


NARROWING_CONVERSIONS = {
    "float64 1e300 to float32": lambda lib: lib.tensor([1e300], dtype=lib.float64).float(),
    "float64 1e300 to float16": lambda lib: lib.tensor([1e300], dtype=lib.float64).half(),
    "float32 1e30 to float16": lambda lib: lib.tensor([1e30]).to(lib.float16),
    "float64 1e300 to int32": lambda lib: lib.tensor([1e300], dtype=lib.float64).to(lib.int32),
    "nan to int64": lambda lib: lib.tensor([float("nan")]).long(),
    "inf to uint8": lambda lib: lib.tensor([float("inf")]).byte(),
    "int64 to float16": lambda lib: lib.tensor([2**40]).half(),
}


@pytest.mark.parametrize("name", list(NARROWING_CONVERSIONS))
def test_narrowing_conversion_warns_of_nothing_whatever_the_filters(torch, name):
    # the user's own filters come first (pytest -W error, catch_warnings): numpy's
    # RuntimeWarnings must not be raised at all, as torch raises none
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = NARROWING_CONVERSIONS[name](lib)
        return str(result.dtype).split(".")[-1], result.shape == (1,)

    assert_same(torch, scenario)
    got, expected = NARROWING_CONVERSIONS[name](og), NARROWING_CONVERSIONS[name](torch)
    if got.dtype.is_floating_point:  # an integer's value for NaN or inf is undefined in C++
        assert got.tolist() == expected.tolist()


# ---- the ops opgrad has, on every integral dtype ---------------------------------------------

OPS = {
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / y,
    "rsub number": lambda lib, x, y: 7 - x,
    "lt": lambda lib, x, y: x < y,
    "eq number": lambda lib, x, y: x == 3,
    "ne": lambda lib, x, y: x != y,
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "where": lambda lib, x, y: lib.where(x > y, x, y),
    "where number": lambda lib, x, y: lib.where(x > y, x, 5),
    "clamp": lambda lib, x, y: x.clamp(0, 3),
    "clamp tensor": lambda lib, x, y: x.clamp(y, None),
    "neg": lambda lib, x, y: -x,
    "abs": lambda lib, x, y: x.abs(),
    "sign": lambda lib, x, y: x.sign(),
    "relu": lambda lib, x, y: x.relu(),
    "pow": lambda lib, x, y: x**2,
    "pow tensor": lambda lib, x, y: x.abs() ** y.abs(),
    "sqrt": lambda lib, x, y: x.abs().sqrt(),
    "exp (lifted to float32)": lambda lib, x, y: x.exp() > 2.5,
    "sigmoid (lifted to float32)": lambda lib, x, y: x.sigmoid() > 0.6,
    "sum": lambda lib, x, y: x.sum(),
    "sum dim": lambda lib, x, y: x.reshape(2, 2).sum(1, keepdim=True),
    "mean": lambda lib, x, y: x.mean(),
    "mean float": lambda lib, x, y: x.mean(dtype=lib.float32),
    "mm": lambda lib, x, y: x.reshape(2, 2) @ y.reshape(2, 2),
    "dot": lambda lib, x, y: lib.dot(x, y),
    "cat": lambda lib, x, y: lib.cat([x, y.long()]),
    "stack": lambda lib, x, y: lib.stack([x, y]),
    "logical_and": lambda lib, x, y: lib.logical_and(x, y),
    "masked_fill": lambda lib, x, y: x.masked_fill(x > 1, 2),
    "index": lambda lib, x, y: x[lib.tensor([0, 3])],
    "index_put accumulate": lambda lib, x, y: x.index_put(
        (lib.tensor([0, 0]),), y[:2], accumulate=True
    ),
    "tanh_backward": lambda lib, x, y: lib.ops.aten.tanh_backward(x, y),
    "sigmoid_backward": lambda lib, x, y: lib.ops.aten.sigmoid_backward(x, y),
    "requires_grad": lambda lib, x, y: x.requires_grad_(),
    "mean of dtype": lambda lib, x, y: x.float().mean(dtype=x.dtype),
}
VALUES = {"uint8": [3, 1, 200, 0], "bool": [True, False, True, True]}


@pytest.mark.parametrize("dtype", INTEGRAL + ("bool",))
@pytest.mark.parametrize("op", list(OPS))
def test_op_on_integral_dtype_matches_torch(torch, op, dtype):
    def scenario(lib, T):
        values = VALUES.get(dtype, [3, -1, 100, 0])
        x = T(values, dtype=getattr(lib, dtype))
        y = T(values[::-1], dtype=getattr(lib, dtype))
        return OPS[op](lib, x, y)

    assert_same(torch, result_scenario(scenario))


@pytest.mark.parametrize("source", ALL)
@pytest.mark.parametrize("target", ALL)
def test_to_converts_as_torch(torch, source, target):
    values = [0.0, 1.5, -1.5, 127.9, -128.5, 255.9, 300.5, -40000.5, 65504.0, 1e10]

    def scenario(lib, T):
        x = T(np.array(values)).to(getattr(lib, source))
        return x.to(getattr(lib, target))

    assert_same(torch, result_scenario(scenario))


# ---- float16 values: float32 inside, one rounding ---------------------------------------------

_ALL_HALF = np.arange(2**16, dtype=np.uint16).view(np.float16)
FINITE_HALF = _ALL_HALF[np.isfinite(_ALL_HALF)]  # 63,488 values, a multiple of 64
SHUFFLED_HALF = np.random.default_rng(0).permutation(FINITE_HALF)


def _half_bits_differ(got, expected) -> np.ndarray:
    """Where two float16 results differ (any NaN equals any NaN)."""
    a, b = got.numpy(), expected.numpy()
    assert a.dtype == b.dtype == np.float16
    same = (a.view(np.uint16) == b.view(np.uint16)) | (np.isnan(a) & np.isnan(b))
    return ~same


def _ulps_apart(got, expected) -> np.ndarray:
    """How many float16 steps apart two results are (equal values, infs and NaNs: 0)."""
    a, b = got.numpy().astype(np.float64), expected.numpy().astype(np.float64)
    with np.errstate(invalid="ignore"):
        spacing = np.spacing(np.abs(b).astype(np.float16)).astype(np.float64)
        apart = np.abs(a - b) / spacing
    return np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0, apart)


# bit for bit: operations whose float32 result rounds to float16 the same way everywhere
HALF_EXACT = {
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / y,
    "neg": lambda lib, x, y: -x,
    "abs": lambda lib, x, y: x.abs(),
    "sqrt": lambda lib, x, y: x.sqrt(),
    "reciprocal": lambda lib, x, y: x.reciprocal(),
    "square": lambda lib, x, y: x.square(),
    "relu": lambda lib, x, y: x.relu(),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "clamp": lambda lib, x, y: x.clamp(-0.3, 0.7),
    "where": lambda lib, x, y: lib.where(x > y, x, 0.1),
    "masked_fill": lambda lib, x, y: x.masked_fill(x > y, 0.1),
    "pow 2": lambda lib, x, y: x**2,
    "pow 1.7": lambda lib, x, y: x.abs() ** 1.7,
    "pow tensor": lambda lib, x, y: x.abs() ** y,
    "2.5 ** x": lambda lib, x, y: 2.5**x,
    # a Python number enters add/sub rounded to float16 ...
    "x + 0.1": lambda lib, x, y: x + 0.1,
    "x - 1/3": lambda lib, x, y: x - 1 / 3,
    "1/3 - x": lambda lib, x, y: 1 / 3 - x,
    "x + 100003": lambda lib, x, y: x + 100003,
    # ... but mul/div read a one-element other at float32 precision
    "x * 0.1": lambda lib, x, y: x * 0.1,
    "x / 0.1": lambda lib, x, y: x / 0.1,
    "x * 100003": lambda lib, x, y: x * 100003,
    "x / 3": lambda lib, x, y: x / 3,
    "3 / x": lambda lib, x, y: 3 / x,
    "x * 0-dim float64": lambda lib, x, y: x * lib.tensor(0.1, dtype=lib.float64),
    "x / 0-dim float32": lambda lib, x, y: x / lib.tensor(0.1, dtype=lib.float32),
    "x * 0-dim int64": lambda lib, x, y: x * lib.tensor(100003),
    "0-dim float64 * x": lambda lib, x, y: lib.mul(lib.tensor(0.1, dtype=lib.float64), x),
    "x *= 0.1": lambda lib, x, y: x.clone().mul_(0.1),
    "mul.Scalar 0.1": lambda lib, x, y: lib.ops.aten.mul.Scalar(x, 0.1),
    "div.Scalar 0.1": lambda lib, x, y: lib.ops.aten.div.Scalar(x, 0.1),
    "x < 0.1": lambda lib, x, y: (x < 0.1).half(),
    "x == 1/3": lambda lib, x, y: (x == 1 / 3).half(),
    # float32 inside, one rounding (torch's vectorised loop; see the alpha test below)
    "add alpha": lambda lib, x, y: x.add(y, alpha=3),
    "sub alpha": lambda lib, x, y: x.sub(y, alpha=0.1),
    "add.Scalar alpha": lambda lib, x, y: lib.ops.aten.add.Scalar(x, 0.1, 0.3),
    "tanh_backward": lambda lib, x, y: lib.ops.aten.tanh_backward(x, y),
    "sigmoid_backward": lambda lib, x, y: lib.ops.aten.sigmoid_backward(x, y),
    "threshold_backward": lambda lib, x, y: lib.ops.aten.threshold_backward(x, y, 0.1),
    "to float64 and back": lambda lib, x, y: (x.double() * 1.1).half(),
    "float64 0-dim, 1 + 2**-11 + 2**-30": lambda lib, x, y: x
    + lib.tensor(1 + 2**-11 + 2**-30, dtype=lib.float64),
}
# within one float16 ulp, on a handful of values: torch's and numpy's float32 libm differ
# in the last float32 bit now and then, which can tip the float16 rounding
HALF_LIBM = {
    "exp": lambda lib, x, y: x.exp(),
    "log": lambda lib, x, y: x.log(),
    "sin": lambda lib, x, y: x.sin(),
    "cos": lambda lib, x, y: x.cos(),
    "tanh": lambda lib, x, y: x.tanh(),
    "sigmoid": lambda lib, x, y: x.sigmoid(),
}


def _on_every_half(lib, fn):
    x = lib.tensor(FINITE_HALF)
    y = lib.tensor(SHUFFLED_HALF)
    return fn(lib, x, y)


@pytest.mark.parametrize("op", list(HALF_EXACT))
def test_float16_op_matches_torch_bit_for_bit_on_every_value(torch, op):
    got, expected = _on_every_half(og, HALF_EXACT[op]), _on_every_half(torch, HALF_EXACT[op])
    assert not _half_bits_differ(got, expected).any()


@pytest.mark.parametrize("op", list(HALF_LIBM))
def test_float16_function_matches_torch_within_one_ulp(torch, op):
    got, expected = _on_every_half(og, HALF_LIBM[op]), _on_every_half(torch, HALF_LIBM[op])
    assert _ulps_apart(got, expected).max() <= 1
    assert _half_bits_differ(got, expected).sum() <= 8


def test_float16_alpha_in_torchs_tail_loop_is_within_one_ulp(torch):
    # torch's scalar loop for the last elements of a float16 add/sub with alpha (all of a
    # tensor shorter than its vector step) rounds alpha * other to float16 before adding;
    # opgrad computes every element as torch's vectorised loop does
    def run(lib):
        return lib.tensor(FINITE_HALF[:31]).sub(lib.tensor(SHUFFLED_HALF[:31]), alpha=0.1)

    assert _ulps_apart(run(og), run(torch)).max() <= 1


@pytest.mark.parametrize("size", [7, 1000, 65000])
def test_float16_reductions_and_products_match_torch(torch, size):
    data = np.random.default_rng(size).standard_normal(size).astype(np.float16)

    def scenario(lib):
        x = lib.tensor(data)
        m = x[: (size // 7) * 7].reshape(7, -1)
        return [
            x.sum(),
            x.mean(),
            x.sum(dtype=lib.float32).half(),
            lib.tensor(data.astype(np.float32)).sum(dtype=lib.float16),
            lib.tensor(data.astype(np.float32)).mean(dtype=lib.float16),
            m.sum(0),
            m @ m.t(),
            lib.dot(x, x),
            lib.mv(m, m[0]),
            lib.bmm(m[None], m.t()[None])[0],
        ]

    for got, expected in zip(scenario(og), scenario(torch)):
        assert got.dtype == og.float16
        assert _ulps_apart(got, expected).max() <= 1


def test_float16_sum_overflows_to_inf_as_torch(torch):
    assert_same(torch, result_scenario(lambda lib, T: lib.ones(70000, dtype=lib.half).sum()))


# ---- indexing with the new dtypes ------------------------------------------------------------

INDEXING = {
    "uint8 mask": lambda lib, T: lib.arange(5.0)[T([1, 0, 1, 0, 2], dtype=lib.uint8)],
    "uint8 mask over rows": lambda lib, T: lib.ones(2, 3)[T([1, 0], dtype=lib.uint8)],
    "uint8 mask after a slice": lambda lib, T: lib.ones(2, 3)[:, T([1, 0, 1], dtype=lib.uint8)],
    "uint8 mask of the wrong shape": lambda lib, T: lib.arange(5.0)[T([1, 1], dtype=lib.uint8)],
    "0-dim uint8": lambda lib, T: lib.ones(3)[T(2, dtype=lib.uint8)],
    "0-dim uint8 zero": lambda lib, T: lib.ones(3)[T(0, dtype=lib.uint8)],
    "0-dim int8 selects": lambda lib, T: lib.arange(3.0)[T(2, dtype=lib.int8)],
    "0-dim int16 selects": lambda lib, T: lib.arange(3.0)[T(-1, dtype=lib.int16)],
    "int8 index": lambda lib, T: lib.arange(5.0)[T([1, 0], dtype=lib.int8)],
    "int16 index": lambda lib, T: lib.arange(5.0)[T([1, 0], dtype=lib.int16)],
    "int32 index": lambda lib, T: lib.arange(5.0)[T([1, 0], dtype=lib.int32)],
    "float index": lambda lib, T: lib.arange(5.0)[T([1.0])],
    "0-dim float index": lambda lib, T: lib.arange(5.0)[T(1.0)],
    "0-dim float16 index": lambda lib, T: lib.arange(5.0)[T(1.0, dtype=lib.half)],
    "index_put, uint8 mask and a number": lambda lib, T: lib.arange(5.0).index_put(
        (T([1, 0, 1, 0, 2], dtype=lib.uint8),), T(7.0)
    ),
    "index_put, uint8 mask and values": lambda lib, T: lib.arange(5.0).index_put(
        (T([1, 0, 1, 0, 2], dtype=lib.uint8),), T([7.0, 8.0, 9.0])
    ),
    "masked_fill, uint8 mask": lambda lib, T: lib.arange(5.0).masked_fill(
        T([1, 0, 1, 0, 1], dtype=lib.uint8), 1.0
    ),
    "masked_fill, int64 mask": lambda lib, T: lib.arange(5.0).masked_fill(T([1, 0, 1, 0, 1]), 1.0),
    "index a uint8 tensor": lambda lib, T: T([5, 6, 7], dtype=lib.uint8)[T([0, 2])],
}


@pytest.mark.parametrize("name", list(INDEXING))
def test_indexing_with_new_dtypes_matches_torch(torch, name):
    assert_same(torch, result_scenario(INDEXING[name]))


def test_uint8_mask_warns_as_torch(torch):
    def scenario(lib):
        with pytest.warns(UserWarning) as caught:
            lib.arange(5.0)[lib.tensor([1, 0, 1, 0, 1], dtype=lib.uint8)]
        return [str(w.message).split(" (Triggered")[0].replace("torch", "LIB") for w in caught]

    assert [m.replace("opgrad", "LIB") for m in scenario(og)] == scenario(torch)


# ---- autograd in float16 -----------------------------------------------------------------------


def test_float16_tensors_can_require_grad(torch):
    assert_same(
        torch,
        lambda lib: [
            lib.ones(2, dtype=lib.half, requires_grad=True).requires_grad,
            lib.tensor([1.0], dtype=lib.half).requires_grad_().requires_grad,
        ],
    )


@pytest.mark.parametrize("dtype", INTEGRAL[:3])
def test_small_integer_tensors_cannot_require_grad(torch, dtype):
    def scenario(lib):
        return [
            outcome(lambda: lib.ones(2, dtype=getattr(lib, dtype), requires_grad=True)),
            outcome(lambda: lib.ones(2, dtype=getattr(lib, dtype)).requires_grad_()),
        ]

    assert_same(torch, scenario)


GRAPHS = {
    "arithmetic": (lambda lib, x, y: ((x * y + x / 3) * 0.1 - y).sum(), True),
    "broadcast and mean": (lambda lib, x, y: (x + y[0]).square().mean(), True),
    "products": (lambda lib, x, y: (x @ y.t()).relu().sum(), True),
    "views and copies": (
        lambda lib, x, y: lib.cat([x.t().reshape(-1), y[:, 1]]).sum() + x[lib.tensor([0, 2])].sum(),
        True,
    ),
    "through float32": (lambda lib, x, y: (x.float() * 1.5).half().sum() + y.double().sum(), True),
    "functions": (lambda lib, x, y: (x.sin() * y.exp()).tanh().sigmoid().sum(), False),
    "pow and log": (lambda lib, x, y: ((x.abs() + 1) ** y.abs()).log().sum(), False),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_float16_backward_matches_torch(torch, name):
    fn, bit_exact = GRAPHS[name]
    rng = np.random.default_rng(len(name))
    arrays = [rng.standard_normal((4, 3)).astype(np.float16) for _ in range(2)]

    def run(lib):
        x, y = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = fn(lib, x, y)
        return [out, *lib.autograd.grad(out, (x, y))]

    for got, expected in zip(run(og), run(torch)):
        assert dtype_name(got.dtype) == dtype_name(expected.dtype) and got.shape == expected.shape
        got, expected = got.half(), expected.half()
        if bit_exact:
            assert not _half_bits_differ(got.detach(), expected.detach()).any()
        else:
            assert _ulps_apart(got.detach(), expected.detach()).max() <= 2


# ---- the float16 random stream ------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 15, 16, 17, 37, 1000])
@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_float16_random_values_are_torchs(torch, fn, size):
    def draw(lib):
        lib.manual_seed(size)
        first = getattr(lib, fn)(size, dtype=lib.float16)
        return first.numpy().tobytes(), lib.rand(3).numpy().tobytes()  # and the stream after

    assert draw(og) == draw(torch)


@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
def test_float16_random_like_a_transposed_tensor_is_torchs(torch, fn):
    def draw(lib):
        lib.manual_seed(3)
        return getattr(lib, fn)(lib.ones(2, 40, dtype=lib.half).t()).numpy().tobytes()

    assert draw(og) == draw(torch)


def test_float16_gradient_summed_over_a_broadcast_accumulates_in_float32(torch):
    rng = np.random.default_rng(1)
    a, b, w = (rng.standard_normal(s).astype(np.float16) for s in [(4000, 3), (3,), (4000, 3)])

    def grad_of_b(lib):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        ((x + y) * lib.tensor(w)).sum().backward()
        return y.grad

    assert _ulps_apart(grad_of_b(og), grad_of_b(torch)).max() <= 1
