"""numpy building blocks for the CPU kernels that derivatives.yaml names as ``k.<fn>``.

Arguments are numpy arrays (Tensor inputs) and plain values; results are
arrays, views for view ops. Errors follow PyTorch's types and phrases.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Optional, Sequence

import numpy as np

from . import dtypes
from .kernel_support import opmath, refuse_non_float, shape_text
from . import random_kernels
from .memory_formats import (
    channels_last_strides,
    contiguous_format,
    contiguous_strides,
    is_contiguous_as,
    preserve_format,
    strides_for,
    suggest_memory_format,
)
from .random import generator
from .scalar_fit import check_fits, check_scalar_range, overflow_error
from .user_warnings import warn_user

# ``slice`` and ``sum`` below are op kernels; keep Python's at hand.
builtins_slice = slice
_py_sum = sum

INT64_MAX = 2**63 - 1
_INT64 = np.dtype(np.int64)


def wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative index, PyTorch's IndexError if out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def _np_dtype(dtype, default):
    return dtype.np if dtype is not None else default


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_HALF = np.dtype(np.float16)
HALF = _HALF  # for derivatives.yaml's kernels: float16 takes mul's and div's own path
_UINT8 = np.dtype(np.uint8)


def cast(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a`` converted to ``dtype`` as PyTorch converts (``a`` itself if already there):
    float64 reaches float16 through float32 (c10::Half is built from a float, so the
    value rounds twice), floats reach uint8 through int64 (-1.5 -> 255, 300.5 -> 44)."""
    src = a.dtype
    if src is dtype or src == dtype:
        return a
    if dtype is _HALF and src is _F64:
        return a.astype(_F32).astype(_HALF)
    if dtype is _UINT8 and src.kind == "f":
        return a.astype(_INT64).astype(_UINT8)
    return a.astype(dtype)


# ---- pointwise ------------------------------------------------------------------

_BOOL = np.dtype(np.bool_)


def scalar_as(value, dtype: np.dtype):
    """A Python number as an operand of ``dtype``, converted as PyTorch converts a scalar
    to a tensor's type: an int wraps into an integral dtype (300 -> 44 in uint8), a float
    reaches float16 through float32. Where numpy converts the number the same way on its
    own (int64, float32, float64), the number itself."""
    if dtype.kind in "iu":
        if value.__class__ is not int or (dtype is _INT64 and value <= INT64_MAX):
            return value
        # a Scalar holds int64 or uint64: wrap into int64, then into the dtype
        return np.int64((value + 2**63) % 2**64 - 2**63).astype(dtype)
    if dtype is _HALF and value.__class__ is not bool:
        return np.float32(value).astype(_HALF)
    return value


def _check_alpha(alpha, dtype: np.dtype) -> None:
    """PyTorch's checks of alpha against the result dtype (alpha itself takes no part in
    type promotion)."""
    if alpha.__class__ is bool:
        if dtype != np.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif dtype.kind not in "fc" and not isinstance(alpha, (int, np.integer)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    elif isinstance(alpha, complex) and dtype.kind != "c":
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )
    check_fits(alpha, dtype)


def _result_dtype(a, b) -> np.dtype:
    # one operand of add.Scalar / rsub.Scalar is a Python number; the array carries the
    # (already promoted) result type
    return a.dtype if a.__class__ is np.ndarray else b.dtype


def _scalar_operands(a, b):
    """add/sub operands with a Python number converted to the other's (result) type."""
    if a.__class__ is not np.ndarray:
        return scalar_as(a, b.dtype), b
    if b.__class__ is not np.ndarray:
        return a, scalar_as(b, a.dtype)
    return a, b


def _negated(alpha):
    """``-alpha`` as PyTorch's Scalar negates it (an int wraps around in int64)."""
    if alpha.__class__ is int:
        return (-alpha + 2**63) % 2**64 - 2**63
    return -alpha


def _with_alpha(op, a, b, alpha):
    """``a op alpha * b``. In float16 as PyTorch computes it: operands and alpha rounded to
    float16, the whole expression in float32, one rounding at the end."""
    dtype = _result_dtype(a, b)
    # PyTorch subtracts by adding -alpha: that is the value that must fit the dtype
    _check_alpha(alpha if op is np.add or alpha.__class__ is bool else _negated(alpha), dtype)
    if dtype is _HALF:
        scaled = np.multiply(b, np.float32(scalar_as(alpha, _HALF)), dtype=_F32)
        return op(a, scaled, dtype=_F32).astype(_HALF)
    if dtype in _WIDE_FLOATS and alpha.__class__ in _PLAIN_NUMBERS:
        return op(a, np.multiply(b, alpha))  # numpy rounds a weak scalar as torch's cast does
    return op(a, np.multiply(b, np.asarray(scalar_as(alpha, dtype), dtype)))


def add(a, b, alpha):
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray:
        a, b = _scalar_operands(a, b)
    if alpha.__class__ is int and alpha == 1:
        return np.add(a, b)
    return _with_alpha(np.add, a, b, alpha)


def sub_check(self, other) -> None:
    """PyTorch refuses bool operands in a subtraction (a Python bool counts as a bool
    tensor, as it is wrapped into one). ``self`` is a tensor, ``other`` a tensor or a
    number."""
    self_bool = self._data.dtype is _BOOL
    other_bool = other.__class__ is bool or (hasattr(other, "_data") and other._data.dtype is _BOOL)
    if self_bool and other_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if self_bool or other_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def sub(a, b, alpha):
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray:
        a, b = _scalar_operands(a, b)
    if alpha.__class__ is int and alpha == 1:
        return np.subtract(a, b)
    return _with_alpha(np.subtract, a, b, alpha)


def _opmath_scalar(b) -> bool:
    """Whether ``b``, the second operand of a float16 mul/div, is a single number of
    another type: PyTorch then reads it at float32 precision from its own value
    (original_scalar_value), not from its float16 rounding."""
    return b.__class__ is not np.ndarray or (b.dtype is not _HALF and b.size == 1)


def mul(a, b):
    """np.multiply on operands cast to the result type (``b`` may be a Python number, or a
    one-element array left in its own type for a float16 result: see _opmath_scalar)."""
    if a.dtype is _HALF and _opmath_scalar(b):
        return np.multiply(a, np.float32(b), dtype=_F32).astype(_HALF)
    if b.__class__ is not np.ndarray and a.dtype.kind != "f":
        b = scalar_as(b, a.dtype)  # float32/float64 take a Python number as it is
    return np.multiply(a, b)


def div(a, b):
    """np.true_divide, with mul's float16 scalar rule."""
    if a.dtype is _HALF and _opmath_scalar(b):
        return np.true_divide(a, np.float32(b), dtype=_F32).astype(_HALF)
    return np.true_divide(a, b)


def refuse_uint64_exponent(self) -> None:
    """PyTorch reads an int exponent of an integral or bool tensor as int64 before anything
    else: one in uint64's range overflows there, whatever the tensor's own dtype."""
    if self._data.dtype.kind in "biu":
        raise overflow_error(_INT64)


def power(a, b):
    """PyTorch's pow on operands already cast to the result type; one of them may be a
    Python number (pow.Tensor_Scalar's exponent, pow.Scalar's base)."""
    dtype = a.dtype if a.__class__ is np.ndarray else b.dtype
    if dtype is _BOOL:
        if b.__class__ is bool:  # x ** False is all ones, x ** True is x
            return a.copy() if b else np.ones_like(a)
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if a.__class__ is not np.ndarray:
        if dtype is not _F32 and dtype is not _F64:
            a = scalar_as(a, dtype)  # a base wraps into the exponent's type (300 -> 44 in uint8)
    elif b.__class__ is not np.ndarray:
        if dtype.kind in "iu" and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if dtype.kind in "iu" or dtype is _HALF:  # torch range-checks only these exponents
            check_fits(b, dtype)
        if dtype is not _F32 and dtype is not _F64:
            b = scalar_as(b, dtype)
    if dtype.kind in "iu" and b.__class__ is np.ndarray and (b < 0).any():
        return _integer_power(a, b)
    if b.__class__ is not np.ndarray and (dtype is _F32 or dtype is _F64):
        # PyTorch's own shortcuts for these exponents, at a fraction of np.power's cost
        if b == 2:
            return np.multiply(a, a)
        if b == 1:
            return a.copy(order="K")
    return np.power(a, b)


def _integer_power(base, exponent):
    """Integer pow with some negative exponents, as PyTorch computes it: 1 ** -n is 1,
    (-1) ** -n is 1 or -1 by the parity of n, any other base ** -n is 0."""
    result = np.power(base, np.maximum(exponent, 0))
    odd = np.remainder(exponent, 2) == 1
    reciprocal = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(exponent < 0, reciprocal, result).astype(result.dtype, copy=False)


def relu(a):
    if a.dtype is _BOOL:
        raise RuntimeError("Boolean inputs not supported for relu")
    return np.maximum(a, 0)


def neg_check(self) -> None:
    if self._data.dtype is _BOOL:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def absolute(a):
    if a.dtype is _BOOL:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return np.abs(a)


def sign(a):
    # numpy has no bool loop; a bool's sign is itself
    if a.dtype is _BOOL:
        return a.copy()
    result = np.sign(a)
    if a.dtype.kind == "f" and np.isnan(result).any():  # PyTorch's sign of NaN is 0
        result = np.where(np.isnan(a), a.dtype.type(0), result)
    return result


def sigmoid(a):
    if a.dtype is _HALF:
        # in float32, rounded once, as PyTorch computes float16 math
        return (1 / (1 + np.exp(-a.astype(_F32)))).astype(_HALF)
    # 1/(1+exp(-x)), PyTorch's formula: written through tanh it loses the tiny values of
    # very negative x (sigmoid(-50) is 1.9e-22, not 0). exp(-x) may overflow to inf: 0.
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-a))


def sigmoid_backward(grad_output, output):
    refuse_non_float(grad_output, "sigmoid_backward_cpu")
    # float16 too is computed step by step in float16, as PyTorch's kernel does
    return grad_output * (1 - output) * output


