"""Views and in-place ops on them: creation metadata, checks, CopySlices, regeneration.

A view records its root base (``_base``), shares the base's version counter,
and remembers how it was created (PyTorch's CreationMeta). An in-place op on
a view rewrites the base's history with a CopySlices node; a view whose base
changed in place gets an AsStridedBackward0 grad_fn from the base the next
time its grad_fn is read.
"""

from __future__ import annotations

from .._tls import state as _tls
from ..numpy_kernels import storage_offset
from ..tensor import Tensor, _View
from . import anomaly
from .hooks import move_retains_grad
from .node import next_edge

# PyTorch's CreationMeta values.
DEFAULT = 0
IN_CUSTOM_FUNCTION = 1
MULTI_OUTPUT_NODE = 2
NO_GRAD_MODE = 3
INFERENCE_MODE = 4


# ---- geometry ---------------------------------------------------------------------------


def geometry(tensor) -> tuple:
    """PyTorch's TensorGeometry: (sizes, strides in elements, storage offset)."""
    data = tensor._data
    itemsize = data.itemsize
    return (data.shape, tuple(s // itemsize for s in data.strides), storage_offset(data))


# ---- creating views ----------------------------------------------------------------------


def as_view(base, view, creation_meta: int = DEFAULT):
    """Make ``view`` a view of ``base``'s root, sharing its version counter."""
    root = base._base
    if root is None:
        root = base
    elif creation_meta == DEFAULT:
        # A view of a view inherits a non-default creation meta.
        creation_meta = base._creation_meta
    if not _tls.grad_enabled:
        # no_grad decides over a multi-output op's meta, as PyTorch's generated code does
        creation_meta = INFERENCE_MODE if _tls.inference_mode else NO_GRAD_MODE
    if type(view) is Tensor:
        view.__class__ = _View  # tensor subclasses keep their own class
    if view._keys is not base._keys:
        view._keys = base._keys  # a view made in inference mode is as normal as its base
    view._base = root
    vc = base._vc
    if vc is None:
        vc = base._vc = [0]
    view._vc = vc
    view._attr_version = vc[0]
    view._creation_meta = creation_meta
    return view


def as_views(base, views, creation_meta: int = MULTI_OUTPUT_NODE):
    """The outputs of a multi-output view op (unbind, split)."""
    return tuple(as_view(base, v, creation_meta) for v in views)


def refresh_view_grad_fn(view) -> None:
    """The base changed in place since ``view``'s grad_fn was computed: redo it from the base."""
    base = view._base
    if not base._rg:
        view._attr_version = view._vc[0]
        return
    meta = view._creation_meta
    if meta != DEFAULT:
        raise RuntimeError(_modified_view_message(view, meta, indirect=True))
    from ..generated import nodes

    fn = nodes.AsStridedBackward0()
    size, stride, offset = geometry(view)
    fn.self_geometry_ = geometry(base)
    fn.size_ = size
    fn.stride_ = stride
    fn.storage_offset_ = offset
    fn._next_edges = (next_edge(base),)
    fn._in_meta = ((size, view._data.dtype),)
    view._grad_fn = fn  # the setter records the current version
    view._rg = True
    view.__dict__.pop("_output_nr", None)
    if view._meta is not None:
        move_retains_grad(view, fn)


_CUSTOM_FUNCTION_VIEW = (
    " This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)


def _modified_view_message(view, meta: int, indirect: bool) -> str:
    """PyTorch's words for an in-place write its creation meta forbids: the view (and its
    grad_fn, if it has one), how it was made, and what to do instead."""
    from ..tensor import _grad_fn_slot

    modified = "its base or another view of its base has been" if indirect else "is being"
    grad_fn = _grad_fn_slot.__get__(view)
    if meta in (NO_GRAD_MODE, INFERENCE_MODE) or grad_fn is None:
        if grad_fn is not None:
            prefix = (
                f"Output {view._output_nr} of {_op_name(grad_fn)} is a view of a view which was "
                "created in"
            )
        else:
            prefix = "A view was created in"
        if meta == INFERENCE_MODE:
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = (
                f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
            )
    else:
        message = (
            f"Output {view._output_nr} of {_op_name(grad_fn)} is a view and {modified} modified "
            "inplace."
        )
    if meta == NO_GRAD_MODE and view.__dict__.get("_from_custom_function", False):
        meta = IN_CUSTOM_FUNCTION  # made by a custom Function in no_grad mode
    if meta == MULTI_OUTPUT_NODE:
        return (
            message + " This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should replace "
            "the inplace operation by an out-of-place one."
        )
    if meta in (NO_GRAD_MODE, INFERENCE_MODE):
        block = "no_grad" if meta == NO_GRAD_MODE else "inference_mode"
        return (
            message + " Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            f"inside the {block} block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked)."
        )
    if meta == IN_CUSTOM_FUNCTION:
        return message + _CUSTOM_FUNCTION_VIEW
    return message


# ---- in-place ops ------------------------------------------------------------------------


def _op_name(node) -> str:
    import re

    return re.sub(r"Backward\d*$", "", node.name()) if node is not None else "unknown"


def check_inplace(tensor) -> None:
    """PyTorch's checks before an in-place op records history on ``tensor``."""
    base = tensor._base
    if base is not None:
        meta = tensor._creation_meta
        if meta != DEFAULT:
            raise RuntimeError(_modified_view_message(tensor, meta, indirect=False))
        if base._grad_fn is None and base._rg:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    elif tensor._grad_fn is None and tensor._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def rebase_history(tensor, grad_fn, metadata_only: bool = False) -> None:
    """After an in-place op, ``tensor`` is the output of ``grad_fn``.

    On a view, the base's history is rewritten instead: its new grad_fn is a
    CopySlices wrapping ``grad_fn``, and the view's grad_fn is regenerated
    from it. In-place view ops (``squeeze_``) change only metadata: the
    view's own history grows, the base's is untouched.
    """
    base = tensor._base
    if base is not None and not metadata_only:
        from .copy_slices import CopySlices

        copy_slices = CopySlices(base, tensor._data, grad_fn)
        if anomaly.enabled:
            anomaly.record_forward(copy_slices)
        base._grad_fn = copy_slices
        base._rg = True
        if base._output_nr:
            base._output_nr = 0
        # The view's grad_fn is rebuilt from the new base history when next read.
        tensor._attr_version = -1
        return
    tensor._grad_fn = grad_fn
    if tensor._output_nr:
        tensor._output_nr = 0
    tensor._rg = True
    grad_fn._in_meta = ((tensor._data.shape, tensor._data.dtype),)
    if tensor._meta is not None:
        move_retains_grad(tensor, grad_fn)
    if anomaly.enabled:
        anomaly.record_forward(grad_fn)
