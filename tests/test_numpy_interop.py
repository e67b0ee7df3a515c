"""Numpy arrays in and out, against PyTorch: ``from_numpy``, ``as_tensor`` and ``tensor``
keep every dtype opgrad has (uint8, int8, int16 and float16 included, never widened),
refuse the others, negative strides, odd strides and foreign byte orders with torch's
exception and text, and treat a read-only array as torch does (a warning once, then a
tensor that writes through to the array). Python numbers stored into small integer
dtypes are range-checked and converted as torch converts them.
"""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import opgrad as og
from opgrad import numpy_interop
from torch_oracle import assert_same, outcome, result_scenario

ENTRY_POINTS = ("from_numpy", "tensor", "as_tensor")
KEPT = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
# numpy dtypes torch has no tensor dtype for
REFUSED = {
    "longdouble": lambda: np.zeros(2, np.longdouble),
    "clongdouble": lambda: np.zeros(2, np.clongdouble),
    "object": lambda: np.array([1, 2], dtype=object),
    "str": lambda: np.array(["a", "b"]),
    "bytes": lambda: np.array([b"a", b"b"]),
    "datetime64": lambda: np.zeros(2, "datetime64[s]"),
    "timedelta64": lambda: np.zeros(2, "timedelta64[s]"),
    "void": lambda: np.zeros(2, "V4"),
}
# numpy dtypes torch 2.13 takes (as limited dtypes) that opgrad has no dtype for yet
NOT_YET = ("uint16", "uint32", "uint64", "complex64", "complex128")


@pytest.fixture
def warn_again(monkeypatch):
    """The not-writable warning comes once per program, as in torch; each test that looks
    for it starts as if it had not come yet."""
    monkeypatch.setattr(numpy_interop, "_warned_not_writable", False)


def _made_by(lib, entry: str, array: np.ndarray):
    return getattr(lib, entry)(array)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("dtype", KEPT)
def test_numpy_dtype_is_kept(torch, entry, dtype):
    values = np.array([0, 1, 250, 7], dtype=np.int64).astype(dtype)

    def scenario(lib):
        t = _made_by(lib, entry, values.copy())
        return str(t.dtype).split(".")[-1], t.tolist()

    assert_same(torch, scenario)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("kind", list(REFUSED))
def test_numpy_dtype_torch_refuses_raises_its_type_error(torch, entry, kind):
    expected = outcome(lambda: _made_by(torch, entry, REFUSED[kind]()))
    assert expected[0] == "TypeError" and "The only supported types are" in expected[1]
    assert outcome(lambda: _made_by(og, entry, REFUSED[kind]())) == expected


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("dtype", NOT_YET)
def test_numpy_dtype_opgrad_lacks_raises_type_error_not_widens(torch, entry, dtype):
    # a deliberate gap: torch gives a tensor of this dtype, opgrad has none to give
    assert _made_by(torch, entry, np.zeros(2, dtype)).dtype == getattr(torch, dtype)
    with pytest.raises(TypeError, match=f"can't convert np.ndarray of type numpy.{dtype}"):
        _made_by(og, entry, np.zeros(2, dtype))


LAYOUTS = {
    "negative stride": lambda: np.arange(4.0)[::-1],
    "negative stride, one element": lambda: np.arange(1.0)[::-1],
    "negative stride in 2-d": lambda: np.ones((2, 3))[:, ::-1],
    "negative stride, empty": lambda: np.zeros((0, 3))[:, ::-1],
    "big-endian int32": lambda: np.arange(3, dtype=">i4"),
    "big-endian float64": lambda: np.arange(3, dtype=">f8"),
    "big-endian 0-d": lambda: np.array(3, dtype=">i4"),
    "big-endian and negative stride": lambda: np.arange(3, dtype=">f8")[::-1],
    "one-byte dtype, big-endian": lambda: np.arange(3, dtype=">u1"),
    "stride not a multiple of the item": lambda: np.zeros(3, [("a", "f8"), ("b", "i1")])["a"],
    "object dtype, negative stride": lambda: np.array([1, 2], dtype=object)[::-1],
}


