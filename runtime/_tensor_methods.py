"""Tensor's hand-written methods over the ops and the autograd runtime.

``TensorPythonMethods`` is the class body of the methods that need the ops or
autograd: operators, indexing and conversions mapped onto ops as torch maps
them, and the autograd entry points. ``join`` makes it, the generated
``TensorMethods`` and the marked API of tensor.py part of Tensor.
"""

from __future__ import annotations

import numbers
import warnings
from types import FunctionType
from typing import Optional

import numpy as np

from . import dispatch_keys as K
from . import dtypes
from . import factories
from . import legacy
from .autograd import hooks, run_backward
from .autograd.engine import ExecutionEngine
from .generated import ops as aten
from .generated.tensor_methods import TensorMethods
from .numpy_kernels import is_mask
from .overrides import (
    DisableTorchFunctionSubclass,
    Site,
    default_torch_function,
    overridable,
    overridable_property,
    public_entry,
    self_only,
)
from .device import check_target_device, is_device_like
from .device import device as opgrad_device
from .factories import _infer_dtype, _sizes, from_numpy, tensor
from .memory_formats import memory_format as MemoryFormat
from .memory_formats import (
    contiguous_format,
    is_contiguous_as,
    preserve_format,
    suggest_memory_format,
)
from .numpy_kernels import element_strides
from .masked_decompositions import nonzero_method
from .norm_functions import tensor_norm
from .functional import _unique, _unique_consecutive
from .python_arg_parser import (
    PY_NUMBERS,
    arg_type_name,
    as_dtype,
    memory_format_arg,
    py_type_name,
    python_device,
    python_dtype,
)
from ._tls import state as _tls
from .autograd.plain_setitem import plain_setitem
from .numpy_interop import checked_array
from .scalar_fit import check_fits, check_integer_data
from .tensor import PUBLIC_API, TENSOR_CLASSES, Tensor, _make

_UINT8 = np.dtype(np.uint8)
_KEPT_INDEX_DTYPES = frozenset(np.dtype(t) for t in (np.int64, np.bool_, np.uint8))

INT64_MAX = 2**63 - 1
_NUMBERS = (numbers.Number, np.generic)


def _binary(tensor_op, scalar_op=None):
    def op(self, other):
        if scalar_op is not None and not isinstance(other, Tensor):
            return scalar_op(self, other)
        return tensor_op(self, other)

    return op


def _rtruediv(self, other):
    return aten.reciprocal(self) * other


# The reflected operators and ** take a tensor or a number; anything else (a numpy array)
# is NotImplemented, so Python tries the other operand, as with PyTorch's operators.


def _pow(self, exponent):
    if exponent.__class__ in PY_NUMBERS:  # the common case, before the ABC check
        return aten.pow_Tensor_Scalar(self, exponent)
    if isinstance(exponent, Tensor):
        return aten.pow_Tensor_Tensor(self, exponent)
    if not isinstance(exponent, _NUMBERS):
        return NotImplemented
    return aten.pow_Tensor_Scalar(self, exponent)


def _ipow(self, exponent):
    return self.pow_(exponent)


def _rpow(self, base):
    if isinstance(base, Tensor):  # x.__rpow__(t) is torch.pow(t, x), as in PyTorch
        return aten.pow_Tensor_Tensor(base, self)
    if not isinstance(base, _NUMBERS):
        return NotImplemented
    return aten.pow_Scalar(base, self)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):  # 2 @ x: Python then raises its own TypeError
        return NotImplemented
    return aten.matmul(other, self)


def _polygamma(self, *args, **kwargs):
    # torch's method binds self to polygamma's second argument (x.polygamma(n)); the
    # function's parser checks the rest, in its words
    from .generated.python_surface import polygamma

    if len(args) > 1:
        raise TypeError(f"polygamma() takes 1 positional argument but {len(args)} were given")
    if "input" in kwargs or "out" in kwargs:
        key = "input" if "input" in kwargs else "out"
        raise TypeError(f"polygamma() got an unexpected keyword argument '{key}'")
    return polygamma(*args, input=self, **kwargs)


def _rsub(self, other):
    if isinstance(other, Tensor):
        return aten.rsub_Tensor(self, other)
    if not isinstance(other, _NUMBERS):
        return NotImplemented
    return aten.rsub_Scalar(self, other)


