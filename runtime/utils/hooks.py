"""RemovableHandle: what every ``register_*hook`` returns (``opgrad.utils.hooks``)."""

from __future__ import annotations

import itertools
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
