"""``opgrad.nn.functional``'s convolutions (torch.nn.functional's ``conv1d/2d/3d`` and
``conv_transpose1d/2d/3d``).

torch binds each straight to its aten op (``F.conv2d is torch.conv2d``), which reaches
``aten::convolution``: so do these, and the grad_fn is torch's ConvolutionBackward0.
"""

from __future__ import annotations

from .. import _functions as _torch_functions

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]

conv1d = _torch_functions.conv1d
conv2d = _torch_functions.conv2d
conv3d = _torch_functions.conv3d
conv_transpose1d = _torch_functions.conv_transpose1d
conv_transpose2d = _torch_functions.conv_transpose2d
conv_transpose3d = _torch_functions.conv_transpose3d