def _comparison(tensor_op, scalar_op, arrays: bool = False):
    """A comparison operator; with ``arrays``, a numpy array is compared as a tensor of
    its own dtype (PyTorch's ``==`` does so; its other comparisons leave arrays to Python)."""

    def compare(self, other):
        try:
            if isinstance(other, Tensor):
                return tensor_op(self, other)
            if isinstance(other, _NUMBERS):
                return scalar_op(self, other)
            if arrays and isinstance(other, np.ndarray):
                return tensor_op(self, from_numpy(other))
        except TypeError:  # as PyTorch's operators: Python then tries the other operand
            pass
        return NotImplemented

    return compare


def _bitwise_operator(tensor_op, scalar_op):
    """``&``, ``|``, ``^``, ``<<``, ``>>`` (and their in-place forms): the Tensor or the
    Scalar overload by the other operand; anything else is left to Python."""

    def apply(self, other):
        if isinstance(other, Tensor):
            return tensor_op(self, other)
        if isinstance(other, _NUMBERS):
            return scalar_op(self, other)
        return NotImplemented

    return apply


def _reflected_shift(op):
    """``2 << x``: the Scalar_Tensor overload with the number first, as in PyTorch."""

    def apply(self, other):
        if not isinstance(other, (Tensor,) + _NUMBERS):
            return NotImplemented
        return op(other, self)

    return apply


def _invert(self):
    if self._data.dtype.kind not in "iub":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return aten.bitwise_not(self)


# The shift operators are aten ops of their own (a dispatch mode sees __lshift__), named
# here outside the class body, where Python would mangle their double underscores.
_LSHIFT = _bitwise_operator(aten.__lshift___Tensor, aten.__lshift___Scalar)
_ILSHIFT = _bitwise_operator(aten.__ilshift___Tensor, aten.__ilshift___Scalar)
_RSHIFT = _bitwise_operator(aten.__rshift___Tensor, aten.__rshift___Scalar)
_IRSHIFT = _bitwise_operator(aten.__irshift___Tensor, aten.__irshift___Scalar)


def _contains(self, element):
    """``element in t``: whether any element of ``t`` equals it, as PyTorch answers."""
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((element == self).any().item())
    raise RuntimeError(
        "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
        f"{type(element)}."
    )


#: what PyTorch converts into an index tensor: its Python sequences and numpy arrays
_INDEX_DATA = (list, tuple, range, str, np.ndarray)
#: array dtypes PyTorch takes as data that opgrad has no dtype for: converted to int64 here
_WIDE_UNSIGNED = frozenset(np.dtype(t) for t in (np.uint16, np.uint32, np.uint64))


def _as_index_tensor(item) -> Tensor:
    """A tensor, sequence or array used as an index, as PyTorch converts it: a tensor as it
    is; data keeps a bool or uint8 dtype (a mask) and becomes int64 otherwise, a float
    truncated toward zero, as PyTorch builds index tensors from data."""
    if isinstance(item, Tensor):
        return item
    if isinstance(item, np.ndarray):
        return _array_index(item)
    if isinstance(item, range):
        item = list(item)
    try:
        inferred = _infer_dtype(item, _sizes(item))
    except RuntimeError:
        check_integer_data(item)  # complex data: PyTorch's TypeError for a complex index
        raise
    if inferred is dtypes.bool or inferred is dtypes.uint8:
        return tensor(item, dtype=inferred)
    return tensor(item, dtype=dtypes.int64)  # which reads each element as torch does


def _array_index(array: np.ndarray) -> Tensor:
    """A numpy array used as an index: a tensor sharing its memory (a dispatch mode sees
    lift_fresh), then an int64 copy unless it is int64, bool or uint8 (_to_copy)."""
    if array.dtype in _WIDE_UNSIGNED:
        array = array.astype(np.int64)
    shared = _make(checked_array(array, warn_if_not_writable=True))
    if _tls.mode_stack:
        shared = aten.lift_fresh(shared)
    if shared._data.dtype in _KEPT_INDEX_DTYPES:
        return shared
    return aten._to_copy(shared, dtype=dtypes.int64)


def _is_mask(t: Tensor) -> bool:
    return is_mask(t._data)


def _is_advanced(item) -> bool:
    if isinstance(item, Tensor):
        # A 0-dim integer tensor indexes like an int; a 0-dim mask (bool, uint8) or a
        # 0-dim tensor of another type goes to aten.index (which refuses floats).
        return item._data.ndim > 0 or item._data.dtype.kind not in "iu" or _is_mask(item)
    return isinstance(item, _INDEX_DATA) or isinstance(item, (bool, np.bool_))


def _is_bool_array(item) -> bool:
    """A mask index: bool, or uint8 (which PyTorch still takes as a mask)."""
    data = item._data if isinstance(item, Tensor) else item
    return is_mask(data)