def tanh_backward(grad_output, output):
    refuse_non_float(grad_output, "tanh_backward_cpu")
    if grad_output.dtype is _HALF:
        g, y = grad_output.astype(_F32), output.astype(_F32)
        return (g * (1 - y * y)).astype(_HALF)
    return grad_output * (1 - output * output)


_SAME_SIZE_INT = {np.dtype(t): np.dtype(f"int{np.dtype(t).itemsize * 8}") for t in ("f4", "f8")}


def threshold_backward(grad, a, threshold):
    """``where(a <= threshold, 0, grad)``. From 2,048 elements on, the gradient's bits
    are multiplied, as integers, by a 0-or-1 byte per element: np.where's
    data-dependent branches cost 2-3x more on a relu's mask. The integer product keeps
    every gradient bit (NaN, inf, -0.0) and gives +0.0 where masked, exactly as where()."""
    if grad.dtype is _BOOL:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    int_type = _SAME_SIZE_INT.get(grad.dtype)
    if (
        grad.size < 2048
        or int_type is None
        or a.dtype.kind != "f"
        or grad.shape != a.shape
        # both row-major, where() gives a row-major result too
        or not (grad.flags.c_contiguous and a.flags.c_contiguous)
    ):
        return np.where(a <= threshold, 0, grad)
    # kept where not (a <= threshold): NaN inputs keep their grad, as in where()
    kept = np.less_equal(a, threshold)
    np.logical_not(kept, out=kept)
    return np.multiply(grad.view(int_type), kept.view(np.uint8), dtype=int_type).view(grad.dtype)


def clamp_check(self, min, max) -> None:
    """No bounds at all, then Python int bounds beyond int64, refused as PyTorch refuses
    them before promotion (and before out='s dtype): a Scalar holds int64 or uint64, and a
    uint64 bound fits no integer tensor."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    for bound in (min, max):
        if bound.__class__ is int and not -(2**63) <= bound <= INT64_MAX:
            check_scalar_range(bound)
            dtype = self._data.dtype
            if dtype == _BOOL:
                raise RuntimeError(
                    "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                    "promote Bool and UInt64"
                )
            if dtype.kind in "iu":
                raise overflow_error(dtype)


def clamp(a, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if a.dtype is _BOOL:
        kernel = (
            "clamp"
            if min is not None and max is not None
            else "clamp_min" if max is None else "clamp_max"
        )
        raise NotImplementedError(f"\"{kernel}_scalar_cpu\" not implemented for 'Bool'")
    # bounds are cast to the result type as PyTorch casts them, refusing what overflows
    # (numpy would widen the result for a numpy scalar bound, or refuse -1 for uint8)
    if min is not None:
        check_fits(min, a.dtype)
        min = _cast_number(min, a.dtype)
    if max is not None:
        check_fits(max, a.dtype)
        max = _cast_number(max, a.dtype)
    if min is not None:
        a = np.maximum(a, min)
    if max is not None:
        a = np.minimum(a, max)
    return a


def clamp_tensor(a, min, max):
    """clamp.Tensor on operands already cast to the result type: bounds broadcast
    against ``a``, NaN in any operand propagates, and where min > max the result is max."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None:
        if a.dtype is _BOOL:
            # PyTorch's one-bound paths are maximum / minimum, which take bool
            raise NotImplementedError("\"clamp_cpu\" not implemented for 'Bool'")
        return np.minimum(np.maximum(a, min), max)
    if min is not None:
        return np.maximum(a, min)
    return np.minimum(a, max)


def where_check(condition) -> None:
    """PyTorch's where takes a bool condition (uint8 still, with a deprecation warning)."""
    dtype = condition._data.dtype
    if dtype is _BOOL:
        return
    if dtype == np.uint8:
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will be "
            "removed in a future version of PyTorch. Use a boolean condition instead.",
            UserWarning,
            stacklevel=2,
        )
        return
    raise RuntimeError(
        "where expected condition to be a boolean tensor, but got a tensor with dtype "
        f"{dtypes.scalar_type_name(dtype)}"
    )


# ---- reductions -------------------------------------------------------------------


def _dims(dim, ndim: int):
    """numpy axes of a reduction over ``dim`` (None: all of them). A 0-d tensor has one
    dim to name, 0 or -1, and reducing over it changes nothing (no axes)."""
    if dim is None or len(dim) == 0:
        return None
    if len(dim) == 1:
        d = dim[0]
        if 0 <= d < ndim:
            return (d,)
        d = wrap_dim(d, ndim)
        return (d,) if ndim else ()
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return dims if ndim else ()


def sum(a, dim, keepdim: bool, dtype):
    axis = _dims(dim, a.ndim) if dim else None
    if dtype is None and a.dtype.kind == "f" and a.dtype is not _HALF:
        total = np.add.reduce(a, axis, None, None, keepdim)
    else:
        out_dtype = _np_dtype(dtype, a.dtype if a.dtype.kind == "f" else _INT64)
        if out_dtype is _HALF:
            # float16 accumulates in float32 and rounds once, as in PyTorch
            total = np.add.reduce(cast(a, _HALF), axis, _F32, None, keepdim).astype(_HALF)
        else:
            total = np.add.reduce(cast(a, out_dtype), axis, out_dtype, None, keepdim)
    # row-major, as PyTorch's reductions (numpy keeps a permuted input's order)
    return total if total.flags.c_contiguous else np.ascontiguousarray(total)


def mean(a, dim, keepdim: bool, dtype):
    out_dtype = dtype.np if dtype is not None else a.dtype
    if out_dtype.kind != "f":
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating "
            f"point or complex dtype. Got: {dtypes.scalar_type_name(out_dtype)}"
        )
    axis = _dims(dim, a.ndim) if dim else None  # None or []: every dim
    count = a.size if axis is None else math.prod(a.shape[d] for d in axis)
    if out_dtype is _HALF:
        # float16 sums and divides in float32, rounding once (PyTorch's CPU mean)
        total = np.add.reduce(cast(a, _F32), axis=axis, keepdims=keepdim, dtype=_F32)
        return cast(np.true_divide(total, count, dtype=_F32), _HALF)
    total = np.add.reduce(a, axis=axis, keepdims=keepdim, dtype=out_dtype)
    if count == 0:  # NaN, as PyTorch gives, without numpy's warning
        with np.errstate(invalid="ignore"):
            return np.true_divide(total, count, dtype=out_dtype)
    return np.true_divide(total, count, dtype=out_dtype)


# ---- linear algebra -----------------------------------------------------------------


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim):
    """PyTorch's ``_trilinear``: each input unsqueezed at its ``expand`` dims, the three
    multiplied (broadcast) and summed over ``sumdim``, as one einsum (no broadcast product
    is formed); float16 accumulates in float32."""
    total = i1.ndim + len(expand1)
    letters = "abcdefghijklmnopqrstuvwxyz"[:total]

    def subscripts(expand) -> str:
        return "".join(c for d, c in enumerate(letters) if d not in expand)

    summed = set(sumdim)
    out = "".join(c for d, c in enumerate(letters) if d not in summed)
    spec = f"{subscripts(expand1)},{subscripts(expand2)},{subscripts(expand3)}->{out}"
    result = np.einsum(spec, opmath(i1), opmath(i2), opmath(i3), optimize=True)
    return np.ascontiguousarray(result, dtype=i1.dtype)


def _same_dtype(a, b, what: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected {what} to have the same dtype, but got: "
            f"{dtypes.cpp_type_name(a.dtype)} != {dtypes.cpp_type_name(b.dtype)}"
        )


def _refuse_bool_product(a, kernel: str) -> None:
    if a.dtype is _BOOL:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _product(a, b):
    """``a @ b``; float16 multiplies and accumulates in float32 and rounds once, as
    PyTorch's CPU kernels do."""
    if a.dtype is _HALF:
        return _half_product(a, b)
    return np.matmul(a, b)


def _half_product(a, b):
    return np.matmul(a.astype(_F32), b.astype(_F32)).astype(_HALF)


def mm_check(self, mat2) -> None:
    """mm's shapes, checked before anything else (out='s dtype too), as in PyTorch."""
    a, b = self._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )


def mm(a, b):
    """mm on shapes mm_check has passed."""
    dtype = a.dtype
    if dtype is not b.dtype or dtype is _BOOL or dtype is _HALF:  # the rare cases, checked
        _same_dtype(a, b, "m1 and m2")
        _refuse_bool_product(a, "addmm_impl_cpu_")
        if dtype is _HALF:
            return _half_product(a, b)
    return np.matmul(a, b)


def bmm(a, b):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    _refuse_bool_product(a, "bmm")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type_name(a.dtype)} but found "
            f"{dtypes.scalar_type_name(b.dtype)}"
        )
    return _product(a, b)


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{dtypes.scalar_type_name(a.dtype)} and {dtypes.scalar_type_name(b.dtype)}"
        )
    _refuse_bool_product(a, "dot")
    return np.asarray(_product(a, b))


def mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
            f"vec ({v.shape[0]})"
        )
    if a.dtype != v.dtype:
        # PyTorch's mv runs as addmv into a result typed like vec
        vec, mat = dtypes.scalar_type_name(v.dtype), dtypes.scalar_type_name(a.dtype)
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {vec}, {mat}, and {vec}"
        )
    _refuse_bool_product(a, "addmv_impl_cpu")
    return _product(a, v)


# ---- views and shapes ------------------------------------------------------------------


