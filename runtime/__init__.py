"""opgrad: PyTorch's autograd, rebuilt in Python on numpy.

A dispatcher-based operator registry whose derivatives are generated from
derivatives.yaml. ``import opgrad as torch`` runs code that stays inside the
``torch.autograd`` surface.
"""

from __future__ import annotations

import warnings as _warnings

# numpy warns where PyTorch silently gives nan/inf (log(-1), 0/0, tensor([1e40])): not in any
# of our modules (every kernel module, the generated plain kernels, factories). The filter
# matches warnings raised from opgrad's own code only; a user's numpy calls still warn.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"opgrad\.")

from . import dtypes as _dtypes
from .dtypes import bool_ as bool  # noqa: A001 - torch.bool
from .dtypes import (
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .layouts import layout, strided
from .memory_formats import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from .tensor import Size, Tensor
from .device import device
from . import dispatcher as _dispatcher
from .dispatcher import ops
from .generated import ops as _aten  # defines every OpOverload
from .generated.registration import register_all as _register_all

_register_all()

from .generated.tensor_methods import TensorMethods as _TensorMethods  # noqa: E402
from ._tensor_methods import TensorPythonMethods as _TensorPythonMethods  # noqa: E402
from ._tensor_methods import join as _join  # noqa: E402

# Tensor is written as three class bodies: its own (tensor.py), the generated op methods and
# the hand-written ones over the ops. The runtime that makes the ops needs the class first, so
# the other two join it here, now that the ops exist.
_join(Tensor, _TensorMethods, _TensorPythonMethods)
_aten_packets = ops.aten

from ._functions import *  # noqa: E402,F401,F403
from . import return_types  # noqa: E402,F401 - the named tuples of ops with several results
from ._functions import (  # noqa: E402,F401 - torch has these private functions too
    _log_softmax,
    _log_softmax_backward_data,
    _safe_softmax,
    _softmax,
    _softmax_backward_data,
    _trilinear,
    _unique2,
)
from .factories import (  # noqa: E402
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from .type_promotion import promote_types, result_type  # noqa: E402
from math import e, inf, nan, pi  # noqa: E402,F401 - torch.inf and the other constants

newaxis = None  # x[:, opgrad.newaxis], as torch.newaxis
from .random import (  # noqa: E402
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from . import autograd  # noqa: E402
from .autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402
from . import utils  # noqa: E402
from . import linalg  # noqa: E402
from .type_info import finfo, iinfo  # noqa: E402
from .legacy import (  # noqa: E402
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from . import _C  # noqa: E402
from . import library  # noqa: E402
from . import cuda  # noqa: E402
from . import overrides  # noqa: E402
from .utils import _python_dispatch  # noqa: E402,F401
from .utils import checkpoint as _checkpoint  # noqa: E402,F401 - opgrad.utils.checkpoint

__version__ = "0.1.0"


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def __getattr__(name: str):
    # opgrad.nn and opgrad.special are imported on first use: `import opgrad` stays as fast as before
    if name in ("nn", "special"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in ("save", "load", "serialization"):
        # the zip checkpoint format's modules load with the first save or load
        import importlib

        serialization = importlib.import_module(".serialization", __name__)
        return serialization if name == "serialization" else getattr(serialization, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