@pytest.mark.parametrize("entry", ENTRY_POINTS + ("tensor with dtype", "as_tensor with dtype"))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_array_layout_torch_refuses_raises_as_torch(torch, entry, layout):
    def scenario(lib):
        array = LAYOUTS[layout]()
        if entry.endswith("with dtype"):
            return getattr(lib, entry.split()[0])(array, dtype=lib.float64).tolist()
        return _made_by(lib, entry, array).tolist()

    assert outcome(lambda: scenario(og)) == outcome(lambda: scenario(torch))


def test_from_numpy_refuses_a_non_array_with_torchs_type_name(torch):
    for value in ([1, 2], np.float32(1.0), 3):
        assert outcome(lambda: og.from_numpy(value)) == outcome(lambda: torch.from_numpy(value))


def _read_only(values=(0.0, 1.0, 2.0), dtype=np.float64) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


def _warnings_of(fn) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


READ_ONLY_CALLS = {
    "from_numpy": "lib.from_numpy(array)",
    "tensor": "lib.tensor(array)",
    "as_tensor": "lib.as_tensor(array)",
    "as_tensor with a new dtype": "lib.as_tensor(array, dtype=lib.float32)",
}
_WARNINGS_OF_A_FRESH_PROGRAM = """
import json, warnings
import numpy as np
import {lib} as lib
array = np.arange(3.0)
array.flags.writeable = False
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {call}
print(json.dumps([str(w.message).split(" (Triggered internally")[0] for w in caught]))
"""