def infer_size(size: Sequence[int], numel: int) -> tuple:
    size = tuple(size)
    infer = [i for i, s in enumerate(size) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in size:
        if s != -1:
            if s < 0:
                raise RuntimeError(
                    f"invalid shape dimension {s} at index {size.index(s)} of shape "
                    f"{shape_text(size)}"
                )
            known *= s
    if infer:
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{shape_text(size)}' is invalid for input of size {numel}")
        size = size[: infer[0]] + (numel // known,) + size[infer[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{shape_text(size)}' is invalid for input of size {numel}")
    return size


def view(a, size):
    if a.flags.c_contiguous and -1 not in size and math.prod(size) == a.size:
        return a.reshape(size)  # a contiguous array always reshapes without a copy
    shape = infer_size(size, a.size)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


def viewed(a, size):
    """``a`` reshaped to ``size`` without a copy, or None when its strides forbid it."""
    try:
        return np.reshape(a, infer_size(size, a.size), copy=False)
    except ValueError:
        return None


def reshape_copy(a, size):
    return (
        np.reshape(a, infer_size(size, a.size)).copy()
        if not a.flags.c_contiguous
        else np.reshape(a, infer_size(size, a.size))
    )


def rsqrt(a):
    """``1 / sqrt(a)`` of a float tensor; float16 computed in float32 and rounded once."""
    return (1 / np.sqrt(opmath(a))).astype(a.dtype, copy=False)


def repeat(a, repeats):
    repeats = tuple(repeats)
    if len(repeats) < a.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(repeats)}")
    return np.tile(a, repeats)


def expand(a, size):
    size = tuple(size)
    shape = a.shape
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand({dtypes.legacy_tensor_type(a.dtype)}{{{shape_text(shape)}}}, "
            f"size={shape_text(size)}): the "
            f"number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    target = list(size)
    strides = [0] * len(size)
    # Writable unless two elements share memory (a stride-0 dim longer than 1), as in
    # PyTorch: expanding only size-1 or new size-1 dims keeps every element distinct.
    overlapping = False
    for i in range(len(size)):
        want = size[i]
        if i < lead:
            if want < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            overlapping = overlapping or want > 1
            continue
        own = shape[i - lead]
        if want == -1:
            target[i] = own
        elif own != want:
            if own != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) must match the existing size "
                    f"({own}) at non-singleton dimension {i}.  Target sizes: "
                    f"{shape_text(size)}.  Tensor sizes: {shape_text(shape)}"
                )
            overlapping = overlapping or want > 1
            continue
        strides[i] = a.strides[i - lead]
    for i in reversed(range(lead)):
        if target[i] == 1 and i + 1 < len(target):
            # a new size-1 dim strides over the dims after it, as PyTorch lays it out
            strides[i] = target[i + 1] * strides[i + 1]
    target = tuple(target)
    if a.flags.c_contiguous and a.size:
        # Build the stride-0 view directly: np.broadcast_to costs ~10x more.
        view = np.ndarray(target, a.dtype, a, 0, tuple(strides))
        if overlapping:
            view.flags.writeable = False
        return view
    if overlapping or not a.size:
        return np.broadcast_to(a, target)
    return np.lib.stride_tricks.as_strided(a, target, tuple(strides), writeable=a.flags.writeable)


def t(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a.T


def transpose(a, dim0: int, dim1: int):
    if a.ndim == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return a.view()
    return np.swapaxes(a, wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim))


def permute(a, dims):
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    wrapped = [wrap_dim(d, a.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, wrapped)


def unsqueeze(a, dim: int):
    return np.expand_dims(a, wrap_dim(dim, a.ndim + 1))


def squeeze(a, dim: Optional[int]):
    if dim is None:
        return a.reshape(tuple(s for s in a.shape if s != 1)) if a.ndim else a.view()
    if a.ndim == 0:
        wrap_dim(dim, 0)
        return a.view()
    dim = wrap_dim(dim, a.ndim)
    if a.shape[dim] != 1:
        return a.view()
    return np.squeeze(a, dim)


def select(a, dim: int, index: int):
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {shape_text(a.shape)} at "
            f"dimension {dim}"
        )
    # A trailing Ellipsis keeps a 0-dim result an array view, not a numpy scalar.
    return a[(builtins_slice(None),) * dim + (index, Ellipsis)]


def select_backward(grad, input_sizes, dim: int, index: int):
    out = np.zeros(tuple(input_sizes), dtype=grad.dtype)
    dim = wrap_dim(dim, len(input_sizes))
    out[(builtins_slice(None),) * dim + (index, Ellipsis)] = grad
    return out


def _slice_bounds(size: int, start, end, step):
    if step <= 0:
        raise ValueError("slice step must be positive")
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def slice(a, dim: int, start, end, step: int):
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, a.ndim)
    lo, hi = _slice_bounds(a.shape[dim], start, end, step)
    return dim_slice(a, dim, lo, hi, step)


def dim_slice(a, dim: int, lo: int, hi: int, step: int = 1):
    """``a[..., lo:hi:step]`` along ``dim`` (``0 <= lo <= hi <= size``), an empty result
    placed where PyTorch places it: at ``lo``, with stride ``stride * step`` (numpy restarts
    an empty slice at the dim's start with step 1)."""
    view = a[(builtins_slice(None),) * dim + (builtins_slice(lo, hi, step),)]
    if lo == hi:
        strides = list(view.strides)
        strides[dim] = a.strides[dim] * step
        return empty_view_at(a, view.shape, strides, lo * a.strides[dim])
    return view


def slice_backward(grad, input_sizes, dim: int, start, end, step: int):
    out = np.zeros(tuple(input_sizes), dtype=grad.dtype)
    dim = wrap_dim(dim, len(input_sizes))
    lo, hi = _slice_bounds(input_sizes[dim], start, end, step)
    part = out[(builtins_slice(None),) * dim + (builtins_slice(lo, hi, step),)]
    if part.shape != grad.shape:  # copy_'s broadcast (narrow_copy's negative start gets here)
        try:
            grad = np.broadcast_to(grad, part.shape)
        except ValueError:
            raise RuntimeError(broadcast_error(part.shape, grad.shape)) from None
    part[...] = grad
    return out


# ---- copies, conversions, factories -----------------------------------------------------


def clone(a, memory_format=None):
    if memory_format is None or memory_format is preserve_format:
        # Row-major, where PyTorch keeps the input's layout (strides_for): AccumulateGrad's
        # and CopySlices' clones here still rely on a row-major result, which PyTorch's
        # ask for with contiguous_format.
        return np.array(a, copy=True, order="C")
    if memory_format is contiguous_format and a.size:  # contiguous(): no stride arithmetic
        return np.array(a, copy=True, order="C")
    return in_layout(np.array(a, copy=True, order="C"), a, memory_format)


def to_copy(a, dtype, memory_format=None):
    target, source = _np_dtype(dtype, a.dtype), a.dtype
    if (source.kind == "f" and (target.kind != "f" or target.itemsize < source.itemsize)) or (
        target is _HALF and source.kind in "iu"
    ):
        # a value may not fit (1e300 into float32, NaN into int64): PyTorch converts it
        # silently, numpy would warn whatever the user's warning filters
        with np.errstate(over="ignore", invalid="ignore"):
            result = cast(a, target)
    else:
        result = cast(a, target)
    return in_layout(a.copy(order="K") if result is a else result, a, memory_format)


# ---- the layout of a tensor made like another (memory formats) ------------------------


def element_strides(a: np.ndarray) -> tuple:
    item = a.itemsize
    return tuple([s // item for s in a.strides])


def new_layout(a: np.ndarray, memory_format) -> Optional[tuple]:
    """The element strides PyTorch gives a new tensor made like ``a`` in ``memory_format``
    (None: preserve_format), or None where they are row-major: then numpy's row-major
    array is the answer. (A row-major ``a`` is decided without a loop, so where its size-1
    dims have other strides, which PyTorch would keep, the copy's differ; they mean
    nothing. numpy gives an empty array strides 0, so an empty one is always laid out.)"""
    if (
        a.size
        and a.flags.c_contiguous
        and (
            memory_format is None
            or memory_format is preserve_format
            or memory_format is contiguous_format
        )
    ):
        return None  # the common case
    strides = strides_for(memory_format, a.shape, element_strides(a))
    return None if a.size and strides == contiguous_strides(a.shape) else strides


def laid_out(flat: np.ndarray, shape, strides) -> np.ndarray:
    """``flat`` (one element per position) seen with the element ``strides`` of a dense
    layout: in memory order, its elements are ``flat``'s."""
    item = flat.itemsize
    return np.ndarray(tuple(shape), flat.dtype, flat, 0, tuple([st * item for st in strides]))


def in_layout(result: np.ndarray, a: np.ndarray, memory_format) -> np.ndarray:
    """``result``, a new array of ``a``'s shape, laid out (copied if need be) as PyTorch lays
    out a tensor made like ``a`` in ``memory_format``."""
    strides = new_layout(a, memory_format)
    if strides is None:
        return result if result.flags.c_contiguous else np.ascontiguousarray(result)
    if element_strides(result) == strides:
        return result
    out = laid_out(np.empty(result.size, result.dtype), result.shape, strides)
    np.copyto(out, result)
    return out


def _cast_number(value, dtype: np.dtype) -> np.ndarray:
    """A number that fits ``dtype`` as a 0-dim array of it: floats truncate into integer
    dtypes, negative ints wrap into unsigned ones, a float reaches float16 through float32,
    as PyTorch converts."""
    if value.__class__ in _PLAIN_NUMBERS and dtype in _WIDE_FLOATS:
        return dtype.type(value)  # the common case: one rounding, as torch's cast
    return cast(np.asarray(value), dtype)


_PLAIN_NUMBERS = (int, float)
_WIDE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fill_dtype(value, dtype) -> np.dtype:
    if dtype is not None:
        return dtype.np
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    return dtypes.get_default_dtype().np


def full_like(a, value, dtype, memory_format=None):
    dt = a.dtype if dtype is None else dtype.np
    strides = new_layout(a, memory_format)
    if strides is not None:
        if value not in (0, 1):
            check_fits(value, dt)
        out = laid_out(np.empty(a.size, dt), a.shape, strides)
        out[...] = _cast_number(value, dt)
        return out
    if value == 1:
        return np.ones(a.shape, dt)
    if value == 0:
        return np.zeros(a.shape, dt)
    check_fits(value, dt)
    return np.full(a.shape, _cast_number(value, dt))


def _check_size(size, dtype: np.dtype) -> tuple:
    """A new tensor's shape: no negative dims, and memory this machine can give."""
    size = tuple(size)
    if size and min(size) < 0:
        negative = next(s for s in size if s < 0)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative}: {shape_text(size)}"
        )
    check_allocation(size, dtype)
    return size


