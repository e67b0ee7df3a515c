"""RemovableHandle: what every ``register_*hook`` returns (``opgrad.utils.hooks``), and the
helpers serialization uses about tensor hooks."""

from __future__ import annotations

import itertools
import warnings
import weakref
from typing import Any

_next_id = itertools.count()


class RemovableHandle:
    """A handle that removes a hook from the dict it was registered in."""

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_next_id)
        self.extra_dict_ref = tuple(
            weakref.ref(d)
            for d in ([extra_dict] if isinstance(extra_dict, dict) else extra_dict or [])
        )

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def unserializable_hook(f):
    """Mark a tensor hook as one that pickling and ``opgrad.save`` leave out without warning
    (they never save hooks)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Warn, as torch does when it pickles or saves a tensor, about each backward hook on
    ``tensor`` that will not be saved."""
    meta = tensor._meta
    found = list(meta.hooks.values()) if meta is not None else []
    node = tensor._grad_fn
    if node is not None:
        per_output = node.__dict__.get("_tensor_pre_hooks") or {}
        found += list(per_output.get(tensor._output_nr, {}).values())
    for hook in found:
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, "
                "you can decorate the function with @opgrad.utils.hooks.unserializable_hook to "
                "suppress this warning",
                stacklevel=2,
            )
