"""``opgrad.linalg``: the norms and the singular value decomposition of torch.linalg.
vector_norm, svd and svdvals are the aten ops themselves; matrix_norm is composed as PyTorch
composes it (linalg_vector_norm over both dims for 'fro', linalg_vector_norm(1) over one dim
then amax/amin over the other for 1, -1, inf, -inf, and the singular values of the matrices
moved to the last two dims, summed for 'nuc' or their amax/amin for 2/-2), so its nodes are
LinalgVectorNormBackward0, AmaxBackward0, AminBackward0 and SumBackward1."""

from __future__ import annotations

import math

import numpy as np
from typing import Optional, Sequence, Union

from . import dtypes
from .cpu_support import write_out
from .generated import ops as aten
from .generated.python_surface import FUNCTIONS as _FUNCTIONS
from .numpy_kernels import wrap_dim
from .overrides import overridable
from .python_arg_parser import _overloaded
from .svd_kernels import LinAlgError
from .tensor import Tensor
from .type_promotion import promote_types

__all__ = [
    "LinAlgError",
    "cross",
    "matrix_norm",
    "matrix_power",
    "multi_dot",
    "svd",
    "svdvals",
    "vector_norm",
]

vector_norm = _overloaded(
    "linalg_vector_norm",
    "linalg.vector_norm",
    _FUNCTIONS["linalg_vector_norm"],
    varargs=False,
)
svd = _overloaded("linalg_svd", "linalg.svd", _FUNCTIONS["linalg_svd"], varargs=False)
multi_dot = _overloaded(
    "linalg_multi_dot", "linalg.multi_dot", _FUNCTIONS["linalg_multi_dot"], varargs=False
)
matrix_power = _overloaded(
    "linalg_matrix_power", "linalg.matrix_power", _FUNCTIONS["linalg_matrix_power"], varargs=False
)
cross = _overloaded("linalg_cross", "linalg.cross", _FUNCTIONS["linalg_cross"], varargs=False)
svdvals = _overloaded(
    "linalg_svdvals", "linalg.svdvals", _FUNCTIONS["linalg_svdvals"], varargs=False
)


def _matrix_dims(A, dim: Sequence[int]) -> list:
    """PyTorch's checks of A and dim, in its order; the dims wrapped."""
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if A.dtype.is_floating_point is False and not A.dtype.is_complex:
        raise RuntimeError(
            "linalg.matrix_norm: Expected a floating point or complex tensor as input. "
            f"Got {dtypes.scalar_type_name(A._data.dtype)}"
        )
    dim = list(dim)
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}"
        )
    dim = [wrap_dim(d, A.dim()) for d in dim]
    if dim[0] == dim[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return dim


def _check_dtype(A, dtype) -> None:
    if dtype is None:
        return
    if promote_types(A.dtype, dtype) is not dtype:
        raise RuntimeError(
            f"linalg.matrix_norm: the dtype of the input "
            f"({dtypes.scalar_type_name(A._data.dtype)}) should be convertible without "
            f"narrowing to the specified dtype ({dtypes.scalar_type_name(dtype.np)})"
        )


def _order_text(ord: float) -> str:
    return str(int(ord)) if ord == int(ord) else repr(ord)


def _one_norm(A, ord: float, dim: list, keepdim: bool, dtype):
    """The 1 norm (and inf, the 1 norm of the transpose): column sums of magnitudes, then
    their largest (smallest for a negative order)."""
    first, second = (dim[1], dim[0]) if math.isinf(ord) else (dim[0], dim[1])
    if not keepdim and first < second:
        second -= 1
    sums = aten.linalg_vector_norm(A, 1.0, [first], keepdim, dtype=dtype)
    if ord < 0:
        return aten.amin(sums, [second], keepdim)
    if sums.shape[second] == 0:
        # the largest of no magnitudes is 0: PyTorch answers zeros, without history
        shape = list(sums.shape)
        if keepdim:
            shape[second] = 1
        else:
            del shape[second]
        return aten.zeros(shape, dtype=sums.dtype)
    return aten.amax(sums, [second], keepdim)


def _spectral_norm(A, ord, dim: list, keepdim: bool, dtype):
    """The singular values of the matrices that ``dim`` spans (moved to the last two dims),
    summed ('nuc') or their largest (2) or smallest (-2); keepdim puts the two dims back."""
    permutation = [d for d in range(A.dim()) if d not in dim] + dim
    values = aten.linalg_svdvals(aten.permute(A if dtype is None else A.to(dtype), permutation))
    if ord == "nuc":
        result = aten.sum_dim_IntList(values, [-1], keepdim)
    else:
        result = (aten.amax if ord > 0 else aten.amin)(values, [-1], keepdim)
    if keepdim:
        inverse = [permutation.index(d) for d in range(A.dim())]
        result = aten.permute(aten.unsqueeze(result, -1), inverse)
    return result


def _matrix_norm(A, ord, dim, keepdim: bool, dtype):
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        dim = _matrix_dims(A, dim)
        _check_dtype(A, dtype)
        if ord == "nuc":
            return _spectral_norm(A, ord, dim, keepdim, dtype)
        return aten.linalg_vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if not isinstance(ord, (int, float, Tensor)):
        raise TypeError(
            "linalg_matrix_norm() received an invalid combination of arguments - "
            f"ord must be a Number or a str, not {type(ord).__name__}"
        )
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_order_text(ord)} not supported.")
    dim = _matrix_dims(A, dim)
    _check_dtype(A, dtype)
    if abs(ord) == 2.0:
        return _spectral_norm(A, ord, dim, keepdim, dtype)
    return _one_norm(A, ord, dim, keepdim, dtype)


@overridable(name="linalg_matrix_norm", qualname="linalg.matrix_norm")
def matrix_norm(
    A,
    ord: Union[str, float] = "fro",
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Optional[dtypes.dtype] = None,
    out=None,
):
    result = _matrix_norm(A, ord, dim, keepdim, dtype)
    if out is None:
        return result
    if out.dtype is not result.dtype:
        raise RuntimeError(
            f"linalg.matrix_norm expected out tensor dtype "
            f"{dtypes.scalar_type_name(result._data.dtype)} but got: "
            f"{dtypes.scalar_type_name(out._data.dtype)}"
        )
    if out.shape != result.shape:  # resized (with PyTorch's warning) before the copy
        write_out(out, np.empty(result.shape, out._data.dtype))
    return aten.copy_(out, result)
