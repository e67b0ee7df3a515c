"""CompositeImplicitAutograd ops of the 1-d poolings: each checks its arguments as PyTorch
2.13's CPU composite does and hands an unsqueezed input to the 2-d pooling, so the recorded
graph (UnsqueezeBackward0, the 2-d node, SqueezeBackward1) and the aten calls a dispatch
mode sees are torch's.
"""

from __future__ import annotations

from . import dispatch_keys as K
from . import numpy_kernels as k
from ._tls import state as _tls
from .generated import ops as aten
from .tensor import _make

__all__ = [
    "max_pool1d",
    "max_pool1d_with_indices",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
]


def max_pool1d_with_indices(
    self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False
):
    stride = stride if len(stride) else kernel_size
    k.pool1d_check(
        self,
        "max_pool1d",
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        dilation=dilation,
    )
    values, indices = aten.max_pool2d_with_indices(
        aten.unsqueeze(self, -2),
        [1, kernel_size[0]],
        [1, stride[0]],
        [0, padding[0]],
        [1, dilation[0]],
        ceil_mode,
    )
    return aten.squeeze_dim(values, -2), aten.squeeze_dim(indices, -2)


def _observed(self) -> bool:
    """Whether max_pool1d must record its indices path: the input needs a gradient (either
    mode), or a dispatch mode or tensor subclass sees the calls (PyTorch's condition)."""
    return bool(
        (self.requires_grad and _tls.grad_enabled)
        or self._fw_grad is not None
        or (self._keys | _tls.include) & K.PYTHON
    )


def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    k.max_pool1d_check(self, kernel_size, stride, padding, dilation, ceil_mode)
    if _observed(self):
        return max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]
    # PyTorch's own 1-d kernel: no indices, no view, floating inputs only
    return _make(k.max_pool1d_values(self._data, kernel_size, stride, padding, dilation, ceil_mode))


def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    stride = stride if len(stride) else kernel_size
    k.pool1d_check(self, "avg_pool1d", kernel_size=kernel_size, stride=stride, padding=padding)
    output = aten.avg_pool2d(
        aten.unsqueeze(self, -2),
        [1, kernel_size[0]],
        [1, stride[0]],
        [0, padding[0]],
        ceil_mode,
        count_include_pad,
    )
    return aten.squeeze_dim(output, -2)


def adaptive_avg_pool1d(self, output_size):
    k.pool1d_check(self, "adaptive_avg_pool1d", output_size=output_size)
    output = aten.adaptive_avg_pool2d(aten.unsqueeze(self, -2), [1, output_size[0]])
    return aten.squeeze_dim(output, -2)


def adaptive_max_pool1d(self, output_size):
    k.adaptive_max_pool1d_check(self, output_size)
    values, indices = aten.adaptive_max_pool2d(aten.unsqueeze(self, -2), [1, output_size[0]])
    return aten.squeeze_dim(values, -2), aten.squeeze_dim(indices, -2)
