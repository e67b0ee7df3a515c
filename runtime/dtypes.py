"""opgrad dtypes and PyTorch's type promotion rules.

``promote_types`` follows PyTorch's lattice: bool < every other dtype, the integers
by width (uint8 and int8 meet at int16, the one pair that is not a max), then
float16 < float32 < float64 above every integer. ``result_type`` adds the three
operand tiers: dimensioned tensors outrank 0-dim tensors, which outrank wrapped
Python scalars, except that a lower tier of a higher category (bool < integral <
floating) takes part in the result.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "dtype",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
]


class dtype:
    """A tensor element type (``opgrad.float32``)."""

    __slots__ = (
        "name",
        "np",
        "index",
        "category",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "scalar_type_name",
        "cpp_type_name",
    )

    def __init__(
        self, name: str, np_dtype, index: int, category: int, scalar_name: str, cpp_name: str
    ) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.index = index  # position in the promotion lattice's table
        self.category = category  # 0 bool, 1 integral, 2 floating
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "if"
        self.itemsize = self.np.itemsize
        self.scalar_type_name = scalar_name  # PyTorch's ScalarType name: "Float"
        self.cpp_type_name = cpp_name  # its C++ type: "float"

    @property
    def is_complex(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"opgrad.{self.name}"

    def __reduce__(self):
        return self.name


bool_ = dtype("bool", np.bool_, 0, 0, "Bool", "bool")
uint8 = dtype("uint8", np.uint8, 1, 1, "Byte", "unsigned char")
int8 = dtype("int8", np.int8, 2, 1, "Char", "signed char")
int16 = dtype("int16", np.int16, 3, 1, "Short", "short int")
int32 = dtype("int32", np.int32, 4, 1, "Int", "int")
int64 = dtype("int64", np.int64, 5, 1, "Long", "long int")
float16 = dtype("float16", np.float16, 6, 2, "Half", "c10::Half")
float32 = dtype("float32", np.float32, 7, 2, "Float", "float")
float64 = dtype("float64", np.float64, 8, 2, "Double", "double")
globals()["bool"] = bool_

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
FROM_NUMPY = {d.np: d for d in ALL_DTYPES}

# aliases as in torch
half = float16
short = int16
float = float32
double = float64
long = int64
int = int32


# A Python int in [2**63, 2**64) is a uint64 Scalar in PyTorch. opgrad has no uint64
# tensors, but such a number takes part in type promotion as a wrapped number: within the
# integers the tensors decide, a float wins, and it meets bool (or another integer number)
# with PyTorch's refusal. Not public: no tensor the user sees has it.
uint64_number = dtype("uint64", np.uint64, len(ALL_DTYPES), 1, "UInt64", "uint64_t")
_NUMBER_TYPES = {**FROM_NUMPY, uint64_number.np: uint64_number}


def _promotion_table() -> tuple:
    """``table[a.index][b.index]``: the lattice is the order of ALL_DTYPES, except that
    uint8 and int8 (neither holds the other's values) meet at int16. The uint64 number
    meets only itself and the floats: None marks PyTorch's refusal."""
    table = [[a if a.index >= b.index else b for b in ALL_DTYPES] for a in ALL_DTYPES]
    table[uint8.index][int8.index] = table[int8.index][uint8.index] = int16
    for row, d in zip(table, ALL_DTYPES):
        row.append(d if d.is_floating_point else None)
    table.append([d if d.is_floating_point else None for d in ALL_DTYPES] + [uint64_number])
    return tuple(tuple(row) for row in table)


_PROMOTE = _promotion_table()

_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


# numpy dtypes PyTorch accepts that opgrad has no dtype for yet
_NOT_YET_SUPPORTED = {
    np.dtype(t): name
    for t, name in (
        (np.uint16, "uint16"),
        (np.uint32, "uint32"),
        (np.uint64, "uint64"),
        (np.complex64, "complex64"),
        (np.complex128, "complex128"),
    )
}


def from_numpy_dtype(npdt) -> dtype:
    """The opgrad dtype of a numpy dtype, PyTorch's TypeError for one it cannot hold."""
    found = FROM_NUMPY.get(npdt)
    if found is not None:
        return found
    npdt = np.dtype(npdt)
    found = FROM_NUMPY.get(npdt.newbyteorder("=")) if npdt.isnative is False else None
    if found is not None:
        return found  # byte order is the caller's concern (numpy interop refuses it)
    type_name = npdt.type.__name__
    missing = _NOT_YET_SUPPORTED.get(npdt.newbyteorder("="))
    if missing is not None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{type_name}: opgrad has no {missing} "
            f"dtype yet (torch.{missing} in PyTorch)"
        )
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{type_name}. The only supported types are: "
        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
        "uint32, uint16, uint8, and bool."
    )


def to_numpy_dtype(d) -> np.dtype:
    if isinstance(d, dtype):
        return d.np
    raise TypeError(f"expected an opgrad dtype, got {d!r}")


def scalar_type_name(npdtype) -> str:
    """``Float`` for float32, ``Byte`` for uint8: how PyTorch's messages name a dtype."""
    return FROM_NUMPY[np.dtype(npdtype)].scalar_type_name


def cpp_type_name(npdtype) -> str:
    """``float`` for float32, ``long int`` for int64: PyTorch's C++ spelling."""
    return FROM_NUMPY[np.dtype(npdtype)].cpp_type_name


def legacy_tensor_type(npdtype) -> str:
    """``opgrad.FloatTensor`` for float32 (torch.FloatTensor in PyTorch)."""
    return f"opgrad.{scalar_type_name(npdtype)}Tensor"


def promote_types(a: dtype, b: dtype) -> dtype:
    return _PROMOTE[a.index][b.index]


def _promote_numbers(a: dtype, b: dtype) -> dtype:
    """``promote_types`` where one side may be the uint64 number (PyTorch's refusal)."""
    found = _PROMOTE[a.index][b.index]
    if found is None:
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{a.scalar_type_name} and {b.scalar_type_name}"
        )
    return found


def _combine_tiers(higher, lower):
    """PyTorch's combine_categories: a higher operand tier decides the result unless a
    lower tier brings a higher category (bool -> anything, anything -> floating)."""
    if higher is None:
        return lower
    if lower is None or higher.category == 2:
        return higher
    if higher.category == 0 or lower.category == 2:
        return _promote_numbers(higher, lower)
    return higher


def result_type(*tensors) -> np.dtype:
    """PyTorch's result dtype (as a numpy dtype) of an op over these tensors."""
    dim = zero = wrapped = None
    for t in tensors:
        if t is None:
            continue
        data = t._data
        if t._wrapped:
            d = _NUMBER_TYPES[data.dtype]
            if d.category == 2:  # a Python float counts as the default dtype
                d = _default_float
            wrapped = d if wrapped is None else _promote_numbers(wrapped, d)
            continue
        d = FROM_NUMPY[data.dtype]
        if data.ndim:
            dim = d if dim is None else _PROMOTE[dim.index][d.index]
        else:
            zero = d if zero is None else _PROMOTE[zero.index][d.index]
    return _combine_tiers(dim, _combine_tiers(zero, wrapped)).np


def float_result_type(*tensors) -> np.dtype:
    """``result_type``, with integral and bool results lifted to the default float."""
    dt = result_type(*tensors)
    return dt if dt.kind == "f" else _default_float.np