_VALID_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
    "indices (got {})"
)


_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)


def _sequence_as_tuple(index) -> bool:
    """NumPy's old rule, which PyTorch keeps: a short list (or string) holding a sequence,
    slice, tensor, None or Ellipsis indexes as the tuple of its items."""
    if not isinstance(index, (list, str)) or len(index) >= 32:
        return False
    for item in index:
        if isinstance(item, (Tensor, slice) + _INDEX_DATA) or item is None or item is Ellipsis:
            warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=4)
            return True
    return False


def _apply_index(self, index, for_setitem: bool = False):
    """PyTorch's indexing: basic items become select/slice/unsqueeze views; advanced
    items (tensors, lists, masks) are returned as the index list of aten.index."""
    single_slice = isinstance(index, slice) and not for_setitem
    if _sequence_as_tuple(index):
        index = tuple(index)
    if not isinstance(index, tuple):
        if self._data.ndim == 0 and isinstance(index, (int, np.integer)) and index is not True:
            if index is not False:
                raise IndexError(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
                )
        if self._data.ndim == 0 and isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        index = (index,)
    # PyTorch counts the indexed dims before converting anything: a list or an array is one
    # index, a mask tensor counts its dims
    specified = 0
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)):
            continue
        if isinstance(item, Tensor) and _is_bool_array(item):
            specified += item.ndim
        else:
            specified += 1
    ndim = self._data.ndim
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    for item in index:
        if not (
            item is None
            or item is Ellipsis
            or isinstance(item, (slice, int, np.integer, Tensor, np.bool_) + _INDEX_DATA)
        ):
            raise IndexError(_VALID_INDEX.format(type(item).__name__))
    # Sequences and arrays (0-dim ones too) become index tensors once (a dispatch mode sees
    # one lift_fresh each); a string is a sequence too, which torch.tensor refuses as data.
    index = tuple(
        _as_index_tensor(item) if isinstance(item, _INDEX_DATA) else item for item in index
    )
    result = self
    dim = 0
    advanced = {}
    seen_ellipsis = False
    for position, item in enumerate(index):
        if item is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += ndim - specified
        elif item is None:
            result = aten.unsqueeze(result, dim)
            dim += 1
        elif isinstance(item, slice):
            start = 0 if item.start is None else item.start
            stop = INT64_MAX if item.stop is None else item.stop
            step = 1 if item.step is None else item.step
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            # A lone ':' still slices (x[:] is a SliceBackward0 view); in a tuple it is skipped.
            if single_slice or not (start == 0 and stop == INT64_MAX and step == 1):
                result = aten.slice_Tensor(result, dim, start, stop, step)
            dim += 1
        elif isinstance(item, (bool, np.bool_)):
            raise NotImplementedError("indexing with a Python bool is not supported")
        elif _is_advanced(item):
            tensor_index = _as_index_tensor(item)
            if tensor_index._data.ndim == 0 and tensor_index._data.dtype is _UINT8:
                # a 0-dim uint8 counts as a bool (no deprecation warning, as in PyTorch)
                tensor_index = _make(tensor_index._data.astype(np.bool_))
            advanced[dim] = tensor_index
            dim += tensor_index._data.ndim if _is_mask(tensor_index) else 1
        else:
            size = result._data.shape[dim] if dim < result._data.ndim else 0
            item = int(item)  # once: a 0-dim tensor's value is read once (_local_scalar_dense)
            if not -size <= item < size:  # Python indexing's own check, before select
                raise IndexError(  # the dimension named is the item's place in the index
                    f"index {item} is out of bounds for dimension {position} with size {size}"
                )
            result = aten.select_int(result, dim, item)
    indices = None
    if advanced:
        indices, position = [], 0
        for start in sorted(advanced):
            while position < start:
                indices.append(None)
                position += 1
            t = advanced[start]
            indices.append(t)
            position += t._data.ndim if _is_mask(t) else 1
    return result, indices


def _getitem(self, index):
    if index.__class__ is int:  # x[i] in range: _apply_index's one select, without its walk
        shape = self._data.shape
        if shape and -shape[0] <= index < shape[0]:
            return aten.select_int(self, 0, index)
    result, indices = _apply_index(self, index)
    if indices is not None:
        return aten.index_Tensor(result, indices)
    if result is self:
        return aten.alias(self)
    return result


