"""Backward and forward-mode helpers of the gather, scatter and index ops, re-exported by
functions_manual (PyTorch's FunctionsManual and its CompositeImplicit backward ops)."""

from __future__ import annotations

from ..generated import ops as aten

__all__ = [
    "gather_backward",
    "index_select_backward",
    "index_copy_source_backward",
    "index_fill_value_backward",
    "scatter_reduce_backward",
    "scatter_reduce_jvp",
    "index_reduce_backward",
]


def gather_backward(grad, self, dim: int, index, sparse_grad: bool):
    """Each gradient element added back into the place of self it was gathered from."""
    if sparse_grad:
        # PyTorch hands back a sparse COO gradient; opgrad has the strided layout only
        raise NotImplementedError("gather(sparse_grad=True): opgrad has no sparse tensors")
    return aten.scatter_add(aten.new_zeros(grad, self.shape), dim, index, grad)


def index_select_backward(grad, self_sizes, dim: int, index):
    return aten.index_add(aten.new_zeros(grad, list(self_sizes)), dim, index, grad)


def index_copy_source_backward(grad, dim: int, index, source):
    """The slices of grad that index names, shaped as source (a 0-dim source takes a 0-dim
    index's one slice)."""
    if source.dim() > 0:
        return aten.expand_as(aten.index_select(grad, dim, index), source)
    return aten.index_select(grad, dim, aten.squeeze_dim(index, 0))


def index_fill_value_backward(grad, dim: int, index):
    """The sum of the slices that index names, each distinct one once."""
    distinct = aten._unique(index, False)[0]
    return aten.sum(aten.index_select(grad, dim, distinct))


def scatter_reduce_backward(grad, self, dim: int, index, src, reduce: str, include_self, result):
    """The gradients of self and src through scatter_reduce (PyTorch's formulas: ties of
    amax/amin share the gradient evenly; prod divides out each factor, zeros computed apart)."""
    if reduce in ("sum",):
        grad_self = grad
        grad_src = aten.gather(grad, dim, index)
    elif reduce == "prod":
        masked_self = aten.masked_fill_Scalar(self, aten.eq_Scalar(self, 0), 1)
        masked_self_result = aten.scatter_reduce_two(
            masked_self, dim, index, src, reduce, include_self=include_self
        )
        grad_self = aten.div_Tensor(aten.mul_Tensor(grad, masked_self_result), masked_self)
        src_zero = aten.eq_Scalar(src, 0)
        src_num_zeros = aten.gather(
            aten.scatter_add(
                aten.zeros_like(self), dim, index, aten._to_copy(src_zero, dtype=self.dtype)
            ),
            dim,
            index,
        )
        src_single_zero = aten.logical_and(src_zero, aten.eq_Scalar(src_num_zeros, 1))
        masked_src = aten.masked_fill_Scalar(src, src_single_zero, 1)
        masked_src_result = aten.scatter_reduce_two(
            self, dim, index, masked_src, reduce, include_self=include_self
        )
        grad_src = aten.where_self(
            src_single_zero,
            aten.gather(aten.mul_Tensor(grad, masked_src_result), dim, index),
            aten.div_Tensor(
                aten.gather(aten.mul_Tensor(grad, result), dim, index),
                aten.masked_fill_Scalar(src, src_zero, 1),
            ),
        )
    elif reduce == "mean":
        counts = aten.ones_like(grad) if include_self else aten.zeros_like(grad)
        counts = aten.scatter_add(counts, dim, index, aten.ones_like(src))
        counts = aten.masked_fill_Scalar(counts, aten.eq_Scalar(counts, 0), 1)
        grad_self = aten.div_Tensor(grad, counts)
        grad_src = aten.div_Tensor(aten.gather(grad, dim, index), aten.gather(counts, dim, index))
    elif reduce in ("amax", "amin", "max", "min"):
        # the gradient is shared evenly among the values equal to the result
        value = aten.gather(result, dim, index)
        self_is_result = aten.eq_Tensor(self, result)
        src_is_result = aten.eq_Tensor(src, value)
        ties = aten.scatter_add(
            aten._to_copy(self_is_result, dtype=self.dtype),
            dim,
            index,
            aten._to_copy(src_is_result, dtype=self.dtype),
        )
        grad_distributed = aten.div_Tensor(grad, ties)
        grad_self = aten.mul_Tensor(self_is_result, grad_distributed)
        grad_src = aten.mul_Tensor(src_is_result, aten.gather(grad_distributed, dim, index))
    else:
        raise RuntimeError(
            "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
            f"{reduce}."
        )
    if not include_self:
        grad_self = aten.scatter_value(grad_self, dim, index, 0)
    return grad_self, grad_src


