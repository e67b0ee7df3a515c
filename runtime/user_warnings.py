"""Warnings attributed to the user's line, however deep inside opgrad they are raised."""

from __future__ import annotations

import sys
import warnings

_PACKAGE = __name__.rpartition(".")[0] + "."


def warn_user(message: str, category: type = UserWarning) -> None:
    """``warnings.warn`` pointing at the first frame outside opgrad (as PyTorch's C++
    warnings point at the Python line that made the call)."""
    level = 2  # the caller of warn_user
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
