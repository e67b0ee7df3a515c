"""CopySlices: the grad_fn a base gets when one of its views is modified in place."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .._tls import state as _tls
from ..memory_formats import contiguous_strides
from ..numpy_kernels import empty_view_at, laid_out, storage_offset
from ..plain import PLAIN_FLOATS, PLAIN_KEYS, input_metadata
from ..tensor import Tensor, _View, _make
from .node import Node, next_edge
from .saved_variable import ERR_FREED

_TENSORS = (Tensor, _View)


#: element strides per (byte strides, itemsize), shared: a loop writes views of one shape
_element_strides_of: dict = {}
#: CopySlices' plain backward layouts per (base sizes, base strides, view sizes, view
#: strides, itemsize): the base's extent, both byte strides and the view's span
_layouts: dict = {}
_MAX_SHARED = 4096


def _element_strides(data: np.ndarray) -> tuple:
    key = (data.strides, data.itemsize)
    strides = _element_strides_of.get(key)
    if strides is None:
        if len(_element_strides_of) >= _MAX_SHARED:
            _element_strides_of.clear()
        itemsize = data.itemsize
        strides = _element_strides_of[key] = tuple([s // itemsize for s in data.strides])
    return strides


def _layout(key: tuple) -> Optional[tuple]:
    """(extent, base byte strides, view byte strides, view span) for a layout key, or
    None when a stride is negative (the full path's as_strided raises then)."""
    sizes, strides, size, stride, item = key
    if min(strides, default=0) < 0 or min(stride, default=0) < 0:
        return None
    extent = 1 + sum([(n - 1) * s for n, s in zip(sizes, strides)]) if all(sizes) else 0
    span = sum([(n - 1) * s for n, s in zip(size, stride)]) if all(size) else -1
    if len(_layouts) >= _MAX_SHARED:
        _layouts.clear()
    layout = (extent, tuple([s * item for s in strides]), tuple([s * item for s in stride]), span)
    _layouts[key] = layout
    return layout


class CopySlices(Node):
    """Backward of "write ``fn``'s result into a slice of the base".

    The base's gradient passes through unchanged outside the view; inside it,
    ``fn`` (the in-place op's own node) turns the view's gradient into the
    gradient of the view's old value and of ``fn``'s other inputs.
    """

    __slots__ = ("fn", "base_sizes", "base_strides", "base_offset", "view_geometry")

    def __init__(self, base, view: np.ndarray, fn: Node, view_offset: Optional[int] = None):
        """``view`` is the data of the view that was written; ``view_offset`` its storage
        offset when the caller knows it (else it is read off the array)."""
        Node.__init__(self)
        self.fn = fn
        data = base._data
        self.base_sizes = data.shape
        self.base_strides = _element_strides(data)
        self.base_offset = 0 if data.base is None else storage_offset(data)
        if view_offset is None:
            view_offset = storage_offset(view)
        self.view_geometry = (view.shape, _element_strides(view), view_offset)
        # Edge 0 is the base's history before the op; the rest are fn's other inputs.
        self._next_edges = (next_edge(base),) + tuple(fn._next_edges[1:])
        self._in_meta = input_metadata((data.shape, data.dtype))
        fn._in_meta = input_metadata((view.shape, view.dtype))

    def name(self) -> str:
        return "opgrad::autograd::CopySlices"

    def apply(self, grads: tuple, needs) -> tuple:
        if self.fn is None:
            raise RuntimeError(ERR_FREED)
        grad = grads[0]
        if grad is None:
            return (None,) * len(self._next_edges)
        # The view's own slot is needed exactly when the base's old history is.
        fn_needs = tuple([bool(n) for n in needs])
        if (
            _tls.plain
            and not _tls.grad_enabled
            and grad.__class__ in _TENSORS
            and grad._keys == PLAIN_KEYS
        ):
            outputs = self._apply_plain(grad, fn_needs)
            if outputs is not None:
                return outputs
        from ..generated import ops as aten
        from ..memory_formats import contiguous_format

        result = aten.new_empty_strided(grad, self.base_sizes, self.base_strides)
        aten.copy_(result, grad)
        size, stride, offset = self.view_geometry
        grad_slice = aten.as_strided(result, size, stride, offset - self.base_offset)
        # PyTorch asks for a row-major copy explicitly (what a dispatch mode sees)
        outputs = self.fn.apply(
            (aten.clone(grad_slice, memory_format=contiguous_format),), fn_needs
        )
        if not fn_needs[0]:
            return (None,) + tuple(outputs[1:])
        if outputs[0] is None:
            aten.zero_(grad_slice)
        else:
            aten.copy_(grad_slice, outputs[0])
        return (result,) + tuple(outputs[1:])

    def _apply_plain(self, grad, fn_needs: tuple) -> Optional[tuple]:
        """``apply`` while nothing observes aten calls and without a graph to record: the
        same numpy work and the same tensors (the result at version 2, as after the full
        path's two copies), without the dispatcher. None, having done nothing, when the
        layouts are not the ordinary ones (the full path then runs, or raises)."""
        data = grad._data
        dtype = data.dtype
        sizes = self.base_sizes
        if dtype not in PLAIN_FLOATS or data.shape != sizes:
            return None
        size, stride, offset = self.view_geometry
        offset -= self.base_offset
        item = dtype.itemsize
        key = (sizes, self.base_strides, size, stride, item)
        layout = _layouts.get(key) or _layout(key)
        if layout is None or offset < 0:
            return None
        extent, byte_strides, view_byte_strides, span = layout
        if offset + span >= extent and span >= 0:
            return None  # beyond the base's memory: as_strided's error on the full path
        # as new_empty_strided and as_strided lay them out: one zeroed run of memory
        storage = np.zeros(max(extent, 1), dtype=dtype)
        result_data = np.ndarray(sizes, dtype, storage, 0, byte_strides)
        np.copyto(result_data, data)
        # the view, and the row-major clone of it that fn gets
        if span < 0:  # empty: it may start past the storage's end, as as_strided places it
            view = empty_view_at(storage, size, view_byte_strides, offset * item)
            # numpy would give the empty copy zero strides; PyTorch's are row-major
            grad_slice = laid_out(np.empty(0, dtype), size, contiguous_strides(size))
        else:
            view = np.ndarray(size, dtype, storage, offset * item, view_byte_strides)
            grad_slice = np.array(view, copy=True, order="C")
        fn = self.fn
        if fn.__class__ is _copy_backwards() and fn.src_scalar_type_.np == dtype:
            # CopyBackwards' formulas: zeros for the view's old value (written into the
            # slice below), the view's gradient itself for the source
            outputs = (None, _make(grad_slice) if fn_needs[1] else None)
        else:
            outputs = fn.apply((_make(grad_slice),), fn_needs)
        if not fn_needs[0]:
            return (None,) + tuple(outputs[1:])
        result = _make(result_data)
        written = outputs[0]
        if written is None:
            view.fill(0)
        elif (
            written.__class__ in _TENSORS
            and written._data.shape == view.shape
            and written._data.dtype is dtype
        ):
            np.copyto(view, written._data)
        else:  # broadcasting or casting: copy_'s own rules
            from ..generated import ops as aten

            grad_slice = _make(view)
            grad_slice._vc = result._vc = [1]
            aten.copy_(grad_slice, written)
            return (result,) + tuple(outputs[1:])
        result._vc = [2]
        return (result,) + tuple(outputs[1:])

    # Releasing drops fn; fn's own saved tensors stay alive for any saved
    # output that still points at it, and are freed when fn itself runs.
    _releasable_slots = ("fn",)

    def release_variables(self) -> None:
        self.fn = None


def _copy_backwards():
    global _COPY_BACKWARDS
    if _COPY_BACKWARDS is None:
        from ..generated.nodes import CopyBackwards

        _COPY_BACKWARDS = CopyBackwards
    return _COPY_BACKWARDS


_COPY_BACKWARDS = None
