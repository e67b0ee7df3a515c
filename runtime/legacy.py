"""PyTorch's legacy constructors and tensor types: ``opgrad.Tensor(2, 3)``,
``opgrad.FloatTensor([1, 2])``, ``x.new(...)``, ``x.new_tensor(...)`` and ``x.type(...)``.

A legacy constructor reads its arguments as torch's does: nothing is an empty tensor, integers
(or a Size) are a shape (uninitialised in torch; zeros here, as opgrad's empty), a sequence
is data, and a tensor is aliased (AliasBackward0) when its dtype fits. The tensor types
(``FloatTensor`` ...) are no subclasses of Tensor: calling one constructs a tensor of its
dtype, and ``isinstance(x, FloatTensor)`` asks whether x is float32."""

from __future__ import annotations

import warnings
from typing import Optional

from . import dtypes
from .tensor import Size, Tensor

__all__ = [
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "legacy_new",
    "tensor_new",
    "tensor_new_tensor",
    "tensor_type",
]

_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    " * (torch.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)


class tensortype(type):
    """The class of ``opgrad.FloatTensor`` and its kin."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs) -> Tensor:
        return legacy_new(cls.dtype, args, kwargs, Tensor, typed=True)

    def __repr__(cls) -> str:
        return f"<class 'opgrad.{cls.__name__}'>"


def _tensor_type(d: "dtypes.dtype") -> tensortype:
    return tensortype(f"{d.scalar_type_name}Tensor", (), {"dtype": d, "__module__": "opgrad"})


FloatTensor = _tensor_type(dtypes.float32)
DoubleTensor = _tensor_type(dtypes.float64)
HalfTensor = _tensor_type(dtypes.float16)
ByteTensor = _tensor_type(dtypes.uint8)
CharTensor = _tensor_type(dtypes.int8)
ShortTensor = _tensor_type(dtypes.int16)
IntTensor = _tensor_type(dtypes.int32)
LongTensor = _tensor_type(dtypes.int64)
BoolTensor = _tensor_type(dtypes.bool_)

#: "FloatTensor" -> FloatTensor: the names x.type(...) takes after "opgrad." or "torch."
_TYPES_BY_NAME = {
    t.__name__: t
    for t in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        ByteTensor,
        CharTensor,
        ShortTensor,
        IntTensor,
        LongTensor,
        BoolTensor,
    )
}


def _type_names(args: tuple, kwargs: dict) -> str:
    parts = [a.__class__.__name__ for a in args]
    parts += [
        (
            f"{k}={v.__class__.__module__.split('.')[0]}.{v.__class__.__name__}"
            if isinstance(v, dtypes.dtype)
            else f"{k}={v.__class__.__name__}"
        )
        for k, v in kwargs.items()
    ]
    return ", ".join(parts)


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    signatures = _SIGNATURES
    unknown = [k for k in kwargs if k != "device"]
    if unknown:  # torch says why its first signature did not match
        first, rest = signatures.split("\n", 1)
        reason = (
            f"      didn't match because some of the keywords were incorrect: {', '.join(unknown)}"
        )
        signatures = f"{first}\n{reason}\n{rest}"
    return TypeError(
        f"new() received an invalid combination of arguments - got ({_type_names(args, kwargs)}), "
        f"but expected one of:\n{signatures}"
    )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def legacy_new(dtype: "dtypes.dtype", args: tuple, kwargs: dict, cls: type, typed: bool) -> Tensor:
    """What ``opgrad.Tensor(*args)``, ``FloatTensor(*args)`` and ``x.new(*args)`` make: a
    tensor of ``dtype`` (``typed``: a tensor argument must have it too) of class ``cls``."""
    from . import factories
    from .generated import ops as aten

    device = kwargs.get("device")
    if set(kwargs) - {"device"} or (device is not None and str(device) != "cpu"):
        raise _invalid(args, kwargs)
    if not args:
        result = factories.empty(0, dtype=dtype)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if typed and other.dtype is not dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(other.dtype)})")
        return aten.alias(other)
    elif len(args) == 1 and isinstance(args[0], Size) or all(_is_int(a) for a in args):
        size = tuple(args[0]) if isinstance(args[0], Size) else args
        result = factories.empty(*size, dtype=dtype)
    elif len(args) > 1:
        bad = next((i for i, a in enumerate(args) if not _is_int(a)), None)
        if all(isinstance(a, (int, float)) for a in args):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {bad + 1} with "
                f'error "type must be tuple of ints,but got {args[bad].__class__.__name__}"'
            )
        raise _invalid(args, kwargs)
    else:
        data = args[0]
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, (int, float, complex, bool)):
            raise TypeError(f"new(): data must be a sequence (got {data.__class__.__name__})")
        result = factories.tensor(data, dtype=dtype)
    return result if cls is Tensor else Tensor._make_subclass(cls, result)


def _options(d: "dtypes.dtype") -> str:
    return (
        f"TensorOptions(dtype={d.cpp_type_name}, device=cpu, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt))"
    )


def tensor_new(self: Tensor, *args, **kwargs) -> Tensor:
    """``x.new(...)``: a legacy constructor of x's dtype."""
    return legacy_new(self.dtype, args, kwargs, Tensor, typed=True)


def tensor_new_tensor(
    self: Tensor, data, dtype=None, device=None, requires_grad: bool = False, **kwargs
) -> Tensor:
    """``x.new_tensor(data)``: ``opgrad.tensor(data)`` in x's dtype unless told; a tensor's
    values are copied (with torch's warning) and never keep its history."""
    from . import factories

    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=3,
        )
        data = data.detach()
    return factories.tensor(
        data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad, **kwargs
    )


def _dtype_named(name: str) -> Optional["dtypes.dtype"]:
    module, _, short = name.rpartition(".")
    found = _TYPES_BY_NAME.get(short) if module in ("torch", "opgrad") else None
    return None if found is None else found.dtype


def tensor_type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """``x.type()``: ``'opgrad.FloatTensor'``; ``x.type(t)``: x converted to ``t`` (a dtype, a
    tensor type or its name, ``'torch.DoubleTensor'`` too), x itself when it already is."""
    if dtype is None:
        return dtypes.legacy_tensor_type(self._data.dtype)
    if isinstance(dtype, str):
        if dtype.startswith(("torch.cuda.", "opgrad.cuda.")):
            self.cuda()  # refused: opgrad has no CUDA
        target = _dtype_named(dtype)
        if target is None:
            raise ValueError(f"invalid type: '{dtype}'")
    elif isinstance(dtype, tensortype):
        target = dtype.dtype
    elif isinstance(dtype, dtypes.dtype):
        target = dtype
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    return self if target is self.dtype else self.to(target, non_blocking=non_blocking)
