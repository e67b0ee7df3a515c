"""Formula helpers of the matmul family of issue 15: the euclidean distance's backward
(PyTorch's _euclidean_dist_backward, built from opgrad ops so it is differentiable) and
the refusal of the derivative PyTorch leaves unimplemented (_cdist_backward's)."""

from __future__ import annotations

from ..generated import ops as aten

__all__ = ["euclidean_dist_backward", "not_implemented"]


def euclidean_dist_backward(grad, x1, x2, res):
    """(d x1, d x2) of ``res = _euclidean_dist(x1, x2)``; a zero distance gives a zero
    subgradient."""
    ratio = aten.div_Tensor(grad, res)
    ratio = aten.masked_fill__Scalar(ratio, aten.eq_Scalar(res, 0), 0)
    g1 = aten.sub_Tensor(
        aten.mul_Tensor(x1, aten.sum_dim_IntList(ratio, [-1], True)), aten.matmul(ratio, x2)
    )
    g2 = aten.sub_Tensor(
        aten.mul_Tensor(x2, aten.unsqueeze(aten.sum_dim_IntList(ratio, [-2], False), -1)),
        aten.matmul(aten.transpose_int(ratio, -2, -1), x1),
    )
    return g1, g2


def not_implemented(name: str):
    """PyTorch's not_implemented("<op>") formula: that derivative is missing in PyTorch."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
