"""opgrad dtypes and PyTorch's type promotion rules.

For the five supported dtypes, PyTorch's promotion lattice is a total order
(bool < int32 < int64 < float32 < float64), so ``promote_types`` is a max.
``result_type`` adds the three operand tiers: dimensioned tensors outrank
0-dim tensors, which outrank wrapped Python scalars, except that a lower tier
of a higher category (bool < int < float) lifts the result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float32", "float64", "int32", "int64", "bool"]


class dtype:
    """A tensor element type (``opgrad.float32``)."""

    __slots__ = ("name", "np", "rank", "category", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype, rank: int, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.rank = rank
        self.category = category
        self.is_floating_point = category == 2
        self.itemsize = self.np.itemsize

    @property
    def is_signed(self) -> bool:
        return self.name != "bool"

    def __repr__(self) -> str:
        return f"opgrad.{self.name}"

    def __reduce__(self):
        return self.name


bool_ = dtype("bool", np.bool_, 0, 0)
int32 = dtype("int32", np.int32, 1, 1)
int64 = dtype("int64", np.int64, 2, 1)
float32 = dtype("float32", np.float32, 3, 2)
float64 = dtype("float64", np.float64, 4, 2)
globals()["bool"] = bool_

ALL_DTYPES = (bool_, int32, int64, float32, float64)
BY_RANK = ALL_DTYPES
FROM_NUMPY = {d.np: d for d in ALL_DTYPES}
# numpy types opgrad stores in a narrower supported dtype
_NUMPY_FALLBACK = {
    np.dtype(np.float16): float32,
    np.dtype(np.int8): int32,
    np.dtype(np.int16): int32,
    np.dtype(np.uint8): int64,
    np.dtype(np.uint16): int32,
    np.dtype(np.uint32): int64,
}

# aliases as in torch
half = None
float = float32
double = float64
long = int64
int = int32

_default_float = float32
DEFAULT_FOR_CATEGORY = [bool_, int64, float32]


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d
    DEFAULT_FOR_CATEGORY[2] = d


def from_numpy_dtype(npdt) -> dtype:
    npdt = np.dtype(npdt)
    found = FROM_NUMPY.get(npdt) or _NUMPY_FALLBACK.get(npdt)
    if found is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{npdt}. The only supported types are: "
            "float64, float32, int64, int32, and bool."
        )
    return found


def to_numpy_dtype(d) -> np.dtype:
    if isinstance(d, dtype):
        return d.np
    raise TypeError(f"expected an opgrad dtype, got {d!r}")


# PyTorch's ScalarType names ("Float") and C++ type names ("float"), for error messages.
_SCALAR_TYPE_NAMES = {
    "float32": ("Float", "float"),
    "float64": ("Double", "double"),
    "int64": ("Long", "long int"),
    "int32": ("Int", "int"),
    "bool": ("Bool", "bool"),
}


def scalar_type_name(npdtype) -> str:
    """``Float`` for float32: how PyTorch's messages name a dtype."""
    return _SCALAR_TYPE_NAMES[np.dtype(npdtype).name][0]


def cpp_type_name(npdtype) -> str:
    """``float`` for float32, ``long int`` for int64: PyTorch's C++ spelling."""
    return _SCALAR_TYPE_NAMES[np.dtype(npdtype).name][1]


def legacy_tensor_type(npdtype) -> str:
    """``opgrad.FloatTensor`` for float32 (torch.FloatTensor in PyTorch)."""
    return f"opgrad.{scalar_type_name(npdtype)}Tensor"


def promote_types(a: dtype, b: dtype) -> dtype:
    return a if a.rank >= b.rank else b


_RANK_OF_NP = {d.np: d.rank for d in ALL_DTYPES}


def result_type(*tensors) -> np.dtype:
    """PyTorch's result dtype (as a numpy dtype) of an op over these tensors."""
    dim_rank = zero_rank = wrapped_rank = -1
    for t in tensors:
        if t is None:
            continue
        data = t._data
        rank = _RANK_OF_NP[data.dtype]
        if t._wrapped:
            wrapped_rank = max(wrapped_rank, rank)
        elif data.ndim:
            dim_rank = max(dim_rank, rank)
        else:
            zero_rank = max(zero_rank, rank)
    rank = dim_rank
    if zero_rank >= 0 and (rank < 0 or BY_RANK[zero_rank].category > BY_RANK[rank].category):
        rank = zero_rank
    if wrapped_rank >= 0:
        if rank < 0:
            rank = wrapped_rank
        else:
            category = BY_RANK[wrapped_rank].category
            if category > BY_RANK[rank].category:
                rank = DEFAULT_FOR_CATEGORY[category].rank
    return BY_RANK[rank].np


def float_result_type(*tensors) -> np.dtype:
    """``result_type``, with integral and bool results lifted to the default float."""
    dt = result_type(*tensors)
    return dt if dt.kind == "f" else _default_float.np