def _setitem(self, index, value) -> None:
    """``x[index] = value``: fill_/copy_ into the indexed view, or index_put_."""
    if _tls.plain and plain_setitem(self, index, value):
        return  # the common case, in one frame (see plain_setitem)
    if not isinstance(value, Tensor):
        value = _value_tensor(self, value)  # before the index, as in PyTorch
    view, indices = _apply_index(self, index, for_setitem=True)
    if indices is not None:
        if value._data.ndim and value._data.shape[0] == 1:
            value = aten.view(value, _without_leading_ones(value._data.shape))
        aten.index_put_(view, indices, value)
    elif value._data.shape == view._data.shape:
        aten.copy_(view, value)
    elif value._data.ndim == 0:
        aten.fill__Tensor(view, value)
    else:
        # leading 1s of the value go first (a [1, 3] value fills a [3] row), then it expands
        value = aten.view(value, _without_leading_ones(value._data.shape))
        if value._data.shape != view._data.shape:
            value = aten.expand(value, view._data.shape)
        aten.copy_(view, value)


def _value_tensor(self, value) -> Tensor:
    """A number assigned to ``self[...]``: a 0-dim tensor of self's dtype, refusing a
    number that dtype cannot hold (PyTorch's texts). As in PyTorch, a value is an int, a
    float or a complex, numpy integers, np.float64 and np.complex128 included (they are
    subclasses or index like ints); numpy's other scalars and arrays are refused."""
    if isinstance(value, np.integer):
        value = int(value)
    elif isinstance(value, np.generic) and isinstance(value, (float, complex)):
        value = value.item()
    elif not isinstance(value, (int, float, complex)) or isinstance(value, np.generic):
        raise TypeError(
            f"can't assign a {py_type_name(value)} to a "
            f"{dtypes.legacy_tensor_type(self._data.dtype)}"
        )
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if self._data.dtype.name != "float16" or isinstance(value, complex):
        check_fits(value, self._data.dtype)  # float16 takes what it cannot hold as +-inf
    if isinstance(value, complex):
        value = value.real  # fits: its imaginary part is zero
    return tensor(value, dtype=self.dtype)


def _without_leading_ones(shape: tuple) -> tuple:
    first = 0
    while first < len(shape) and shape[first] == 1:
        first += 1
    return shape[first:]


def split(tensor, split_size_or_sections, dim: int = 0):
    """torch.split: equal chunks for an int, the given sizes for a list."""
    if isinstance(split_size_or_sections, (int, np.integer)):
        return aten.split_Tensor(tensor, split_size_or_sections, dim)
    if not isinstance(split_size_or_sections, (list, tuple)):
        raise TypeError(
            "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
            f"{arg_type_name(split_size_or_sections)}"
        )
    return aten.split_with_sizes(tensor, list(split_size_or_sections), dim)


_TO_SIGNATURES = (
    " * (opgrad.device device = None, opgrad.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, opgrad.memory_format memory_format = None)\n"
    " * (opgrad.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "opgrad.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, opgrad.memory_format "
    "memory_format = None)\n"
)
# Tensor.to's Python signatures, as (parameters, how each is checked); the first that takes
# the call wins, as in PyTorch.
_IS_BOOL = (bool, np.bool_)
_TO_FORMS = (
    (
        ("device", "dtype", "non_blocking", "copy"),
        (
            lambda v: v is None or is_device_like(v),
            lambda v: v is None or as_dtype(v) is not None,
            _IS_BOOL,
            _IS_BOOL,
        ),
    ),
    (("dtype", "non_blocking", "copy"), (lambda v: as_dtype(v) is not None, _IS_BOOL, _IS_BOOL)),
    (("tensor", "non_blocking", "copy"), (lambda v: isinstance(v, Tensor), _IS_BOOL, _IS_BOOL)),
)


def _bind_to(args: tuple, kwargs: dict):
    """The named arguments of ``Tensor.to(*args, **kwargs)`` under the first signature that
    takes them, else None."""
    for names, checks in _TO_FORMS:
        if len(args) > len(names) or any(k not in names for k in kwargs):
            continue
        bound = dict(zip(names, args))
        if any(k in bound for k in kwargs):
            continue
        bound.update(kwargs)
        if names[0] != "device" and names[0] not in bound:
            continue  # the dtype or tensor is required
        if all(
            check(bound[n]) if callable(check) else isinstance(bound[n], check)
            for n, check in zip(names, checks)
            if n in bound
        ):
            return bound
    return None


