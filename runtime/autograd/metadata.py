"""Tensor metadata that nodes save in place of whole tensors."""


def strides_of(tensor) -> tuple:
    """Strides in elements, as PyTorch counts them."""
    itemsize = tensor._data.itemsize
    return tuple(s // itemsize for s in tensor._data.strides)
