"""``x[index] = value`` on the plain path: the view, the copy and the history in one frame.

The full path makes a select/slice view of ``x`` per index item, runs ``copy_`` on it
through the Autograd, ADInplaceOrView and CPU kernels, and rebases the history of ``x``'s
root onto a CopySlices node. While nothing can observe aten calls (``_tls.plain``), and
for the common shape of the call (a tensor value of the same plain float dtype and of
the view's shape, int and slice index items, fresh tensors without a non-default
creation meta, no overlap), ``plain_setitem`` does the same in one frame: it consumes
the sequence numbers the full path's nodes would take, writes the values, bumps the
version and records the same CopyBackwards and CopySlices nodes. Anything else returns
False before touching anything, and the full path runs (and raises torch's errors).

The intermediate views and their SelectBackward0 / SliceBackward0 nodes are never made:
nothing can reach them, as the full path's view is dropped at the end of the statement
and CopySlices routes the view's gradient to the root, never through CopyBackwards'
first edge (which is therefore None here).
"""

from __future__ import annotations

from numpy import copyto, may_share_memory

from .._tls import state as _tls
from ..generated.nodes import CopyBackwards
from ..numpy_kernels import INT64_MAX, storage_offset
from ..numpy_kernels import _slice_bounds as slice_bounds
from ..plain import PLAIN_FLOATS, PLAIN_KEYS
from ..tensor import Tensor, _View
from .copy_slices import CopySlices
from .node import next_edge, sequence_nr_counter
from .views import DEFAULT

_new = object.__new__
_sequence = sequence_nr_counter
_TENSORS = (Tensor, _View)
_INT64_MIN = -(2**63)
_EVERYTHING = slice(None)


def _bound(value) -> bool:
    """A slice field the plain path takes: None or an int64 (not a bool, not numpy's)."""
    return value is None or (value.__class__ is int and _INT64_MIN <= value <= INT64_MAX)


def plain_setitem(self, index, value) -> bool:
    """``self[index] = value`` as the full path would do it, or False (having done nothing)
    when the call is not the common case. The caller has checked ``_tls.plain``."""
    if (
        value.__class__ not in _TENSORS
        or self.__class__ not in _TENSORS
        or self._keys != PLAIN_KEYS
        or value._keys != PLAIN_KEYS
    ):
        return False
    data = self._data
    source = value._data
    if source.dtype is not data.dtype or data.dtype not in PLAIN_FLOATS:
        return False
    items = index if index.__class__ is tuple else (index,)
    if len(items) > data.ndim:
        return False  # too many indices (and a 0-dim self): the full path's IndexError
    # The view, as the full path's select/slice kernels make it, and how far its first
    # element lies from self's (in bytes, numpy's own arithmetic for a non-empty view).
    view = data
    dim = 0
    views = 0
    shift = 0
    for item in items:
        if item.__class__ is int:
            size = view.shape[dim]
            if not -size <= item < size:
                return False  # the full path's IndexError
            if item < 0:
                item += size
            shift += item * view.strides[dim]
            view = view[(_EVERYTHING,) * dim + (item, Ellipsis)]
        elif item.__class__ is slice:
            start, stop, step = item.start, item.stop, item.step
            if not (_bound(start) and _bound(stop) and _bound(step)):
                return False
            start = 0 if start is None else start
            stop = INT64_MAX if stop is None else stop
            step = 1 if step is None else step
            if step <= 0:
                return False  # the full path's ValueError
            if start == 0 and stop == INT64_MAX and step == 1:
                dim += 1  # a ':' in a tuple makes no view
                continue
            start, stop = slice_bounds(view.shape[dim], start, stop, step)
            shift += start * view.strides[dim]
            view = view[(_EVERYTHING,) * dim + (slice(start, stop, step),)]
            dim += 1
        else:
            return False
        views += 1
    if (
        not views  # x[:] = v copies into x itself: the full path's copy_ on x
        or view.size == 0
        or view.shape != source.shape
        or not view.flags.writeable
        or may_share_memory(view, source)
    ):
        return False
    root = self._base
    if root is None:
        root = self
    elif self._creation_meta != DEFAULT:
        return False  # the new view inherits it (recording history then raises)
    grad_fn = None
    if _tls.grad_enabled:
        self_rg = self._rg
        if self_rg or value._rg:
            if root._grad_fn is None and root._rg:
                return False  # a view of a leaf that requires grad: the full path's error
            if self_rg:
                # the view ops' nodes; the first reads self's history (a view of a base
                # modified in place regenerates its grad_fn then, as in the full path)
                next(_sequence)
                self._grad_fn
                for _ in range(views - 1):
                    next(_sequence)
            grad_fn = _new(CopyBackwards)
            grad_fn._seq = next(_sequence)
            grad_fn._next_edges = (None, next_edge(value))
            grad_fn.src_scalar_type_ = value.dtype
    copyto(view, source)
    vc = self._vc
    if vc is None:
        vc = self._vc = [0]
    vc[0] += 1
    if grad_fn is not None:
        offset = storage_offset(data) + shift // data.itemsize
        history = CopySlices(root, view, grad_fn, offset)
        root._grad_fn = history
        root._rg = True
        if root._output_nr:
            root._output_nr = 0
    return True