def _to(self, *args, **kwargs):
    """``Tensor.to(device, dtype)``, ``to(dtype)``, ``to(other)``: a copy converted to the
    dtype, or self when nothing changes. Devices other than the CPU are refused as a
    CPU-only PyTorch build refuses them."""
    if len(args) == 1 and not kwargs and args[0].__class__ is dtypes.dtype:  # x.to(dtype)
        if args[0].np == self._data.dtype:
            return self
        return aten._to_copy(self, dtype=args[0])
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")
    memory_format = kwargs.get("memory_format")
    if memory_format is None or memory_format.__class__ is MemoryFormat:
        bound = _bind_to(args, {k: v for k, v in kwargs.items() if k != "memory_format"})
    else:
        bound = None
    if bound is None:
        given = ", ".join(
            [arg_type_name(a) for a in args]
            + [f"{k}={arg_type_name(v)}" for k, v in kwargs.items()]
        )
        if kwargs and not args:
            given += ", "
        raise TypeError(
            f"to() received an invalid combination of arguments - got ({given}), but expected "
            f"one of:\n{_TO_SIGNATURES}"
        )
    other = bound.get("tensor")
    dtype = other.dtype if other is not None else bound.get("dtype")
    if bound.get("device") is not None:
        check_target_device(bound["device"])
    dtype = as_dtype(dtype) if dtype is not None else None
    if (
        (dtype is None or dtype.np == self._data.dtype)
        and not bound.get("copy")
        and _laid_out_as(self, memory_format)
    ):
        return self
    return aten._to_copy(self, dtype=dtype, memory_format=memory_format)


def _laid_out_as(self, memory_format) -> bool:
    """Whether ``to()`` may return self for ``memory_format``: preserve, or the format
    self's strides follow (a transposed matrix follows contiguous_format, as in PyTorch)."""
    if memory_format is None or memory_format is preserve_format:
        return True
    data = self._data
    return suggest_memory_format(data.shape, element_strides(data)) is memory_format


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """A CPU-only build has no CUDA device to copy to."""
    if device is not None and opgrad_device(device).type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    raise AssertionError("Torch not compiled with CUDA enabled")


def _converter(dtype, name: str):
    def convert(self, *, memory_format=None):
        if memory_format is None:
            return _to(self, dtype)
        return _to(self, dtype, memory_format=memory_format_arg(name, memory_format))

    convert.__name__ = convert.__qualname__ = name  # as Python's argument errors name it
    return convert


def _contiguous(self, *, memory_format=contiguous_format):
    """self if laid out in ``memory_format``, else a copy that is."""
    if memory_format is contiguous_format:
        if self._data.flags.c_contiguous:
            return self
        return aten.clone(self, memory_format=contiguous_format)
    memory_format_arg("contiguous", memory_format)
    data = self._data
    if is_contiguous_as(memory_format, data.shape, element_strides(data)):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return aten.clone(self, memory_format=memory_format)


def _is_contiguous(self, *, memory_format=contiguous_format) -> bool:
    if memory_format is contiguous_format:
        return self._data.flags.c_contiguous
    memory_format_arg("is_contiguous", memory_format)
    data = self._data
    return is_contiguous_as(memory_format, data.shape, element_strides(data))


def _other_tensor(method: str, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{method}(): argument 'other' (position 1) must be Tensor, not "
            f"{arg_type_name(other)}"
        )


def _type_as(self, other):
    _other_tensor("type_as", other)
    return _to(self, dtype=other.dtype)


def _view_as(self, other):
    _other_tensor("view_as", other)
    return self.view(other._data.shape)


def _reshape_as(self, other):
    _other_tensor("reshape_as", other)
    return self.reshape(other._data.shape)


def _T(self):
    return aten.permute(self, tuple(range(self.dim() - 1, -1, -1)))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return aten.transpose_int(self, -2, -1)


def _mH(self):
    """The conjugate transpose of the last two dims: the transpose (opgrad's tensors are
    real), as PyTorch's adjoint of a real tensor."""
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return aten.transpose_int(self, -2, -1)


def _H(self):
    if self.dim() != 2:
        hint = ". For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor{hint}"
        )
    return aten.transpose_int(self, -2, -1)


def adjoint(self):
    if self.dim() < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got "
            f"{self.dim()}-D tensor."
        )
    return aten.transpose_int(self, -2, -1)


