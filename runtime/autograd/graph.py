"""``opgrad.autograd.graph``: the graph API (Node and friends)."""

from .node import Node

__all__ = ["Node", "increment_version"]


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (shared with its views), as an in-place op would."""
    from ..tensor import Tensor

    tensors = [tensor] if isinstance(tensor, Tensor) else list(tensor)
    for t in tensors:
        if not t.is_inference():
            t._vc[0] += 1
