"""numpy building blocks for the CPU kernels that derivatives.yaml names as ``k.<fn>``.

Arguments are numpy arrays (Tensor inputs) and plain values; results are
arrays, views for view ops. Errors follow PyTorch's types and phrases.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from . import dtypes
from .random import generator

# ``slice`` below is the op's kernel; keep Python's slice at hand.
builtins_slice = slice

INT64_MAX = 2**63 - 1


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


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


# ---- pointwise ------------------------------------------------------------------


def add(a, b, alpha):
    if alpha == 1 and not isinstance(alpha, bool):
        return np.add(a, b)
    return np.add(a, np.multiply(b, alpha))


def sub(a, b, alpha):
    if (
        isinstance(a, np.ndarray)
        and a.dtype == np.bool_
        or isinstance(b, np.ndarray)
        and b.dtype == np.bool_
    ):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if alpha == 1 and not isinstance(alpha, bool):
        return np.subtract(a, b)
    return np.subtract(a, np.multiply(b, alpha))


def power(a, b):
    try:
        return np.power(a, b)
    except ValueError:
        raise RuntimeError("Integers to negative integer powers are not allowed.") from None


def sigmoid(a):
    # 1/(1+exp(-x)) written through tanh: no overflow warning for large |x|.
    half = np.asarray(0.5, dtype=a.dtype)
    return half * np.tanh(half * a) + half


def sigmoid_backward(grad_output, output):
    return grad_output * (1 - output) * output


def tanh_backward(grad_output, output):
    return grad_output * (1 - output * output)


def clamp(a, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None:
        a = np.maximum(a, min)
    if max is not None:
        a = np.minimum(a, max)
    return a


# ---- reductions -------------------------------------------------------------------


def _dims(dim, ndim: int):
    if dim is None or len(dim) == 0:
        return None
    if len(dim) == 1:
        d = dim[0]
        if 0 <= d < ndim:
            return (d,)
        return (wrap_dim(d, ndim),)
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def sum(a, dim, keepdim: bool, dtype):
    axis = _dims(dim, a.ndim)
    if dtype is None and a.dtype.kind == "f":
        return np.add.reduce(a, axis, None, None, keepdim)
    out_dtype = _np_dtype(dtype, a.dtype if a.dtype.kind == "f" else np.dtype(np.int64))
    return np.add.reduce(a, axis, out_dtype, None, keepdim)


def mean(a, dim, keepdim: bool, dtype):
    out_dtype = _np_dtype(dtype, a.dtype)
    if out_dtype.kind != "f":
        name = dtypes.from_numpy_dtype(out_dtype).name
        legacy = {"int64": "Long", "int32": "Int", "bool": "Bool"}[name]
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {legacy}"
        )
    axis = _dims(dim, a.ndim)
    count = a.size if axis is None else math.prod(a.shape[d] for d in axis)
    total = np.add.reduce(a, axis=axis, keepdims=keepdim, dtype=out_dtype)
    return np.true_divide(total, count, dtype=out_dtype)


# ---- linear algebra -----------------------------------------------------------------

_LEGACY = {"f4": "float", "f8": "double", "i8": "long int", "i4": "int", "b1": "bool"}


def _same_dtype(a, b, what: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected {what} to have the same dtype, but got: "
            f"{_LEGACY[a.dtype.str[1:]]} != {_LEGACY[b.dtype.str[1:]]}"
        )


def mm(a, b):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    _same_dtype(a, b, "m1 and m2")
    return np.matmul(a, b)


def bmm(a, b):
    if a.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    _same_dtype(a, b, "batch1 and batch2")
    return np.matmul(a, b)


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
            f"{dtypes.from_numpy_dtype(a.dtype).name.capitalize()} and "
            f"{dtypes.from_numpy_dtype(b.dtype).name.capitalize()}"
        )
    return np.asarray(np.dot(a, b))


def mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
            f"vec ({v.shape[0]})"
        )
    _same_dtype(a, v, "mat and vec")
    return np.matmul(a, v)


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
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if infer:
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{_shape_str(size)}' is invalid for input of size {numel}")
        size = size[: infer[0]] + (numel // known,) + size[infer[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{_shape_str(size)}' is invalid for input of size {numel}")
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


def can_view(a, size) -> bool:
    try:
        np.reshape(a, infer_size(size, a.size), copy=False)
        return True
    except ValueError:
        return False


def reshape_copy(a, size):
    return (
        np.reshape(a, infer_size(size, a.size)).copy()
        if not a.flags.c_contiguous
        else np.reshape(a, infer_size(size, a.size))
    )


def expand(a, size):
    size = tuple(size)
    shape = a.shape
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand({_tensor_type(a)}{{{_shape_str(shape)}}}, size={_shape_str(size)}): the "
            f"number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    target = list(size)
    strides = [0] * len(size)
    for i in range(len(size)):
        want = size[i]
        if i < lead:
            if want < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            continue
        own = shape[i - lead]
        if want == -1:
            target[i] = own
        elif own != want:
            if own != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) must match the existing size "
                    f"({own}) at non-singleton dimension {i}.  Target sizes: "
                    f"{_shape_str(size)}.  Tensor sizes: {_shape_str(shape)}"
                )
            continue
        strides[i] = a.strides[i - lead]
    target = tuple(target)
    if a.flags.c_contiguous and a.size:
        # Build the stride-0 view directly: np.broadcast_to costs ~10x more.
        view = np.ndarray(target, a.dtype, a, 0, tuple(strides))
        view.flags.writeable = False
        return view
    return np.broadcast_to(a, target)


def _tensor_type(a) -> str:
    return {"f4": "CPUFloatType", "f8": "CPUDoubleType", "i8": "CPULongType"}.get(
        a.dtype.str[1:], "CPUType"
    )


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
            f"select(): index {index} out of range for tensor of size {_shape_str(a.shape)} at "
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
    return a[(builtins_slice(None),) * dim + (builtins_slice(lo, hi, step),)]


def slice_backward(grad, input_sizes, dim: int, start, end, step: int):
    out = np.zeros(tuple(input_sizes), dtype=grad.dtype)
    dim = wrap_dim(dim, len(input_sizes))
    lo, hi = _slice_bounds(input_sizes[dim], start, end, step)
    out[(builtins_slice(None),) * dim + (builtins_slice(lo, hi, step),)] = grad
    return out


# ---- copies, conversions, factories -----------------------------------------------------


def clone(a):
    return np.array(a, copy=True, order="C")


def to_copy(a, dtype):
    return a.astype(_np_dtype(dtype, a.dtype), copy=True)


def _fill_dtype(value, dtype) -> np.dtype:
    if dtype is not None:
        return dtype.np
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    return dtypes.get_default_dtype().np


def full_like(a, value, dtype):
    dt = a.dtype if dtype is None else dtype.np
    if value == 1:
        return np.ones(a.shape, dt)
    if value == 0:
        return np.zeros(a.shape, dt)
    return np.full(a.shape, value, dtype=dt)


def _check_size(size) -> tuple:
    size = tuple(size)
    for s in size:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {_shape_str(size)}"
            )
    return size


def full(size, value, dtype):
    """``full``: the dtype follows the fill value when none is given."""
    return np.full(_check_size(size), value, dtype=_fill_dtype(value, dtype))


def constant(size, value, dtype):
    """zeros/ones/empty: the default float dtype when none is given."""
    return np.full(_check_size(size), value, dtype=_np_dtype(dtype, dtypes.get_default_dtype().np))


def arange(start, end, step, dtype):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        np_dtype = np.dtype(np.int64) if is_int else dtypes.get_default_dtype().np
    else:
        np_dtype = dtype.np
    count = max(0, math.ceil((end - start) / step))
    return (
        start + step * np.arange(count, dtype=np.float64 if np_dtype.kind == "f" else np.int64)
    ).astype(np_dtype)


def rand(size, dtype):
    return (
        generator()
        .random(_check_size(size))
        .astype(_np_dtype(dtype, dtypes.get_default_dtype().np))
    )


def randn(size, dtype):
    return (
        generator()
        .standard_normal(_check_size(size))
        .astype(_np_dtype(dtype, dtypes.get_default_dtype().np))
    )


def eye(n: int, m: int, dtype):
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    return np.eye(n, m, dtype=_np_dtype(dtype, dtypes.get_default_dtype().np))