_memory_limit: Optional[int] = None


def _memory_bytes() -> int:
    """RAM plus swap: what the system's default overcommit rule lets one process allocate."""
    global _memory_limit
    if _memory_limit is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = 2**48
        try:
            with open("/proc/meminfo") as meminfo:
                for line in meminfo:
                    if line.startswith("SwapTotal:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
        _memory_limit = total
    return _memory_limit


def check_allocation(size, dtype: np.dtype) -> None:
    """PyTorch's errors for a tensor too large to allocate, raised before numpy tries:
    a byte count beyond int64, or more memory than the machine has."""
    nbytes = dtype.itemsize
    for s in size:
        nbytes *= s
    if nbytes <= 2**30:
        return
    if nbytes > INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape_text(size)}")
    if nbytes > _memory_bytes():
        raise RuntimeError(
            f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
            "Error code 12 (Cannot allocate memory)"
        )


def scalar_tensor(value, dtype):
    """``scalar_tensor``: a 0-dim tensor of ``value`` in ``dtype`` (the default float dtype
    when none is given, a real number read as a float). As in PyTorch, float16 takes what
    it cannot hold as +-inf, where every other dtype refuses it as ``full`` does."""
    if dtype is None and not isinstance(value, complex):
        value = float(value)
    if dtype is not None and dtype.np is _HALF and not isinstance(value, complex):
        with np.errstate(over="ignore"):
            return cast(np.asarray(float(value)), _HALF)
    return full((), value, dtype)


def full(size, value, dtype):
    """``full``: the dtype follows the fill value when none is given."""
    np_dtype = _fill_dtype(value, dtype)
    check_fits(value, np_dtype)
    return np.full(_check_size(size, np_dtype), _cast_number(value, np_dtype))


def zeros(size, dtype):
    if size and min(size) < 0:
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return constant(size, 0, dtype)


def constant(size, value, dtype):
    """zeros/ones/empty: the default float dtype when none is given."""
    np_dtype = _np_dtype(dtype, dtypes.get_default_dtype().np)
    return np.full(_check_size(size, np_dtype), value, dtype=np_dtype)


def new_empty(a, size, dtype):
    """new_empty (zero-filled): ``a``'s dtype unless one is given."""
    np_dtype = _np_dtype(dtype, a.dtype)
    return np.zeros(_check_size(size, np_dtype), np_dtype)


def empty(size, dtype, memory_format):
    """empty.memory_format (zero-filled): row-major, or a channels-last format's strides."""
    if memory_format is None or memory_format is contiguous_format:
        return constant(size, 0, dtype)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    np_dtype = _np_dtype(dtype, dtypes.get_default_dtype().np)
    size = _check_size(size, np_dtype)
    strides = channels_last_strides(memory_format, size)
    return laid_out(np.zeros(math.prod(size), np_dtype), size, strides)


def arange(start, end, step, dtype):
    """PyTorch's arange: bounds checked in double precision first; an integer result counts
    and steps with the bounds cast to integers (int64 counts in integers too, so its step
    must not truncate to 0); values wrap into narrow integer dtypes."""
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        np_dtype = np.dtype(np.int64) if is_int else dtypes.get_default_dtype().np
    else:
        np_dtype = dtype.np
    if np_dtype.kind == "b":
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    d_start, d_end, d_step = float(start), float(end), float(step)
    if not (d_step > 0 or d_step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(d_start) and math.isfinite(d_end)):
        raise RuntimeError(f"unsupported range: {d_start:g} -> {d_end:g}")
    if not ((d_step > 0 and d_end >= d_start) or (d_step < 0 and d_end <= d_start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if np_dtype != _INT64:
        quotient = (d_end - d_start) / d_step
        if not 0 <= quotient <= INT64_MAX:  # inf too
            raise RuntimeError("invalid size, possible overflow?")
        count = math.ceil(quotient)
    if np_dtype.kind in "iu":
        for bound in (start, end, step):
            check_fits(bound, _INT64)
        i_start, i_end, i_step = int(start), int(end), int(step)  # C++ casts truncate
    if np_dtype == _INT64:
        if i_step == 0:
            raise ValueError("step must be nonzero")
        numerator = i_end - i_start + i_step - (1 if i_step > 0 else -1)
        # C++ integer division truncates toward zero
        count = abs(numerator) // abs(i_step) if numerator * i_step >= 0 else 0
    check_allocation((count,), np_dtype)
    if np_dtype.kind in "iu":
        values = i_start + i_step * np.arange(count, dtype=np.int64)
    else:
        values = start + step * np.arange(count, dtype=np.float64)
    return values.astype(np_dtype)


def _random_float_dtype(np_dtype: np.dtype, kernel: str) -> np.dtype:
    if np_dtype.kind != "f":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(np_dtype)}'"
        )
    return np_dtype


def rand(size, dtype):
    np_dtype = _np_dtype(dtype, dtypes.get_default_dtype().np)
    shape = _check_size(size, np_dtype)
    np_dtype = _random_float_dtype(np_dtype, "check_uniform_bounds")
    return random_kernels.uniform(generator(), math.prod(shape), np_dtype).reshape(shape)


def randn(size, dtype):
    np_dtype = _np_dtype(dtype, dtypes.get_default_dtype().np)
    shape = _check_size(size, np_dtype)
    np_dtype = _random_float_dtype(np_dtype, "normal_kernel_cpu")
    return random_kernels.normal(generator(), math.prod(shape), np_dtype).reshape(shape)


def memory_order(a: np.ndarray):
    """The dims of ``a`` from outermost to innermost in memory when ``a`` is dense,
    non-overlapping and not contiguous (AccumulateGrad then keeps its strides), else None."""
    if a.flags.c_contiguous or a.size <= 1:
        return None
    dims = [d for d in range(a.ndim) if a.shape[d] != 1]
    if any(a.strides[d] <= 0 for d in dims):
        return None
    order = sorted(range(a.ndim), key=lambda d: (a.shape[d] != 1, a.strides[d]), reverse=True)
    expected = a.itemsize
    for d in reversed(order):
        if a.shape[d] != 1:
            if a.strides[d] != expected:
                return None
            expected *= a.shape[d]
    return order


def _random_like(a: np.ndarray, dtype, memory_format, kernel: str, fill):
    """rand_like/randn_like: the layout empty_like gives (a permuted input's strides, say),
    filled in memory order (the normal kernel then takes its non-contiguous path), as in
    PyTorch."""
    np_dtype = _random_float_dtype(_np_dtype(dtype, a.dtype), kernel)
    strides = new_layout(a, memory_format)
    if strides is None:
        return fill(a.size, np_dtype, True).reshape(a.shape)
    contiguous = is_contiguous_as(contiguous_format, a.shape, strides)
    return laid_out(fill(a.size, np_dtype, contiguous), a.shape, strides)


def rand_like(a, dtype, memory_format=None):
    def fill(count, np_dtype, contiguous):
        return random_kernels.uniform(generator(), count, np_dtype)

    return _random_like(a, dtype, memory_format, "check_uniform_bounds", fill)


def randn_like(a, dtype, memory_format=None):
    def fill(count, np_dtype, contiguous):
        return random_kernels.normal(generator(), count, np_dtype, contiguous)

    return _random_like(a, dtype, memory_format, "normal_kernel_cpu", fill)


def eye(n: int, m: int, dtype):
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    np_dtype = _np_dtype(dtype, dtypes.get_default_dtype().np)
    check_allocation((n, m), np_dtype)
    return np.eye(n, m, dtype=np_dtype)


# ---- strided views, copies and fills ----------------------------------------------------


def memory_owner(a: np.ndarray) -> np.ndarray:
    """The array that owns the memory ``a`` views (through as_strided's wrappers too)."""
    owner = a
    while True:
        base = owner.base
        if isinstance(base, np.ndarray):
            owner = base
        elif base is not None and isinstance(getattr(base, "base", None), np.ndarray):
            owner = base.base  # np.lib.stride_tricks.as_strided wraps its source
        else:
            return owner


def _owner_and_offset(a):
    owner = memory_owner(a)
    start = owner.__array_interface__["data"][0]
    return owner, (a.__array_interface__["data"][0] - start) // a.itemsize


def storage_offset(a: np.ndarray) -> int:
    """Elements between the start of the memory ``a`` lives in and its first element."""
    if a.base is None:
        return 0  # owns its memory
    return _owner_and_offset(a)[1]


def as_strided(a, size, stride, storage_offset):
    """A view of ``a``'s memory with the given element strides (PyTorch's as_strided)."""
    owner, own_offset = _owner_and_offset(a)
    offset = own_offset if storage_offset is None else storage_offset
    if offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
            if any(s < 0 for s in stride)
            else f"Trying to create tensor with negative dimension or storage offset {offset}"
        )
    item = a.itemsize
    last = offset + _py_sum([(n - 1) * st for n, st in zip(size, stride)]) if all(size) else offset
    # the owner's memory, as a flat run of elements from its first address
    extent = owner.size if owner.flags.c_contiguous else _extent(owner)
    if all(size) and last >= extent:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {(last + 1) * item} are out of "
            f"bounds for storage of size {extent * item}"
        )
    strides = tuple([st * item for st in stride])
    if not all(size):  # an empty view may start anywhere, past the storage's end too
        return empty_view_at(owner, size, strides, offset * item, a.flags.writeable)
    if owner.flags.c_contiguous:
        # Straight from the owner's buffer: a third of stride_tricks' cost.
        view = np.ndarray(tuple(size), a.dtype, owner, offset * item, strides)
        if not a.flags.writeable:
            view.flags.writeable = False
        return view
    flat = np.lib.stride_tricks.as_strided(owner, shape=(extent,), strides=(item,))
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=tuple(size), strides=strides, writeable=a.flags.writeable
    )


