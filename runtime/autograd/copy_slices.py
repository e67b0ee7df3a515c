"""CopySlices: the grad_fn a base gets when one of its views is modified in place."""

from __future__ import annotations

from .node import Node, gradient_edge


class CopySlices(Node):
    """Backward of "write ``fn``'s result into a slice of the base".

    The base's gradient passes through unchanged outside the view; inside it,
    ``fn`` (the in-place op's own node) turns the view's gradient into the
    gradient of the view's old value and of ``fn``'s other inputs.
    """

    __slots__ = ("fn", "base_sizes", "base_strides", "base_offset", "view_geometry")

    def __init__(self, base, view, fn: Node) -> None:
        from .views import geometry

        Node.__init__(self)
        self.fn = fn
        self.base_sizes, self.base_strides, self.base_offset = geometry(base)
        self.view_geometry = geometry(view)
        # Edge 0 is the base's history before the op; the rest are fn's other inputs.
        self._next_edges = (gradient_edge(base),) + tuple(fn._next_edges[1:])
        self._in_meta = ((base._data.shape, base._data.dtype),)
        fn._in_meta = ((view._data.shape, view._data.dtype),)

    def name(self) -> str:
        return "opgrad::autograd::CopySlices"

    def apply(self, grads: tuple, needs) -> tuple:
        from ..generated import ops as aten

        if self.fn is None:
            from .saved_variable import ERR_FREED

            raise RuntimeError(ERR_FREED)
        grad = grads[0]
        if grad is None:
            return (None,) * len(self._next_edges)
        result = aten.new_empty_strided(grad, self.base_sizes, self.base_strides)
        aten.copy_(result, grad)
        size, stride, offset = self.view_geometry
        grad_slice = aten.as_strided(result, size, stride, offset - self.base_offset)
        # The view's own slot is needed exactly when the base's old history is.
        fn_needs = tuple(bool(n) for n in needs)
        outputs = self.fn.apply((aten.clone(grad_slice),), fn_needs)
        if not fn_needs[0]:
            return (None,) + tuple(outputs[1:])
        if outputs[0] is None:
            aten.zero_(grad_slice)
        else:
            aten.copy_(grad_slice, outputs[0])
        return (result,) + tuple(outputs[1:])

    # Releasing drops fn; fn's own saved tensors stay alive for any saved
    # output that still points at it, and are freed when fn itself runs.
    _releasable_slots = ("fn",)

    def release_variables(self) -> None:
        self.fn = None
