"""``opgrad.<op>`` functions: the generated surface plus torch's composite spellings."""

from __future__ import annotations

from .generated.python_surface import FUNCTIONS as _FUNCTIONS
from .generated import python_surface as _surface

globals().update({name: getattr(_surface, name) for name in _FUNCTIONS})

__all__ = sorted(name for name in _FUNCTIONS if not name.startswith("_"))

from ._tensor_methods import split as _split  # noqa: E402
from .overrides import overridable as _overridable  # noqa: E402

# torch.split (a Python function in torch) picks split or split_with_sizes
split = _overridable(_split, builtin=False, qualname="split")

__all__.append("split")

from .python_arg_parser import function as _function  # noqa: E402
from .generated import ops as _ops  # noqa: E402

# torch.relu_ is a function too (the YAML's in-place variant is a method only)
relu_ = _function("relu_", (_ops.relu__op,))

__all__.append("relu_")

from .functional import *  # noqa: E402,F401,F403
from . import functional as _functional  # noqa: E402

__all__ += _functional.__all__

from .masked_decompositions import nonzero_python as _nonzero  # noqa: E402

# torch.nonzero's binding takes as_tuple, which picks nonzero or nonzero and unbind
nonzero = _overridable(_nonzero, name="nonzero", qualname="nonzero")

__all__.append("nonzero")

from .norm_functions import norm  # noqa: E402 - torch.norm, written in Python over the linalg norms

__all__.append("norm")