class _Placed:
    """An ``__array_interface__`` for numpy to build a view from (as stride_tricks does)."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, interface: dict, base: np.ndarray):
        self.__array_interface__ = interface
        self.base = base  # memory_owner follows it to the array that owns the memory


def empty_view_at(a, shape, strides, byte_offset: int, writeable: Optional[bool] = None):
    """A zero-size view of ``a``'s memory starting ``byte_offset`` bytes from ``a``'s first
    element, with byte ``strides``. PyTorch keeps an empty view's storage offset, past the
    end of its storage too; numpy never reads through an empty view, so any address will
    do, but its slicing and constructor will not place one there."""
    interface = dict(a.__array_interface__)
    address, readonly = interface["data"]
    if writeable is not None:
        readonly = not writeable
    interface.update(
        data=(address + byte_offset, readonly), shape=tuple(shape), strides=tuple(strides)
    )
    view = np.asarray(_Placed(interface, a))
    if view.dtype != a.dtype:  # the interface spells extension dtypes (ml_dtypes) as void
        view.dtype = a.dtype
    return view


def _extent(a) -> int:
    """Elements spanned by ``a`` from its first address (positive strides)."""
    if a.size == 0:
        return 0
    return 1 + _py_sum((n - 1) * st for n, st in zip(a.shape, a.strides)) // a.itemsize


def empty_strided(size, stride, dtype):
    extent = 1 + _py_sum([(n - 1) * st for n, st in zip(size, stride)]) if all(size) else 0
    storage = np.zeros(max(extent, 1), dtype=dtype)
    item = storage.itemsize
    return np.ndarray(tuple(size), storage.dtype, storage, 0, tuple([st * item for st in stride]))


def copy(self, src):
    """copy_'s values: ``src`` expanded to ``self``'s shape, cast to its dtype."""
    if src is not self and np.may_share_memory(self, src) and np.shares_memory(self, src):
        if not (
            src.shape == self.shape
            and src.strides == self.strides
            and src.__array_interface__["data"][0] == self.__array_interface__["data"][0]
        ):
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )
        src = src.copy()
    if src.shape != self.shape:
        try:
            src = np.broadcast_to(src, self.shape)
        except ValueError:
            raise RuntimeError(_copy_shape_error(self.shape, src.shape)) from None
    return cast(src, self.dtype)


def _copy_shape_error(shape: tuple, src_shape: tuple) -> str:
    """Why copy_ cannot write ``src_shape`` into ``shape``: the shapes clash, or they
    broadcast to a shape other than the written tensor's."""
    try:
        together = np.broadcast_shapes(shape, src_shape)
    except ValueError:
        return broadcast_error(shape, src_shape)
    return f"output with shape {list(shape)} doesn't match the broadcast shape {list(together)}"


def broadcast_error(*shapes) -> str:
    """PyTorch's message for shapes that do not broadcast together (first clash, a vs b)."""
    for i, a_shape in enumerate(shapes):
        for b_shape in shapes[i + 1 :]:
            ndim = max(len(a_shape), len(b_shape))
            for k in range(1, ndim + 1):
                a = a_shape[-k] if k <= len(a_shape) else 1
                b = b_shape[-k] if k <= len(b_shape) else 1
                if a != b and a != 1 and b != 1:
                    return (
                        f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                        f"non-singleton dimension {ndim - k}"
                    )
    return f"shapes {[list(s) for s in shapes]} do not broadcast"


def fill(self, value):
    if isinstance(value, np.ndarray):  # fill_.Tensor: the value is cast, as copy_ casts
        if value.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        value = cast(value, self.dtype)
    else:
        check_fits(value, self.dtype)
        value = _cast_number(value, self.dtype)
    return np.full(self.shape, value)


def masked_fill(self, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{dtypes.cpp_type_name(mask.dtype)}"
        )
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        value = value.item()
    check_fits(value, self.dtype)
    if mask.shape != self.shape:
        try:
            np.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            raise RuntimeError(broadcast_error(self.shape, mask.shape)) from None
    filled = np.where(mask, _cast_number(value, self.dtype), self)
    # row-major, as PyTorch's (its masked_fill fills a contiguous clone)
    return filled if filled.flags.c_contiguous else np.ascontiguousarray(filled)


# ---- advanced indexing ---------------------------------------------------------------------


_INDEX_DTYPES = frozenset([_BOOL, _UINT8, np.dtype(np.int32), _INT64])


def is_mask(index: np.ndarray) -> bool:
    """Whether an index tensor selects by mask: bool, and uint8 (deprecated in PyTorch)."""
    return index.dtype is _BOOL or index.dtype is _UINT8


def _index_tuple(self, indices):
    """PyTorch's index list (None = a full slice; a mask spans its ndim dims) as a numpy key."""
    dims = _py_sum(i.ndim if i is not None and is_mask(i) else 1 for i in indices)
    if dims > self.ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {self.ndim} (got {len(indices)})"
        )
    key = []
    dim = 0
    for position, index in enumerate(indices):
        if index is None:
            key.append(builtins_slice(None))
            dim += 1
            continue
        if index.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if index.dtype is _UINT8:
            warn_user(
                "indexing with dtype opgrad.uint8 is now deprecated, please use a dtype "
                "opgrad.bool instead."
            )
            index = index.astype(_BOOL)
        if index.dtype is _BOOL:
            expected = self.shape[dim : dim + index.ndim]
            if index.shape != expected:
                raise IndexError(
                    f"The shape of the mask {list(index.shape)} at index {position} does not "
                    f"match the shape of the indexed tensor {list(self.shape)} at index {dim}"
                )
            dim += index.ndim
        else:
            size = self.shape[dim]
            if index.size and (index.max() >= size or index.min() < -size):
                bad = index.max() if index.max() >= size else index.min()
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {dim} with size {size}"
                )
            dim += 1
        key.append(index)
    return tuple(key)


def index(self, indices):
    key = _index_tuple(self, indices)
    result = self[key]
    if self.flags.c_contiguous and all(
        i.flags.c_contiguous for i in key if i.__class__ is np.ndarray
    ):
        return np.ascontiguousarray(result)  # what PyTorch's layout rule gives here
    return _laid_out(result, _index_layout(self, key))


def _laid_out(a: np.ndarray, perm) -> np.ndarray:
    """``a`` with dense strides in the order ``perm`` (innermost dim first); no copy when
    its strides already agree where they matter."""
    order = perm[::-1]
    out = np.empty([a.shape[d] for d in order], a.dtype).transpose(np.argsort(order))
    if all(n == 1 or s == t for n, s, t in zip(a.shape, a.strides, out.strides)):
        return a
    np.copyto(out, a)
    return out


def _index_layout(self, key):
    """The dim order (innermost first) of index's result in PyTorch: its TensorIterator
    sorts the dims by the strides of self restrided (the indexed dims replaced by the
    index shape, stride 0) and of each broadcast index tensor."""
    indices = []  # per dim of self: its index array or None
    for item in key:
        if item.__class__ is not np.ndarray:
            indices.append(None)
        elif item.dtype == _BOOL:  # a mask is its nonzero() positions, one array per dim
            indices.extend(np.nonzero(item))
        else:
            indices.append(item)
    indices += [None] * (self.ndim - len(indices))
    shape, strides = list(self.shape), list(self.strides)
    indexed = [d for d, i in enumerate(indices) if i is not None]
    if indexed != list(range(indexed[0], indexed[-1] + 1)):  # apart: they move to the front
        order = indexed + [d for d, i in enumerate(indices) if i is None]
        shape, strides = [shape[d] for d in order], [strides[d] for d in order]
        indices = [indices[d] for d in order]
        indexed = list(range(len(indexed)))
    before, after = indexed[0], indexed[-1] + 1
    arrays = np.broadcast_arrays(*[indices[d] for d in indexed])
    middle = list(arrays[0].shape)
    full = shape[:before] + middle + shape[after:]
    outer, inner = [0] * before, [0] * (len(shape) - after)
    operands = [strides[:before] + [0] * len(middle) + strides[after:]]
    operands += [
        outer + [0 if n == 1 else s for n, s in zip(a.shape, a.strides)] + inner for a in arrays
    ]
    return _iterator_order(full, operands)


def _iterator_order(shape, operands):
    """PyTorch's TensorIterator dim order (innermost first) for operands of these strides:
    an insertion sort where a broadcast (stride 0) dim leaves the decision to the next
    operand and equal strides put the smaller dim inner."""

    def should_swap(d0, d1):
        for strides in operands:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return perm


def _fill_mask(self, indices):
    """(mask, the dim it starts at) when PyTorch's index_put_ fills through masked_fill_:
    one mask (bool or uint8) and nothing but full slices beside it; else None."""
    found = None
    for position, index in enumerate(indices):
        if index is None:
            continue
        if found is not None or not is_mask(index):
            return None
        found = (index, position)
    if found is None:
        return None
    mask, start = found
    for j, size in enumerate(mask.shape):  # checked here, in PyTorch's words
        if start + j >= self.ndim or size != self.shape[start + j]:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {j} does not match the "
                f"shape of the indexed tensor {list(self.shape)} at index {start + j}"
            )
    return found


def index_put(self, indices, values, accumulate: bool):
    fill = None if accumulate or values.size != 1 else _fill_mask(self, indices)
    if fill is not None:
        # PyTorch fills with the value's number (masked_fill_): any dtype of it is taken and
        # converted to self's, a number self cannot hold refused; bool masks only
        mask, start = fill
        if mask.dtype is _UINT8:
            raise RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
            )
        value = values.item()
        check_fits(value, self.dtype)
        out = self.copy()
        out[(builtins_slice(None),) * start + (mask,)] = _cast_number(value, self.dtype)
        return out
    if values.dtype != self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{dtypes.scalar_type_name(self.dtype)} for the destination and "
            f"{dtypes.scalar_type_name(values.dtype)} for the source."
        )
    out = self.copy()
    key = _index_tuple(self, indices)
    values = values.astype(self.dtype, copy=False)
    try:
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
            f"indexing result of shape {list(out[key].shape)}"
        ) from None
    return out


# ---- more views: diagonal, unfold, unbind, split ------------------------------------------


