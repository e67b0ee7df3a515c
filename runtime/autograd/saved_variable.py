"""SavedVariable: a tensor saved for backward, with its version and hooks."""

from __future__ import annotations

import re
from typing import Optional

from .._tls import state as _tls
from ..dtypes import legacy_tensor_type
from ..dispatch_keys import INFERENCE_TENSOR_KEYS
from ..tensor import _make, version_counter
from . import anomaly

ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
ERR_INFERENCE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
ERR_PACK_MUTATES = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook."
)
ERR_DETACHED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This "
    "is not supported, please use out-of-place `.detach()` instead"
)
ERR_HOOKS_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward."
)


def _keep_tangent(alias, tensor) -> None:
    """The saved output's tangent, kept (and dropped with it when its level exits)."""
    from .forward_grad import track

    alias._fw_grad = tensor._fw_grad
    track(alias)


def _alias(tensor, keep_base: bool):
    """A new tensor on ``tensor``'s memory and version counter, without history. A dispatch
    mode sees it made as aten.detach; otherwise it is made directly (and, with
    ``keep_base``, keeps the view's base)."""
    if _tls.mode_stack:
        from ..generated import ops as aten

        out = aten.detach(tensor)
    else:
        out = _make(tensor._data)
        if keep_base:
            out._base = tensor._base
    out._vc = tensor._vc
    return out


class SavedVariable:
    """Holds an input (the tensor itself) or an output (its data, without the
    owning grad_fn, so that no output <-> grad_fn reference cycle forms)."""

    __slots__ = ("_tensor", "_version", "_is_output", "_hooks", "_origin")

    def __init__(self, tensor, is_output: bool) -> None:
        if tensor._keys == INFERENCE_TENSOR_KEYS:
            raise RuntimeError(ERR_INFERENCE)
        vc = tensor._vc if not is_output else version_counter(tensor)
        self._version = vc[0] if vc is not None else 0
        self._is_output = is_output
        self._hooks = None  # (packed value, unpack hook) once hooks are registered
        default_hooks = _tls.saved_hooks
        if default_hooks and not tensor._wrapped:  # PyTorch never shows hooks a wrapped number
            # saved_tensors_hooks: pack now (an output is handed over as itself).
            pack, unpack = default_hooks[-1]
            self._tensor = None
            self._hooks = (pack(tensor), unpack)
            if tensor._version != self._version:
                raise RuntimeError(ERR_PACK_MUTATES)
            # Enough to give the unpacked tensor its history back, without keeping the
            # tensor itself (an output must not keep its own grad_fn alive).
            self._origin = (
                tensor._grad_fn if not is_output else None,
                tensor._output_nr,
                tensor._grad_acc if tensor._rg and tensor._grad_fn is None else None,
            )
            return
        if is_output:
            alias = _alias(tensor, keep_base=True)
            if tensor._output_nr:
                alias._output_nr = tensor._output_nr
            if _tls.fw_active and tensor._fw_grad is not None:
                _keep_tangent(alias, tensor)  # forward-over-reverse reads it in backward
            self._tensor = alias
        else:
            self._tensor = tensor
            if tensor._grad_fn is not None:
                self._origin = True  # a non-leaf: detaching it in place is an error

    def unpack(self, grad_fn=None):
        tensor = self._tensor
        if tensor is None:
            if self._hooks is None:
                raise RuntimeError(ERR_FREED)
            packed, unpack_hook = self._hooks
            result = unpack_hook(packed)
            if not hasattr(result, "_data"):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(result).__name__}"
                )
            return self._with_history(result, grad_fn)
        vc = tensor._vc
        if (vc[0] if vc is not None else 0) != self._version:
            self._raise_version_error(tensor, grad_fn)
        if not self._is_output:
            if tensor._grad_fn is None and getattr(self, "_origin", None) is True:
                raise RuntimeError(ERR_DETACHED)
            return tensor
        if _tls.mode_stack:
            out = _alias(tensor, keep_base=True)
        else:  # _alias's unobserved branch, in this frame
            out = _make(tensor._data)
            out._base = tensor._base
            out._vc = tensor._vc
        if grad_fn is not None:
            out._grad_fn = grad_fn
            if tensor._output_nr:
                out._output_nr = tensor._output_nr
            out._rg = True
        if _tls.fw_active and tensor._fw_grad is not None:
            _keep_tangent(out, tensor)
        return out

    def _with_history(self, data, grad_fn):
        """An unpack hook's tensor, given back the autograd history of what was saved."""
        origin = getattr(self, "_origin", None)
        if origin is None:
            return data  # hooks registered on this one SavedVariable: returned as is
        source_fn, output_nr, accumulator = origin
        history = grad_fn if self._is_output else source_fn
        if history is None and accumulator is None:
            return data
        # Always a new tensor, as PyTorch (a dispatch mode sees it as a detach).
        out = _alias(data, keep_base=False)
        out._rg = True
        if history is not None:
            out._grad_fn = history
            if output_nr:
                out._output_nr = output_nr
        else:
            out._grad_acc = accumulator  # gradients reach the saved leaf's .grad
        return out

    def _raise_version_error(self, tensor, grad_fn) -> None:
        data = tensor._data
        where = ""
        producer = grad_fn if self._is_output else tensor._grad_fn
        if producer is not None:
            # PyTorch names the op, not the node: "output 0 of Exp".
            op = re.sub(r"Backward\d*$", "", producer.name())
            where = f", which is output {tensor._output_nr} of {op},"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_tensor_type(data.dtype)} [{', '.join(map(str, data.shape))}]]"
            f"{where} is at version {tensor._version}; expected version {self._version} instead. "
            + (
                "Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!"
                if anomaly.enabled
                else "Hint: enable anomaly detection to find the operation that failed to "
                "compute its gradient, with opgrad.autograd.set_detect_anomaly(True, "
                "check_nan=False)."
            )
        )

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if self._tensor is None and self._hooks is None:
            raise RuntimeError(ERR_HOOKS_FREED)
        if self._hooks is not None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("pack_hook and unpack_hook must be callables")
        self._hooks = (pack_hook(self._tensor), unpack_hook)
        self._tensor = None

    def reset(self) -> None:
        """Free the saved data (after a backward without retain_graph)."""
        self._tensor = None
        self._hooks = None


