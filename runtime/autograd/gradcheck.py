"""gradcheck / gradgradcheck (being written)."""


def gradcheck(*args, **kwargs):
    raise NotImplementedError("gradcheck is not implemented yet")


def gradgradcheck(*args, **kwargs):
    raise NotImplementedError("gradgradcheck is not implemented yet")
