"""``opgrad.library``: define ops and register kernels from Python, as torch.library.

``Library(ns, "DEF")`` owns a namespace; ``define`` adds an op with a schema,
``impl`` registers a Python kernel for it (or for an existing aten op) at a
dispatch key. ``custom_op`` builds an op from a typed Python function, and
``register_autograd`` gives it a backward without codegen. Such ops go through
the same dispatcher keys as the built-in ones.
"""

from __future__ import annotations

import inspect
import typing
import weakref
from typing import Callable, Dict, Iterable, Optional, Sequence, Union

from . import dispatch_keys as K
from . import dispatcher
from ._tls import set_process_reason
from ._tls import state as _tls
from .dispatcher import OpOverload, boxed_entry, define as _define_op, lookup, ops
from .numpy_kernels import memory_owner
from .schema import SchemaError, parse_schema
from .tensor import Tensor

__all__ = ["Library", "custom_op", "CustomOpDef"]

_KEYS = {
    "CPU": K.CPU,
    "Autograd": K.AUTOGRAD,
    "AutogradCPU": K.AUTOGRAD,
    "ADInplaceOrView": K.AD_INPLACE_OR_VIEW,
    "Python": K.PYTHON,
    "CompositeExplicitAutograd": K.CPU,
    "CompositeImplicitAutograd": K.AUTOGRAD | K.CPU,
    "": K.AUTOGRAD | K.CPU,
}
_defined_namespaces: Dict[str, str] = {}

NO_AUTOGRAD_KERNEL = (
    "{op}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
    "backprop through it. This may lead to silently incorrect behavior. This behavior is "
    "deprecated and will be removed in a future version of PyTorch. If your operator is "
    "differentiable, please ensure you have registered an autograd kernel to the correct "
    "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If your "
    "operator is not differentiable, or to squash this warning and use the previous behavior, "
    "please register torch::CppFunction::makeFallthrough() to DispatchKey::Autograd."
)


def _caller() -> str:
    frame = inspect.stack()[2]
    return f"{frame.filename}:{frame.lineno}"


