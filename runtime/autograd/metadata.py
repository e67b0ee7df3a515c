"""Tensor metadata that nodes save in place of whole tensors."""

#: element strides per (byte strides, item size): a program meets few layouts, and
#: mm saves two per call
_ELEMENT_STRIDES: dict = {}


def strides_of(tensor) -> tuple:
    """Strides in elements, as PyTorch counts them."""
    data = tensor._data
    key = (data.strides, data.itemsize)
    strides = _ELEMENT_STRIDES.get(key)
    if strides is None:
        itemsize = data.itemsize
        strides = tuple([s // itemsize for s in data.strides])
        if len(_ELEMENT_STRIDES) < 4096:
            _ELEMENT_STRIDES[key] = strides
    return strides
