"""CompositeImplicitAutograd ops of the shape family, written with other ops as PyTorch
writes them, so a dispatch mode sees the same calls and the graph has the same nodes:
fliplr/flipud (flip), tile (repeat), diag (diag_embed or diagonal_copy), diagflat,
movedim/moveaxis (permute), swapaxes/swapdims (transpose), ravel (reshape), the stacks
(cat), the splits (slice), atleast_Nd (view/unsqueeze), broadcast_to (expand), meshgrid
(view + expand) and cartesian_prod (meshgrid + stack)."""

from __future__ import annotations

import warnings
from typing import Sequence

from . import dtypes
from . import numpy_kernels as k
from .generated import ops as aten
from .memory_formats import contiguous_format

__all__ = [
    "atleast_1d",
    "atleast_1d_sequence",
    "atleast_2d",
    "atleast_2d_sequence",
    "atleast_3d",
    "atleast_3d_sequence",
    "broadcast_to",
    "cartesian_prod",
    "column_stack",
    "column_stack_out",
    "diag",
    "diag_out",
    "diagflat",
    "dsplit_array",
    "dsplit_int",
    "dstack",
    "dstack_out",
    "fliplr",
    "flipud",
    "hsplit_array",
    "hsplit_int",
    "hstack",
    "hstack_out",
    "meshgrid",
    "meshgrid_indexing",
    "movedim_int",
    "movedim_intlist",
    "ravel",
    "swapaxes",
    "swapaxes_",
    "tensor_split_indices",
    "tensor_split_sections",
    "tensor_split_tensor",
    "tile",
    "vsplit_array",
    "vsplit_int",
    "vstack",
    "vstack_out",
]


def _ndim(t) -> int:
    return t._data.ndim


def fliplr(self):
    if _ndim(self) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return aten.flip(self, [1])


def flipud(self):
    if _ndim(self) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return aten.flip(self, [0])


def tile(self, dims: Sequence[int]):
    dims = list(dims)
    # fewer dims than the tensor has: the leading ones repeat once
    return aten.repeat(self, [1] * (_ndim(self) - len(dims)) + dims)


def diag(self, diagonal: int = 0):
    if _ndim(self) == 1:
        return aten.diag_embed(self, diagonal)
    if _ndim(self) == 2:
        return aten.diagonal_copy(self, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {_ndim(self)}D")


def diag_out(self, diagonal: int, out):
    if _ndim(self) == 1:
        return aten.diag_embed_out(self, diagonal, out=out)
    if _ndim(self) == 2:
        return aten.diagonal_copy_out(self, diagonal, out=out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {_ndim(self)}D")


def _flattened(self):
    """``self.contiguous().view(-1)``: a copy first only when self is not contiguous."""
    if not self._data.flags.c_contiguous:
        self = aten.clone(self, memory_format=contiguous_format)
    return aten.view(self, [-1])


def diagflat(self, offset: int = 0):
    return aten.diag_embed(_flattened(self), offset)


def _movedim_check(source, destination, ndim: int):
    if len(source) != len(destination):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(source)} dims) should contain the same number of dims as destination "
            f"({list(destination)} dims)"
        )
    src = [k.wrap_dim(d, ndim) for d in source]
    dst = [k.wrap_dim(d, ndim) for d in destination]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    return src, dst


def movedim_intlist(self, source: Sequence[int], destination: Sequence[int]):
    ndim = _ndim(self)
    src, dst = _movedim_check(list(source), list(destination), ndim)
    # the moved dims take their places; the others keep their order in the rest
    order = [-1] * max(ndim, 1)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(ndim) if i not in src)
    order = [o if o != -1 else next(rest) for o in order[:ndim]]
    return aten.permute(self, order)


def movedim_int(self, source: int, destination: int):
    return movedim_intlist(self, [source], [destination])


def swapaxes(self, axis0: int, axis1: int):
    return aten.transpose_int(self, axis0, axis1)


def swapaxes_(self, axis0: int, axis1: int):
    return aten.transpose_(self, axis0, axis1)


def ravel(self):
    return _flattened(self)


def atleast_1d(self):
    return aten.reshape(self, [1]) if _ndim(self) == 0 else self


def atleast_2d(self):
    if _ndim(self) == 0:
        return aten.reshape(self, [1, 1])
    return aten.unsqueeze(self, 0) if _ndim(self) == 1 else self


def atleast_3d(self):
    n = _ndim(self)
    if n == 0:
        return aten.reshape(self, [1, 1, 1])
    if n == 1:
        return aten.unsqueeze(aten.unsqueeze(self, 0), -1)
    return aten.unsqueeze(self, -1) if n == 2 else self


def atleast_1d_sequence(tensors):
    return tuple([atleast_1d(t) for t in tensors])


def atleast_2d_sequence(tensors):
    return tuple([atleast_2d(t) for t in tensors])


def atleast_3d_sequence(tensors):
    return tuple([atleast_3d(t) for t in tensors])


def _nonempty(tensors, name: str):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _hstack_parts(tensors):
    _nonempty(tensors, "hstack")
    parts = atleast_1d_sequence(tensors)
    return parts, 0 if _ndim(parts[0]) == 1 else 1


