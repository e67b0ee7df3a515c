"""``opgrad.autograd.Function``: autograd from Python, with forward and backward written by hand.

``MyFn.apply(*args)`` runs ``forward`` with grad mode off, then records one node
of class ``MyFnBackward`` whose ``apply`` calls ``MyFn.backward``. As in
PyTorch, that node is also the ``ctx`` both methods receive.
"""

from __future__ import annotations

import functools
from typing import Any, Tuple

from .._tls import forward_ad_off, forward_ad_off_here, forward_ad_restore
from .._tls import state as _tls
from ..tensor import Tensor
from . import anomaly
from .node import Node, next_edge
from .saved_variable import ERR_FREED, SavedTensor, SavedVariable, unpack_saved
from .inplace import bump_version
from .views import IN_CUSTOM_FUNCTION, check_inplace, rebase_history

__all__ = [
    "Function",
    "FunctionCtx",
    "BackwardCFunction",
    "InplaceFunction",
    "once_differentiable",
]


class FunctionCtx:
    """What ``forward``/``setup_context`` use to talk to ``backward``."""

    def save_for_backward(self, *tensors) -> None:
        for index, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{index} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should save "
                    "non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def mark_shared_storage(self, *pairs) -> None:
        raise RuntimeError(
            "mark_shared_storage is deprecated. Tensors with shared storages are automatically "
            "tracked. Note that calls to `set_()` are not tracked"
        )


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of one call of a Function."""

    _forward_cls = None

    def __init__(self) -> None:
        Node.__init__(self)
        self.materialize_grads = True
        self._saved = None
        self.needs_input_grad = ()

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self) -> Tuple:
        if self.__dict__.get("_in_jvp"):
            # jvp runs before save_for_backward's tensors are saved: it sees only its own
            return tuple(getattr(self, "saved_for_forward", None) or ())
        saved = self._saved
        if saved is None:
            to_save = getattr(self, "to_save", None)
            if to_save is not None and getattr(self, "_released", False):
                raise RuntimeError(ERR_FREED)
            return tuple(to_save) if to_save is not None else ()
        return tuple(unpack_saved(s, self) for s in saved)

    @property
    def _raw_saved_tensors(self) -> Tuple:
        """A SavedTensor handle per saved value (None included: a handle on nothing)."""
        saved = self._saved
        if saved is None:
            if getattr(self, "_released", False) and getattr(self, "to_save", None) is not None:
                raise RuntimeError(ERR_FREED)
            return ()
        if getattr(self, "_released", False):
            raise RuntimeError(ERR_FREED)
        return tuple(SavedTensor._of(s, self) for s in saved)

    @property
    def saved_variables(self):
        import warnings

        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors

    def release_variables(self) -> None:
        if self._saved is not None:
            for s in self._saved:
                if s is not None:
                    s.reset()
        self._released = True

    _releasable_slots = ("_saved",)

    def apply(self, grads, needs) -> tuple:
        cls = self._forward_cls
        grads = list(grads)
        if self.materialize_grads:
            from ..generated import ops as aten
            from ..dtypes import from_numpy_dtype

            non_diff = getattr(self, "_non_diff_outputs", ())
            keep_none = not getattr(self, "_materialize_non_diff_grads", True)
            for i, g in enumerate(grads):
                shape, dtype = self._in_meta[i]
                if g is None and dtype is not None and not (keep_none and i in non_diff):
                    grads[i] = aten.zeros(shape, dtype=from_numpy_dtype(dtype))
        result = _user_backward(cls)(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._input_is_tensor)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{expected}, got {len(result)})"
            )
        per_edge = []
        for index, (grad, is_tensor) in enumerate(zip(result, self._input_is_tensor)):
            if grad is not None and not isinstance(grad, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
            if is_tensor:
                per_edge.append(grad)
            elif grad is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{index + 1}, but the corresponding forward input was not a Variable"
                )
        return tuple(per_edge)


def _user_backward(cls):
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


class FunctionMeta(type):
    """Gives every Function subclass its own node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd operations (``MyFn.apply(...)``)."""

    def __init__(self, *args, **kwargs) -> None:
        import warnings

        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def vjp(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _bind_inputs(cls, args: tuple, kwargs: dict, uses_setup_context: bool) -> tuple:
    """The forward inputs in signature order: keyword arguments (and then the defaults)
    count as inputs, as torch binds them; setup_context always sees the defaults."""
    if not kwargs and not uses_setup_context:
        return args
    import inspect

    signature = inspect.signature(cls.forward)
    params = list(signature.parameters.values())
    if not uses_setup_context:
        params = params[1:]  # ctx
    bound = inspect.Signature(params).bind(*args, **kwargs)
    bound.apply_defaults()
    inputs = []
    for param in params:
        value = bound.arguments.get(param.name)
        if param.kind == inspect.Parameter.VAR_POSITIONAL:
            inputs.extend(value or ())
        elif param.kind == inspect.Parameter.VAR_KEYWORD:
            inputs.extend((value or {}).values())
        else:
            inputs.append(value)
    return tuple(inputs)


def _apply(cls, args: tuple, kwargs: dict):
    node = cls._backward_cls()
    uses_setup_context = cls.setup_context is not Function.setup_context
    args = _bind_inputs(cls, args, kwargs, uses_setup_context)
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    tensor_inputs = [a for a in args if isinstance(a, Tensor)]
    record = _tls.grad_enabled and any(t._rg for t in tensor_inputs)
    node._input_is_tensor = is_tensor
    node.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)

    # forward runs with grad mode and forward AD off; its outputs' tangents come from jvp
    fw_active = _tls.fw_active
    previous = _tls.grad_enabled
    fw_was_off = forward_ad_off_here()
    try:
        # inside the try: the finally clauses undo them wherever an exception strikes
        forward_ad_off()
        try:
            _tls.grad_enabled = False
            if uses_setup_context:
                output = cls.forward(*args)
                cls.setup_context(node, args, output)
            else:
                output = cls.forward(node, *args)
        finally:
            _tls.grad_enabled = previous
        result = _wrap_outputs(node, args, tensor_inputs, output, record)
    finally:
        forward_ad_restore(fw_was_off)
    if fw_active:
        from .function_jvp import process_forward_mode

        process_forward_mode(cls, node, args, output, result)
    return result


def _wrap_outputs(node, args, tensor_inputs, output, record: bool):
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    dirty = getattr(node, "dirty_tensors", ()) or ()
    dirty_ids = {id(t) for t in dirty}
    output_ids = {id(o) for o in outputs if isinstance(o, Tensor)}
    if any(id(t) not in output_ids for t in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function."
        )
    non_diff = {id(t) for t in (getattr(node, "non_differentiable", ()) or ())}
    input_ids = {id(t) for t in tensor_inputs}
    for t in dirty:
        if id(t) not in input_ids:
            import warnings

            if t._base is not None:
                raise RuntimeError(
                    "ctx.mark_dirty() received a tensor that was not an input. Only input "
                    "Tensors that have been mutated should be passed to ctx.mark_dirty()."
                )
            warnings.warn(
                "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                "that have been mutated should be passed to ctx.mark_dirty().",
                UserWarning,
                stacklevel=3,
            )

    tensor_outputs = sum(1 for o in outputs if isinstance(o, Tensor))
    if any(t._base is not None for t in dirty) and tensor_outputs > 1 and record:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor. This is not supported by the current "
            "autograd engine. You should either make sure the input is not a view (using "
            ".clone() for example) or make your Function only return one Tensor (potentially "
            "splitting it into two Functions: one doing the inplace that returns a single Tensor "
            "and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change."
        )
    if record:
        node._next_edges = tuple(next_edge(a) for a in args if isinstance(a, Tensor))
        for t in dirty:
            if t._grad_fn is None and t._rg and t._base is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            check_inplace(t)
    for t in dirty:
        bump_version(t)  # as torch does for inputs marked dirty

    from ..generated import ops as aten

    results = []
    metadata = []
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            results.append(out)
            continue
        if id(out) in input_ids and id(out) not in dirty_ids:
            # An input returned as is becomes a new alias that carries this node.
            with _no_grad():
                out = aten.view(out, out._data.shape)
        metadata.append((out._data.shape, out._data.dtype))
        if record and id(out) not in non_diff and out._data.dtype.kind == "f":
            if id(out) in dirty_ids:
                rebase_history(out, node)
            else:
                out._grad_fn = node
                out._rg = True
            if nr:
                out._output_nr = nr
        elif id(out) in non_diff and not (id(out) in dirty_ids):
            out._rg = False
        if out._base is not None and id(out) not in dirty_ids:
            # In-place ops on views made inside a Function would bypass its backward.
            out.__dict__["_from_custom_function"] = True
            if record:  # made while forward ran with grad off, but recorded here
                out._creation_meta = IN_CUSTOM_FUNCTION
        if id(out) in non_diff:
            node._non_diff_outputs = getattr(node, "_non_diff_outputs", ()) + (nr,)
        results.append(out)
    node._in_meta = tuple(
        (o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None) for o in results
    )
    if record and anomaly.enabled:
        anomaly.record_forward(node)
    _save(node, results, record)
    return tuple(results) if is_tuple else results[0]


class _no_grad:
    def __enter__(self):
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = False

    def __exit__(self, *exc):
        _tls.grad_enabled = self.prev


def _save(node, outputs, record: bool) -> None:
    to_save = getattr(node, "to_save", None)
    if to_save is None or not record:
        return
    # Cleared first: should a pack hook raise, the node must not keep its outputs alive
    # (an output -> grad_fn -> to_save -> output cycle).
    node.to_save = None
    output_ids = {id(o) for o in outputs if isinstance(o, Tensor)}
    node._saved = tuple(
        None if t is None else SavedVariable(t, id(t) in output_ids) for t in to_save
    )


class InplaceFunction(Function):
    """Kept for old code, as in PyTorch: a Function that remembers whether it was asked to
    work in place. New code uses Function."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn):
    """Mark a Function's backward as not differentiable: its results refuse double backward."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _no_grad():
            outputs = fn(ctx, *args)
        if not _tls.grad_enabled:
            return outputs
        requires_grad = any(isinstance(a, Tensor) and a._rg for a in args)
        if not requires_grad:
            return outputs
        single = not isinstance(outputs, tuple)
        outputs_tuple = (outputs,) if single else outputs
        err_node = Error(
            "trying to differentiate twice a function that was marked with " "@once_differentiable",
            [a for a in args if isinstance(a, Tensor)],
        )
        wrapped = []
        for out in outputs_tuple:
            if isinstance(out, Tensor):
                from ..generated import ops as aten

                with _no_grad():
                    out = aten.alias(out)
                out._grad_fn = err_node
                out._rg = True
            wrapped.append(out)
        err_node._in_meta = tuple(
            (o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None) for o in wrapped
        )
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class Error(Node):
    """A node that raises when backward reaches it (torch's ``Error``, made by its
    DelayedError for @once_differentiable's results)."""

    def __init__(self, message: str, inputs) -> None:
        Node.__init__(self)
        self.message = message
        self._next_edges = tuple(next_edge(t) for t in inputs)

    def name(self) -> str:
        return "opgrad::autograd::Error"

    def apply(self, grads, needs):
        raise RuntimeError(self.message)
