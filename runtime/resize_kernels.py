"""numpy kernels of resize_ and resize_as_ (``k.<fn>`` in derivatives.yaml).

A tensor's storage is the memory its array's owner holds (numpy_kernels.memory_owner), and
its storage offset is where its first element lies in it. resize_ lays the new shape out
(contiguous, or as the memory format asks) from that offset over the same memory when it is
large enough, so the elements keep their storage order and a view keeps sharing its base's
memory; otherwise it moves the tensor to new memory holding a copy of the old as its prefix.
There PyTorch grows the shared storage itself, so that its base and other views would see the
new memory too; in opgrad the resized tensor alone does (the others keep the old memory).
"""

from __future__ import annotations

import numpy as np

from .memory_formats import memory_format as _MemoryFormat
from .memory_formats import (
    channels_last_strides,
    contiguous_format,
    contiguous_strides,
    preserve_format,
    suggest_memory_format,
)

# numpy_kernels re-exports this module at its end, so these names exist by then
from .numpy_kernels import _extent, _owner_and_offset, element_strides

__all__ = ["resize_", "resize_as_", "resize_check", "resize_refuse_grad"]


def resize_refuse_grad(self) -> None:
    """PyTorch's autograd kernel refuses to resize a tensor that requires grad (even to its
    own shape, even under no_grad)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def resize_check(self, size, memory_format=None, template: bool = False) -> None:
    """Run by the CPU kernel before it resizes ``self`` to ``size``: refuses a tensor that
    requires grad (on paths that skip the Autograd kernel) and bad sizes or memory formats."""
    resize_refuse_grad(self)
    _checked_sizes(size, memory_format, template)


def _checked_sizes(size, memory_format, template: bool = False) -> tuple:
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if memory_format is not None and memory_format.__class__ is not _MemoryFormat:
        raise TypeError(
            "resize_(): argument 'memory_format' must be opgrad.memory_format, not "
            f"{type(memory_format).__name__}"
        )
    if not (template and memory_format is preserve_format):  # resize_as_: the template's
        _strides_for(memory_format, size)
    return size


def _strides_for(fmt, size: tuple) -> tuple:
    if fmt is None or fmt is contiguous_format:
        return contiguous_strides(size)
    if fmt is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    return channels_last_strides(fmt, size)  # a TypeError for what is no memory format


def resize_(self: np.ndarray, size, memory_format=None) -> np.ndarray:
    """The array ``self`` becomes: ``size`` laid out from self's storage offset."""
    size = _checked_sizes(size, memory_format)
    strides = _strides_for(memory_format, size)
    if size == self.shape and memory_format is None:
        return self  # PyTorch keeps the strides of a tensor resized to its own shape
    numel = int(np.prod(size, dtype=np.int64))
    owner, offset = _owner_and_offset(self)
    item = self.itemsize
    held = owner.size if owner.flags.c_contiguous else _extent(owner)
    memory = np.lib.stride_tricks.as_strided(owner, (held,), (item,))
    if offset + numel > held:  # new memory, the old elements its prefix
        grown = np.empty(offset + numel, self.dtype)
        grown[:held] = memory
        memory = grown
    start = memory[offset:]
    return np.lib.stride_tricks.as_strided(start, size, tuple(s * item for s in strides))


def resize_as_(self: np.ndarray, the_template: np.ndarray, memory_format=None) -> np.ndarray:
    """resize_ to the template's shape; ``preserve_format`` takes the template's suggested
    memory format, None the contiguous one (not the template's)."""
    if memory_format is preserve_format:
        memory_format = suggest_memory_format(the_template.shape, element_strides(the_template))
    return resize_(self, the_template.shape, memory_format)
