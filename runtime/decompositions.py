"""CompositeImplicitAutograd ops: implemented with other ops, no node of their own.

derivatives.yaml names these functions in ``composite:`` entries. Autograd
records the ops they call, so ``matmul`` of two matrices ends in MmBackward0.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import dispatch_keys as K
from . import dtypes
from . import numpy_kernels as k
from ._tls import state as _tls
from .generated import ops as aten
from .memory_formats import contiguous_format
from .tensor import wrap_scalar


def reshape(self, shape: Sequence[int]):
    """A view when the memory layout allows it, else a copy (clone + _unsafe_view).

    As in PyTorch, the view of a noncontiguous tensor is ``_reshape_alias`` with the
    strides worked out here, unless a Python key (a dispatch mode, a subclass) sees it.
    """
    data = self._data
    if data.flags.c_contiguous:
        return aten.view(self, shape)
    viewed = k.viewed(data, shape)
    if viewed is None:
        return aten._unsafe_view(aten.clone(self), shape)
    if (self._keys | _tls.include) & K.PYTHON:
        return aten.view(self, shape)
    item = data.itemsize
    return aten._reshape_alias(self, viewed.shape, tuple([s // item for s in viewed.strides]))


def flatten(self, start_dim: int = 0, end_dim: int = -1):
    ndim = self._data.ndim
    if ndim == 0:
        return aten.reshape(self, (1,))
    start = k.wrap_dim(start_dim, ndim)
    end = k.wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = self._data.shape
    inner = 1
    for s in shape[start : end + 1]:
        inner *= s
    return aten.reshape(self, shape[:start] + (inner,) + shape[end + 1 :])


def _unflatten_sizes(sizes: Sequence[int], length: int) -> tuple:
    """``sizes`` with its -1 worked out so that they multiply up to ``length``."""
    sizes = tuple(sizes)
    inferred = None
    known = 1
    for i, s in enumerate(sizes):
        if s == -1:
            if inferred is not None:
                raise RuntimeError("only one dimension can be inferred")
            inferred = i
        elif s < 0:
            raise RuntimeError(
                f"invalid shape dimension {s} at index {i} of shape {k.shape_text(sizes)}"
            )
        else:
            known *= s
    if inferred is None:
        return sizes if known == length else None
    if known == 0:
        if length == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {k.shape_text(sizes)} because "
                "the unspecified dimension size -1 can be any value and is ambiguous"
            )
        return None
    if length % known:
        return None
    return sizes[:inferred] + (length // known,) + sizes[inferred + 1 :]


def unflatten(self, dim: int, sizes: Sequence[int]):
    """Dim ``dim`` split into ``sizes``: a view of ``self``."""
    shape = self._data.shape
    dim = k.wrap_dim(dim, len(shape))
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        if not shape:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        inferred = _unflatten_sizes(sizes, shape[dim])
    except (RuntimeError, IndexError) as exc:
        raise RuntimeError(f"unflatten got an unexpected error:\n{exc}") from None
    if inferred is None:
        raise RuntimeError(
            f"unflatten: Provided sizes {k.shape_text(sizes)} don't multiply up to the size of "
            f"dim {dim} ({shape[dim]}) in the input tensor"
        )
    return aten.view(self, shape[:dim] + inferred + shape[dim + 1 :])


def repeat_interleave_self_int(self, repeats: int, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if dim is None:
        self, dim = flatten(self), 0
    else:
        dim = k.wrap_dim(dim, self._data.ndim)
    copies = aten.unsqueeze(self, dim + 1)
    shape = list(copies._data.shape)
    shape[dim + 1] = repeats
    copies = aten.expand(copies, shape)
    length = shape[dim] * repeats
    if output_size is not None and output_size != length:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {length} but got {output_size}"
        )
    copies = aten.clone(copies, memory_format=contiguous_format)
    return aten.view(copies, shape[:dim] + [length] + shape[dim + 2 :])


def expand_as(self, other):
    return aten.expand(self, other._data.shape)


def narrow(self, dim: int, start: int, length: int):
    size = self._data.shape[k.wrap_dim(dim, self._data.ndim)]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return aten.slice_Tensor(self, dim, start, start + length, 1)


def chunk(self, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    length = self._data.shape[k.wrap_dim(dim, self._data.ndim)]
    split_size = (length + chunks - 1) // chunks
    if split_size == 0 and length == 0:
        return aten.split_with_sizes(self, [0] * chunks, dim)
    return aten.split_Tensor(self, split_size, dim)


def _result_dtype(*operands):
    return dtypes.from_numpy_dtype(dtypes.result_type(*operands))


def _scalars_dtype(a, b):
    """The result type of two Python numbers: bool, then int64, then the default float."""
    kinds = {type(a), type(b)}
    if kinds & {float}:
        return dtypes.get_default_dtype()
    if kinds - {bool}:
        return dtypes.int64
    return dtypes.bool_


def _as_dtype(t, dtype):
    return t if t._data.dtype == dtype.np else aten._to_copy(t, dtype=dtype)


def where_scalar_self(condition, self, other):
    dtype = _result_dtype(wrap_scalar(self), other)
    return aten.where_self(
        condition, aten.scalar_tensor(self, dtype=dtype), _as_dtype(other, dtype)
    )


def where_scalar_other(condition, self, other):
    dtype = _result_dtype(self, wrap_scalar(other))
    other = aten.scalar_tensor(other, dtype=dtype)  # made before self is cast, as in PyTorch
    return aten.where_self(condition, _as_dtype(self, dtype), other)


def where_scalars(condition, self, other):
    dtype = _scalars_dtype(self, other)
    return aten.where_self(
        condition, aten.scalar_tensor(self, dtype=dtype), aten.scalar_tensor(other, dtype=dtype)
    )


def square(self):
    return aten.pow_Tensor_Scalar(self, 2)


def matmul(self, other):
    """PyTorch's matmul: dot, mv, mm, a fold into mm/mv, or a batched bmm.

    The choice of path (and so the ops a dispatch mode sees and the last node)
    follows PyTorch 2.13 case by case.
    """
    dim1, dim2 = self._data.ndim, other._data.ndim
    if dim1 == 2 and dim2 == 2:  # the common case first
        return aten.mm(self, other)
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D"
        )
    if dim1 == 1 and dim2 == 1:
        return aten.dot(self, other)
    if dim1 == 2 and dim2 == 1:
        return aten.mv(self, other)
    if dim1 == 1 and dim2 == 2:
        return aten.squeeze__dim(aten.mm(aten.unsqueeze(self, 0), other), 0)
    if dim1 == 3 and dim2 == 3:
        # A batch of one on exactly one side broadcasts: drop it and fold.
        single1, single2 = self._data.shape[0] == 1, other._data.shape[0] == 1
        if single1 and not single2:
            return matmul(aten.squeeze_dim(self, 0), other)
        if single2 and not single1:
            return matmul(self, aten.squeeze_dim(other, 0))
    if _should_fold(self, other):
        return _folded_matmul(self, other)
    return _batched_matmul(self, other)


def _should_fold(tensor1, tensor2) -> bool:
    """Whether the larger operand folds into a matrix for one mm/mv without a copy."""
    larger_first = tensor1._data.ndim >= tensor2._data.ndim
    t1 = tensor1 if larger_first else aten.transpose_int(tensor2, -2, -1)
    small = tensor2 if larger_first else tensor1
    if not (t1._data.ndim >= 3 and small._data.ndim <= 2):
        return False
    if small._rg:
        # Folding spares backward a large transposed copy of the batched operand.
        return True
    if tensor1._data.ndim == 2:
        return False
    if t1._data.size == 0:
        return True
    shape, strides = t1._data.shape, t1._data.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1._data.ndim - 2))


def _folded_matmul(tensor1, tensor2):
    transpose = tensor2._data.ndim > tensor1._data.ndim
    if transpose:
        t1 = aten.transpose_int(tensor2, -2, -1)
        t2 = aten.t(tensor1) if tensor1._data.ndim == 2 else tensor1
    else:
        t1, t2 = tensor1, tensor2
    sizes = t1._data.shape
    output_shape = sizes[:-1]
    folded = 1
    for s in output_shape:
        folded *= s
    t1_folded = aten.reshape(t1, (folded, sizes[-1]))
    if t2._data.ndim == 2:
        output = aten._unsafe_view(aten.mm(t1_folded, t2), output_shape + (t2._data.shape[1],))
        if transpose:  # .mT.contiguous(): a copy only where the transpose is not contiguous
            output = aten.transpose_int(output, -2, -1)
            return output if output._data.flags.c_contiguous else aten.clone(output)
        return output
    return aten._unsafe_view(aten.mv(t1_folded, t2), output_shape)


def _batched_matmul(tensor1, tensor2):
    import numpy as np

    shape1, shape2 = tensor1._data.shape, tensor2._data.shape
    dim1, dim2 = len(shape1), len(shape2)
    n = shape1[-2] if dim1 > 1 else 1
    m1 = shape1[-1]
    m2 = shape2[-2] if dim2 > 1 else shape2[0]
    p = shape2[-1] if dim2 > 1 else 1
    batch1, batch2 = shape1[: max(dim1 - 2, 0)], shape2[: max(dim2 - 2, 0)]
    try:
        batch = tuple(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        raise RuntimeError(k.broadcast_error(batch1, batch2)) from None
    count = 1
    for s in batch:
        count *= s
    t1 = aten.reshape(aten.expand(tensor1, batch + (n, m1)), (count, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        t2 = aten.unsqueeze(aten.reshape(aten.expand(tensor2, batch + (m2,)), (count, m2)), 2)
    else:
        t2 = aten.reshape(aten.expand(tensor2, batch + (m2, p)), (count, m2, p))
    if m1 != m2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m1}] but "
            f"got: [{count}, {m2}]."
        )
    output_shape = batch + ((n,) if dim1 > 1 else ()) + ((p,) if dim2 > 1 else ())
    out = aten.bmm(t1, t2)
    if vector_rhs:
        out = aten.squeeze_dim(out, -1)
    return aten._unsafe_view(out, output_shape)


def _to_dtype(self, dtype):
    """``self.to(dtype)``: itself when it already has that dtype."""
    if dtype is None or self._data.dtype == dtype.np:
        return self
    return aten._to_copy(self, dtype=dtype)


def softmax(self, dim: int, dtype=None):
    return aten._softmax(_to_dtype(self, dtype), dim, False)


def log_softmax(self, dim: int, dtype=None):
    return aten._log_softmax(_to_dtype(self, dtype), dim, False)


# selu is elu with these constants (PyTorch's SELU_ALPHA and SELU_SCALE).
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(self):
    return aten.elu(self, _SELU_ALPHA, _SELU_SCALE)


def selu_(self):
    return aten.elu_(self, _SELU_ALPHA, _SELU_SCALE)


def relu6(self):
    return aten.hardtanh(self, 0, 6)


def relu6_(self):
    return aten.hardtanh_(self, 0, 6)


def log_sigmoid(self):
    return aten.log_sigmoid_forward(self)[0]


def prelu(self, weight):
    """PyTorch's checks, then the weight shaped to broadcast over self's channels."""
    if self._data.dtype != weight._data.dtype:
        raise RuntimeError(
            "prelu: Type promoting not supported. Got "
            f"{dtypes.scalar_type_name(self._data.dtype)} and "
            f"{dtypes.scalar_type_name(weight._data.dtype)}"
        )
    self_dim = self._data.ndim
    if weight._data.size != 1:
        if self_dim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channel_size = self._data.shape[1] if self_dim > 1 else 1
        if channel_size != weight._data.size:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight._data.size} and channel size = {channel_size}."
            )
    if weight._data.ndim > 1:
        raise RuntimeError(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight._data.ndim}"
        )
    if self_dim != weight._data.ndim:
        shape = [1] * self_dim
        if self_dim > 1:
            shape[1] = weight._data.size
        weight = aten.reshape(weight, tuple(shape))
    return aten._prelu_kernel(self, weight)


def _check_rrelu_bounds(lower, upper) -> None:
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu_bounds(lower, upper)
    noise = aten.empty_like(self)
    return aten.rrelu_with_noise(self, noise, lower, upper, training, generator)


def rrelu_(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu_bounds(lower, upper)
    noise = aten.empty_like(self)
    return aten.rrelu_with_noise_(self, noise, lower, upper, training, generator)


def broadcast_tensors(tensors):
    """Each tensor expanded to the common shape; one that has it already is itself."""
    shapes = [t._data.shape for t in tensors]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise RuntimeError(k.broadcast_error(*shapes)) from None
    return [t if t._data.shape == shape else aten.expand(t, shape) for t in tensors]


# The losses' composites (its __all__).
from .loss_decompositions import *  # noqa: E402,F401,F403

# The linear and normalisation family's composites (its __all__).
from .norm_decompositions import *  # noqa: E402,F401,F403

# The convolution and pooling family's composites (its __all__).
from .conv_decompositions import *  # noqa: E402,F401,F403

# The attention composites (its __all__).
from .attention_decompositions import *  # noqa: E402,F401,F403

# The upsampling ops' .vec overloads (its __all__).
from .resample_decompositions import *  # noqa: E402,F401,F403

# The remaining poolings' composites (its __all__).
from .pool_decompositions import *  # noqa: E402,F401,F403

# embedding_bag's composites
from .embedding_decompositions import *  # noqa: E402,F401,F403

# The sampling family's composites (its __all__).
from .sampling_decompositions import *  # noqa: E402,F401,F403

# The gather family's composites (its __all__).
from .index_decompositions import *  # noqa: E402,F401,F403
# Binary max and min (its __all__).
from .minmax_decompositions import *  # noqa: E402,F401,F403

# The predicates' and bitwise operators' composites (its __all__).
from .logical_decompositions import *  # noqa: E402,F401,F403
# argsort and msort (its __all__).
from .sort_decompositions import *  # noqa: E402,F401,F403
# The statistical reductions' composites (its __all__).
from .stats_decompositions import *  # noqa: E402,F401,F403
# The shape family's composites (its __all__).
from .shape_decompositions import *  # noqa: E402,F401,F403
# argwhere and nonzero's Python binding (its __all__).
from .masked_decompositions import *  # noqa: E402,F401,F403
# The cumulative ops' and norms' composites (its __all__).
from .cumulative_decompositions import *  # noqa: E402,F401,F403
# linalg_svd, linalg_svdvals and svd over _linalg_svd (its __all__).
from .svd_decompositions import *  # noqa: E402,F401,F403
# quantile's, nanquantile's, cov's and corrcoef's composites (its __all__).
from .quantile_decompositions import *  # noqa: E402,F401,F403
# combinations (its __all__).
from .combinations_decompositions import *  # noqa: E402,F401,F403
# The unary math aliases (arccos ..., fix) and positive (issue 15; its __all__).
from .unary_math_decompositions import *  # noqa: E402,F401,F403
# torch.special's functions that are other ops by other names, and ndtr (its __all__).
from .special_decompositions import *  # noqa: E402,F401,F403
# The binary math composites: arctan2, true_divide, float_power (issue 15; its __all__).
from .binary_math_decompositions import *  # noqa: E402,F401,F403
# The matmul family's composites (issue 15; its __all__).
from .matmul_decompositions import *  # noqa: E402,F401,F403
