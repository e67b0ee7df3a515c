"""Saving and copying tensors: ``opgrad.save`` / ``opgrad.load`` and the pickle protocol.

``save`` writes PyTorch's zip checkpoint (an archive directory holding ``data.pkl``, one
``data/<key>`` record of raw little-endian bytes per memory block, ``byteorder``,
``version`` ...), so ``torch.load`` reads it; ``load`` reads the files ``torch.save`` writes.
In ``data.pkl`` a tensor is a call of torch's ``_rebuild_tensor_v2`` on a persistent id
``('storage', <dtype>Storage, key, location, numel)``: opgrad writes torch's global names
and maps them back to its own objects when it reads.

opgrad has no storage objects: a tensor's memory is its numpy array's owner
(``numpy_kernels.memory_owner``), so tensors whose arrays share an owner get one record,
and come back sharing memory.

``pickle`` and ``copy`` of a tensor use opgrad's own globals (this module's
``_rebuild_tensor``); as in torch, one pickle gives each tensor its own copy of its memory,
while ``copy.deepcopy`` keeps views of one memory sharing it (its memo holds one copy per
memory block).
"""

from __future__ import annotations

import copy
import io
import os
import pickle
import struct
import sys
import warnings
import zipfile
import zlib
from collections import Counter, OrderedDict
from pickle import UnpicklingError
from typing import Any, Callable, Dict, Optional

import numpy as np

from . import dispatch_keys as K
from . import dtypes
from .device import device as _device
from .numpy_kernels import _extent, _owner_and_offset
from .numpy_kernels import as_strided as _as_strided
from .tensor import TENSOR_CLASSES, Size, Tensor, _make
from .utils.hooks import warn_if_has_hooks

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "DEFAULT_PROTOCOL",
]

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64  # torch aligns every record's data to 64 bytes in the archive
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # first object of torch's legacy (pre-zip) format

