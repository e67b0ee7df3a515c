"""A small pytree: map a function over the leaves of nested tuples, lists and dicts."""

from __future__ import annotations

from typing import Any, Callable


def tree_map(fn: Callable, tree: Any) -> Any:
    """``fn`` applied to every leaf of ``tree`` (containers are rebuilt, same types)."""
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
        return type(tree)(*(tree_map(fn, v) for v in tree))
    if isinstance(tree, tuple) and hasattr(tree, "n_sequence_fields"):  # opgrad.return_types
        return type(tree)([tree_map(fn, v) for v in tree])
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, v) for v in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def tree_map_only(cls, fn: Callable, tree: Any) -> Any:
    """``fn`` applied to the leaves that are instances of ``cls``; other leaves unchanged."""
    return tree_map(lambda x: fn(x) if isinstance(x, cls) else x, tree)


def tree_flatten(tree: Any) -> tuple:
    leaves = []
    tree_map(leaves.append, tree)
    return leaves, None
