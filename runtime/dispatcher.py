"""Operator registry and dispatch: ``opgrad.ops.aten.mul.Tensor``.

Each OpOverload holds a kernel per dispatch key and a cache from key set to
the kernel that runs for it. Kernels take ``(keyset, *args)`` with arguments
in schema order; a kernel continues below its own key by looking up
``op.kernel_for(keyset & AFTER_<its key>)``. Generated entry functions (one per
overload, with the real signature) compute the key set and call the kernel.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Union

from . import dispatch_keys as K
from ._tls import refresh_plain
from ._tls import state as _tls
from .numpy_scalars import is_aten_number
from .schema import FunctionSchema, parse_schema

#: the attributes OpOverload reads off its parsed schema
_READ_OFF_SCHEMA = frozenset(
    {"_schema", "_positional", "_kwarg_only", "_list_positions", "_scalar_args"}
)


def _schema_names(text: str) -> tuple:
    """(namespace, name, overload name) of a schema's text: ``aten::mul.Tensor(...)``."""
    head = text[: text.index("(")]
    namespace, _, qualified = head.rpartition("::")
    name, _, overload = qualified.partition(".")
    return namespace, name, overload


class KernelTable(dict):
    """An overload's kernels by dispatch key set: the first lookup of a key set resolves
    it along the key order and remembers it; registering a kernel clears the table."""

    __slots__ = ("op",)

    def __init__(self, op: "OpOverload") -> None:
        super().__init__()
        self.op = op

    def __missing__(self, keyset: int) -> Callable:
        kernel = self[keyset] = self.op._resolve(keyset)
        return kernel