#: torch's storage class name per dtype opgrad has
_STORAGE_NAMES = {
    dtypes.bool_: "BoolStorage",
    dtypes.uint8: "ByteStorage",
    dtypes.int8: "CharStorage",
    dtypes.int16: "ShortStorage",
    dtypes.int32: "IntStorage",
    dtypes.int64: "LongStorage",
    dtypes.float16: "HalfStorage",
    dtypes.float32: "FloatStorage",
    dtypes.float64: "DoubleStorage",
}
#: torch's storage classes for dtypes opgrad does not have (named in the error)
_FOREIGN_STORAGES = {
    "BFloat16Storage": "bfloat16",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `opgrad.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)

_NON_LEAF_DEEPCOPY = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)


# ---- a tensor's memory -------------------------------------------------------------------


def _memory_of(t: Tensor):
    """(owner array, storage offset in ``t``'s elements) of ``t``'s memory."""
    return _owner_and_offset(t._data)


def _memory_bytes(owner: np.ndarray) -> bytes:
    """The bytes of ``owner``'s memory from its first address (a storage's contents)."""
    if owner.flags.c_contiguous:
        return owner.tobytes()
    extent = _extent(owner)
    flat = np.lib.stride_tricks.as_strided(owner, shape=(extent,), strides=(owner.itemsize,))
    return flat.tobytes()


def _flat_from_bytes(raw, np_dtype) -> np.ndarray:
    """A writable 1-D array over a fresh copy of ``raw`` (it owns that memory)."""
    return np.frombuffer(bytearray(raw), dtype=np_dtype)


def _tensor_over(flat: np.ndarray, offset: int, size, stride, requires_grad: bool) -> Tensor:
    """A leaf tensor viewing ``flat``'s memory, as torch's ``set_`` makes it (version 1)."""
    data = _as_strided(flat, tuple(size), tuple(stride), offset)
    t = _make(data)
    t._vc = [1]  # torch's rebuild goes through set_, which bumps the version
    if requires_grad:
        t.requires_grad_(True)
    return t


_TENSOR_ATTRS: Optional[frozenset] = None


def user_state(t: Tensor) -> dict:
    """The attributes a user (or subclass) set on ``t``: its __dict__ minus opgrad's own."""
    global _TENSOR_ATTRS
    if _TENSOR_ATTRS is None:
        names = set()
        for cls in TENSOR_CLASSES:
            for klass in cls.__mro__:
                names.update(vars(klass))
        names.add("_from_custom_function")
        _TENSOR_ATTRS = frozenset(names)
    return {k: v for k, v in t.__dict__.items() if k not in _TENSOR_ATTRS}


def _set_state(t: Tensor, state) -> None:
    if state is None:
        return
    if getattr(type(t), "__setstate__", None) is not getattr(Tensor, "__setstate__", None):
        t.__setstate__(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for k, v in (state or {}).items():
        setattr(t, k, v)
    for k, v in (slots or {}).items():
        setattr(t, k, v)


def _subclass_slots(cls) -> list:
    """The slots a Tensor subclass adds (copyreg's rule, without its caching: its
    ``_slotnames`` would store a list on the class it is asked about, Tensor included)."""
    names = []
    for klass in cls.__mro__:
        if klass in TENSOR_CLASSES or klass is object or not issubclass(klass, Tensor):
            continue
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            names.append(name)
    return names


# ---- pickle and copy ---------------------------------------------------------------------


class _PickledStorage:
    """The memory a tensor views, as pickle and ``copy`` see it: ``copy.copy`` hands it to
    ``_rebuild_tensor`` as it is (the copy shares the memory); ``pickle`` writes its bytes.
    A fresh one per tensor, so one pickle does not share memory between tensors (as torch)."""

    __slots__ = ("array", "dtype")

    def __init__(self, array: np.ndarray, dtype: "dtypes.dtype"):
        self.array = array
        self.dtype = dtype

    def __reduce__(self):
        owner, _ = _owner_and_offset(self.array)
        return (_storage_from_bytes, (self.dtype.name, _memory_bytes(owner)))


def _storage_from_bytes(dtype_name: str, raw: bytes) -> _PickledStorage:
    d = getattr(dtypes, dtype_name)
    return _PickledStorage(_flat_from_bytes(raw, d.np), d)


def _rebuild_tensor(storage: _PickledStorage, offset, size, stride, requires_grad) -> Tensor:
    return _tensor_over(storage.array, offset, size, stride, requires_grad)


def _rebuild_from_type(func, new_type, args, state) -> Tensor:
    t = func(*args)
    if type(t) is not new_type:
        t = t.as_subclass(new_type)
    _set_state(t, state)
    return t


def reduce_tensor(t: Tensor, protocol: int):
    """``Tensor.__reduce_ex__``."""
    warn_if_has_hooks(t)
    _, offset = _memory_of(t)
    args = (_PickledStorage(t._data, t.dtype), offset, tuple(t.shape), t.stride(), t._rg)
    state = user_state(t)
    if type(t) in TENSOR_CLASSES and not state:
        return (_rebuild_tensor, args)
    slots = {s: getattr(t, s) for s in _subclass_slots(type(t)) if hasattr(t, s)}
    cls = Tensor if type(t) in TENSOR_CLASSES else type(t)
    return (_rebuild_from_type, (_rebuild_tensor, cls, args, (state, slots) if slots else state))


def deepcopy_tensor(t: Tensor, memo: dict) -> Tensor:
    """``Tensor.__deepcopy__``: views of one memory share one copy of it within ``memo``."""
    from .autograd.grad_mode import no_grad

    if t._grad_fn is not None:
        raise RuntimeError(_NON_LEAF_DEEPCOPY)
    if id(t) in memo:
        return memo[id(t)]
    cls = type(t)
    with no_grad():
        if cls not in TENSOR_CLASSES and t._keys & K.PYTHON:  # a wrapper subclass
            new = t.clone()
            if type(new) is not cls:
                raise RuntimeError(
                    "The default implementation of __deepcopy__() for wrapper subclasses only "
                    "works for subclass types that implement clone() and for which cloning "
                    "returns another instance of the same subclass. You should either properly "
                    "implement clone() for your subclass or override __deepcopy__() if it is "
                    "intended behavior for clone() to return an instance of a different type."
                )
        else:
            owner, offset = _memory_of(t)
            key = ("opgrad.storage", id(owner), t._data.dtype.str)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = (owner, _flat_from_bytes(_memory_bytes(owner), t._data.dtype))
            if cls in TENSOR_CLASSES:
                new = _tensor_over(hit[1], offset, t.shape, t.stride(), False)
            else:
                new = t.new_empty([])
                if type(new) is not cls:
                    raise RuntimeError(
                        "The default implementation of __deepcopy__() for non-wrapper "
                        "subclasses only works for subclass types that implement new_empty() "
                        "and for which that function returns another instance of the same "
                        "subclass. You should either properly implement new_empty() for your "
                        "subclass or override __deepcopy__() if it is intended behavior for "
                        "new_empty() to return an instance of a different type."
                    )
                new._data = _as_strided(hit[1], tuple(t.shape), t.stride(), offset)
                new._vc = [1]
        if t._rg:
            new.requires_grad_()
        if t._grad is not None:
            new.grad = t._grad.__deepcopy__(memo)
        if cls not in TENSOR_CLASSES:
            for slot in _subclass_slots(cls):
                if hasattr(t, slot):
                    setattr(new, slot, copy.deepcopy(getattr(t, slot), memo))
        new.__dict__.update(copy.deepcopy(user_state(t), memo))
    memo[id(t)] = new
    return new


# ---- torch's global names ----------------------------------------------------------------


class _TorchName:
    """A global of torch's that ``save`` writes by name (``torch._utils _rebuild_tensor_v2``)."""

    __slots__ = ("module", "name")
    _cache: Dict[tuple, "_TorchName"] = {}

    def __new__(cls, module: str, name: str):
        hit = cls._cache.get((module, name))
        if hit is None:
            hit = cls._cache[(module, name)] = object.__new__(cls)
            hit.module, hit.name = module, name
        return hit

    def __call__(self, *args):  # pickle wants a reduce's function callable; never called
        raise TypeError(f"{self.module}.{self.name} is torch's, named in a checkpoint only")


class StorageType:
    """What a torch storage class (``torch.FloatStorage``) stands for when loading: a dtype."""

    def __init__(self, name: str):
        self.name = name
        self.dtype = next((d for d, n in _STORAGE_NAMES.items() if n == name), None)

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class _LoadedStorage:
    """An untyped storage read from a checkpoint (what a ``map_location`` callable gets)."""

    def __init__(self, raw: bytes, location: str):
        self._raw = raw
        self.device = _device(location) if location.startswith("cpu") else location

    def nbytes(self) -> int:
        return len(self._raw)

    def size(self) -> int:
        return len(self._raw)

    __len__ = size

    def cpu(self) -> "_LoadedStorage":
        return self

    def __repr__(self) -> str:
        return f"opgrad.storage.UntypedStorage(device={self.device}) of size {len(self._raw)}"


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks, meta=None):
    return _tensor_over(storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, hooks):
    # opgrad has no nn.Parameter yet: a leaf tensor with the parameter's requires_grad
    data.requires_grad_(requires_grad)
    return data


def _rebuild_parameter_with_state(data, requires_grad, hooks, state):
    param = _rebuild_parameter(data, requires_grad, hooks)
    _set_state(param, state)
    return param


def _rebuild_from_type_v2(func, new_type, args, state):
    return _rebuild_from_type(func, new_type, args, state)


def _codecs_encode(obj, encoding="latin1"):
    import codecs

    return codecs.encode(obj, encoding)


def _default_globals() -> Dict[str, Any]:
    """torch's globals that ``load`` accepts with ``weights_only``, as opgrad's objects."""
    rc: Dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
        "_codecs.encode": _codecs_encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for d in dtypes.ALL_DTYPES:
        rc[f"torch.{d.name}"] = d
    for name in list(_STORAGE_NAMES.values()) + list(_FOREIGN_STORAGES):
        rc[f"torch.{name}"] = StorageType(name)
    return rc


_DEFAULT_GLOBALS: Optional[Dict[str, Any]] = None


def _allowed_globals() -> Dict[str, Any]:
    global _DEFAULT_GLOBALS
    if _DEFAULT_GLOBALS is None:
        _DEFAULT_GLOBALS = _default_globals()
    return _DEFAULT_GLOBALS


# ---- the weights_only allowlist ----------------------------------------------------------

_user_globals: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (objects, or ``(object, "module.name")`` pairs) in
    ``load(..., weights_only=True)``."""
    _user_globals.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_user_globals)


def clear_safe_globals() -> None:
    _user_globals.clear()


class safe_globals:
    """Context manager adding globals to the ``weights_only`` allowlist for its block."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = list(_user_globals)
        _user_globals.extend(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals[:] = self._saved


def _user_allowed() -> Dict[str, Any]:
    rc = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            obj, name = entry
            rc[name] = obj
        else:
            rc[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return rc


# ---- save --------------------------------------------------------------------------------


class _SavedStorage:
    __slots__ = ("key", "owner", "dtype", "raw")

    def __init__(self, key: str, owner: np.ndarray, dtype):
        self.key, self.owner, self.dtype = key, owner, dtype
        self.raw = _memory_bytes(owner)


class _TorchPickler(pickle._Pickler):
    """A pickler writing torch's names for tensors, dtypes, devices and sizes, and each
    memory block once as a persistent id."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages: Dict[int, _SavedStorage] = {}

    def persistent_id(self, obj):
        if type(obj) is _SavedStorage:
            numel = len(obj.raw) // obj.dtype.itemsize
            storage_type = _TorchName("torch", _STORAGE_NAMES[obj.dtype])
            return ("storage", storage_type, obj.key, "cpu", numel)
        return None

    def _storage(self, t: Tensor) -> _SavedStorage:
        owner, _ = _memory_of(t)
        hit = self.storages.get(id(owner))
        if hit is None:
            hit = self.storages[id(owner)] = _SavedStorage(str(len(self.storages)), owner, t.dtype)
        return hit

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            warn_if_has_hooks(obj)
            _, offset = _memory_of(obj)
            rebuild = _TorchName("torch._utils", "_rebuild_tensor_v2")
            args = (
                self._storage(obj),
                offset,
                tuple(obj.shape),
                obj.stride(),
                obj._rg,
                OrderedDict(),
            )
            state = user_state(obj)
            if type(obj) in TENSOR_CLASSES and not state:
                return (rebuild, args)
            cls = _TorchName("torch", "Tensor") if type(obj) in TENSOR_CLASSES else type(obj)
            slots = {s: getattr(obj, s) for s in _subclass_slots(type(obj)) if hasattr(obj, s)}
            return (
                _TorchName("torch._tensor", "_rebuild_from_type_v2"),
                (rebuild, cls, args, (state, slots) if slots else state),
            )
        if isinstance(obj, Size):
            return (_TorchName("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _device):
            return (_TorchName("torch", "device"), (str(obj),))
        return NotImplemented

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, dtypes.dtype):
            obj = _TorchName("torch", obj.name)
        if type(obj) is _TorchName:
            hit = self.memo.get(id(obj))
            if hit is not None:
                self.write(self.get(hit[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def _archive_name(f) -> str:
    if not _is_path(f):
        return "archive"
    base = os.path.basename(os.fspath(f))
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


def _write_records(f, name: str, records) -> None:
    start = f.tell() if hasattr(f, "tell") else 0
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as zf:
        for rel, data in records:
            full = f"{name}/{rel}"
            info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            zip64 = len(data) * 1.05 > zipfile.ZIP64_LIMIT
            header = 30 + len(full.encode("utf-8")) + 4 + (20 if zip64 else 0)
            pad = -(zf.fp.tell() - start + header) % _ALIGNMENT
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            zf.writestr(info, data)


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol=DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
) -> None:
    """Write ``obj`` to ``f`` (a path or a writable binary file) in torch's zip format.
    (``pickle_module`` is accepted for torch's signature: opgrad's own pickler writes
    torch's names, so it is not used.)"""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "opgrad.save writes torch's zip format only (_use_new_zipfile_serialization=True)"
        )
    data = io.BytesIO()
    pickler = _TorchPickler(data, pickle_protocol)
    pickler.dump(obj)
    records = [
        ("data.pkl", data.getvalue()),
        (".format_version", b"1"),
        (".storage_alignment", str(_ALIGNMENT).encode()),
    ]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    storages = sorted(pickler.storages.values(), key=lambda s: int(s.key))
    records += [(f"data/{s.key}", s.raw) for s in storages]
    records.append(("version", b"3\n"))
    crc = 0
    for _, raw in records:
        crc = zlib.crc32(raw, crc)
    serial = f"{int.from_bytes(os.urandom(8), 'little'):020d}{crc:020d}"
    records.append((".data/serialization_id", serial.encode()))
    if _is_path(f):
        with open(f, "wb") as out:
            _write_records(out, _archive_name(f), records)
    else:
        _write_records(f, _archive_name(f), records)


# ---- load --------------------------------------------------------------------------------


def _cuda_error() -> RuntimeError:
    return RuntimeError(
        "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
        "False. If you are running on a CPU-only machine, please use torch.load with "
        "map_location=torch.device('cpu') to map your storages to the CPU."
    )


def _check_location(location) -> None:
    where = str(location)
    if where.startswith("cpu"):
        return
    if where.startswith("cuda"):
        raise _cuda_error()
    raise RuntimeError(
        f"don't know how to restore data location of {type(location).__name__} "
        f"(tagged with {where})"
    )


def _restore(raw: bytes, location: str, map_location):
    """The memory a storage record comes back in, on the device ``map_location`` picks."""
    if map_location is None:
        _check_location(location)
    elif isinstance(map_location, dict):
        _check_location(map_location.get(location, location))
    elif isinstance(map_location, (str, bytes, _device)):
        target = map_location.decode() if isinstance(map_location, bytes) else map_location
        _check_location(target)
    elif callable(map_location):
        result = map_location(_LoadedStorage(raw, location), location)
        if result is None:
            _check_location(location)
        elif isinstance(result, _LoadedStorage):
            raw = result._raw
        else:
            _check_location(getattr(result, "device", location))
    else:
        raise ValueError(
            f"map_location must be None, a str, a device, a dict or a callable, got "
            f"{type(map_location).__name__}"
        )
    return raw


class _Records:
    """The records of a zip checkpoint, under its archive directory."""

    def __init__(self, f):
        try:
            self.zip = zipfile.ZipFile(f)
            names = self.zip.namelist()
        except (zipfile.BadZipFile, OSError, EOFError):
            raise RuntimeError(
                "PytorchStreamReader failed reading zip archive: failed finding central "
                "directory. This is an internal miniz error. If you are seeing this error, there "
                "is a high likelihood that your checkpoint file is corrupted. This can happen if "
                "the checkpoint was not saved properly, was transferred incorrectly, or the file "
                "was modified after saving."
            ) from None
        self.prefix = names[0].split("/", 1)[0] + "/" if names else ""
        self.names = set(names)

    def has(self, rel: str) -> bool:
        return self.prefix + rel in self.names

    def read(self, rel: str) -> bytes:
        if not self.has(rel):
            raise RuntimeError(f"PytorchStreamReader failed locating file {rel}: file not found")
        return self.zip.read(self.prefix + rel)


class _Loader:
    """Turns persistent ids into flat arrays, one per storage key (views keep sharing)."""

    def __init__(self, records: _Records, map_location, big_endian: bool):
        self.records, self.map_location, self.big_endian = records, map_location, big_endian
        self.loaded: Dict[str, np.ndarray] = {}

    def __call__(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5):
            raise UnpicklingError("unsupported persistent id encountered")
        typename, storage_type, key, location, numel = pid
        if isinstance(typename, bytes):
            typename = typename.decode("ascii")
        if typename != "storage":
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {typename}")
        if not isinstance(storage_type, StorageType):
            raise UnpicklingError(f"unsupported storage type {storage_type!r}")
        if storage_type.dtype is None:
            raise RuntimeError(
                f"opgrad has no {_FOREIGN_STORAGES.get(storage_type.name, storage_type.name)} "
                f"dtype: cannot load a torch.{storage_type.name}"
            )
        hit = self.loaded.get(key)
        if hit is None or hit.dtype != storage_type.dtype.np:
            raw = _restore(self.records.read(f"data/{key}"), location, self.map_location)
            np_dtype = storage_type.dtype.np
            if self.big_endian and np_dtype.itemsize > 1:
                hit = np.frombuffer(raw, np_dtype.newbyteorder(">")).astype(np_dtype)
            else:
                hit = _flat_from_bytes(raw, np_dtype)
            self.loaded[key] = hit
        return hit


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, torch's names read as opgrad's objects."""

    def find_class(self, module, name):
        full = f"{module}.{name}"
        allowed = _allowed_globals()
        if full in allowed:
            return allowed[full]
        if module == "torch" or module.startswith("torch."):
            import importlib

            try:
                return getattr(importlib.import_module("opgrad" + module[5:]), name)
            except (ImportError, AttributeError):
                pass
        return super().find_class(module, name)


class _WeightsOnlyUnpickler:
    """``weights_only=True``: a pickle reader that only builds allowlisted globals, tensors and
    Python containers and scalars (the opcodes torch's reader takes)."""

    def __init__(self, file, persistent_load=None, encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo: dict = {}

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _global(self):
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        module = {"__builtin__": "builtins", "copy_reg": "copyreg"}.get(module, module)
        full = f"{module}.{name}"
        for table in (_allowed_globals(), _user_allowed()):
            if full in table:
                return table[full]
        shown = full[len("builtins.") :] if full.startswith("builtins.") else full
        raise UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
            f"use `opgrad.serialization.add_safe_globals([{shown}])` or the "
            f"`opgrad.serialization.safe_globals([{shown}])` context manager to allowlist this "
            "global if you trust this class/function."
        )

    def _allowed(self, obj) -> bool:
        return any(obj is v for v in _allowed_globals().values()) or any(
            obj is v for v in _user_allowed().values()
        )

    def load(self):
        self.stack, self.metastack = [], []
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0:1]
            stack = self.stack
            if op == pickle.GLOBAL:
                stack.append(self._global())
            elif op == pickle.NEWOBJ:
                args = stack.pop()
                cls = stack.pop()
                if not self._allowed(cls) or not isinstance(cls, type):
                    raise UnpicklingError(
                        "Can only create new object for nn.Parameter or classes allowlisted via "
                        f"`add_safe_globals` but got {cls}"
                    )
                stack.append(cls.__new__(cls, *args))
            elif op == pickle.REDUCE:
                args = stack.pop()
                func = stack[-1]
                if not self._allowed(func):
                    raise UnpicklingError(f"Trying to call reduce for unrecognized function {func}")
                stack[-1] = func(*args)
            elif op == pickle.BUILD:
                state = stack.pop()
                inst = stack[-1]
                if type(inst) is OrderedDict:
                    inst.__dict__.update(state)
                elif self._allowed(type(inst)):
                    if hasattr(inst, "__setstate__") and not isinstance(inst, Tensor):
                        inst.__setstate__(state)
                    else:
                        _set_state(inst, state)
                else:
                    raise UnpicklingError(
                        "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                        f"`add_safe_globals`, but got {type(inst)}"
                    )
            elif op == pickle.APPEND:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
            elif op == pickle.APPENDS:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op in (pickle.SETITEM, pickle.SETITEMS):
                items = [stack.pop(-2), stack.pop()] if op == pickle.SETITEM else self._pop_mark()
                target = self.stack[-1]
                if type(target) not in (dict, OrderedDict, Counter):
                    which = "SETITEM" if op == pickle.SETITEM else "SETITEMS"
                    raise UnpicklingError(
                        f"Can only {which} for dict, collections.OrderedDict, "
                        f"collections.Counter, but got {type(target)}"
                    )
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == pickle.MARK:
                self.metastack.append(stack)
                self.stack = []
            elif op == pickle.TUPLE:
                stack = self._pop_mark()
                self.stack.append(tuple(stack))
            elif op == pickle.TUPLE1:
                stack[-1] = (stack[-1],)
            elif op == pickle.TUPLE2:
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == pickle.TUPLE3:
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == pickle.NONE:
                stack.append(None)
            elif op == pickle.NEWFALSE:
                stack.append(False)
            elif op == pickle.NEWTRUE:
                stack.append(True)
            elif op == pickle.EMPTY_TUPLE:
                stack.append(())
            elif op == pickle.EMPTY_LIST:
                stack.append([])
            elif op == pickle.EMPTY_DICT:
                stack.append({})
            elif op == pickle.EMPTY_SET:
                stack.append(set())
            elif op == pickle.BININT:
                stack.append(struct.unpack("<i", read(4))[0])
            elif op == pickle.BININT1:
                stack.append(read(1)[0])
            elif op == pickle.BININT2:
                stack.append(struct.unpack("<H", read(2))[0])
            elif op == pickle.BINFLOAT:
                stack.append(struct.unpack(">d", read(8))[0])
            elif op == pickle.BINUNICODE:
                n = struct.unpack("<I", read(4))[0]
                if n > sys.maxsize:
                    raise UnpicklingError("String is too long")
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == pickle.SHORT_BINSTRING:
                data = read(read(1)[0])
                stack.append(data if self.encoding == "bytes" else data.decode(self.encoding))
            elif op == pickle.BINPERSID:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(
                        f"persistent_load id must be tuple or int, but got {type(pid)}"
                    )
                if self.persistent_load is None:
                    raise UnpicklingError("unsupported persistent id encountered")
                stack.append(self.persistent_load(pid))
            elif op in (pickle.BINGET, pickle.LONG_BINGET):
                i = read(1)[0] if op == pickle.BINGET else struct.unpack("<I", read(4))[0]
                stack.append(self.memo[i])
            elif op in (pickle.BINPUT, pickle.LONG_BINPUT):
                i = read(1)[0] if op == pickle.BINPUT else struct.unpack("<I", read(4))[0]
                self.memo[i] = stack[-1]
            elif op == pickle.LONG1:
                stack.append(pickle.decode_long(read(read(1)[0])))
            elif op == pickle.PROTO:
                proto = read(1)[0]
                if proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {proto} in the checkpoint, which was not the "
                        "default pickle protocol used by `torch.load` (2). The weights_only "
                        "Unpickler might not support all instructions implemented by this "
                        "protocol, please file an issue for adding support if you encounter this.",
                        stacklevel=3,
                    )
            elif op == pickle.STOP:
                return stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {key[0]}")


def _weights_only_message(message: str) -> str:
    docs = (
        "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
        "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
    if "was not an allowed global by default." in message:
        text = (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: " + message
        )
    else:
        text = (
            f"Weights only load failed. {UNSAFE_MESSAGE}\nPlease file an issue with the "
            "following so that we can make `weights_only=True` compatible with your use case: "
            "WeightsUnpickler error: \n\n" + message
        )
    return text + docs


def _unpickle(stream, weights_only: bool, persistent_load, pickle_module, load_args):
    if weights_only:
        unpickler = _WeightsOnlyUnpickler(
            stream, persistent_load, encoding=load_args.get("encoding", "utf-8")
        )
        try:
            return unpickler.load()
        except UnpicklingError as e:
            raise UnpicklingError(_weights_only_message(str(e))) from None
    if pickle_module is pickle:
        unpickler = _FullUnpickler(stream, **load_args)
    else:
        unpickler = pickle_module.Unpickler(stream, **load_args)
    if persistent_load is not None:
        unpickler.persistent_load = persistent_load
    return unpickler.load()


def load(
    f,
    map_location=None,
    pickle_module=None,
    *,
    weights_only: Optional[bool] = None,
    mmap: Optional[bool] = None,
    **pickle_load_args,
):
    """Read an object ``save`` (or ``torch.save``) wrote, its tensors as opgrad tensors.

    ``weights_only`` (default True, as torch 2.6+) builds only tensors, Python containers and
    scalars and allowlisted globals (``add_safe_globals``); ``map_location`` ('cpu', a device,
    a dict of locations or a callable) places storages, as torch's."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError(
                "Can not safely load weights when explicit pickle_module is specified"
            )
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if _is_path(f):
        with open(f, "rb") as opened:
            return _load_from(opened, map_location, weights_only, pickle_module, pickle_load_args)
    return _load_from(f, map_location, weights_only, pickle_module, pickle_load_args)


def _load_from(f, map_location, weights_only, pickle_module, load_args):
    start = f.tell()
    is_zip = f.read(4) == b"PK\x03\x04"
    f.seek(start)
    if not is_zip:
        magic = _unpickle(f, weights_only, None, pickle_module, load_args)
        if magic != _MAGIC_NUMBER:
            raise RuntimeError("Invalid magic number; corrupt file?")
        raise RuntimeError(
            "opgrad.load reads torch's zip checkpoints only: this file is in torch's legacy "
            "(pre-1.6) format; re-save it with torch.save"
        )
    records = _Records(f)
    if not records.has("version") and not records.has(".data/version"):
        raise RuntimeError(
            'Expected hasRecord("version") to be true, but got false.  (Could this error '
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    big_endian = records.has("byteorder") and records.read("byteorder") == b"big"
    loader = _Loader(records, map_location, big_endian)
    data = io.BytesIO(records.read("data.pkl"))
    return _unpickle(data, weights_only, loader, pickle_module, load_args)
