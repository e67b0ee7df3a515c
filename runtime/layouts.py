"""Tensor layouts (``opgrad.strided``): opgrad has one, the dense strided layout, named so
that calls which pass a layout (what a dispatch mode sees) read as PyTorch's."""

from __future__ import annotations


class layout:
    """How a tensor's elements are stored; ``opgrad.strided`` is the only one."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"opgrad.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")