def scatter_reduce_jvp(self_p, self_t, dim: int, index, src_p, src_t, reduce, include_self, result):
    """scatter_reduce's tangent: linear for sum and mean; for amax/amin the mean tangent of
    the values equal to the result; none for prod (PyTorch leaves it undefined)."""
    if reduce in ("sum", "mean"):
        return aten.scatter_reduce_two(self_t, dim, index, src_t, reduce, include_self=include_self)
    if reduce in ("amax", "amin", "max", "min"):
        gathered = aten.gather(result, dim, index)
        mask_self = aten.eq_Tensor(self_p, result)
        mask_src = aten.eq_Tensor(src_p, gathered)
        masked_src_t = aten.where_ScalarOther(mask_src, src_t, 0.0)
        count = aten.scatter_reduce_two(
            aten._to_copy(mask_self, dtype=self_t.dtype),
            dim,
            index,
            aten._to_copy(mask_src, dtype=self_t.dtype),
            "sum",
            include_self=include_self,
        )
        summed = aten.scatter_reduce_two(
            aten.where_ScalarOther(mask_self, self_t, 0.0),
            dim,
            index,
            masked_src_t,
            "sum",
            include_self=include_self,
        )
        return aten.div_Tensor(summed, count)
    return None


def index_reduce_backward(grad, self, dim: int, index, source, reduce: str, include_self, result):
    """The gradients of self and source through index_reduce (PyTorch's formulas: ties of
    amax/amin share the gradient evenly; prod divides out each factor, a slice's single zero
    computed apart). PyTorch makes source's gradient refuse double backward where two zeros
    meet in one place; opgrad's differentiates it as written (it is 0 there)."""
    if reduce == "prod":
        masked_self = aten.masked_fill_Scalar(self, aten.eq_Scalar(self, 0), 1)
        masked_self_result = aten.index_reduce(
            masked_self, dim, index, source, reduce, include_self=include_self
        )
        grad_self = aten.div_Tensor(aten.mul_Tensor(grad, masked_self_result), masked_self)
        src_zero = aten.eq_Scalar(source, 0)
        src_num_zeros = aten.index_select(
            aten.index_add(
                aten.zeros_like(self), dim, index, aten._to_copy(src_zero, dtype=self.dtype)
            ),
            dim,
            index,
        )
        src_single_zero = aten.bitwise_and_Tensor(src_zero, aten.eq_Scalar(src_num_zeros, 1))
        masked_src = aten.masked_fill_Scalar(source, src_single_zero, 1)
        masked_src_result = aten.index_reduce(
            self, dim, index, masked_src, reduce, include_self=include_self
        )
        grad_src = aten.where_self(
            src_single_zero,
            aten.index_select(aten.mul_Tensor(grad, masked_src_result), dim, index),
            aten.div_Tensor(
                aten.index_select(aten.mul_Tensor(grad, result), dim, index),
                aten.masked_fill_Scalar(source, src_zero, 1),
            ),
        )
    elif reduce == "mean":
        counts = aten.ones_like(grad) if include_self else aten.zeros_like(grad)
        counts = aten.index_add(counts, dim, index, aten.ones_like(source))
        counts = aten.masked_fill__Scalar(counts, aten.eq_Scalar(counts, 0), 1)
        grad_self = aten.div_Tensor(grad, counts)
        grad_src = aten.div_Tensor(
            aten.index_select(grad, dim, index), aten.index_select(counts, dim, index)
        )
    elif reduce in ("amax", "amin"):
        # the gradient is shared evenly among the values equal to the result
        value = aten.index_select(result, dim, index)
        self_is_result = aten._to_copy(aten.eq_Tensor(self, result), dtype=self.dtype)
        source_is_result = aten._to_copy(aten.eq_Tensor(source, value), dtype=self.dtype)
        ties = aten.index_add(self_is_result, dim, index, source_is_result)
        grad_distributed = aten.div_Tensor(grad, ties)
        grad_self = aten.mul_Tensor(self_is_result, grad_distributed)
        grad_src = aten.mul_Tensor(
            source_is_result, aten.index_select(grad_distributed, dim, index)
        )
    else:
        raise RuntimeError(
            "Expected 'reduce' to be one of 'prod', 'amax', 'amin' or 'mean' but got " f"{reduce}."
        )
    if not include_self:
        grad_self = aten.index_fill_int_Scalar(grad_self, dim, index, 0)
    return grad_self, grad_src