class Library:
    """A set of op definitions and kernels in one namespace; dropping it undoes them."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in ("prim",) and kind in ("DEF", "FRAGMENT"):
            raise ValueError(
                ns, " is a reserved namespace. Please try creating a library with another name."
            )
        if kind == "DEF":
            if ns in _defined_namespaces:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If you "
                    "were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                    "(which can be duplicated).  If you really intended to define operators for a "
                    "single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    "explicitly indicate this.  Previous registration of TORCH_LIBRARY was "
                    f"registered at {_defined_namespaces[ns]}; latest registration was registered "
                    f"at {_caller()}"
                )
            _defined_namespaces[ns] = _caller()
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list = []
        self._previous: list = []  # (op, key bit, previous kernel or None)
        weakref.finalize(self, _undo, self.ns, self.kind, self._defined, self._previous)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags: Sequence = ()) -> str:
        """Declare an op of this namespace from its schema; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on a Library of kind IMPL")
        try:
            parsed = parse_schema(schema)
        except SchemaError as error:  # torch's schema parser raises RuntimeError
            raise RuntimeError(str(error)) from None
        if parsed.namespace and parsed.namespace != self.ns:
            raise ValueError(
                f"Namespace mismatch: {parsed.namespace} in the schema, {self.ns} in the library"
            )
        op = _define_op(f"{self.ns}::{schema.split('::')[-1]}")
        op._entry = boxed_entry(op)
        op._make_entry = lambda site, op=op: boxed_entry(op, site)
        op.tags = tuple(tags)
        self._defined.append(op)
        return op._schema.base_name + (
            f".{op._schema.overload_name}" if op._schema.overload_name else ""
        )

    def impl(
        self,
        op_name: Union[str, OpOverload],
        fn: Callable,
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
    ) -> None:
        """Register ``fn`` as ``op_name``'s kernel at ``dispatch_key`` (Autograd, CPU, ...)."""
        op = op_name if isinstance(op_name, OpOverload) else _find(self.ns, op_name)
        key = dispatch_key or self.dispatch_key
        if key not in _KEYS:
            raise ValueError(f"unsupported dispatch key '{key}'")
        bits = _KEYS[key]
        kernel = _python_kernel(op, fn, with_keyset)
        for bit in K.ORDER:
            if bits & bit:
                self._previous.append((op, bit, op._kernels.get(bit)))
                if op.namespace == "aten":
                    dispatcher.user_aten_kernels += 1
                    set_process_reason("user kernel on an aten op", True)
        op.register_kernel(bits, kernel)

    def fallback(self, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        raise NotImplementedError("boxed fallbacks registered from Python are not supported yet")

    def _destroy(self) -> None:
        _undo(self.ns, self.kind, self._defined, self._previous)


def _undo(ns: str, kind: str, defined: list, previous: list) -> None:
    for op, bit, kernel in reversed(previous):
        if op.namespace == "aten":
            dispatcher.user_aten_kernels -= 1
            set_process_reason("user kernel on an aten op", False)
        if kernel is None:
            op.remove_kernel(bit)
        else:
            op.register_kernel(bit, kernel)
    previous.clear()
    for op in defined:
        packet = op.overloadpacket
        if op._overloadname in packet._overload_names:
            packet._overload_names.remove(op._overloadname)
            delattr(packet, op._overloadname)
        if not packet._overload_names:
            namespace = getattr(ops, ns)
            namespace.__dict__.pop(packet.__name__, None)
    defined.clear()
    if kind == "DEF":
        _defined_namespaces.pop(ns, None)


def _find(ns: str, name: str) -> OpOverload:
    qualified = name if "::" in name else f"{ns}::{name}"
    try:
        return lookup(qualified)
    except AttributeError:
        raise RuntimeError(f"operator {qualified} does not exist") from None


def _python_kernel(op: OpOverload, fn: Callable, with_keyset: bool) -> Callable:
    """Adapt a Python function (args, kwargs as the schema splits them) to a kernel."""
    n = len(op._positional)
    names = [a.name for a in op._kwarg_only]

    def kernel(keyset, *flat):
        args = flat[:n]
        kwargs = dict(zip(names, flat[n:]))
        # Calls made inside fn stay below the key it was registered at.
        if with_keyset:
            return fn(keyset, *args, **kwargs)
        return fn(*args, **kwargs)

    return kernel


def _below_forward_ad(kernel, keyset, flat):
    """A Python kernel runs below autograd: the ops it calls compute no tangents
    (as in PyTorch, where they see the primals only)."""
    from .autograd.forward_grad import suspended

    with suspended():
        return kernel(keyset, *flat)


def autograd_not_implemented_kernel(op: OpOverload) -> Callable:
    """The Autograd kernel of a library op that has none: run it, and make backward refuse."""
    from .autograd.node import Node, next_edge

    class NotImplemented(Node):
        def name(self) -> str:
            return "NotImplemented"

        def apply(self, grads, needs):
            raise RuntimeError(NO_AUTOGRAD_KERNEL.format(op=op.name()))

    def kernel(keyset, *flat):
        below = keyset & K.AFTER_AUTOGRAD
        tensors = [a for a in flat if isinstance(a, Tensor)]
        record = _tls.grad_enabled and any(t._rg for t in tensors)
        if _tls.fw_active:
            result = _below_forward_ad(op.kernel_for(below), below, flat)
        else:
            result = op.kernel_for(below)(below, *flat)
        if record:
            node = NotImplemented()
            node._next_edges = tuple(next_edge(t) for t in tensors)
            outputs = result if isinstance(result, tuple) else (result,)
            for nr, out in enumerate(outputs):
                if isinstance(out, Tensor) and out._data.dtype.kind == "f":
                    out._grad_fn = node
                    out._rg = True
                    if nr:
                        out._output_nr = nr
            node._in_meta = tuple(
                (o._data.shape, o._data.dtype) for o in outputs if isinstance(o, Tensor)
            )
        return result

    return kernel


# ---- custom_op --------------------------------------------------------------------------

_TYPE_NAMES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str"}


def _schema_type(annotation) -> str:
    if annotation in _TYPE_NAMES:
        return _TYPE_NAMES[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Union and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        return _schema_type(inner[0]) + "?"
    if origin in (list, Sequence, typing.Sequence) or (
        origin is not None and origin.__name__ in ("list", "Sequence")
    ):
        return _schema_type(args[0]) + "[]"
    from .dtypes import dtype

    if annotation is dtype:
        return "ScalarType"
    raise ValueError(f"custom_op: unsupported type annotation {annotation!r}")


def infer_schema(fn: Callable, mutates_args: Iterable[str] = ()) -> str:
    """The schema string of a typed Python function (PyTorch's infer_schema)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    mutates = set(mutates_args)
    parts = []
    alias = 0
    for name, param in signature.parameters.items():
        if name not in hints:
            raise ValueError(
                f"infer_schema(func): Parameter {name} must have a type annotation. Got func with "
                f"signature {signature})"
            )
        text = _schema_type(hints[name])
        if name in mutates:
            if not text.startswith("Tensor"):
                raise ValueError(f"custom_op: mutated argument '{name}' must be a Tensor")
            text = text.replace("Tensor", f"Tensor(a{alias}!)", 1)
            alias += 1
        if param.kind == inspect.Parameter.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        default = ""
        if param.default is not inspect.Parameter.empty:
            default = "=" + ("None" if param.default is None else repr(param.default))
        parts.append(f"{text} {name}{default}")
    returns = hints.get("return", type(None))
    if returns is type(None):
        ret = "()"
    elif typing.get_origin(returns) is tuple:
        ret = "(" + ", ".join(_schema_type(a) for a in typing.get_args(returns)) + ")"
    else:
        ret = _schema_type(returns)
    return f"({', '.join(parts)}) -> {ret}"


class CustomOpDef:
    """What ``@custom_op`` returns: callable like the op, with registration methods."""

    def __init__(self, qualname: str, fn: Callable, schema: str, mutates_args) -> None:
        namespace, name = qualname.split("::")
        self._namespace, self._name = namespace, name
        self._init_fn = fn
        self._backward = None
        self._setup_context = None
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema)
        self._opoverload = getattr(getattr(ops, namespace), name).default
        self._lib.impl(name, _refusing_aliases(name, fn), "CompositeExplicitAutograd")
        self._opoverload.register_kernel(K.AUTOGRAD, self._autograd_kernel())
        if self._opoverload._schema.is_mutable:
            self._opoverload.register_kernel(K.AD_INPLACE_OR_VIEW, self._inplace_kernel())
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_autograd(
        self, backward: Callable, *, setup_context: Optional[Callable] = None
    ) -> None:
        """``backward(ctx, *grads)`` returns one gradient per input (None for non-tensors)."""
        if self._opoverload._schema.is_mutable:
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self}. Please "
                "create a functional operator and register an autograd formula for that."
            )
        self._backward = backward
        self._setup_context = setup_context

    def register_kernel(self, device_types, fn: Optional[Callable] = None):
        def register(func):
            kernel = _refusing_aliases(self._name, func)
            self._lib.impl(self._name, kernel, "CompositeExplicitAutograd")
            return func

        return register(fn) if fn is not None else register

    def register_fake(self, fn: Optional[Callable] = None):
        def register(func):
            self._fake = func
            return func

        return register(fn) if fn is not None else register

    def _inplace_kernel(self) -> Callable:
        op = self._opoverload
        written = [i for i, a in enumerate(op._schema.arguments) if a.is_write]

        def kernel(keyset, *flat):
            below = keyset & K.AFTER_AD_INPLACE_OR_VIEW
            result = op.kernel_for(below)(below, *flat)
            from .autograd.inplace import bump_version

            for i in written:
                if flat[i] is not None:
                    bump_version(flat[i])
            return result

        return kernel

    def _autograd_kernel(self) -> Callable:
        from .autograd.function import Function

        custom = self
        op = self._opoverload
        n = len(op._positional)
        label = f"{self._namespace}_{self._name}_default"

        class Generated(Function):
            @staticmethod
            def forward(keyset, *flat):
                below = keyset & K.AFTER_AUTOGRAD
                return op.kernel_for(below)(below, *flat)

            @staticmethod
            def setup_context(ctx, inputs, output):
                flat = inputs[1:]
                ctx._custom_inputs = flat
                if custom._setup_context is not None:
                    args = tuple(flat[:n]) + tuple(flat[n:])
                    custom._setup_context(ctx=ctx, inputs=args, output=output)

            @staticmethod
            def backward(ctx, *grads):
                if custom._backward is None:
                    raise RuntimeError(
                        f"Trying to backward through {op} but no autograd formula was "
                        "registered. Please use register_autograd to add one."
                    )
                result = custom._backward(ctx, *grads)
                return (None,) + _check_grads(op, ctx._custom_inputs, result)

        Generated.__name__ = Generated.__qualname__ = f"GeneratedBackwardFor_{label}"
        Generated._backward_cls.__name__ = f"GeneratedBackwardFor_{label}Backward"

        def kernel(keyset, *flat):
            tensors = [a for a in flat if isinstance(a, Tensor)]
            if not (_tls.grad_enabled and any(t._rg for t in tensors)):
                below = keyset & K.AFTER_AUTOGRAD
                if _tls.fw_active:
                    return _below_forward_ad(op.kernel_for(below), below, flat)
                return op.kernel_for(below)(below, *flat)
            return Generated.apply(keyset, *flat)

        return kernel


_ALIASING_OUTPUT = (
    "{name} (with implementation in {module!r}): The output of this custom operator (1) must "
    "not also be an input to this custom operator and (2) may not alias any inputs to this "
    "custom operator or other returns. The most common way to trigger this error is if we have "
    "y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
    "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
    "return y."
)


def _tensors_in(values) -> list:
    found = []
    for value in values:
        if isinstance(value, Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(_tensors_in(value))
    return found


def _refusing_aliases(name: str, fn: Callable) -> Callable:
    """A custom op's kernel that refuses to return an input or memory shared with an input
    or another output, as torch.library.custom_op does: the op must be functional."""

    def kernel(*args, **kwargs):
        result = fn(*args, **kwargs)
        owners = {id(memory_owner(t._data)) for t in _tensors_in(args + tuple(kwargs.values()))}
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        for out in _tensors_in(outputs):
            owner = id(memory_owner(out._data))
            if owner in owners:
                raise RuntimeError(_ALIASING_OUTPUT.format(name=name, module=inspect.getmodule(fn)))
            owners.add(owner)
        return result

    kernel.__name__ = getattr(fn, "__name__", name)
    return kernel


def _check_grads(op: OpOverload, inputs: tuple, result) -> tuple:
    """A registered backward returns one gradient per input; check count and shapes."""
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(inputs):
        raise RuntimeError(
            f"{op}: expected the backward function to return {len(inputs)} gradients (one per "
            f"input), but got {len(result)}"
        )
    for index, (grad, value) in enumerate(zip(result, inputs)):
        if not isinstance(value, Tensor):
            if grad is not None:
                raise RuntimeError(
                    f"{op}: the gradient for input {index} must be None because that input is "
                    f"not a Tensor, but got {type(grad).__name__}"
                )
            continue
        if grad is not None and tuple(grad.shape) != tuple(value.shape):
            raise RuntimeError(
                f"{op}: the gradient for input {index} has shape {list(grad.shape)} but the input "
                f"has shape {list(value.shape)}"
            )
    return tuple(result)


def custom_op(
    name: str,
    fn: Optional[Callable] = None,
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    device_types=None,
    schema: Optional[str] = None,
):
    """Make a typed Python function an op ``opgrad.ops.<ns>.<name>.default``."""
    if "::" not in name:
        raise ValueError(f"custom_op: name must be 'namespace::name', got {name!r}")

    def build(func):
        mutated = () if mutates_args == "unknown" else tuple(mutates_args)
        text = schema if schema is not None else infer_schema(func, mutated)
        return CustomOpDef(name, func, text, mutated)

    return build(fn) if fn is not None else build
