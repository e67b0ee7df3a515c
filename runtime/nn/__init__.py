"""``opgrad.nn``: the neural-network surface (``opgrad.nn.functional``)."""

from . import functional  # noqa: F401
