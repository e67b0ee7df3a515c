"""What the plain path's generated kernels share (see ``_tls`` for the plain flag).

A fused kernel computes an op in one frame when every tensor argument has one of
``PLAIN_FLOATS``: among equal dtypes of these, PyTorch's type promotion (Python numbers
included) is the identity, so numpy's result is the full path's bit for bit.
"""

from __future__ import annotations

import numpy as np

from .dispatch_keys import DEFAULT_TENSOR_KEYS

#: the key set of a call on plain tensors with nothing included or excluded
PLAIN_KEYS = DEFAULT_TENSOR_KEYS

PLAIN_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})

#: one ``_in_meta`` tuple per (shape, dtype): nodes share them instead of each making two
SHARED_INPUT_METADATA: dict = {}
_MAX_SHARED = 4096


def input_metadata(key: tuple) -> tuple:
    """The shared ``((shape, dtype),)`` of a single-output node whose result has ``key``."""
    meta = SHARED_INPUT_METADATA.get(key)
    if meta is None:
        if len(SHARED_INPUT_METADATA) >= _MAX_SHARED:  # shapes that keep changing: start afresh
            SHARED_INPUT_METADATA.clear()
        meta = SHARED_INPUT_METADATA[key] = (key,)
    return meta
