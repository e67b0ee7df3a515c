"""In-place and view bookkeeping shared by the generated kernels."""

from __future__ import annotations

from ..tensor import _make, version_counter


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


def bump_version(tensor) -> None:
    version_counter(tensor)[0] += 1


def share_version(source, alias):
    alias._vc = version_counter(source)
    return alias
