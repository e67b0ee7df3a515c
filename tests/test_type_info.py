"""opgrad.finfo and opgrad.iinfo against torch's: every limit, the text they print, the
default dtype, equality and the errors (issue 15 point 4)."""

from __future__ import annotations

import pytest

import opgrad as og
from torch_oracle import assert_same_error

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(torch, name):
    got, expected = og.finfo(getattr(og, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, field) == getattr(expected, field), field
    assert repr(got) == repr(expected)
    assert str(got) == str(expected)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(torch, name):
    got, expected = og.iinfo(getattr(og, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(got, field) == getattr(expected, field), field
    assert repr(got) == repr(expected)


def test_finfo_of_nothing_is_the_default_dtypes(torch):
    assert repr(og.finfo()) == repr(torch.finfo())
    og.set_default_dtype(og.float64)
    try:
        assert og.finfo().dtype == "float64"
    finally:
        og.set_default_dtype(og.float32)


def test_equality_by_dtype():
    assert og.finfo(og.float32) == og.finfo(og.float32)
    assert og.finfo(og.float32) != og.finfo(og.float64)
    assert og.iinfo(og.int8) == og.iinfo(og.int8)
    with pytest.raises(TypeError):
        hash(og.finfo(og.float32))


@pytest.mark.parametrize(
    "call, phrase",
    [
        (lambda lib: lib.finfo(lib.int32), "requires a floating point input type"),
        (lambda lib: lib.finfo(lib.bool), "requires a floating point input type"),
        (lambda lib: lib.iinfo(lib.float32), "requires an integer input type"),
        (lambda lib: lib.iinfo(lib.bool), "is not supported by"),
        (lambda lib: lib.finfo("float32"), "must be LIB.dtype, not str"),
    ],
)
def test_errors_match_torch(torch, call, phrase):
    assert_same_error(torch, call, TypeError, phrase)


@pytest.mark.parametrize("method", ["half", "byte", "char", "short", "int", "long", "float"])
def test_conversion_methods(torch, method):
    def run(lib):
        x = getattr(lib.tensor([1.5, 300.0, -2.75]), method)()
        return str(x.dtype).split(".")[-1], x.tolist()

    assert run(og) == run(torch)
