"""Lists, tuples, ranges and numpy arrays used as indices, against PyTorch.

PyTorch turns index data into a tensor of its own: bool and uint8 data stay masks,
anything else becomes int64 (a float truncated toward zero, a numpy array of any dtype
cast), while a Tensor index keeps its dtype and its rules. A tuple inside an index is a
sequence like a list.
"""

import warnings

import numpy as np
import pytest

import opgrad as og
from torch_oracle import aten_log, assert_same, message, outcome


def _x(lib):
    return lib.tensor([1.0, 2.0, 3.0])


def _m(lib):
    return lib.tensor([[1.0, 2.0], [3.0, 4.0]])


GETITEM = {
    "int8 array": lambda L: _x(L)[np.array([1], np.int8)],
    "int16 array": lambda L: _x(L)[np.array([2, 0], np.int16)],
    "int32 array": lambda L: _x(L)[np.array([1], np.int32)],
    "uint16 array": lambda L: _x(L)[np.array([1], np.uint16)],
    "uint64 array": lambda L: _x(L)[np.array([2], np.uint64)],
    "float16 array": lambda L: _x(L)[np.array([1.0], np.float16)],
    "float64 array truncates": lambda L: _x(L)[np.array([1.7, -0.5])],
    "uint8 array is a mask": lambda L: _x(L)[np.array([1, 0, 1], np.uint8)],
    "bool array is a mask": lambda L: _x(L)[np.array([True, False, True])],
    "2-d array is one index": lambda L: _m(L)[np.array([[0, 1], [1, 0]], np.int16)],
    "0-dim int8 array selects": lambda L: _x(L)[np.array(1, np.int8)],
    "0-dim float array selects": lambda L: _x(L)[np.array(1.0)],
    "0-dim uint8 array is a mask": lambda L: _x(L)[np.array(1, np.uint8)],
    "float list": lambda L: _x(L)[[1.0]],
    "float list truncates": lambda L: _x(L)[[1.7, -0.5]],
    "int and float list": lambda L: _x(L)[[1, 2.5]],
    "numpy int8 scalars in a list": lambda L: _x(L)[[np.int8(1), np.int8(2)]],
    "numpy uint8 scalars are a mask": lambda L: _x(L)[[np.uint8(1), np.uint8(0), np.uint8(1)]],
    "nested float list": lambda L: _m(L)[[[1.5, 0.0]]],
    "empty list": lambda L: _x(L)[[]],
    "range": lambda L: _x(L)[range(2)],
    "tuple in a list": lambda L: _x(L)[[(0, 1)]],
    "tuple in the index": lambda L: _x(L)[(0, 1),],
    "tuple and an int": lambda L: _m(L)[(0, 1), 0],
    "tuple and an int in a list": lambda L: _m(L)[[(0, 1), 0]],
    "two tuples": lambda L: _m(L)[((0, 1), (1, 0))],
    "tuple and a list": lambda L: _m(L)[((0, 1), [1, 0])],
    "tuple of bools": lambda L: _x(L)[((True, False, True),)],
    "empty tuple": lambda L: _x(L)[(),],
    "array in a list": lambda L: _x(L)[[np.array([1])]],
    "0-dim array in a list": lambda L: _x(L)[[np.array(1)]],
    "integral tensors in a nested list": lambda L: _x(L)[[[L.tensor(1), L.tensor(0)]]],
    # refused as PyTorch refuses them
    "complex list": lambda L: _x(L)[[1j]],
    "numpy float16 scalar in a list": lambda L: _x(L)[[np.float16(1.0)]],
    "numpy float32 scalar in a list": lambda L: _x(L)[[np.float32(1.0)]],
    "nan in a list": lambda L: _x(L)[[float("nan")]],
    "huge float in a list": lambda L: _x(L)[[1e30]],
    "float tensor in a nested list": lambda L: _x(L)[[[L.tensor(1.5), L.tensor(0)]]],
    "int8 tensor index": lambda L: _x(L)[L.tensor([1], dtype=L.int8)],
    "float tensor index": lambda L: _x(L)[L.tensor([1.0])],
    "float scalar": lambda L: _x(L)[1.0],
}


def _scenario(fn):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kind, value = outcome(lambda: fn(lib))
        seen = [
            message(w.message).split(" (Triggered")[0]
            for w in caught
            if not issubclass(w.category, RuntimeWarning)
        ]
        if kind == "ok":
            return kind, value.tolist(), str(value.dtype).split(".")[-1], seen
        return kind, value, seen

    return scenario


@pytest.mark.parametrize("name", list(GETITEM))
def test_index_data_is_converted_as_torch(torch, name):
    assert_same(torch, _scenario(GETITEM[name]))


SETITEM = {
    "int8 array": lambda L, x: x.__setitem__(np.array([0, 2], np.int8), 5.0),
    "float list": lambda L, x: x.__setitem__([2.0], 5.0),
    "tuple in the index": lambda L, x: x.__setitem__(((0, 1),), L.tensor([7.0, 8.0])),
    "uint16 array": lambda L, x: x.__setitem__(np.array([1], np.uint16), 4.0),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem_with_index_data_matches_torch(torch, name):
    def scenario(lib):
        x = _x(lib)
        SETITEM[name](lib, x)
        return x.tolist(), x._version

    assert_same(torch, scenario)


@pytest.mark.parametrize(
    "index",
    [np.array([1]), np.array([1], np.int8), np.array([1.5]), np.array([True, False, True])],
    ids=["int64 array", "int8 array", "float array", "bool array"],
)
def test_a_dispatch_mode_sees_the_array_lifted_then_copied_as_torch(torch, index):
    assert aten_log(og, lambda: _x(og)[index]) == aten_log(torch, lambda: _x(torch)[index])


def test_a_zero_dim_array_index_is_read_once_as_torch(torch):
    index = np.array(1, np.int8)
    assert aten_log(og, lambda: _x(og)[index]) == aten_log(torch, lambda: _x(torch)[index])
