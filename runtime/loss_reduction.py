"""PyTorch's ``at::Reduction`` enum, as every loss op takes its ``reduction`` argument.

The one definition the loss kernels, the loss decompositions, the loss formula helpers and
``opgrad.nn.functional`` share. It imports nothing, so kernel modules can use it freely.
"""

from __future__ import annotations


class Reduction:
    """``reduction`` values: 0 keeps the per-element loss, 1 averages it, 2 sums it."""

    NONE = 0
    MEAN = 1
    SUM = 2
