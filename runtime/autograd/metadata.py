"""Tensor metadata that nodes save in place of whole tensors."""


def strides_of(tensor) -> tuple:
    """Strides in elements, as PyTorch counts them."""
    data = tensor._data
    itemsize = data.itemsize
    return tuple([s // itemsize for s in data.strides])