def diagonal(a, offset: int, dim1: int, dim2: int):
    d1, d2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    # np.diagonal gives a read-only view; build a writable one from strides.
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        start = offset * a.strides[d2] if length else 0
    else:
        length = max(0, min(n1 + offset, n2))
        start = -offset * a.strides[d1] if length else 0
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = tuple(a.shape[i] for i in keep) + (length,)
    strides = tuple(a.strides[i] for i in keep) + (a.strides[d1] + a.strides[d2],)
    return np.lib.stride_tricks.as_strided(
        _shift(a, start), shape=shape, strides=strides, writeable=a.flags.writeable
    )


def _shift(a, nbytes: int):
    """``a`` seen from ``nbytes`` further into its memory (for building strided views)."""
    if nbytes == 0:
        return a
    item = a.itemsize
    owner, offset = _owner_and_offset(a)
    extent = offset + _extent(a)
    flat = np.lib.stride_tricks.as_strided(owner, shape=(max(extent, 1),), strides=(item,))
    return flat[offset + nbytes // item :]


def diagonal_backward(grad, input_sizes, offset: int, dim1: int, dim2: int):
    out = np.zeros(tuple(input_sizes), dtype=grad.dtype)
    diagonal(out, offset, dim1, dim2)[...] = grad
    return out


def unfold(a, dimension: int, size: int, step: int):
    d = wrap_dim(dimension, a.ndim) if a.ndim else 0
    length = a.shape[d] if a.ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if a.ndim == 0:  # a scalar unfolds to its one window alone: shape (size,)
        shape, strides = (size,), (a.itemsize,)
    else:
        count = (length - size) // step + 1
        shape = a.shape[:d] + (count,) + a.shape[d + 1 :] + (size,)
        strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1 :] + (a.strides[d],)
    return np.lib.stride_tricks.as_strided(
        a, shape=shape, strides=strides, writeable=a.flags.writeable
    )


def unfold_backward(grad, input_sizes, dim: int, size: int, step: int):
    out = np.zeros(tuple(input_sizes), dtype=grad.dtype)
    # Windows may overlap: scatter-add every window element to its source position.
    flat_index = np.arange(out.size).reshape(out.shape)
    positions = unfold(flat_index, dim, size, step)
    np.add.at(out.reshape(-1), positions.reshape(-1), grad.reshape(-1))
    return out


def view_dtype(a, dtype):
    """``a``'s memory read as ``dtype`` (view.dtype). Elements of another size regroup the
    last dim, which must then be contiguous, with PyTorch's checks in its words."""
    new = dtype.np
    if new == a.dtype:
        return a.view()
    ratio_text = f"to view {dtypes.scalar_type_name(a.dtype)} as {dtypes.scalar_type_name(new)}"
    if new.itemsize != a.dtype.itemsize:
        ratio_text += " (different element sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {ratio_text}")
        last_stride = a.strides[-1] // a.itemsize
        if last_stride != 1 and a.shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {ratio_text}, but got {last_stride}")
        if new.itemsize > a.dtype.itemsize:
            ratio = new.itemsize // a.dtype.itemsize
            if a.shape[-1] % ratio:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} {ratio_text}, but got "
                    f"{a.shape[-1]}"
                )
            offset = storage_offset(a)
            if offset % ratio:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} {ratio_text}, but got "
                    f"{offset}"
                )
            for d in range(a.ndim - 1):
                stride = a.strides[d] // a.itemsize
                if stride % ratio:
                    raise RuntimeError(
                        f"self.stride({d}) must be divisible by {ratio} {ratio_text}, but got "
                        f"{stride}"
                    )
    return a.view(new)


def copy_of(result):
    """A view op's result (or each of a list of them) as a fresh row-major array: the
    kernel of the view's ``*_copy`` op."""
    if isinstance(result, list):
        return [np.array(a, order="C") for a in result]
    return np.array(result, order="C")


def unbind(a, dim: int):
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    return [a[(builtins_slice(None),) * d + (i, Ellipsis)] for i in range(a.shape[d])]


def split(a, split_size: int, dim: int):
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    d = wrap_dim(dim, a.ndim)
    length = a.shape[d]
    if split_size == 0:
        if length != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {length}"
            )
        return [a]
    bounds = list(range(0, length, split_size)) or [0]
    return [dim_slice(a, d, b, min(b + split_size, length)) for b in bounds]


def split_with_sizes(a, split_sizes, dim: int):
    d = wrap_dim(dim, a.ndim)
    if any(s < 0 for s in split_sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={list(split_sizes)}"
        )
    if _py_sum(split_sizes) != a.shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {a.shape[d]} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={list(split_sizes)}"
        )
    out, start = [], 0
    for size in split_sizes:
        out.append(dim_slice(a, d, start, start + size))
        start += size
    return out


def cat(tensors, dim: int):
    arrays = [t for t in tensors if not (t.ndim == 1 and t.size == 0)]
    if not tensors:
        raise ValueError("opgrad.cat(): expected a non-empty list of Tensors")  # as PyTorch
    if not arrays:
        return tensors[0].copy()
    ndim = arrays[0].ndim
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ndim)
    for i, t in enumerate(arrays[1:], 1):
        if t.ndim != ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ndim} and {t.ndim}"
            )
        for k in range(ndim):
            if k != d and t.shape[k] != arrays[0].shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{arrays[0].shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                )
    result = dtypes.FROM_NUMPY[arrays[0].dtype]
    for t in arrays[1:]:
        result = dtypes.promote_types(result, dtypes.FROM_NUMPY[t.dtype])
    joined = np.concatenate([cast(t, result.np) for t in arrays], axis=d)
    if joined.flags.c_contiguous and all(t.flags.c_contiguous for t in arrays):
        return joined  # the common case
    return _in_joined_layout(joined, arrays)


def _in_joined_layout(joined: np.ndarray, arrays) -> np.ndarray:
    """cat's result laid out as PyTorch lays it out: in the memory format every input
    suggests (channels-last inputs give a channels-last result), else row-major."""
    formats = {suggest_memory_format(t.shape, element_strides(t)) for t in arrays}
    fmt = formats.pop() if len(formats) == 1 else contiguous_format
    if fmt is contiguous_format:
        return joined if joined.flags.c_contiguous else np.ascontiguousarray(joined)
    out = laid_out(
        np.empty(joined.size, joined.dtype), joined.shape, channels_last_strides(fmt, joined.shape)
    )
    np.copyto(out, joined)
    return out


def stack(tensors, dim: int):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                f"at entry 0 and {list(t.shape)} at entry {i}"
            )
    stacked = np.stack(tensors, axis=wrap_dim(dim, tensors[0].ndim + 1))
    # row-major, as PyTorch's (cat of the unsqueezed inputs, which suggest no other format)
    return stacked if stacked.flags.c_contiguous else np.ascontiguousarray(stacked)


# ---- softmax family -------------------------------------------------------------------
# float16 is computed in float32 and rounded once at the end, as PyTorch's CPU kernels
# compute reduced-precision floats in their opmath type.


def _softmax_dtype_check(a, dim: int, kernel: str) -> int:
    dim = wrap_dim(dim, a.ndim)
    if a.dtype.kind != "f":
        lastdim = "_lastdim" if a.ndim == 0 or dim == a.ndim - 1 else ""
        name = f"{kernel}{lastdim}_kernel_impl"
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )
    return dim


def _half_to_float_check(half_to_float: bool) -> None:
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")


def softmax(a, dim: int, half_to_float: bool):
    _half_to_float_check(half_to_float)
    dim = _softmax_dtype_check(a, dim, "softmax")
    if not a.flags.c_contiguous:  # PyTorch computes on a contiguous input: row-major result
        a = np.ascontiguousarray(a)
    if a.ndim == 0 or a.size == 0:
        return np.exp(a - a) if a.ndim == 0 else a.copy()
    x = opmath(a)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    total = np.add.reduce(e, axis=dim, keepdims=True)
    if a.dtype is _HALF and dim != a.ndim - 1:
        # PyTorch's other-dim kernel keeps the exponentials in float16 (the sum in float)
        e = e.astype(_HALF).astype(_F32)
    return (e * (1 / total)).astype(a.dtype, copy=False)


def log_softmax(a, dim: int, half_to_float: bool):
    _half_to_float_check(half_to_float)
    dim = _softmax_dtype_check(a, dim, "log_softmax")
    if not a.flags.c_contiguous:  # PyTorch computes on a contiguous input: row-major result
        a = np.ascontiguousarray(a)
    if a.ndim == 0 or a.size == 0:
        return a - a if a.ndim == 0 else a.copy()
    x = opmath(a)
    # two temporaries the input's size, no more: fresh large arrays cost page faults
    shifted = np.subtract(x, np.max(x, axis=dim, keepdims=True))
    total = np.add.reduce(np.exp(shifted), axis=dim, keepdims=True)
    if a.dtype is _HALF and dim == a.ndim - 1:
        # PyTorch's last-dim kernel keeps the row's sum and its log in float16
        log_total = np.log(total.astype(_HALF).astype(_F32)).astype(_HALF).astype(_F32)
    else:
        log_total = np.log(total)
    return np.subtract(shifted, log_total, out=shifted).astype(a.dtype, copy=False)


def softmax_backward_data(grad, output, dim: int, input_dtype):
    """``output * (grad - sum(grad * output))`` along ``dim``."""
    axis = wrap_dim(dim, output.ndim) if output.ndim else None
    g, y = opmath(grad), opmath(output)
    result = y * (g - np.add.reduce(g * y, axis=axis, keepdims=True))
    return result.astype(output.dtype, copy=False)


def log_softmax_backward_data(grad, output, dim: int, input_dtype):
    """``grad - exp(output) * sum(grad)`` along ``dim``."""
    axis = wrap_dim(dim, output.ndim) if output.ndim else None
    g, y = opmath(grad), opmath(output)
    # computed in one array (the same operations in the same order)
    result = np.exp(y, out=np.empty_like(y))  # an array, also for 0-dim
    np.multiply(result, np.add.reduce(g, axis=axis, keepdims=True), out=result)
    return np.subtract(g, result, out=result).astype(output.dtype, copy=False)


