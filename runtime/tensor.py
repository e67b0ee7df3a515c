"""The Tensor: a numpy array plus autograd metadata.

What lives here is the state every op reads (slots kept few for a short
per-op path) and the API that reads only that state: properties, sizes,
conversions. Most of the runtime's modules bind this class when they are
imported, so it comes first: this module imports none of those (a stale
view's refresh excepted, at call time).

Tensor's other methods are made of ops, which are made after it, so they are
written as two more class bodies that join this one once the ops exist
(``_tensor_methods.join``, run by ``import opgrad``): ``TensorMethods`` in
generated/tensor_methods.py, one per op name (``x.add``), and
``TensorPythonMethods`` in _tensor_methods.py (operators, indexing, ``to``,
``item``, ``backward``...).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from . import dispatch_keys as K
from . import dtypes
from ._tensor_str import tensor_repr
from ._tls import state as _tls
from .device import CPU as _CPU
from .numpy_kernels import storage_offset as _storage_offset
from .numpy_kernels import wrap_dim as _wrap_dim
from .numpy_scalars import python_number
from .scalar_fit import check_scalar_range

_new = object.__new__

#: the methods and property getters marked @public_api, with how they are marked
PUBLIC_API: Dict[Callable, Tuple[bool, Optional[str]]] = {}


def public_api(python: bool = False, none_slot: Optional[str] = None) -> Callable:
    """Mark a method, or a property's getter, as API that __torch_function__ handlers see
    as ``Tensor.<name>``, as in torch. ``_tensor_methods.join`` gives Tensor the wrapped
    version (the protocol's module imports this one, so it cannot wrap here).
    ``python``: torch writes it in Python, which words the no-handler error differently;
    ``none_slot``: assigning None to the property stores None there, unchecked
    (``x.grad = None`` every step)."""

    def mark(impl: Callable) -> Callable:
        PUBLIC_API[impl] = (python, none_slot)
        return impl

    return mark


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``opgrad.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"opgrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class Tensor:
    # The attributes every op reads or sets are slots; rarely set ones live in
    # the instance dict, falling back to the class-level defaults below, so a
    # new tensor costs only four stores.
    __slots__ = (
        "_data",  # numpy array holding the values
        "_rg",  # requires_grad
        "_grad_fn",
        "_vc",  # version counter: a one-element list shared with views (None until needed)
        "_base",  # the tensor this one is a view of, if any
        # set on views only (never read on other tensors):
        "_attr_version",  # the version at which the view's grad_fn was computed
        "_creation_meta",  # how the view was made (views.DEFAULT, NO_GRAD_MODE, ...)
        "__dict__",
        "__weakref__",
    )
    _output_nr = 0
    _keys = K.DEFAULT_TENSOR_KEYS  # dispatch key bits
    _wrapped = False  # a 0-dim tensor made from a Python scalar
    _grad = None
    _grad_acc = None  # weakref to this leaf's AccumulateGrad node
    _meta = None  # rarely used autograd metadata (hooks, retains_grad)
    _fw_grad = None  # the tangent at the active forward-AD level
    _fw_root = None  # forward base of a view when it is not _base (forward_grad.py)

    # ----- construction -------------------------------------------------
    def __new__(cls, *args, **kwargs):
        # PyTorch's legacy constructor, opgrad.Tensor(2, 3) or opgrad.Tensor([1, 2]), in the
        # default dtype (runtime/legacy.py, imported here: it builds on this module)
        from .legacy import legacy_new

        return legacy_new(dtypes.get_default_dtype(), args, kwargs, cls, typed=False)

    @staticmethod
    def _make_wrapper_subclass(
        cls,
        size,
        strides=None,
        storage_offset=None,
        memory_format=None,
        dtype=None,
        layout=None,
        device=None,
        pin_memory=False,
        requires_grad=False,
        **kwargs,
    ) -> "Tensor":
        """A tensor of subclass ``cls`` with metadata (shape, dtype) and no data of its own.

        Its dispatch keys include Python, so every aten call on it reaches
        ``cls.__torch_dispatch__`` (after autograd has run on it).
        """
        np_dtype = (dtype or dtypes.get_default_dtype()).np
        t = _new(cls)
        # metadata only: a stride-0 view of one zero
        t._data = np.broadcast_to(np.zeros((), np_dtype), tuple(size))
        t._rg = False
        t._grad_fn = None
        t._vc = None
        t._base = None
        t._keys = K.DEFAULT_TENSOR_KEYS | K.PYTHON
        if requires_grad:
            t.requires_grad_(True)
        return t

    @staticmethod
    def _make_subclass(cls, data: "Tensor", require_grad: bool = False) -> "Tensor":
        """A tensor of subclass ``cls`` sharing ``data``'s values (no history)."""
        t = _new(cls)
        t._data = data._data
        t._rg = False
        t._grad_fn = None
        t._vc = None
        t._base = None
        if require_grad:
            t.requires_grad_(True)
        return t

    # ----- autograd metadata ---------------------------------------------
    @property
    @public_api()
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype")

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")  # torch's words for a deletion

    @public_api()
    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype")

    def _set_requires_grad(self, requires_grad: bool, what: str) -> "Tensor":
        # torch words this error three ways depending on the entry point.
        if requires_grad and self._keys == K.INFERENCE_TENSOR_KEYS and not _tls.inference_mode:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(f"{what} can require gradients")
        if self._grad_fn is None:
            self._rg = bool(requires_grad)
        return self

    @property
    @public_api()
    def grad_fn(self):
        return self._grad_fn

    @property
    @public_api()
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    @public_api()
    def output_nr(self) -> int:
        return self._output_nr

    @property
    @public_api(none_slot="_grad")
    def grad(self) -> Optional["Tensor"]:
        if self._grad_fn is not None and not (self._meta and self._meta.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Optional["Tensor"]) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
            expected = self._data.dtype if self._meta is None else _grad_numpy_dtype(self)
            if expected is not None and value._data.dtype != expected:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{dtypes.cpp_type_name(value._data.dtype)}' "
                    f"to a tensor with grad_dtype '{dtypes.scalar_type_name(expected)}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). "
                    "You can set the tensor's grad_dtype attribute with a specific dtype, or None to "
                    "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match."
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    @public_api()
    def grad_dtype(self) -> Optional["dtypes.dtype"]:
        """The dtype a leaf's gradient must have: its own unless set, None for any."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        expected = _grad_numpy_dtype(self)
        return None if expected is None else dtypes.from_numpy_dtype(expected)

    @grad_dtype.setter
    def grad_dtype(self, value: Optional["dtypes.dtype"]) -> None:
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, dtypes.dtype):
            raise RuntimeError(
                f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}"
            )
        grad = self._grad
        if value is not None and grad is not None and grad._data.dtype != value.np:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{value.scalar_type_name}' because there is already "
                f"a gradient with dtype '{dtypes.cpp_type_name(grad._data.dtype)}'. Please "
                "clear the gradient (.grad = None) before changing grad_dtype, or ensure the "
                "new grad_dtype matches the existing gradient's dtype."
            )
        from .autograd.hooks import tensor_meta

        tensor_meta(self).grad_dtype = value
        accumulator = self._grad_acc() if self._grad_acc is not None else None
        if accumulator is not None:  # its gradients are cast to the new dtype from now on
            accumulator._in_meta = ((self._data.shape, None if value is None else value.np),)

    @property
    @public_api()
    def _version(self) -> int:
        if self._keys == K.INFERENCE_TENSOR_KEYS:
            raise RuntimeError("Inference tensors do not track version counter.")
        vc = self._vc
        return vc[0] if vc is not None else 0

    @public_api()
    def is_inference(self) -> bool:
        return self._keys == K.INFERENCE_TENSOR_KEYS

    def _is_view(self) -> bool:
        return self._base is not None

    # ----- metadata ------------------------------------------------------
    @property
    @public_api()
    def shape(self) -> Size:
        return Size(self._data.shape)

    @public_api()
    def size(self, dim: Optional[int] = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @public_api()
    def storage_offset(self) -> int:
        return _storage_offset(self._data)

    @public_api()
    def stride(self, dim: Optional[int] = None):
        item = self._data.itemsize
        strides = tuple(s // item for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    @property
    @public_api()
    def dtype(self) -> dtypes.dtype:
        return dtypes.FROM_NUMPY[self._data.dtype]

    @property
    @public_api()
    def device(self) -> "device":
        return _CPU

    @property
    def is_cpu(self) -> bool:
        return True

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @public_api()
    def cpu(self, memory_format=None) -> "Tensor":
        """The tensor on the CPU: itself, as every opgrad tensor lives there."""
        return self

    @property
    @public_api()
    def ndim(self) -> int:
        return self._data.ndim

    @public_api()
    def dim(self) -> int:
        return self._data.ndim

    @public_api()
    def ndimension(self) -> int:
        return self._data.ndim

    @public_api()
    def numel(self) -> int:
        return self._data.size

    @public_api()
    def nelement(self) -> int:
        return self._data.size

    @public_api()
    def element_size(self) -> int:
        return self._data.itemsize

    @public_api()
    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    @public_api(python=True)
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ----- conversions ---------------------------------------------------
    @public_api()
    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._data

    @public_api()
    def tolist(self):
        return self._data.tolist()

    @public_api()
    def __float__(self) -> float:
        return float(self.item())

    @public_api()
    def __int__(self) -> int:
        return int(self.item())

    @public_api()
    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    @public_api()
    def __bool__(self) -> bool:
        if self._data.size != 1:
            how_many = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {how_many} is ambiguous")
        return bool(self.item())

    # numpy defers its binary operators to a Tensor's (np.float32(2) * x is x.__rmul__), and
    # wraps what a ufunc makes of a Tensor back into one (x + np.array(0.5)), as in PyTorch
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        return self.numpy() if dtype is None else self.numpy().astype(dtype)

    @public_api(python=True)
    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # one node (UnbindBackward0) for every element, as torch

    def __hash__(self) -> int:
        return id(self)

    @public_api(python=True)
    def __repr__(self) -> str:
        return tensor_repr(self)

    @public_api(python=True)
    def __format__(self, format_spec: str) -> str:
        # f"{loss:.4f}": a plain 0-dim tensor formats as its number, as in PyTorch.
        if self._data.ndim == 0 and self.__class__ in TENSOR_CLASSES:
            return self._data.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __str__(self) -> str:
        return self.__repr__()  # a subclass's __repr__ serves print() too

    # ----- autograd ----------------------------------------------------------
    @property
    @public_api()
    def retains_grad(self) -> bool:
        return self._grad_fn is not None and self._meta is not None and self._meta.retains_grad

    @public_api()
    def detach_(self) -> "Tensor":
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be called "
                "on these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                "function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._rg = False
        self.__dict__.pop("_output_nr", None)
        return self


def version_counter(t: Tensor) -> list:
    """``t``'s version counter, created on first need (most tensors never need one)."""
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    return vc


def _grad_numpy_dtype(tensor: Tensor):
    # autograd's modules build on this one: imported when first needed
    from .autograd.hooks import grad_numpy_dtype

    return grad_numpy_dtype(tensor)


def _make(data: np.ndarray) -> Tensor:
    """A fresh tensor owning nothing but ``data`` (no autograd history)."""
    t = _new(Tensor)
    t._data = data
    t._rg = False
    t._grad_fn = None
    t._vc = None  # created on first in-place op, view or save of an output
    t._base = None
    if _tls.inference_mode:
        t._keys = K.INFERENCE_TENSOR_KEYS
    return t


_rg_slot = Tensor.__dict__["_rg"]
_grad_fn_slot = Tensor.__dict__["_grad_fn"]


class _View(Tensor):
    """A tensor that views the memory of ``_base``.

    Its ``requires_grad`` follows its base, and its grad_fn is regenerated
    (AsStridedBackward0 from the base) when the base or another view was
    modified in place since it was last computed, as PyTorch's
    DifferentiableViewMeta does. Plain tensors pay nothing for this.
    """

    __slots__ = ()

    @property
    def _rg(self) -> bool:
        return _rg_slot.__get__(self) or self._base._rg

    @_rg.setter
    def _rg(self, value: bool) -> None:
        _rg_slot.__set__(self, value)

    @property
    def _grad_fn(self):
        if self._vc[0] != self._attr_version:
            from .autograd.views import refresh_view_grad_fn

            refresh_view_grad_fn(self)
        return _grad_fn_slot.__get__(self)

    @_grad_fn.setter
    def _grad_fn(self, value) -> None:
        _grad_fn_slot.__set__(self, value)
        self._attr_version = self._vc[0]


_View.__name__ = _View.__qualname__ = "Tensor"


class _WrappedNumber(Tensor):
    """A 0-dim tensor made from a Python scalar: it loses type promotion to
    dimensioned tensors of the same category, as in PyTorch."""

    __slots__ = ()
    _wrapped = True


#: the classes op entries take as they are (anything else goes through tensor_arg)
TENSOR_CLASSES = frozenset({Tensor, _View, _WrappedNumber})

_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64)}


def wrap_scalar(value: Any) -> Tensor:
    """A Python number as PyTorch's 0-dim "wrapped number" tensor (a numpy scalar as the
    Python number it holds)."""
    npdt = _SCALAR_DTYPES.get(value.__class__)
    if npdt is None:
        if isinstance(value, Tensor):
            return value
        if isinstance(value, np.generic):
            return wrap_scalar(python_number(value))
        if isinstance(value, np.ndarray):
            return _make(np.asarray(value))
        if isinstance(value, bool):
            npdt = _SCALAR_DTYPES[bool]
        elif isinstance(value, int):
            npdt = _SCALAR_DTYPES[int]
        elif isinstance(value, float):
            npdt = _SCALAR_DTYPES[float]
        else:
            raise TypeError(f"expected Tensor as element, but got {type(value).__name__}")
    t = _new(_WrappedNumber)
    try:
        t._data = np.array(value, npdt)
    except OverflowError:  # an int beyond int64: a uint64 Scalar in PyTorch, if it fits one
        check_scalar_range(value)
        t._data = np.array(value, np.uint64)
    t._rg = False
    t._grad_fn = None
    t._vc = None
    t._base = None
    return t
