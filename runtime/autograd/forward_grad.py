"""Tangents of forward-mode AD: where they live, how kernels read and set them.

A tensor's tangent at the active level is its ``_fw_grad`` (None = no
tangent, which counts as zero). The generated forward-mode kernels
(generated/jvp_kernels.py) read tangents with :func:`fw_grad` and store
results with :func:`set_fw_grad` / :func:`set_fw_grad_inplace`; every tensor
given a tangent is tracked by the level, which clears them all when it exits.

Views follow PyTorch's rules: the tangent of a view is the same view of its
base's tangent. A view made before its base had a tangent derives it lazily
from the base (an in-place op gave the base one), and an in-place op on a
view whose base has no tangent gives the base a zero tangent first, so the
two stay aliased. ``make_dual`` and ``unpack_dual``'s primal alias their input
for backward but are no forward views (``_fw_root is True``); views of them
record them as ``_fw_root``, their forward base.
"""

from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from .._tls import state as _tls
from ..numpy_kernels import empty_strided, storage_offset
from ..tensor import Tensor, _make, _WrappedNumber

#: id(tensor) -> weakref of every tensor holding a tangent at the active level
_tracked: dict = {}


def track(tensor) -> None:
    key = id(tensor)

    def forget(ref, key=key):
        if _tracked.get(key) is ref:
            del _tracked[key]

    _tracked[key] = weakref.ref(tensor, forget)


def clear_all() -> None:
    """The level exits: every tangent it holds is dropped."""
    refs = list(_tracked.values())
    _tracked.clear()
    for ref in refs:
        tensor = ref()
        if tensor is not None:
            tensor.__dict__.pop("_fw_grad", None)


class suspended:
    """Ops run inside leave tangents alone (formulas, custom Function forwards)."""

    __slots__ = ("was_off",)

    # forward_ad_off_here / forward_ad_off / forward_ad_restore, inline: every forward
    # formula runs inside one
    def __enter__(self):
        self.was_off = "fw_active" in _tls.__dict__
        _tls.fw_active = False  # a store last: no exception can follow it here

    def __exit__(self, *exc):
        if not self.was_off:
            _tls.__dict__.pop("fw_active", None)


# ---- reading ---------------------------------------------------------------------------


def fw_grad(tensor) -> Optional[Tensor]:
    """``tensor``'s tangent, None when it has none."""
    grad = tensor._fw_grad
    if grad is not None or tensor._base is None:
        return grad
    return _derived_view_tangent(tensor)


def _forward_base(view):
    root = view._fw_root
    if root is True:
        return None  # made by make_dual / unpack_dual: no forward view
    return root if root is not None else view._base


def _derived_view_tangent(view) -> Optional[Tensor]:
    base = _forward_base(view)
    if base is None or base._fw_grad is None:
        return None
    tangent = _view_of(base._fw_grad, base, view)
    view._fw_grad = tangent
    track(view)
    return tangent


def _element_strides(data: np.ndarray) -> tuple:
    item = data.itemsize
    return tuple(s // item for s in data.strides)


def _view_of(base_tangent, base, view):
    """The view of ``base_tangent`` that ``view`` is of ``base``
    (the tangent has its primal's layout, so the same geometry replays)."""
    from ..generated import ops as aten

    item = view._data.itemsize
    offset = (
        view._data.__array_interface__["data"][0] - base._data.__array_interface__["data"][0]
    ) // item
    with suspended():
        return aten.as_strided(
            base_tangent,
            view._data.shape,
            _element_strides(view._data),
            storage_offset(base_tangent._data) + offset,
        )


def zeros_tangent(tensor) -> Tensor:
    """An undefined tangent, materialized as zeros where a formula needs it."""
    zeros = _make(np.zeros(tensor._data.shape, tensor._data.dtype))
    if tensor._wrapped:
        zeros.__class__ = _WrappedNumber
    return zeros


def original(tensor) -> Tensor:
    """``self`` before an in-place op, for formulas that read its old value."""
    from ..generated import ops as aten

    with suspended():
        return aten.clone(tensor)


# ---- setting -----------------------------------------------------------------------------


def _same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    ia, ib = a.itemsize, b.itemsize
    return all(n <= 1 or sa // ia == sb // ib for n, sa, sb in zip(a.shape, a.strides, b.strides))


def check_size(tensor, tangent) -> None:
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )


def check_new_tangent(tangent) -> None:
    """What PyTorch checks first when a tangent is set by make_dual or a custom jvp:
    it carries no tangent itself and is a floating point tensor (None is not)."""
    if tangent is not None and fw_grad(tangent) is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level0 is "
            "not supported."
        )
    if tangent is None or tangent._data.dtype.kind not in "fc":
        raise RuntimeError(
            "Expected both tensor and its forward grad to be floating point or complex"
        )


def _with_layout_of(tangent, tensor):
    """``tangent`` as is when it is laid out as ``tensor``, else a copy that is."""
    a, b = tangent._data, tensor._data
    if a.strides == b.strides and a.itemsize == b.itemsize and a.shape == b.shape:
        return tangent  # the common case of _same_layout, decided without a call
    if _same_layout(a, b):
        return tangent
    from ..generated import ops as aten

    with suspended():
        copy = aten.new_empty_strided(tangent, tensor._data.shape, _element_strides(tensor._data))
        return aten.copy_(copy, tangent)


def set_fw_grad(tensor, tangent) -> None:
    """Give a fresh op output (or a dual tensor) its tangent."""
    if tangent is None or tensor._data.dtype.kind not in "fc":
        return
    if tangent._data.shape != tensor._data.shape:
        check_size(tensor, tangent)  # raises
    tensor._fw_grad = _with_layout_of(tangent, tensor)
    track(tensor)


def set_fw_grads(results, tangents) -> None:
    for result, tangent in zip(results, tangents):
        set_fw_grad(result, tangent)


def set_fw_grad_inplace(tensor, tangent) -> None:
    """``tensor`` was modified in place: its tangent becomes ``tangent``, in place."""
    check_size(tensor, tangent)
    existing = fw_grad(tensor)
    if existing is not None:
        if existing is not tangent:
            from ..generated import ops as aten

            with suspended():
                aten.copy_(existing, tangent)
        return
    base = _forward_base(tensor) if tensor._base is not None else None
    if base is None:
        set_fw_grad(tensor, tangent)
        return
    # An in-place op on a view of a base without tangent: the base gets a zero
    # tangent and the view's is the matching view of it, so that they stay aliased.
    data = base._data
    base_tangent = _make(empty_strided(data.shape, _element_strides(data), tangent._data.dtype))
    base._fw_grad = base_tangent
    track(base)
    view_tangent = _view_of(base_tangent, base, tensor)
    from ..generated import ops as aten

    with suspended():
        aten.copy_(view_tangent, tangent)
    tensor._fw_grad = view_tangent
    track(tensor)


def propagate_view_root(source, view) -> None:
    """A view of a tensor that is no forward view remembers it as its forward base."""
    root = source._fw_root
    if root is not None:
        target = source if root is True else root
        if isinstance(view, (list, tuple)):
            for v in view:
                v._fw_root = target
        else:
            view._fw_root = target