@pytest.fixture(scope="module")
def torchs_read_only_warnings(torch):
    """What each entry point warns about a read-only array in a fresh torch program (torch
    warns once per program, so in this one it may have warned already)."""
    runs = {
        entry: subprocess.Popen(
            [sys.executable, "-c", _WARNINGS_OF_A_FRESH_PROGRAM.format(lib="torch", call=call)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for entry, call in READ_ONLY_CALLS.items()
    }
    return {entry: json.loads(run.communicate()[0]) for entry, run in runs.items()}


@pytest.mark.parametrize("entry", list(READ_ONLY_CALLS))
def test_read_only_array_warns_as_torch(torchs_read_only_warnings, warn_again, entry):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(READ_ONLY_CALLS[entry], {"lib": og, "array": _read_only()})
    got = [str(w.message).replace("opgrad", "torch") for w in caught]
    assert got == torchs_read_only_warnings[entry]
    assert (entry != "tensor") == bool(got)


def test_read_only_warning_comes_once_per_program(warn_again):
    assert len(_warnings_of(lambda: og.from_numpy(_read_only()))) == 1
    assert _warnings_of(lambda: og.from_numpy(_read_only())) == []
    assert _warnings_of(lambda: og.as_tensor(_read_only())) == []


def test_read_only_warning_points_at_the_callers_line(warn_again):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        og.as_tensor(_read_only())
    assert caught[0].filename == __file__


def test_read_only_warning_comes_before_the_layout_error(warn_again):
    array = np.arange(3.0)[::-1]
    array.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        with pytest.raises(ValueError, match="negative"):
            og.from_numpy(array)


@pytest.mark.parametrize("entry", ("from_numpy", "as_tensor"))
def test_read_only_array_is_written_through_as_torch(torch, warn_again, entry):
    def scenario(lib):
        array = _read_only()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = _made_by(lib, entry, array)
        t[0] = 100
        t.add_(1)
        return array.tolist(), t.tolist(), array.flags.writeable

    assert scenario(og) == scenario(torch) == ([101.0, 2.0, 3.0], [101.0, 2.0, 3.0], False)


def test_tensor_of_a_read_only_array_is_a_copy(torch):
    def scenario(lib):
        array = _read_only()
        t = lib.tensor(array)
        t[0] = 100
        return array.tolist(), t.tolist()

    assert scenario(og) == scenario(torch)


def test_read_only_array_with_shared_elements_refuses_in_place_ops(torch, warn_again):
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = lib.from_numpy(np.broadcast_to(np.arange(3.0), (2, 3)))
        return t.stride(), outcome(lambda: t.add_(1))

    assert scenario(og) == scenario(torch)


def test_memory_no_one_may_write_is_copied_not_written(warn_again):
    # a deliberate difference: torch writes into the immutable bytes (or crashes on a
    # read-only mmap); opgrad gives the tensor its own copy, which reads the same values
    data = b"abcd"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = og.from_numpy(np.frombuffer(data, dtype=np.uint8))
    t[0] = 65
    assert data == b"abcd" and t.tolist() == [65, 98, 99, 100]


@pytest.mark.parametrize("dtype", ("uint8", "int8", "int16", "float16"))
def test_from_numpy_shares_memory_in_the_small_dtypes(dtype):
    array = np.arange(4).astype(dtype)
    t = og.from_numpy(array)
    array[1] = 9
    t[2] = 7
    assert t.tolist() == [0, 9, 7, 3] and array.tolist() == [0, 9, 7, 3]
    assert og.as_tensor(array).dtype is getattr(og, dtype)


def test_uint8_array_arithmetic_wraps_around(torch):
    assert_same(torch, lambda lib: (lib.tensor(np.array([250], np.uint8)) + 10).tolist())
    assert og.from_numpy(np.array([250], np.uint8)).add(10).tolist() == [4]


CONVERSIONS = {
    # casts of numpy data follow torch's: float64 -> float16 through float32 ...
    "float64 array to float16": lambda lib, T: T(np.array([1 + 2**-11 + 2**-30]), dtype=lib.half),
    "float list to float16": lambda lib, T: T([1 + 2**-11 + 2**-30, 70000.0], dtype=lib.float16),
    # ... and floats to uint8 through int64 (-1.7 -> 255, 300.5 -> 44)
    "float64 array to uint8": lambda lib, T: T(np.array([1.7, -1.7, 300.5]), dtype=lib.uint8),
    "int64 array to uint8": lambda lib, T: T(np.array([300, -1]), dtype=lib.uint8),
    "uint8 array as int16": lambda lib, T: lib.as_tensor(
        np.array([255], np.uint8), dtype=lib.int16
    ),
    # Python numbers into small integer dtypes are range-checked ...
    "300 into uint8": lambda lib, T: T([300], dtype=lib.uint8),
    "-1 into uint8 wraps": lambda lib, T: T([-1, -255], dtype=lib.uint8),
    "-256 into uint8": lambda lib, T: T([-256], dtype=lib.uint8),
    "128 into int8": lambda lib, T: T([128], dtype=lib.int8),
    "-129 into int8": lambda lib, T: T([[1], [-129]], dtype=lib.int8),
    "40000 into int16": lambda lib, T: T(40000, dtype=lib.int16),
    "2**31 into int32": lambda lib, T: T([2**31], dtype=lib.int32),
    "2**63 into uint8": lambda lib, T: T([2**63], dtype=lib.uint8),
    "2**64 into float32": lambda lib, T: T([2**64], dtype=lib.float32),
    # ... floats too: truncated toward zero when they fit
    "floats into int16": lambda lib, T: T([1.7, -1.7, 127.9], dtype=lib.int16),
    "-0.5 into uint8": lambda lib, T: T([-0.5], dtype=lib.uint8),
    "255.9 into uint8": lambda lib, T: T([255.9], dtype=lib.uint8),
    "nan into uint8": lambda lib, T: T([float("nan")], dtype=lib.uint8),
    "inf into int16": lambda lib, T: T([float("inf")], dtype=lib.int16),
    "1e30 into int64": lambda lib, T: T([1e30], dtype=lib.int64),
    "numbers into bool": lambda lib, T: T([300, 0.5, -2, 0], dtype=lib.bool),
    "bools into int8": lambda lib, T: T([True, False], dtype=lib.int8),
    "numpy int64 300 into uint8": lambda lib, T: T([np.int64(300)], dtype=lib.uint8),
    "numpy int8 -1 into uint8": lambda lib, T: T([np.int8(-1)], dtype=lib.uint8),
    # numpy scalars keep their dtype and promote as dtypes do
    "numpy uint8 scalar": lambda lib, T: T(np.uint8(250)) + 10,
    "numpy uint8 and int8": lambda lib, T: T([np.uint8(3), np.int8(2)]),
    "numpy float16 and int": lambda lib, T: T([np.float16(3), 2]),
    "numpy float16 and float": lambda lib, T: T([np.float16(3), 2.5]),
    "numpy int16 and float16": lambda lib, T: T([np.int16(3), np.float16(1)]),
    "uint8 and int8 tensors": lambda lib, T: T([T(1, dtype=lib.uint8), T(2, dtype=lib.int8)]),
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_data_is_converted_as_torch(torch, name):
    assert_same(torch, result_scenario(CONVERSIONS[name]))
