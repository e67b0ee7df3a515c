"""Anomaly mode: forward tracebacks on nodes, NaN checks on backward outputs.

Like PyTorch's, the switch is process-wide (not thread-local).
"""

from __future__ import annotations

import sys
import traceback
import warnings
from typing import Any

from .._tls import set_process_flag

enabled = False
check_nan = True


class detect_anomaly:
    """Context manager / decorator turning anomaly detection on (PyTorch's detect_anomaly)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = (enabled, check_nan)
        set_detect_anomaly(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        set_detect_anomaly(*self.prev)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Set anomaly detection on or off; as a context manager, restore it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (enabled, globals()["check_nan"])
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _set(*self.prev)


def _set(mode: bool, nan: bool) -> None:
    global enabled, check_nan
    set_process_flag("anomaly mode", bool(mode))
    enabled = bool(mode)
    check_nan = bool(nan)


def is_anomaly_enabled() -> bool:
    return enabled


def is_anomaly_check_nan_enabled() -> bool:
    return check_nan


def _internal_dirs() -> tuple:
    import os

    from .. import generated

    runtime = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (runtime + os.sep, os.path.dirname(os.path.abspath(generated.__file__)) + os.sep)


def record_forward(node) -> None:
    """Keep the forward traceback (user frames only) of the op that created ``node``, and
    the node whose backward was running then, if any (its "parent", whose traceback a
    report adds: the calculation that induced this one)."""
    from .engine import current_node

    internal = _internal_dirs()
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(internal)]
    node.metadata["traceback_"] = traceback.format_list(frames)
    parent = current_node()
    if parent is not None:
        node.metadata["parent_"] = parent


def _recorded(node, key: str):
    metadata = node.__dict__.get("_metadata") or {}
    return metadata.get(key) if isinstance(metadata, dict) else None


def check_outputs(node, outputs) -> None:
    if not check_nan:
        return
    import numpy as np

    for index, grad in enumerate(outputs):
        if grad is not None and grad._data.dtype.kind == "f" and np.isnan(grad._data).any():
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {index}th output."
            )


def _trace_message(node, is_parent: bool) -> str:
    lines = _recorded(node, "traceback_")
    if not lines:
        return (
            f"Error detected in {node.name()}. No forward pass information available. Enable "
            "detect anomaly during forward pass for more information."
        )
    if is_parent:
        return (
            f"\n\nPrevious calculation was induced by {node.name()}. Traceback of forward call "
            f"that induced the previous calculation:\n{''.join(lines)}"
        )
    return (
        f"Error detected in {node.name()}. Traceback of forward call that caused the "
        f"error:\n{''.join(lines)}"
    )


def report(node, error: BaseException) -> None:
    """Warn with, and attach to the error, the forward traceback of the failing node, then
    one warning per node whose backward induced it (its parent, the parent's parent ...)."""
    message = _trace_message(node, is_parent=False)
    _warn_beside(message)
    if hasattr(error, "add_note"):
        error.add_note(message)
    parent = _recorded(node, "parent_")
    while parent is not None:
        _warn_beside(_trace_message(parent, is_parent=True))
        parent = _recorded(parent, "parent_")


def _warn_beside(message: str) -> None:
    """Warn while an error is on its way: a warning filter that turns warnings into errors
    must not replace that error, so the warning is printed to stderr instead, as torch does."""
    try:
        warnings.warn(message, UserWarning, stacklevel=3)
    except Warning as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
