"""In-place and view bookkeeping shared by the generated kernels."""

from __future__ import annotations

from ..tensor import version_counter


def check_out(op_name: str, *tensors) -> None:
    """out= variants are not differentiable: no argument may require grad."""
    if any(t is not None and t._rg for t in tensors):
        raise RuntimeError(
            f"{op_name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def saved_original(tensor):
    """An in-place op that saves ``self`` keeps its value from before the op: a clone, as
    PyTorch makes it (its history is CloneBackward0, and a dispatch mode sees the clone)."""
    from ..generated import ops as aten

    return aten.clone(tensor)


def bump_version(tensor) -> None:
    version_counter(tensor)[0] += 1


def share_version(source, alias):
    alias._vc = version_counter(source)
    return alias