class SavedTensor:
    """What ``grad_fn._raw_saved_<name>`` returns: a handle on one SavedVariable."""

    __slots__ = ("_saved", "_grad_fn")

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, saved: Optional[SavedVariable], grad_fn) -> "SavedTensor":
        handle = object.__new__(cls)
        handle._saved = saved
        handle._grad_fn = grad_fn
        return handle

    @property
    def data(self):
        """What was saved, as kept: the packed object when hooks packed it, the tensor itself
        for a saved input, its detached alias for a saved output."""
        saved = self._saved
        if saved is None:
            return None
        if saved._hooks is not None:
            return saved._hooks[0]
        if saved._tensor is None:
            raise RuntimeError(ERR_FREED)
        return saved._tensor

    @property
    def unpack_hook(self):
        saved = self._saved
        return None if saved is None or saved._hooks is None else saved._hooks[1]

    def register_hooks(self, *hooks) -> None:
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: opgrad._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {self!r}, {', '.join(repr(h) for h in hooks)}"
            )
        pack_hook, unpack_hook = hooks
        if self._saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden"
            )
        self._saved.register_hooks(pack_hook, unpack_hook)

    def unpack(self):
        return None if self._saved is None else self._saved.unpack(self._grad_fn)

    def __repr__(self) -> str:
        return "<opgrad._C._autograd.SavedTensor object>"


# The plain path keeps a saved input that is at version 0 and has no history as the
# tensor itself in the node's slot: nothing more is needed to unpack it (no hooks, no
# alias, no history to check). A SavedVariable is made from it when someone asks for
# the handle (_raw_saved_*), and a release replaces it with FREED.


def _saved_as_itself(tensor) -> SavedVariable:
    """The SavedVariable of an input the plain path saved as itself at version 0."""
    saved = object.__new__(SavedVariable)
    saved._tensor = tensor
    saved._version = 0
    saved._is_output = False
    saved._hooks = None
    return saved


#: what a released slot holds: unpacking it raises the "backward a second time" error
FREED = object.__new__(SavedVariable)
FREED._tensor = FREED._hooks = None
FREED._version = 0
FREED._is_output = False


def unpack_saved(saved, grad_fn):
    """``_saved_<name>``: None when nothing was saved."""
    if saved is None:
        return None
    if saved.__class__ is SavedVariable:
        tensor = saved._tensor
        if tensor is not None and tensor._grad_fn is not None and not saved._is_output:
            vc = tensor._vc
            if (vc[0] if vc is not None else 0) == saved._version:
                return tensor  # unpack's common case: a non-leaf input, unmodified
        return saved.unpack(grad_fn)
    vc = saved._vc  # a tensor saved as itself at version 0
    if vc is not None and vc[0]:
        _saved_as_itself(saved)._raise_version_error(saved, grad_fn)
    return saved


def raw_saved(grad_fn, slot: str):
    """``_raw_saved_<name>``: a SavedTensor handle, even when nothing was saved (made
    once from a tensor saved as itself, so hooks registered on it stay)."""
    saved = getattr(grad_fn, slot)
    if saved is not None and saved.__class__ is not SavedVariable:
        saved = _saved_as_itself(saved)
        setattr(grad_fn, slot, saved)
    return SavedTensor._of(saved, grad_fn)


def save_list(tensors) -> tuple:
    """A Tensor[] / Tensor?[] input saved element by element (None stays None)."""
    return tuple([SavedVariable(t, False) if t is not None else None for t in tensors])


def unpack_saved_list(saved, grad_fn):
    if saved is None:
        return None
    return tuple([s.unpack(grad_fn) if s is not None else None for s in saved])


def raw_saved_list(saved, grad_fn):
    if saved is None:
        return None
    return tuple([SavedTensor._of(s, grad_fn) for s in saved])
