"""``opgrad.promote_types`` and ``opgrad.result_type``: PyTorch's type promotion, asked
directly."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .tensor import Tensor, wrap_scalar


def promote_types(type1: dtypes.dtype, type2: dtypes.dtype) -> dtypes.dtype:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their
    category (uint8 and int8 meet at int16)."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, dtypes.dtype):
            raise TypeError(
                f"promote_types(): argument '{name}' (position {position}) must be "
                f"opgrad.dtype, not {type(value).__name__}"
            )
    return dtypes.promote_types(type1, type2)


def _operand(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.generic)):
        return wrap_scalar(value)  # a number is a wrapped number, as in an op
    return None


def result_type(tensor1, tensor2) -> dtypes.dtype:
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or Python numbers)
    gives."""
    operands = [_operand(tensor1), _operand(tensor2)]
    if None in operands:
        got = ", ".join(
            "Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (tensor1, tensor2)
        )
        raise TypeError(
            f"result_type() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n * (Tensor tensor, Tensor other)\n * (Number scalar, Tensor "
            "tensor)\n * (Tensor tensor, Number other)\n * (Number scalar1, Number scalar2)\n"
        )
    return dtypes.FROM_NUMPY[dtypes.result_type(*operands)]
