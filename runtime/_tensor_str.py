"""PyTorch-style tensor reprs: ``tensor([1., 2.], grad_fn=<MulBackward0>)``."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from ._tls import state as _tls

_EDGE_ITEMS = 3
_THRESHOLD = 1000
_PRECISION = 4
_LINE_WIDTH = 80


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if finite.size == 0 or np.all(finite == np.round(finite)):
        int_mode = True
        sci = nonzero.size > 0 and (nonzero.max() > 1e8 or nonzero.max() / nonzero.min() > 1000)
    else:
        int_mode = False
        sci = nonzero.size > 0 and (
            nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8 or nonzero.min() < 1e-4
        )

    def fmt(v: float) -> str:
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if sci:
            return f"{v:.{_PRECISION}e}"
        if int_mode:
            return f"{v:.0f}."
        return f"{v:.{_PRECISION}f}"

    return fmt


def _formatter(data: np.ndarray):
    if data.dtype.kind == "b":
        return lambda v: "True" if v else "False"
    if data.dtype.kind in "iu":
        return lambda v: str(int(v))
    return _float_formatter(data.astype(np.float64).ravel())


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements shown when a large tensor is summarized (for the width)."""
    if data.ndim == 0:
        return data.reshape(1)
    parts = []
    if data.shape[0] > 2 * _EDGE_ITEMS:
        rows = list(data[:_EDGE_ITEMS]) + list(data[-_EDGE_ITEMS:])
    else:
        rows = list(data)
    for row in rows:
        parts.append(_summarized(np.asarray(row)).ravel())
    return np.concatenate(parts) if parts else data.ravel()


def _render(data: np.ndarray, fmt, width: int, indent: int, summarize: bool) -> str:
    if data.ndim == 0:
        return fmt(data.item()).rjust(width)
    if data.ndim == 1:
        items = [fmt(v).rjust(width) for v in data.tolist()]
        if summarize and len(items) > 2 * _EDGE_ITEMS:
            items = items[:_EDGE_ITEMS] + [" ..."] + items[-_EDGE_ITEMS:]
        per_line = max(1, (80 - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(data.shape[0])
    if summarize and data.shape[0] > 2 * _EDGE_ITEMS:
        rows = (
            list(range(_EDGE_ITEMS))
            + [None]
            + list(range(data.shape[0] - _EDGE_ITEMS, data.shape[0]))
        )
    parts = [
        "..." if i is None else _render(data[i], fmt, width, indent + 1, summarize) for i in rows
    ]
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _width(shown: np.ndarray, fmt) -> int:
    """The column width: floats pad to their widest nonzero finite value (nan, inf and
    zeros may be wider and are not padded), other dtypes to their widest value."""
    if shown.dtype.kind == "f":
        shown = shown[np.isfinite(shown) & (shown != 0)]
    return max([1] + [len(fmt(v)) for v in shown.tolist()])


def tensor_repr(t) -> str:
    from .tensor import TENSOR_CLASSES

    data = t._data
    prefix = "tensor(" if t.__class__ in TENSOR_CLASSES else f"{type(t).__name__}("
    suffixes = []
    summarize = data.size > _THRESHOLD
    if data.size == 0:
        body = "[]"
        if data.shape != (0,):
            suffixes.append(f"size={tuple(data.shape)}")
    else:
        shown = _summarized(data) if summarize else data.ravel()
        fmt = _formatter(shown)
        width = _width(shown, fmt)
        body = _render(data, fmt, width, len(prefix), summarize)
    dt = dtypes.from_numpy_dtype(data.dtype)
    if dt not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={dt!r}")
    try:
        grad_fn = t._grad_fn
    except RuntimeError:  # a view whose history can no longer be rebuilt
        suffixes.append("grad_fn=<Invalid>")
        grad_fn = False
    if grad_fn:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif grad_fn is None and t._rg:
        suffixes.append("requires_grad=True")
    if _tls.fw_active:
        from .autograd.forward_grad import fw_grad

        tangent = fw_grad(t)
        if tangent is not None:
            suffixes.append(f"tangent={_as_value(tangent)}")
    return _add_suffixes(prefix + body, suffixes, len(prefix))


def _as_value(t) -> str:
    """How PyTorch's ``f"{tensor}"`` shows a tensor: a 0-dim one as its Python number."""
    if t._data.ndim == 0:
        return str(t._data.item())
    return tensor_repr(t)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``, suffix`` after ``text``, starting a new line when one would pass 80 columns
    (PyTorch counts the last line's length plus one, as reproduced here)."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > _LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
