"""numpy kernels of pdist: the p-norm distance between every pair of rows (i < j, in
row-major order of the pairs) and its gradient."""

from __future__ import annotations

import numpy as np

from .kernel_support import opmath

__all__ = ["pdist_forward", "pdist_backward"]


def _pair_differences(x: np.ndarray):
    first, second = np.triu_indices(x.shape[0], 1)
    return first, second, x[first] - x[second]


def pdist_forward(self: np.ndarray, p: float) -> np.ndarray:
    x = opmath(self)
    _, _, diff = _pair_differences(x)
    magnitude = np.abs(diff)
    if p == 0:
        dist = np.count_nonzero(diff, axis=1).astype(x.dtype)
    elif p == 1:
        dist = magnitude.sum(axis=1)
    elif p == 2:
        dist = np.sqrt((diff * diff).sum(axis=1))
    elif p == np.inf:
        dist = magnitude.max(axis=1, initial=0)
    else:
        dist = (magnitude**p).sum(axis=1) ** (1 / p)
    return dist.astype(self.dtype, copy=False)


def pdist_backward(grad: np.ndarray, self: np.ndarray, p: float, pdist: np.ndarray):
    """Each pair's gradient, added to its first row and taken from its second, with
    PyTorch's per-p rules (0 where the distance is 0)."""
    x = opmath(self)
    first, second, diff = _pair_differences(x)
    g = opmath(grad)[:, None]
    dist = opmath(pdist)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            part = np.zeros_like(diff)
        elif p == 1:
            part = g * np.sign(diff)
        elif p == 2:
            part = np.where(dist == 0, 0, g * diff / dist)
        elif p == np.inf:
            part = g * np.sign(diff) * (np.abs(diff) == dist)
        else:
            zero = (dist == 0) | ((diff == 0) & (p < 1))
            scaled = np.sign(diff) * np.abs(diff) ** (p - 1) * g / dist ** (p - 1)
            part = np.where(zero, 0, scaled)
    out = np.zeros_like(x)
    np.add.at(out, first, part)
    np.add.at(out, second, -part)
    return out.astype(self.dtype, copy=False)
