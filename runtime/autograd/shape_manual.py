"""Formula helpers of the shape ops and rounded division, re-exported by
functions_manual. Each is written with opgrad ops, so it is differentiable itself."""

from __future__ import annotations

from typing import Optional, Sequence

from ..generated import ops as aten

__all__ = ["block_diag_backward", "div_tensor_self_backward", "roll_backward"]


def roll_backward(grad, shifts: Sequence[int], dims: Sequence[int]):
    """Roll back: the opposite shifts, in the reverse order."""
    return aten.roll(grad, [-s for s in reversed(shifts)], list(reversed(dims)))


def block_diag_backward(grad, sizes, dtypes_):
    """Each input's block of ``grad``, in the input's shape and dtype (empty 1-d inputs get
    empty gradients)."""
    from .functions_manual import to_copy_backward

    result = []
    row = col = 0
    for shape, dtype in zip(sizes, dtypes_):
        if len(shape) == 1 and shape[0] == 0:
            result.append(aten.zeros((0,), dtype=grad.dtype))
            continue
        rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = aten.slice_Tensor(grad, 0, row, row + rows, 1)
        block = aten.slice_Tensor(block, 1, col, col + cols, 1)
        if len(shape) == 1:
            block = aten.squeeze_dim(block, 0)
        elif not shape:
            block = aten.squeeze_dim(aten.squeeze_dim(block, -1), -1)
        result.append(to_copy_backward(block, dtype))
        row += rows
        col += cols
    return result


def div_tensor_self_backward(grad, other, self, rounding_mode: Optional[str] = None):
    """``grad / other``; zeros of self's dtype for a rounded quotient."""
    if rounding_mode is not None:
        return aten.zeros_like(grad, dtype=self.dtype)
    return grad / other
