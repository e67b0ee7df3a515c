"""Functions PyTorch writes in Python over its ops (torch.functional): they take their
tensors as ``*tensors`` and hand the aten op one list."""

from __future__ import annotations

from typing import Optional, Sequence

from .generated import ops as aten
from .overrides import overridable
from .tensor import Size

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "einsum",
    "meshgrid",
    "tensordot",
    "unique",
    "unique_consecutive",
]


def _one_or_many(tensors: tuple):
    """``f(t)`` and ``f([t, u])`` and ``f(t, u)``, as torch's ``*tensors`` functions read
    them: one tensor, or a sequence."""
    return tensors[0] if len(tensors) == 1 else tensors


@overridable(builtin=False, qualname="block_diag")
def block_diag(*tensors):
    return aten.block_diag(list(tensors))


@overridable(builtin=False, qualname="broadcast_tensors")
def broadcast_tensors(*tensors):
    return tuple(aten.broadcast_tensors(list(_flat(tensors))))


def _flat(tensors: tuple):
    return tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors


@overridable(builtin=False, qualname="cartesian_prod")
def cartesian_prod(*tensors):
    return aten.cartesian_prod(list(tensors))


@overridable(builtin=False, qualname="meshgrid")
def meshgrid(*tensors, indexing: Optional[str] = None):
    tensors = list(_flat(tensors))
    if indexing is None:
        return tuple(aten.meshgrid(tensors))
    return tuple(aten.meshgrid_indexing(tensors, indexing=indexing))


def _atleast(single, sequence):
    def apply(*tensors):
        given = _one_or_many(tensors)
        if isinstance(given, (list, tuple)):
            return tuple(sequence(list(given)))
        return single(given)

    return apply


atleast_1d = overridable(
    _atleast(aten.atleast_1d, aten.atleast_1d_Sequence), builtin=False, qualname="atleast_1d"
)
atleast_2d = overridable(
    _atleast(aten.atleast_2d, aten.atleast_2d_Sequence), builtin=False, qualname="atleast_2d"
)
atleast_3d = overridable(
    _atleast(aten.atleast_3d, aten.atleast_3d_Sequence), builtin=False, qualname="atleast_3d"
)


def broadcast_shapes(*shapes) -> Size:
    """The shape the given shapes (ints or sequences of ints) broadcast to, without making
    any tensor."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                f"got {shape}"
            )
    common = [1] * max((len(s) for s in shapes), default=0)
    for position, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            size = shape[i]
            if size == common[i]:
                continue
            if common[i] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = size
            elif size != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {i}! Mismatching "
                    f"argument at index {position} had {shape}; but expected shape should be "
                    f"broadcastable to {common}"
                )
    return Size(common)


def _chosen(values, inverse, counts, return_inverse, return_counts):
    """torch.unique's result: the values alone, or a tuple with the inverse and/or counts
    asked for."""
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def unique(
    input,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Optional[int] = None,
):
    """torch.unique: _unique2 over the flattened tensor, unique_dim along a dim."""
    if dim is not None:
        values, inverse, counts = aten.unique_dim(
            input, dim, sorted, bool(return_inverse), bool(return_counts)
        )
    else:
        values, inverse, counts = aten._unique2(
            input, sorted, bool(return_inverse), bool(return_counts)
        )
    return _chosen(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(
    input, return_inverse: bool = False, return_counts: bool = False, dim: Optional[int] = None
):
    """torch.unique_consecutive: one unique_consecutive call, with or without dim."""
    values, inverse, counts = aten.unique_consecutive(
        input, bool(return_inverse), bool(return_counts), dim
    )
    return _chosen(values, inverse, counts, return_inverse, return_counts)


# the plain functions (Tensor's methods call them too), then torch's overridable ones
_unique, _unique_consecutive = unique, unique_consecutive
unique = overridable(_unique, builtin=False, qualname="unique")
unique_consecutive = overridable(_unique_consecutive, builtin=False, qualname="unique_consecutive")


# ---- the matmul family (issue 15) ----------------------------------------------------------


@overridable(builtin=False, qualname="tensordot")
def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: ``dims`` as a count (the last ``dims`` of a with the first of b), two
    lists, or a tensor of either, handed to the aten op as two lists."""
    from .tensor import Tensor

    if isinstance(dims, bool) or not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}"
        )
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.size()[0] != 2:
                raise AssertionError(
                    f"dims tensor must have size 2 in first dimension, got {dims.size()[0]}"
                )
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = int(dims.item())
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    if out is None:
        return aten.tensordot(a, b, dims_a, dims_b)
    return aten.tensordot_out(a, b, dims_a, dims_b, out=out)


@overridable(builtin=False, qualname="chain_matmul")
def chain_matmul(*matrices, out=None):
    if out is None:
        return aten.chain_matmul(list(matrices))
    return aten.chain_matmul_out(list(matrices), out=out)


_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


@overridable(builtin=False, qualname="cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return aten.cdist(x1, x2, p, _CDIST_MODES[compute_mode])


def _einsum_subscript(n) -> str:
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


@overridable(builtin=False, qualname="einsum")
def einsum(*args):
    """torch.einsum: an equation and operands (or one list of them), or the sublist format
    (operand, subscripts, ..., [output subscripts]). opt_einsum is not used: the operands
    contract left to right, as torch without it."""
    from .tensor import Tensor

    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_einsum_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_einsum_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    return aten.einsum(equation, list(operands))
