"""``opgrad.autograd.graph``: the graph API (Node and friends)."""

from .node import Node

__all__ = ["Node"]
