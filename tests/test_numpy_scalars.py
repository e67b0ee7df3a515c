"""Numpy scalars given for numbers, against PyTorch.

PyTorch reads a numpy scalar as the Python number it holds (a numpy integer as an int;
numpy floats, ``np.bool_`` and ``np.complex64`` as a float), so it promotes as that number
would and never as a typed tensor. ``ops.aten`` calls take only ``np.float64`` for a
Scalar; numpy scalars on the left of an operator go to the tensor's reflected operator;
``x[i] = v`` takes numpy integers, ``np.float64`` and ``np.complex128`` only.
"""

import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same, outcome, result_scenario

SCALARS = {
    "uint8 200": np.uint8(200),
    "int8 -3": np.int8(-3),
    "int64 5": np.int64(5),
    "float16 1.5": np.float16(1.5),
    "float32 0.5": np.float32(0.5),
    "float64 0.5": np.float64(0.5),
    "bool True": np.bool_(True),
    "complex64 1+1j": np.complex64(1 + 1j),
    "longdouble 1.5": np.longdouble(1.5),
    "uint64 2**63": np.uint64(2**63),
}

OPS = {
    "bool tensor + s": lambda L, T, s: T([True, False]) + s,
    "int8 tensor * s": lambda L, T, s: T([1, 2], dtype=L.int8) * s,
    "s * int8 tensor": lambda L, T, s: s * T([1, 2], dtype=L.int8),
    "s - int8 tensor": lambda L, T, s: s - T([1, 2], dtype=L.int8),
    "s ** int8 tensor": lambda L, T, s: s ** T([1, 2], dtype=L.int8),
    "int8 tensor + s, as a function": lambda L, T, s: L.add(T([1, 0], dtype=L.int8), s),
    "alpha": lambda L, T, s: L.add(T([1, 0], dtype=L.int8), 1, alpha=s),
    "int64 tensor / s": lambda L, T, s: T([1, 2]) / s,
    "int8 tensor == s": lambda L, T, s: T([1, 0], dtype=L.int8) == s,
    "int8 tensor < s": lambda L, T, s: T([1, 0], dtype=L.int8) < s,
    "fill_": lambda L, T, s: T([1, 2], dtype=L.int8).fill_(s),
    "clamp": lambda L, T, s: L.clamp(T([1, 0], dtype=L.int8), min=s),
    "pow with an exponent": lambda L, T, s: T([1, 2], dtype=L.int8).pow(s),
    "where": lambda L, T, s: L.where(T([True, False]), T([1, 0], dtype=L.int8), s),
    "masked_fill": lambda L, T, s: T([1, 0], dtype=L.int8).masked_fill(T([True, False]), s),
    "in place +=": lambda L, T, s: T([1, 0], dtype=L.int8).__iadd__(s),
    "aten.mul.Tensor": lambda L, T, s: L.ops.aten.mul.Tensor(T([1, 0], dtype=L.int8), s),
    "aten.mul.Scalar": lambda L, T, s: L.ops.aten.mul.Scalar(T([1, 0], dtype=L.int8), s),
    "aten.add.Tensor's alpha": lambda L, T, s: L.ops.aten.add.Tensor(T([1.0]), T([1.0]), alpha=s),
    "aten.clamp's max": lambda L, T, s: L.ops.aten.clamp.default(T([1.0]), None, s),
}


def _scenario(op, scalar):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's ComplexWarning, read as in torch
            kind, value = outcome(lambda: OPS[op](lib, lib.tensor, scalar))
        if kind == "ok" and isinstance(value, lib.Tensor):
            return kind, value.tolist(), str(value.dtype).split(".")[-1]
        if kind == "ok" and isinstance(value, np.ndarray):  # numpy's own answer
            return kind, "ndarray", value.tolist(), str(value.dtype)
        return kind, value  # an error, or what Python made of NotImplemented

    return scenario


@pytest.mark.parametrize("scalar", list(SCALARS))
@pytest.mark.parametrize("op", list(OPS))
def test_numpy_scalar_acts_as_the_python_number_it_holds(torch, op, scalar):
    assert_same(torch, _scenario(op, SCALARS[scalar]))


@pytest.mark.parametrize("name", ["uint8 200", "float16 1.5", "float64 0.5", "bool True"])
def test_numpy_scalar_in_a_graph_is_saved_as_torch_saves_it(torch, name):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * SCALARS[name]
        saved = y.grad_fn._saved_other
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), saved.tolist(), str(saved.dtype).split(".")[-1]

    assert_same(torch, scenario)