class OpOverload:
    """One overload of an operator, e.g. ``aten.mul.Tensor``."""

    def __init__(
        self,
        packet: "OpOverloadPacket",
        schema: Union[FunctionSchema, str],
        numbers_as_tensors: bool = False,
    ) -> None:
        """``schema`` parsed, or its text (a built-in op's, parsed on first use)."""
        self.overloadpacket = packet
        self.namespace = packet.namespace
        if schema.__class__ is str:
            self._schema_text = schema
            _, self._opname, overload = _schema_names(schema)
        else:
            self._read_schema(schema)
            self._opname, overload = schema.base_name, schema.overload_name
        self._overloadname = overload or "default"
        self.__name__ = f"{self._opname}.{self._overloadname}"
        self._kernels: Dict[int, Callable] = {}
        #: the kernel for each key set seen: ``op.kernels[keyset]``, resolved on first use
        self.kernels = KernelTable(self)
        self._entry: Optional[Callable] = None
        self.tags = ()
        #: whether Python numbers may stand for its Tensor arguments (derivatives.yaml's
        #: numbers_as_tensors tag: PyTorch allows them for its arithmetic)
        self._numbers_as_tensors = numbers_as_tensors

    def _read_schema(self, schema: FunctionSchema) -> None:
        self._schema = schema
        args = schema.arguments
        self._positional = tuple(a for a in args if not a.kwarg_only)
        self._kwarg_only = tuple(a for a in args if a.kwarg_only)
        #: positions of list arguments, which handlers get as lists (as torch hands them)
        self._list_positions = frozenset(i for i, a in enumerate(args) if a.type.is_list)
        #: (position, name) of Scalar arguments, read as TorchScript reads them when called
        #: as opgrad.ops.aten.<op>.<overload>
        self._scalar_args = tuple(
            (i, a.name) for i, a in enumerate(args) if a.type.base == "Scalar"
        )

    def __getattr__(self, name: str):
        # Only for attributes not yet set: a built-in op's schema and what is read off it
        # are made on first use. Most overloads are never called in a process, and their
        # parsed schemas would be thousands of objects each garbage collection walks.
        # The text goes only once the attributes are set, so a thread that parses the
        # same schema meanwhile finds either the text or the attributes.
        text = self.__dict__.get("_schema_text")
        if text is None or name not in _READ_OFF_SCHEMA:
            raise AttributeError(f"'OpOverload' object has no attribute '{name}'")
        self._read_schema(parse_schema(text))
        self.__dict__.pop("_schema_text", None)
        return self.__dict__[name]

    # ----- identity ------------------------------------------------------
    def name(self) -> str:
        suffix = f".{self._schema.overload_name}" if self._schema.overload_name else ""
        return f"{self.namespace}::{self._opname}{suffix}"

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self) -> str:
        return (
            f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"
        )

    def __hash__(self) -> int:
        return id(self)

    # ----- calling -------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._scalar_args:
            _check_aten_numbers(self, args, kwargs)
        return self._entry(*args, **kwargs)

    def redispatch(self, keyset: int, *args, **kwargs):
        """Call the kernel for ``keyset`` (an int bit set) directly."""
        flat = self._flatten(args, kwargs)
        return self.kernel_for(keyset)(keyset, *flat)

    def kernel_for(self, keyset: int) -> Callable:
        return self.kernels[keyset]

    def _resolve(self, keyset: int) -> Callable:
        kernel = None
        for key in K.ORDER:
            if not keyset & key:
                continue
            kernel = self._kernels.get(key)
            if kernel is not None:
                break
            if key == K.PYTHON:
                kernel = _python_kernel(self)
                break
            if key == K.AUTOGRAD and self.namespace != "aten":
                # A library op without an autograd kernel: backward through it must fail loudly.
                from .library import autograd_not_implemented_kernel

                kernel = autograd_not_implemented_kernel(self)
                break
            if key == K.CPU:
                kernel = _missing_kernel(self)
                break
            # Autograd and ADInplaceOrView fall through for ops without a kernel there.
        if kernel is None:
            kernel = _missing_kernel(self)
        return kernel

    def _flatten(self, args, kwargs) -> tuple:
        """Arguments in schema order, defaults filled in (for boxed callers)."""
        schema_args = self._schema.arguments
        if len(args) > len(self._positional):
            raise TypeError(
                f"{self}: expected at most {len(self._positional)} positional arguments"
            )
        flat = list(args)
        for arg in schema_args[len(args) :]:
            if arg.name in kwargs:
                flat.append(kwargs.pop(arg.name))
            elif arg.has_default:
                flat.append(arg.default_value)
            else:
                raise TypeError(f"{self}: missing required argument '{arg.name}'")
        if kwargs:
            raise TypeError(f"{self}: unexpected keyword argument '{next(iter(kwargs))}'")
        return tuple(flat)

    def _unflatten(self, flat: tuple):
        """Split schema-ordered arguments into (args, kwargs) as PyTorch hands them to modes:
        trailing positional defaults dropped, keyword-only defaults omitted."""
        n = len(self._positional)
        positional = list(flat[:n])
        while positional and self._positional[len(positional) - 1].has_default:
            arg = self._positional[len(positional) - 1]
            if not _same(positional[-1], arg.default_value):
                break
            positional.pop()
        kwargs = {}
        for arg, value in zip(self._kwarg_only, flat[n:]):
            if not (arg.has_default and _same(value, arg.default_value)):
                kwargs[arg.name] = value
        return tuple(positional), kwargs

    # ----- registration ---------------------------------------------------
    def register_kernel(self, key: int, kernel: Callable) -> None:
        for bit in K.ORDER:
            if key & bit:
                self._kernels[bit] = kernel
        self.kernels.clear()

    def remove_kernel(self, key: int) -> None:
        for bit in K.ORDER:
            if key & bit:
                self._kernels.pop(bit, None)
        self.kernels.clear()

    def has_kernel_for_dispatch_key(self, name: str) -> bool:
        return K.BY_NAME[name] in self._kernels


#: Kernels that users registered (opgrad.library) on aten ops and have not removed. While
#: any exist, runtime shortcuts that compute an aten op's result without calling it stand
#: aside, so that the user's kernel runs as it would in torch.
user_aten_kernels = 0