def _new_tensor_factory(name):
    factory = getattr(factories, name)
    function = f"new_{name}"

    def new(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        dtype = python_dtype(function, dtype)
        python_device(function, device)
        return factory(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    return new


def _operator(op, name: str, method, binary: bool = True):
    """``Tensor.__mul__``: the op's entry, known to __torch_function__ handlers as
    ``method`` (``Tensor.mul``) as in torch; a binary operator returns NotImplemented when
    every handler does."""
    return public_entry(op, name, f"Tensor.{name}", Site(method, operator=binary))


def _python_method(impl, name: str, identity=None, builtin: bool = True, **flags):
    """A method written here, going through __torch_function__ as ``identity`` (default:
    itself). ``builtin`` picks which of torch's error texts it raises."""
    return overridable(
        impl, name=name, qualname=f"Tensor.{name}", identity=identity, builtin=builtin, **flags
    )


def public_method(python: bool = False):
    """A method torch routes through __torch_function__ as ``Tensor.<name>``, checking only
    ``self``; ``python``: torch writes it in Python (its no-handler error names the module)."""

    def wrap(impl):
        return overridable(
            impl, relevant=self_only, builtin=not python, qualname=f"Tensor.{impl.__name__}"
        )

    return wrap


def _tensor_reduce_ex(self, proto):
    """``Tensor.__reduce_ex__``: a plain tensor without attributes is reduced at once, as in
    torch; others go through __torch_function__ (which sees ``Tensor.__reduce_ex__``)."""
    from .serialization import reduce_tensor, user_state

    if self.__class__ in TENSOR_CLASSES and not user_state(self):
        return reduce_tensor(self, proto)
    return _reduce_ex_overridable(self, proto)


def _reduce_ex_impl(self, proto):
    from .serialization import reduce_tensor

    return reduce_tensor(self, proto)


_tensor_reduce_ex.__name__ = _reduce_ex_impl.__name__ = "__reduce_ex__"
_tensor_reduce_ex.__qualname__ = "Tensor.__reduce_ex__"
_tensor_reduce_ex.__module__ = Tensor.__module__
_reduce_ex_overridable = overridable(
    _reduce_ex_impl,
    relevant=self_only,
    builtin=False,
    qualname="Tensor.__reduce_ex__",
    identity=_tensor_reduce_ex,
)


class TensorPythonMethods:
    """Tensor's methods written by hand over the ops and autograd. Only a class body:
    ``join`` makes each attribute Tensor's own."""

    # ----- operators -----------------------------------------------------------------
    __add__ = _operator(aten.add_Tensor_op, "__add__", TensorMethods.add)
    __radd__ = _operator(aten.add_Tensor_op, "__radd__", TensorMethods.add)
    __iadd__ = _operator(aten.add__Tensor_op, "__iadd__", TensorMethods.add_)
    __sub__ = _operator(aten.sub_Tensor_op, "__sub__", TensorMethods.sub)
    __isub__ = _operator(aten.sub__Tensor_op, "__isub__", TensorMethods.sub_)
    __rsub__ = _python_method(_rsub, "__rsub__", builtin=False, operator=True)
    __mul__ = _operator(aten.mul_Tensor_op, "__mul__", TensorMethods.mul)
    __rmul__ = _operator(aten.mul_Tensor_op, "__rmul__", TensorMethods.mul)
    __imul__ = _operator(aten.mul__Tensor_op, "__imul__", TensorMethods.mul_)
    __truediv__ = _operator(aten.div_Tensor_op, "__truediv__", TensorMethods.div)
    __itruediv__ = _operator(aten.div__Tensor_op, "__itruediv__", TensorMethods.div_)
    __rtruediv__ = __rdiv__ = _python_method(_rtruediv, "__rdiv__", builtin=False, operator=True)
    __pow__ = _python_method(_pow, "pow", operator=True)  # torch's: named pow, seen as itself
    __rpow__ = _python_method(_rpow, "__rpow__", builtin=False, operator=True)
    __ipow__ = _python_method(_ipow, "pow_", operator=True)
    __neg__ = TensorMethods.neg  # the methods themselves, as torch's
    __abs__ = TensorMethods.abs
    __matmul__ = _operator(aten.matmul_op, "__matmul__", TensorMethods.matmul)
    __rmatmul__ = _python_method(_rmatmul, "__rmatmul__", builtin=False, operator=True)
    __eq__ = _python_method(_comparison(aten.eq_Tensor, aten.eq_Scalar, arrays=True), "__eq__")
    __ne__ = _python_method(_comparison(aten.ne_Tensor, aten.ne_Scalar), "__ne__")
    __lt__ = _python_method(
        _comparison(aten.lt_Tensor, aten.lt_Scalar), "__lt__", TensorMethods.lt, operator=True
    )
    __le__ = _python_method(
        _comparison(aten.le_Tensor, aten.le_Scalar), "__le__", TensorMethods.le, operator=True
    )
    __gt__ = _python_method(
        _comparison(aten.gt_Tensor, aten.gt_Scalar), "__gt__", TensorMethods.gt, operator=True
    )
    __ge__ = _python_method(
        _comparison(aten.ge_Tensor, aten.ge_Scalar), "__ge__", TensorMethods.ge, operator=True
    )
    __and__ = _python_method(
        _bitwise_operator(aten.bitwise_and_Tensor, aten.bitwise_and_Scalar), "__and__"
    )
    __or__ = _python_method(
        _bitwise_operator(aten.bitwise_or_Tensor, aten.bitwise_or_Scalar), "__or__"
    )
    __xor__ = _python_method(
        _bitwise_operator(aten.bitwise_xor_Tensor, aten.bitwise_xor_Scalar), "__xor__"
    )
    __iand__ = _python_method(
        _bitwise_operator(aten.bitwise_and__Tensor, aten.bitwise_and__Scalar), "__iand__"
    )
    __ior__ = _python_method(
        _bitwise_operator(aten.bitwise_or__Tensor, aten.bitwise_or__Scalar), "__ior__"
    )
    __ixor__ = _python_method(
        _bitwise_operator(aten.bitwise_xor__Tensor, aten.bitwise_xor__Scalar), "__ixor__"
    )
    # as torch's: the reflected forms are the methods themselves (1 & x is x.bitwise_and(1))
    __rand__ = TensorMethods.bitwise_and
    __ror__ = TensorMethods.bitwise_or
    __rxor__ = TensorMethods.bitwise_xor
    __lshift__ = _python_method(_LSHIFT, "__lshift__")
    __ilshift__ = _python_method(_ILSHIFT, "__ilshift__")
    __rshift__ = _python_method(_RSHIFT, "__rshift__")
    __irshift__ = _python_method(_IRSHIFT, "__irshift__")
    __rlshift__ = _python_method(
        _reflected_shift(aten.bitwise_left_shift_Scalar_Tensor), "__rlshift__", builtin=False
    )
    __rrshift__ = _python_method(
        _reflected_shift(aten.bitwise_right_shift_Scalar_Tensor), "__rrshift__", builtin=False
    )
    __invert__ = _python_method(_invert, "__invert__")
    __contains__ = _python_method(_contains, "__contains__", builtin=False)
    __getitem__ = _python_method(_getitem, "__getitem__")
    __setitem__ = _python_method(_setitem, "__setitem__")

    polygamma = _python_method(_polygamma, "polygamma")

    # ----- shapes, copies and conversions ---------------------------------------------
    split = _python_method(split, "split", builtin=False)
    nonzero = _python_method(nonzero_method, "nonzero")
    norm = _python_method(tensor_norm, "norm", builtin=False)
    unique = _python_method(_unique, "unique", builtin=False)
    unique_consecutive = _python_method(_unique_consecutive, "unique_consecutive", builtin=False)
    contiguous = _python_method(_contiguous, "contiguous")
    is_contiguous = _python_method(_is_contiguous, "is_contiguous")
    type_as = _python_method(_type_as, "type_as")
    view_as = _python_method(_view_as, "view_as")
    reshape_as = _python_method(_reshape_as, "reshape_as")
    T = overridable_property(property(_T), "T")
    mT = overridable_property(property(_mT), "mT")
    mH = overridable_property(property(_mH), "mH")
    H = overridable_property(property(_H), "H")
    adjoint = _python_method(adjoint, "adjoint")
    new = _python_method(legacy.tensor_new, "new")
    new_tensor = _python_method(legacy.tensor_new_tensor, "new_tensor")
    type = _python_method(legacy.tensor_type, "type")
    new_ones = _python_method(_new_tensor_factory("ones"), "new_ones")
    new_empty = _python_method(_new_tensor_factory("empty"), "new_empty")
    new_full = _python_method(_new_tensor_factory("full"), "new_full")
    to = _python_method(_to, "to")
    cuda = _python_method(_cuda, "cuda")

    @public_method()
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if _tls.mode_stack or self._keys & K.PYTHON:
            # a dispatch mode or a Python subclass sees (and answers) the read
            return aten._local_scalar_dense(self)
        return self._data.item()

    def __array_wrap__(self, array):
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)  # as PyTorch's: a bool result comes back as uint8
        return from_numpy(array)

    # ----- autograd -------------------------------------------------------------------
    _execution_engine = ExecutionEngine()

    @public_method(python=True)
    def backward(
        self,
        gradient: Optional[Tensor] = None,
        retain_graph: Optional[bool] = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves (see ``opgrad.autograd.backward``)."""
        # this method already went through __torch_function__
        run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    @public_method(python=True)
    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one."""
        return hooks.register_tensor_hook(self, hook)

    @public_method(python=True)
    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs on a leaf after its ``.grad`` was updated."""
        return hooks.register_post_accumulate_grad_hook(self, hook)

    @public_method()
    def retain_grad(self) -> None:
        """Populate ``.grad`` of this non-leaf tensor during backward."""
        hooks.retain_grad(self)

    @property
    def data(self) -> Tensor:
        # Shares memory but not the version counter (PyTorch's escape hatch).
        if _tls.mode_stack or self._keys & K.PYTHON:
            out = aten.detach(self)  # what a dispatch mode or a Python subclass sees
            out._vc = None
            return out
        return _make(self._data)

    @data.setter
    def data(self, new: Tensor) -> None:
        if not isinstance(new, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
        if self._rg and new._data.dtype.kind != "f":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                "dtype"
            )
        # Same tensor object, flags and version counter; the new values' memory.
        self._data = new._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    data = overridable_property(data, "data")

    # ----- __torch_function__ -----------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Run ``func`` with subclass handlers disabled and return its tensors as ``cls``."""
        return default_torch_function(cls, func, types, args, kwargs)

    # ----- pickle and copy (runtime/serialization.py) ------------------------------------
    __reduce_ex__ = _tensor_reduce_ex

    @public_method(python=True)
    def __deepcopy__(self, memo):
        from .serialization import deepcopy_tensor

        return deepcopy_tensor(self, memo)

    @public_method()
    def as_subclass(self, cls) -> Tensor:
        """This tensor as an instance of ``cls``: an alias (``AliasBackward0`` when it
        requires grad), as in torch."""
        with DisableTorchFunctionSubclass():
            result = aten.alias(self)
        result.__class__ = cls
        return result

    # ----- dtype conversions (last: these names shadow the builtins in this body) -------
    half = _python_method(_converter(dtypes.float16, "half"), "half")
    float = _python_method(_converter(dtypes.float32, "float"), "float")
    double = _python_method(_converter(dtypes.float64, "double"), "double")
    byte = _python_method(_converter(dtypes.uint8, "byte"), "byte")
    char = _python_method(_converter(dtypes.int8, "char"), "char")
    short = _python_method(_converter(dtypes.int16, "short"), "short")
    int = _python_method(_converter(dtypes.int32, "int"), "int")
    long = _python_method(_converter(dtypes.int64, "long"), "long")
    bool = _python_method(_converter(dtypes.bool_, "bool"), "bool")


#: what every class statement puts in its class's __dict__, which is no attribute of Tensor
_CLASS_BOOKKEEPING = frozenset(vars(type("Empty", (), {})))


def join(tensor: type, *bodies: type) -> None:
    """Make ``tensor`` what its class bodies say: wrap its methods and properties marked
    ``@public_api`` for __torch_function__, then add the attributes written in
    ``bodies``, each exactly once (else TypeError, before anything changes).

    The bodies cannot simply be Tensor's bases: every module of the runtime binds the
    Tensor class when it is imported, ops included, so the class exists before any op,
    and these bodies are made of ops. Joined, the attributes sit in Tensor's own
    ``__dict__``, where lookups find them first.
    """
    written, names = [], set()
    for body in bodies:
        for name, value in vars(body).items():
            if name in _CLASS_BOOKKEEPING or (name == "__hash__" and value is None):
                continue  # (a body that defines __eq__ gets __hash__ = None: tensors keep id)
            if name in vars(tensor) or name in names:
                raise TypeError(f"{tensor.__name__}.{name} is written twice ({body.__name__})")
            names.add(name)
            written.append((name, value, body))
    for name, value in list(vars(tensor).items()):
        impl = value.fget if isinstance(value, property) else value
        if not isinstance(impl, FunctionType) or impl not in PUBLIC_API:
            continue
        python, none_slot = PUBLIC_API[impl]
        if isinstance(value, property):
            setattr(tensor, name, overridable_property(value, name, none_slot))
        else:
            setattr(tensor, name, public_method(python)(value))
    for name, value, body in written:
        function = getattr(value, "__func__", value)  # a classmethod's function
        if getattr(function, "__module__", None) == body.__module__:
            # Tensor's now, where torch's texts name it (torch._tensor.backward)
            function.__module__ = tensor.__module__
            if function.__qualname__ == f"{body.__qualname__}.{name}":
                function.__qualname__ = f"{tensor.__qualname__}.{name}"
        setattr(tensor, name, value)