def logsumexp(a, dim, keepdim: bool):
    """log(sum(exp(a))) over ``dim`` with the largest value taken out first (an infinite
    maximum is taken out as 0, as PyTorch does); integral inputs give the default float."""
    if a.dtype.kind != "f":
        a = cast(a, dtypes.get_default_dtype().np)
    if len(dim) == 0 and a.ndim:
        # PyTorch's kernel reduces every dim into a 0-dim result it then refuses
        raise RuntimeError(
            "output with shape [] doesn't match the broadcast shape " + shape_text([1] * a.ndim)
        )
    axis = _dims(dim, a.ndim)
    x = opmath(a)
    if x.size == 0:
        return np.log(np.add.reduce(np.exp(x), axis=axis, keepdims=keepdim)).astype(a.dtype)
    maxes = np.max(x, axis=axis, keepdims=True)
    maxes = np.where(np.isinf(maxes), 0, maxes)
    total = np.add.reduce(np.exp(x - maxes), axis=axis, keepdims=keepdim)
    result = np.log(total) + (maxes if keepdim else np.squeeze(maxes, axis=axis))
    return result.astype(a.dtype, copy=False)


def exponential(a, lambd: float, gen):
    """``exponential_``'s values for ``a``: ``-log1p(-u) / lambd`` from one uniform double
    per element, drawn in ``a``'s memory order (PyTorch's serial kernel), computed in
    double and rounded to ``a``'s dtype."""
    if a.dtype.kind != "f":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must "
            f"be a floating point but you specified {dtypes.scalar_type_name(a.dtype)}"
        )
    if not lambd > 0.0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={_format_double(lambd)}"
        )
    _check_overlap_free(a)
    u = random_kernels.uniform(gen if gen is not None else generator(), a.size, _F64)
    # libm's log1p, as PyTorch's: numpy's differs from it in the last bit now and then
    values = (-1.0 / lambd) * np.array([math.log1p(-x) for x in u.tolist()], _F64)
    return _in_memory_order(cast(values, a.dtype), a)


def _check_overlap_free(a: np.ndarray) -> None:
    if not a.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


def _refuse_complex(a: np.ndarray, kernel: str) -> None:
    if a.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(a.dtype)}'"
        )


def bernoulli_scalar(a, p: float, gen):
    """``bernoulli_(p)``'s values for ``a``: 1 where a uniform double, drawn per element in
    ``a``'s memory order, is below ``p``; 0 elsewhere."""
    _refuse_complex(a, "bernoulli_scalar_cpu_")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_format_double(p)}")
    _check_overlap_free(a)
    u = random_kernels.uniform(gen if gen is not None else generator(), a.size, _F64)
    return _in_memory_order(u < p, a).astype(a.dtype)


def bernoulli_tensor(a, p, gen):
    """``bernoulli_(p)`` with a probability per element (``p`` broadcast to ``a``): one
    uniform per element in ``a``'s memory order, a double for a double ``p`` and a float
    for any other floating ``p``, compared with ``p`` in that precision."""
    _refuse_complex(a, "bernoulli_tensor_cpu_self_")
    if p.dtype.kind != "f":
        raise NotImplementedError(
            f"\"bernoulli_tensor_cpu_p_\" not implemented for '{dtypes.scalar_type_name(p.dtype)}'"
        )
    p = expand(p, a.shape)
    if a.size and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    _check_overlap_free(a)
    draw = _F64 if p.dtype == _F64 else np.dtype(np.float32)
    u = random_kernels.uniform(gen if gen is not None else generator(), a.size, draw)
    return (_in_memory_order(u, a) < p.astype(draw, copy=False)).astype(a.dtype)


def bernoulli(a, gen):
    """``bernoulli(p)``: a tensor laid out as ``empty_like(p)`` filled by bernoulli_(p)."""
    _refuse_complex(a, "bernoulli_tensor_cpu_self_")
    out = full_like(a, 0, None, None)
    out[...] = bernoulli_tensor(out, a, gen)
    return out


def _format_double(value: float) -> str:
    """A double as PyTorch's messages print it (``-1``, ``0.5``, ``nan``)."""
    return f"{value:g}" if value == value else "nan"


def _in_memory_order(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``values`` (one per element, in the order the elements lie in memory) arranged in
    ``like``'s shape."""
    order = sorted(range(like.ndim), key=lambda d: -abs(like.strides[d]))
    shaped = values.reshape([like.shape[d] for d in order])
    return np.transpose(shaped, np.argsort(order))


# ---- activations ------------------------------------------------------------------------
# Float-only kernels refuse other dtypes with PyTorch's kernel name; float16 is computed in
# float32 and rounded once, as PyTorch's CPU kernels compute it.


def _activation(a, kernel: str, fn):
    refuse_non_float(a, kernel)
    if a.dtype is _HALF:
        return fn(a.astype(_F32)).astype(_HALF)
    return fn(a)


def _activation_backward(grad, a, kernel: str, fn):
    refuse_non_float(grad, kernel)
    if grad.dtype is _HALF:
        return fn(grad.astype(_F32), a.astype(_F32)).astype(_HALF)
    return fn(grad, a)


def threshold(a, threshold, value):
    """``value`` where ``a <= threshold``, else ``a`` (NaN stays)."""
    if a.dtype is _BOOL:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if a.dtype.kind in "iu":
        # both numbers are converted to the tensor's integer type first (truncated)
        threshold, value = int(threshold), int(value)
    return np.where(a <= scalar_as(threshold, a.dtype), scalar_as(value, a.dtype), a).astype(
        a.dtype, copy=False
    )


def hardtanh(a, min_val, max_val):
    if a.dtype is _BOOL:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return np.minimum(np.maximum(a, min_val), max_val).astype(a.dtype, copy=False)


def hardtanh_backward(grad, a, min_val, max_val):
    return np.where((a <= min_val) | (a >= max_val), 0, grad).astype(grad.dtype, copy=False)


def _elu_values(x, alpha, scale, input_scale):
    negative = np.expm1(x * input_scale) * (alpha * scale)
    return np.where(x <= 0, negative, x * scale)


def elu(a, alpha, scale, input_scale):
    return _activation(a, "elu_cpu", lambda x: _elu_values(x, alpha, scale, input_scale))


def elu_backward(grad, alpha, scale, input_scale, is_result: bool, self_or_result):
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead."
        )

    def fn(g, x):
        if is_result:
            negative = g * input_scale * (x + alpha * scale)
        else:
            negative = g * input_scale * (alpha * scale) * np.exp(x * input_scale)
        return np.where(x <= 0, negative, g * scale)

    return _activation_backward(grad, self_or_result, "elu_backward_cpu", fn)


def celu(a, alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu(a, alpha, 1.0, 1.0 / alpha)


_GELU_APPROXIMATIONS = ("none", "tanh")
_SQRT1_2 = 0.70710678118654752440
_SQRT_2_OVER_PI = 0.79788456080286535588  # sqrt(2) * 2/sqrt(pi) * 0.5
_GELU_KAPPA = 0.044715
_NORMAL_PDF_SCALE = 0.39894228040143267794  # 2/sqrt(pi) * sqrt(1/2) * 0.5


def _check_approximate(approximate: str) -> None:
    if approximate not in _GELU_APPROXIMATIONS:
        raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(a, approximate: str):
    _check_approximate(approximate)
    if approximate == "tanh":

        def fn(x):
            inner = _SQRT_2_OVER_PI * (x + _GELU_KAPPA * x * x * x)
            return 0.5 * x * (1 + np.tanh(inner))

    else:
        from scipy.special import erf

        def fn(x):
            return x * 0.5 * (1 + erf(x * _SQRT1_2))

    return _activation(a, "GeluKernelImpl", fn)


def gelu_backward(grad, a, approximate: str):
    _check_approximate(approximate)
    if approximate == "tanh":

        def fn(g, x):
            inner = _SQRT_2_OVER_PI * (x + _GELU_KAPPA * x * x * x)
            tanh_inner = np.tanh(inner)
            left_derivative = 0.5 * (1 + tanh_inner)
            right_derivative = (0.5 * x * (1 - tanh_inner * tanh_inner)) * (
                _SQRT_2_OVER_PI * (1 + 3 * _GELU_KAPPA * x * x)
            )
            return g * (left_derivative + right_derivative)

    else:
        from scipy.special import erf

        def fn(g, x):
            cdf = 0.5 * (1 + erf(x * _SQRT1_2))
            pdf = _NORMAL_PDF_SCALE * np.exp(x * x * -0.5)
            return g * (cdf + x * pdf)

    return _activation_backward(grad, a, "GeluBackwardKernelImpl", fn)


def _sigmoid_of(x):
    return 1 / (1 + np.exp(-x))


def silu(a):
    return _activation(a, "silu_cpu", lambda x: x / (1 + np.exp(-x)))


def silu_backward(grad, a):
    def fn(g, x):
        s = _sigmoid_of(x)
        return g * s * (1 + x * (1 - s))

    return _activation_backward(grad, a, "silu_backward_cpu", fn)


def mish(a):
    return _activation(a, "mish_cpu", lambda x: x * np.tanh(np.log1p(np.exp(x))))


def mish_backward(grad, a):
    def fn(g, x):
        s = _sigmoid_of(x)
        tanh_softplus = np.tanh(np.log1p(np.exp(x)))
        return g * (tanh_softplus + x * s * (1 - tanh_softplus * tanh_softplus))

    return _activation_backward(grad, a, "mish_backward_cpu", fn)


def softplus(a, beta, threshold):
    def fn(x):
        scaled = x * beta
        return np.where(scaled > threshold, x, np.log1p(np.exp(scaled)) / beta)

    return _activation(a, "softplus_cpu", fn)


def softplus_backward(grad, a, beta, threshold):
    def fn(g, x):
        z = np.exp(x * beta)
        return np.where(x * beta > threshold, g, g * z / (z + 1))

    return _activation_backward(grad, a, "softplus_backward_cpu", fn)


def hardsigmoid(a):
    return _activation(a, "hardsigmoid_cpu", lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6)


_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


def hardsigmoid_backward(grad, a):
    def fn(g, x):
        # PyTorch multiplies by 1/6 as a float literal, whatever the dtype
        return np.where((x > -3) & (x < 3), g * _ONE_SIXTH_F32, 0)

    return _activation_backward(grad, a, "hardsigmoid_backward", fn)


def hardswish(a):
    return _activation(a, "hardswish_cpu", lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6)


def hardswish_backward(grad, a):
    def fn(g, x):
        return np.where(x < -3, 0, np.where(x <= 3, g * ((x / 3) + 0.5), g))

    return _activation_backward(grad, a, "hardswish_backward", fn)


def leaky_relu(a, negative_slope):
    return _activation(a, "leaky_relu_cpu", lambda x: np.where(x > 0, x, x * negative_slope))


def leaky_relu_backward(grad, a, negative_slope, self_is_result: bool):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )

    def fn(g, x):
        return np.where(x > 0, g, g * negative_slope)

    return _activation_backward(grad, a, "leaky_relu_backward_cpu", fn)