def _same(value, default) -> bool:
    if isinstance(value, (list, tuple)) and isinstance(default, tuple):
        return tuple(value) == default
    return (
        type(value) is type(default) and value == default if value is not None else default is None
    )


def _missing_kernel(op: OpOverload) -> Callable:
    def kernel(keyset, *args):
        raise NotImplementedError(
            f"Could not run '{op.name()}' with arguments from the "
            f"'{K.NAMES[K.ORDER[-1]] if keyset & K.CPU else 'Undefined'}' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build)."
        )

    return kernel


def _python_kernel(op: OpOverload) -> Callable:
    def kernel(keyset, *flat):
        return call_dispatch_mode(op, flat)

    return kernel


def call_dispatch_mode(op: OpOverload, flat: tuple):
    """The Python key: hand the call to the innermost TorchDispatchMode, then to the
    ``__torch_dispatch__`` of the tensor subclasses among the arguments, as torch does.

    The mode is popped while its handler runs, so ``func(*args)`` inside goes to
    the next mode or the backend; subclass handlers run with the mode stack as
    it is. Keys above Python are excluded throughout, so nothing is recorded.
    NotImplemented passes on to the next handler; when all return it, TypeError.
    """
    tls = _tls
    stack = tls.mode_stack
    saved_keep, saved_include = tls.keep, tls.include
    raw = flat
    # Modes see wrapped numbers as the Python scalars they came from, and lists as lists.
    lists = op._list_positions
    flat = tuple(
        (
            a._data.item()
            if getattr(a, "_wrapped", False)
            else list(a) if a.__class__ is tuple and i in lists else a
        )
        for i, a in enumerate(flat)
    )
    args, kwargs = op._unflatten(flat)
    types = _subclass_types(flat)
    mode = stack[-1] if stack else None
    # Each state change below is a single store that the finally undoes, so an
    # exception raised at any instruction (a KeyboardInterrupt from a signal
    # handler) leaves the modes and keys as they were: the running mode is hidden
    # by installing a shorter copy of the stack, never by popping the stack itself.
    # A mode on the stack already made this thread not plain; a subclass handler alone
    # may run in the plain state, which must not hold while autograd is excluded.
    was_plain = tls.plain
    try:
        if was_plain:
            tls.plain = False  # before the keys change
        tls.keep = saved_keep & ~(K.AUTOGRAD | K.AD_INPLACE_OR_VIEW)
        if mode is not None:
            if len(stack) == 1:
                tls.include = saved_include & ~K.PYTHON
            tls.mode_stack = stack[:-1]
            result = mode.__torch_dispatch__(op, types, args, kwargs)
            tls.mode_stack = stack
            tls.include = saved_include
            if result is not NotImplemented:
                return result
        for cls in types:
            result = cls.__torch_dispatch__(op, types, args, kwargs)
            if result is not NotImplemented:
                return result
        if mode is None and not types:
            # A wrapper without a handler of its own: the backend runs the op.
            return op.kernel_for(K.CPU)(K.CPU, *raw)
    finally:
        tls.mode_stack = stack
        tls.keep, tls.include = saved_keep, saved_include
        if was_plain:
            tls.__dict__.pop("plain", None)
    raise multiple_dispatch_failed(f"{__name__}.{op}", "__torch_dispatch__", mode, types)


def multiple_dispatch_failed(name: str, protocol: str, mode, types) -> TypeError:
    """PyTorch's error when the mode and every subclass handler returned NotImplemented."""
    lines = [f"  - mode object {mode!r}"] if mode is not None else []
    lines += [f"  - tensor subclass {cls}" for cls in types]
    return TypeError(
        f"Multiple dispatch failed for '{name}'; all {protocol} handlers returned "
        "NotImplemented:\n\n"
        + "\n".join(lines)
        + "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented"
    )