def hstack(tensors):
    parts, dim = _hstack_parts(tensors)
    return aten.cat(parts, dim)


def hstack_out(tensors, out):
    parts, dim = _hstack_parts(tensors)
    return aten.cat_out(parts, dim, out=out)


def vstack(tensors):
    _nonempty(tensors, "vstack")
    return aten.cat(atleast_2d_sequence(tensors), 0)


def vstack_out(tensors, out):
    _nonempty(tensors, "vstack")
    return aten.cat_out(atleast_2d_sequence(tensors), 0, out=out)


def dstack(tensors):
    _nonempty(tensors, "dstack")
    return aten.cat(atleast_3d_sequence(tensors), 2)


def dstack_out(tensors, out):
    _nonempty(tensors, "dstack")
    return aten.cat_out(atleast_3d_sequence(tensors), 2, out=out)


def _columns(tensors):
    _nonempty(tensors, "column_stack")
    return [aten.reshape(t, [t._data.size, 1]) if _ndim(t) <= 1 else t for t in tensors]


def column_stack(tensors):
    return aten.cat(_columns(tensors), 1)


def column_stack_out(tensors, out):
    return aten.cat_out(_columns(tensors), 1, out=out)


def _slices(self, bounds, dim: int):
    """The pieces of ``self`` between consecutive ``bounds`` along ``dim``."""
    # a tuple, as PyTorch's list-returning ops give Python
    return tuple(
        [aten.slice_Tensor(self, dim, start, end, 1) for start, end in zip(bounds, bounds[1:])]
    )


def tensor_split_sections(self, sections: int, dim: int = 0):
    if _ndim(self) == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    d = k.wrap_dim(dim, _ndim(self))
    size = self._data.shape[d]
    # the first size % sections pieces are one longer
    small, extra = divmod(size, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + small + (1 if i < extra else 0))
    return _slices(self, bounds, d)


def tensor_split_indices(self, indices: Sequence[int], dim: int = 0):
    if _ndim(self) == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = k.wrap_dim(dim, _ndim(self))
    size = self._data.shape[d]
    bounds = [0] + list(indices) + [size]
    return _slices(self, bounds, d)


def tensor_split_tensor(self, tensor_indices_or_sections, dim: int = 0):
    split = tensor_indices_or_sections
    if split._data.dtype.kind not in "iu" or split._data.dtype.itemsize != 8:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
            + dtypes.scalar_type_name(split._data.dtype)
        )
    if split._data.ndim > 1:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
            f"one-dimensional tensor, but got a tensor with {split._data.ndim} dims"
        )
    if split._data.ndim == 0:
        return tensor_split_sections(self, int(split.item()), dim)  # item(): as torch reads it
    return tensor_split_indices(self, [int(i) for i in split._data], dim)


def _split_dim(self, name: str, least: int, dim: int) -> int:
    if _ndim(self) < least:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
            f"with {_ndim(self)} dimensions!"
        )
    return dim


def _split_sections(self, name: str, sections: int, dim: int):
    size = self._data.shape[dim]
    if sections == 0 or size % sections:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {size} is not divisible by the split_size {sections}!"
        )
    return tensor_split_sections(self, sections, dim)


def hsplit_int(self, sections: int):
    dim = _split_dim(self, "hsplit", 1, 0 if _ndim(self) == 1 else 1)
    return _split_sections(self, "hsplit", sections, dim)


def hsplit_array(self, indices: Sequence[int]):
    dim = _split_dim(self, "hsplit", 1, 0 if _ndim(self) == 1 else 1)
    return tensor_split_indices(self, indices, dim)


def vsplit_int(self, sections: int):
    return _split_sections(self, "vsplit", sections, _split_dim(self, "vsplit", 2, 0))


def vsplit_array(self, indices: Sequence[int]):
    return tensor_split_indices(self, indices, _split_dim(self, "vsplit", 2, 0))


def dsplit_int(self, sections: int):
    return _split_sections(self, "dsplit", sections, _split_dim(self, "dsplit", 3, 2))


def dsplit_array(self, indices: Sequence[int]):
    return tensor_split_indices(self, indices, _split_dim(self, "dsplit", 3, 2))


def broadcast_to(self, size: Sequence[int]):
    return aten.expand(self, size)


def meshgrid_indexing(tensors, indexing: str):
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if _ndim(t) > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: " + repr(t)
            )
    first = tensors[0]
    for t in tensors[1:]:
        if t._data.dtype != first._data.dtype:
            raise RuntimeError(
                "torch.meshgrid: Expected all tensors in the tensor list to have the same dtype."
            )
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:  # xy: the first two axes trade places
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t._data.size for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        grids.append(aten.expand(aten.view(t, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def meshgrid(tensors):
    warnings.warn(
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
        "argument.",
        UserWarning,
        stacklevel=3,
    )
    return meshgrid_indexing(tensors, indexing="ij")


def cartesian_prod(tensors):
    for t in tensors:
        if _ndim(t) != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid_indexing(tensors, indexing="ij")
    return aten.stack([aten.reshape(g, [-1]) for g in grids], 1)
