"""``opgrad.special``: torch.special's functions. Each is an op of derivatives.yaml marked
``python_module: special`` (``special.entr`` is the op special_entr), made here from the
generated surface as ``opgrad.<op>`` functions are."""

from __future__ import annotations

from .generated.python_surface import MODULE_FUNCTIONS as _MODULE_FUNCTIONS
from .python_arg_parser import function as _function

_FUNCTIONS = _MODULE_FUNCTIONS["special"]

globals().update(
    {name: _function(f"special_{name}", overloads) for name, overloads in _FUNCTIONS.items()}
)

__all__ = sorted(_FUNCTIONS)