def _subclass_types(flat: tuple) -> tuple:
    """Tensor subclasses with their own __torch_dispatch__ among the arguments: one per
    type, a subclass before its superclass, otherwise in argument order."""
    found: list = []
    for value in flat:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if getattr(item, "_keys", 0) & K.PYTHON:  # plain tensors and numbers have none
                cls = type(item)
                if cls not in found and getattr(cls, "__torch_dispatch__", None) is not None:
                    found.insert(subclass_first_index(found, cls), cls)
    return tuple(found)


def subclass_first_index(types: list, cls: type) -> int:
    """Where ``cls`` goes in the handler order: before the first of ``types`` it subclasses
    (a subclass's handler runs before its superclass's), else last."""
    for i, earlier in enumerate(types):
        if issubclass(cls, earlier):
            return i
    return len(types)


def _check_aten_numbers(op: OpOverload, args: tuple, kwargs: dict) -> None:
    """TorchScript's refusal of a numpy scalar other than np.float64 for a Scalar argument
    (the Python surface reads it as a number instead)."""
    for position, name in op._scalar_args:
        value = args[position] if position < len(args) else kwargs.get(name)
        if not is_aten_number(value):
            from .python_arg_parser import wrong_type

            raise wrong_type(value, None, op, position, "Number", "number")