SETITEM = ["uint8 200", "int64 5", "float16 1.5", "float32 0.5", "float64 0.5", "bool True"]
SETITEM += ["complex64 1+1j", "longdouble 1.5", "uint64 2**63"]


@pytest.mark.parametrize("index", [0, "mask"], ids=["int", "mask"])
@pytest.mark.parametrize("name", SETITEM)
def test_setitem_takes_the_numpy_scalars_torch_takes(torch, name, index):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0])
        key = lib.tensor([True, False]) if index == "mask" else index
        kind, value = outcome(lambda: x.__setitem__(key, SCALARS[name]))
        return kind, value, x.tolist(), x._version

    assert_same(torch, scenario)


def test_setitem_names_a_refused_array_as_torch(torch):
    def scenario(lib):
        return outcome(lambda: lib.tensor([1, 2]).__setitem__(0, np.array(0.5)))

    assert_same(torch, scenario)


ARRAY_OPERANDS = {
    "tensor + 0-dim array": lambda x, a: x + a,
    "tensor ** 0-dim array": lambda x, a: x**a,
    "0-dim array - tensor": lambda x, a: a - x,
    "0-dim array ** tensor": lambda x, a: a**x,
    "tensor == 0-dim array": lambda x, a: x == a,
    "0-dim array == tensor": lambda x, a: a == x,
    "tensor != 0-dim array": lambda x, a: x != a,
    "tensor += 0-dim array": lambda x, a: x.__iadd__(a),
}


@pytest.mark.parametrize("name", list(ARRAY_OPERANDS))
def test_numpy_array_operand_is_left_to_numpy_as_in_torch(torch, name):
    def scenario(lib):
        x = lib.tensor([1, 2], dtype=lib.int8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's DeprecationWarning for __array_wrap__
            kind, value = outcome(lambda: ARRAY_OPERANDS[name](x, np.array(0.5)))
        if kind == "ok" and isinstance(value, lib.Tensor):
            return kind, value.tolist(), str(value.dtype).split(".")[-1]
        return kind, value if kind != "ok" else type(value).__name__

    assert_same(torch, scenario)


def test_numpy_ufunc_of_a_tensor_gives_a_tensor_as_torch(torch):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = np.greater(lib.tensor([1, 2]), 1)
        return type(r).__name__, r.tolist(), str(r.dtype).split(".")[-1]

    assert_same(torch, scenario)


@pytest.mark.parametrize("name", ["uint8 200", "float16 1.5", "bool True", "float64 0.5"])
def test_result_type_reads_a_numpy_scalar_as_a_number(torch, name):
    def scenario(lib):
        return str(lib.result_type(lib.tensor([1], dtype=lib.int8), SCALARS[name]))

    assert scenario(og).replace("opgrad", "torch") == scenario(torch)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8"])
@pytest.mark.parametrize(
    "data",
    [[np.float16(1.5)], [np.float32(1.5), np.float32(2)], [[np.float16(1)]], [np.float64(1.5)]],
    ids=["float16", "float32 pair", "nested float16", "float64 truncates"],
)
def test_integer_tensor_of_numpy_float_scalars_is_refused_as_torch(torch, data, dtype):
    def scenario(lib):
        kind, value = outcome(lambda: lib.tensor(data, dtype=getattr(lib, dtype)))
        return (kind, value.tolist()) if kind == "ok" else (kind, value)

    assert_same(torch, scenario)


INTEGER_DATA = [
    ("float16_alone", lambda lib: [np.float16(1.5)]),
    ("float16_after_a_float", lambda lib: [1.5, np.float16(1)]),
    ("python_floats_truncate", lambda lib: [1.5, -2.7]),
    ("numpy_bool_among_ints", lambda lib: [1, np.bool_(True)]),
    ("python_bool_among_ints", lambda lib: [True, 2]),
    ("float32_scalar", lambda lib: [np.float32(2)]),
    ("float64_scalar", lambda lib: [np.float64(2.5)]),
    ("int_beyond_int64", lambda lib: [1, 2**70]),
    ("float_tensor_element", lambda lib: [lib.tensor(1.5)]),
    ("int_tensor_element", lambda lib: [lib.tensor(2), 3]),
]


@pytest.mark.parametrize("make", [m for _, m in INTEGER_DATA], ids=[n for n, _ in INTEGER_DATA])
def test_integer_tensor_data_is_read_element_by_element_as_torch(torch, make):
    assert_same(torch, result_scenario(lambda lib, tensor: tensor(make(lib), dtype=lib.int64)))
