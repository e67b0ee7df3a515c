"""In-place and view bookkeeping shared by the generated kernels."""

from __future__ import annotations

from ..tensor import _make


def check_inplace(tensor) -> None:
    """PyTorch's checks before an in-place op records history on ``tensor``."""
    if tensor._grad_fn is None and tensor._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = tensor._base
    if base is not None and (base._rg or tensor._rg):
        if base._grad_fn is None and base._rg:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
        raise NotImplementedError(
            "in-place operations on a view of a tensor that requires grad need CopySlices, "
            "which opgrad does not implement yet"
        )


def check_out(op_name: str, *tensors) -> None:
    """out= variants are not differentiable: no argument may require grad."""
    if any(t is not None and t._rg for t in tensors):
        raise RuntimeError(
            f"{op_name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def saved_original(tensor):
    """An in-place op that saves ``self`` keeps its value from before the op."""
    copy = _make(tensor._data.copy())
    copy._rg = tensor._rg
    copy._grad_fn = tensor._grad_fn
    if tensor._output_nr:
        copy._output_nr = tensor._output_nr
    return copy


def rebase_history(tensor, grad_fn) -> None:
    """After an in-place op, ``tensor`` is the output of ``grad_fn``."""
    tensor._grad_fn = grad_fn
    if tensor._output_nr:
        tensor._output_nr = 0
    tensor._rg = True
    grad_fn._input_metadata = ((tensor._data.shape, tensor._data.dtype),)


def bump_version(tensor) -> None:
    tensor._vc[0] += 1


def as_view(base, view):
    """``view`` shares ``base``'s memory: it records the root base and shares its version counter."""
    view._base = base if base._base is None else base._base
    view._vc = base._vc
    return view


def share_version(source, alias):
    alias._vc = source._vc
    return alias