class OpOverloadPacket:
    """All overloads of one operator name: ``opgrad.ops.aten.mul``."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace = namespace
        self._qualified_op_name = f"{namespace}::{name}"
        self.__name__ = name
        self._overload_names: list = []

    def overloads(self) -> list:
        return list(self._overload_names)

    def _add(self, overload: OpOverload) -> None:
        name = overload._overloadname
        if name in self._overload_names:
            raise RuntimeError(f"overload {overload} registered twice")
        self._overload_names.append(name)
        setattr(self, name, overload)

    def __call__(self, *args, **kwargs):
        from .overrides import Site, dispatch, flatten_relevant, has_torch_function
        from .python_arg_parser import call_bound, resolve_overload, schema_mismatch

        relevant = flatten_relevant(args + tuple(kwargs.values()))
        if has_torch_function(relevant):
            return dispatch(Site(self), relevant, args, kwargs)

        overloads = [getattr(self, n) for n in self._overload_names]
        try:
            overload, flat = resolve_overload(overloads, args, kwargs)
        except TypeError:
            reasons = [schema_mismatch(op, args, kwargs) for op in overloads]
            if len(reasons) == 1:
                raise RuntimeError(reasons[0]) from None
            raise RuntimeError(
                "Overloaded torch operator invoked from Python failed to match any schema:\n"
                + "".join(reason + "\n\n" for reason in reasons)
            ) from None
        return call_bound(overload, flat)

    def __str__(self) -> str:
        return f"{self.namespace}.{self.__name__}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self.__name__}')>"

    def __getattr__(self, name: str):
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")


class _Namespace:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> OpOverloadPacket:
        raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")


class _Ops:
    """``opgrad.ops``: namespaces of operator packets."""

    def __getattr__(self, name: str) -> _Namespace:
        namespace = _Namespace(name)
        setattr(self, name, namespace)
        return namespace


ops = _Ops()


def declares_several_returns(op: OpOverload) -> bool:
    """Whether ``op``'s schema may declare several returns: read off its text while it is
    not parsed (one return is not parenthesised)."""
    text = op.__dict__.get("_schema_text")
    if text is None:
        return len(op._schema.returns) > 1
    return text.rpartition(") -> ")[2].startswith("(")


def define(
    schema_text: str, namespace: str = "aten", numbers_as_tensors: bool = False
) -> OpOverload:
    """Create the OpOverload for a schema string (refused now if it does not parse).
    ``numbers_as_tensors``: Python numbers may stand for its Tensor arguments."""
    schema = parse_schema(schema_text)
    return _add_overload(
        schema.namespace or namespace, schema.base_name, schema, numbers_as_tensors
    )


def declare(schema_text: str, numbers_as_tensors: bool = False) -> OpOverload:
    """define() for a built-in op (generated/ops.py): its schema, known to be good, is
    parsed when first needed."""
    namespace, name, _ = _schema_names(schema_text)
    return _add_overload(namespace or "aten", name, schema_text, numbers_as_tensors)


def _add_overload(namespace: str, name: str, schema, numbers_as_tensors: bool) -> OpOverload:
    ns = getattr(ops, namespace)
    packet = ns.__dict__.get(name)
    if packet is None:
        packet = OpOverloadPacket(namespace, name)
        setattr(ns, name, packet)
    overload = OpOverload(packet, schema, numbers_as_tensors)
    packet._add(overload)
    return overload


def lookup(qualified: str) -> OpOverload:
    """``"aten::mul.Tensor"`` -> the OpOverload."""
    namespace, _, rest = qualified.partition("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(ops, namespace), name), overload or "default")


def compute_keyset(*tensors) -> int:
    """The key set of a call with these tensor arguments (for boxed callers)."""
    keys = 0
    for t in tensors:
        if t is not None:
            keys |= t._keys
    return (keys | _tls.include) & _tls.keep


def boxed_entry(op: OpOverload, site=None) -> Callable:
    """A generic entry for ops defined at runtime: flatten, compute keys, call.

    As generated entries, it hands the call to __torch_function__ handlers first
    when a TorchFunctionMode is live or an argument overrides it.
    """
    from .overrides import Site, handle_entry, overrides
    from .tensor import Tensor

    if site is None:
        site = Site(op)

    def entry(*args, **kwargs):
        flat = op._flatten(args, kwargs)
        keys = 0
        overridden = False
        for value in flat:
            if isinstance(value, Tensor):
                keys |= value._keys
                overridden = overridden or overrides(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, Tensor):
                        keys |= item._keys
                        overridden = overridden or overrides(item)
        if overridden or _tls.include & K.TORCH_FUNCTION:
            return handle_entry(site, op, *flat)
        keyset = (keys | _tls.include) & _tls.keep
        return op.kernel_for(keyset)(keyset, *flat)

    return entry


class _KeyGuard:
    """Base of the thread-local include/exclude guards (restores on exit)."""

    def __init__(self, keys: int) -> None:
        self.keys = keys

    def __exit__(self, *exc) -> None:
        _tls.include, _tls.keep = self._saved
        refresh_plain()


class ExcludeDispatchKeyGuard(_KeyGuard):
    """Remove ``keys`` from every call's key set inside the block (this thread)."""

    def __enter__(self) -> "ExcludeDispatchKeyGuard":
        self._saved = (_tls.include, _tls.keep)
        _tls.plain = False
        _tls.keep = _tls.keep & ~self.keys
        refresh_plain()
        return self


class IncludeDispatchKeyGuard(_KeyGuard):
    """Add ``keys`` to every call's key set inside the block (this thread)."""

    def __enter__(self) -> "IncludeDispatchKeyGuard":
        self._saved = (_tls.include, _tls.keep)
        _tls.plain = False
        _tls.include = _tls.include | self.keys
        refresh_plain()
        return self


class AutoDispatchBelowAutograd(ExcludeDispatchKeyGuard):
    """Calls inside the block skip the Autograd key: they record no graph."""

    def __init__(self) -> None:
        super().__init__(K.AUTOGRAD)


class AutoDispatchBelowADInplaceOrView(ExcludeDispatchKeyGuard):
    """Calls inside the block skip Autograd and ADInplaceOrView."""

    def __init__(self) -> None:
        super().__init__(K.AUTOGRAD | K.AD_INPLACE_OR_VIEW)


def local_keys() -> tuple:
    """This thread's (included, excluded) dispatch key bits."""
    return _tls.include & K.ALL, K.ALL & ~_tls.keep