def softshrink(a, lambd):
    if a.dtype.kind == "f" and not 0 <= lambd <= float(np.finfo(a.dtype).max):
        raise RuntimeError(
            f"lambda must be in range [0, {float(np.finfo(a.dtype).max):g}] for input dtype "
            f"{dtypes.scalar_type_name(a.dtype)}, but found {_format_double(lambd)}"
        )

    def fn(x):
        return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))

    return _activation(a, "softshrink_check", fn)


def softshrink_backward(grad, a, lambd):
    def fn(g, x):
        return np.where((x >= -lambd) & (x <= lambd), 0, g)

    return _activation_backward(grad, a, "softshrink_backward_cpu", fn)


def hardshrink(a, lambd):
    return _activation(a, "hardshrink_cpu", lambda x: np.where((x >= -lambd) & (x <= lambd), 0, x))


def hardshrink_backward(grad, a, lambd):
    def fn(g, x):
        return np.where((x >= -lambd) & (x <= lambd), 0, g)

    return _activation_backward(grad, a, "hardshrink_backward_cpu", fn)


def glu(a, dim: int):
    refuse_non_float(a, "glu_cpu")
    if a.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    first, second = np.split(opmath(a), 2, axis=dim)
    return (first * _sigmoid_of(second)).astype(a.dtype, copy=False)


def glu_backward(grad, a, dim: int):
    refuse_non_float(grad, "glu_backward_cpu")
    dim = wrap_dim(dim, a.ndim)
    first, second = np.split(opmath(a), 2, axis=dim)
    g = opmath(grad)
    s = _sigmoid_of(second)
    result = np.concatenate([s * g, (1 - s) * s * first * g], axis=dim)
    return result.astype(a.dtype, copy=False)


def log_sigmoid_forward(a):
    """``(output, buffer)``: ``min(x, 0) - log1p(exp(-|x|))`` and ``exp(-|x|)``."""
    refuse_non_float(a, "log_sigmoid_cpu")
    x = opmath(a)
    z = np.exp(-np.abs(x))
    output = np.minimum(x, 0) - np.log1p(z)
    return output.astype(a.dtype, copy=False), z.astype(a.dtype, copy=False)


def log_sigmoid_backward(grad, a, buffer):
    def fn(g, x):
        z = opmath(buffer)
        negative = x < 0
        return (np.where(negative, 1, 0) - np.where(negative, 1, -1) * (z / (1 + z))) * g

    return _activation_backward(grad, a, "log_sigmoid_backward_cpu", fn)


def prelu_kernel(a, weight):
    refuse_non_float(a, "prelu_cpu")
    return np.where(a > 0, a, weight * a).astype(a.dtype, copy=False)


def prelu_kernel_backward(grad, a, weight):
    """The gradients of self and of the weight, both in the broadcast shape."""
    refuse_non_float(a, "prelu_backward_cpu")
    positive = a > 0
    grad_self = np.where(positive, grad, weight * grad).astype(a.dtype, copy=False)
    grad_weight = np.where(positive, 0, a * grad).astype(a.dtype, copy=False)
    return grad_self, grad_weight


def check_no_requires_grad(tensor, name: str, op: str) -> None:
    if tensor is not None and tensor.requires_grad:
        raise RuntimeError(
            f"The function '{op}' is not differentiable with respect to argument '{name}'. "
            "This input cannot have requires_grad True."
        )


def rrelu_with_noise(a, noise, lower, upper, training: bool, gen):
    """Training: each non-positive element times a slope drawn uniform in [lower, upper)
    (one double each, in order), which ``noise`` records (1 elsewhere). Eval: leaky_relu
    with the mean slope; ``noise`` is left as it is."""
    if not training:
        return leaky_relu(a, (lower + upper) / 2)
    if a.dtype.kind != "f" or a.dtype is _HALF:
        raise NotImplementedError(
            '"rrelu_with_noise_out_cpu" not implemented for '
            f"'{dtypes.scalar_type_name(a.dtype)}'"
        )
    non_positive = ~(a > 0)
    non_positive &= ~np.isnan(a)  # NaN is not <= 0: it keeps slope 1
    count = int(np.count_nonzero(non_positive))
    # the bounds are read in the tensor's type, the slope drawn in double between them
    lower, upper = float(a.dtype.type(lower)), float(a.dtype.type(upper))
    slopes = random_kernels.uniform(gen if gen is not None else generator(), count, _F64)
    slopes = slopes * (upper - lower) + lower
    noise_values = np.ones(a.shape, a.dtype)  # float32/float64 only: no opmath widening
    noise_values[non_positive] = slopes.astype(a.dtype)
    noise[...] = noise_values
    return a * noise_values


def rrelu_with_noise_backward(grad, a, noise, lower, upper, training: bool, is_result: bool):
    if training:
        return noise * grad
    return leaky_relu_backward(grad, a, (lower + upper) / 2, is_result)


# The losses' kernels (its __all__), named k.<fn> in the YAML.
from .loss_kernels import *  # noqa: E402,F401,F403

# The linear and normalisation family's kernels (its __all__), named k.<fn> in the YAML.
from .norm_kernels import *  # noqa: E402,F401,F403

# The padding and pixel-rearranging ops' kernels (its __all__), named k.<fn> in the YAML.
from .pad_kernels import *  # noqa: E402,F401,F403

# The embedding ops' and one_hot's kernels (its __all__), named k.<fn> in the YAML.
from .embedding_kernels import *  # noqa: E402,F401,F403

# The convolutions' and poolings' kernels (their __all__), named k.<fn> in the YAML.
from .conv_kernels import *  # noqa: E402,F401,F403
from .pool_kernels import *  # noqa: E402,F401,F403
from .attention_kernels import *  # noqa: E402,F401,F403
from .distance_kernels import *  # noqa: E402,F401,F403

# The upsampling ops' kernels (its __all__), named k.<fn> in the YAML.
from .resample_kernels import *  # noqa: E402,F401,F403

# The antialiased and uint8 resampling kernels (its __all__), named k.<fn> in the YAML.
from .separable_resample_kernels import *  # noqa: E402,F401,F403

# The sliding-block and sampling ops' kernels (its __all__), named k.<fn> in the YAML.
from .sampling_kernels import *  # noqa: E402,F401,F403

# baddbmm's kernel and checks (its __all__), named k.<fn> in the YAML.
from .batched_matmul_kernels import *  # noqa: E402,F401,F403

# The gather, scatter and index ops' kernels (its __all__), named k.<fn> in the YAML.
from .index_kernels import *  # noqa: E402,F401,F403

# The max/min reductions' kernels (its __all__), named k.<fn> in the YAML.
from .minmax_kernels import *  # noqa: E402,F401,F403

# The predicates' and bitwise ops' kernels (its __all__), named k.<fn> in the YAML.
from .logical_kernels import *  # noqa: E402,F401,F403

# The sorting family's kernels (its __all__), named k.<fn> in the YAML.
from .sort_kernels import *  # noqa: E402,F401,F403

# The statistical reductions' kernels (its __all__), named k.<fn> in the YAML.
from .stats_kernels import *  # noqa: E402,F401,F403

# The shape ops' and rounded division's kernels (its __all__), named k.<fn> in the YAML.
from .shape_kernels import *  # noqa: E402,F401,F403

# The masked, take/put and scatter-into ops' kernels (its __all__), named k.<fn> in the YAML.
from .masked_kernels import *  # noqa: E402,F401,F403

# The cumulative ops' kernels (its __all__), named k.<fn> in the YAML.
from .cumulative_kernels import *  # noqa: E402,F401,F403

# searchsorted's and bucketize's kernels (its __all__), named k.<fn> in the YAML.
from .search_kernels import *  # noqa: E402,F401,F403

# dist's and renorm's kernels (its __all__), named k.<fn> in the YAML.
from .norm_reduction_kernels import *  # noqa: E402,F401,F403

# The singular value decomposition's kernel (its __all__), named k.<fn> in the YAML.
from .svd_kernels import *  # noqa: E402,F401,F403

# histc's, bincount's, the rounding ops' and lerp's kernels (its __all__), named k.<fn> in the YAML.
from .quantile_kernels import *  # noqa: E402,F401,F403

# The unique family's kernels (its __all__), named k.<fn> in the YAML.
from .unique_kernels import *  # noqa: E402,F401,F403

# resize_'s and resize_as_'s kernels (its __all__), named k.<fn> in the YAML.
from .resize_kernels import *  # noqa: E402,F401,F403

# The unary math ops' kernels (issue 15; its __all__), named k.<fn> in the YAML.
from .unary_math_kernels import *  # noqa: E402,F401,F403

# torch.special's own ops' kernels (issue 15; its __all__), named k.<fn> in the YAML.
from .special_kernels import *  # noqa: E402,F401,F403

# The binary math ops' kernels (issue 15; its __all__), named k.<fn> in the YAML.
from .binary_math_kernels import *  # noqa: E402,F401,F403

# The matmul family's kernels (issue 15; its __all__), named k.<fn> in the YAML.
from .matmul_kernels import *  # noqa: E402,F401,F403
