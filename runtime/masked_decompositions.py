"""Composites of the masked and nonzero family: argwhere (CompositeImplicitAutograd in
PyTorch: a mode sees its nonzero call) and the Python binding of nonzero, whose
``as_tuple=True`` form torch's binding builds from nonzero and unbind."""

from __future__ import annotations

from .generated import ops as aten
from .tensor import Tensor

__all__ = ["argwhere", "nonzero_python", "nonzero_method"]


def argwhere(self):
    return aten.nonzero(self)


def nonzero_python(input: Tensor, *, out: Tensor = None, as_tuple: bool = False):
    """torch.nonzero / Tensor.nonzero: the (N, ndim) int64 indices of the nonzero elements,
    or with ``as_tuple`` one 1-d index tensor per dim (a 0-dim input counts as 1-d)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"nonzero(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if as_tuple.__class__ is not bool:
        raise TypeError(
            f"nonzero(): argument 'as_tuple' must be bool, not {type(as_tuple).__name__}"
        )
    if not as_tuple:
        return aten.nonzero(input) if out is None else aten.nonzero_out(input, out=out)
    if out is not None:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    if input.dim() == 0:
        input = aten.unsqueeze(input, 0)
    return aten.unbind_int(aten.nonzero(input), 1)


def nonzero_method(self: Tensor, *, as_tuple: bool = False):
    """Tensor.nonzero: as opgrad.nonzero, without out=."""
    return nonzero_python(self, as_tuple=as_tuple)
