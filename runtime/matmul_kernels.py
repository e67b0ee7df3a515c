"""Kernels of the matmul family of issue 15 (derivatives.yaml's "matmul family" section):
addmv, addr, addbmm, vdot, linalg_cross and cdist's ``_cdist_forward``/``_cdist_backward``/
``_euclidean_dist``.

Checks come in PyTorch 2.13's order and words. float16 and bfloat16 products accumulate in
float32 and round once, as PyTorch's CPU kernels do; integer products wrap in their own
dtype, with beta and alpha truncated to integers where PyTorch's kernel reads them so.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .kernel_support import opmath
from .norm_kernels import _integral_scalar

__all__ = [
    "_cdist_backward",
    "_cdist_forward",
    "_euclidean_dist",
    "cdist_check",
    "cdist_impl_check",
    "addbmm",
    "addbmm_check",
    "addmv",
    "addmv_check",
    "addmv_inplace_check",
    "addr",
    "addr_check",
    "linalg_cross",
    "linalg_cross_check",
    "vdot",
    "vdot_out_check",
]


def _name(dtype) -> str:
    return dtypes.scalar_type_name(dtype)


def _size(a: np.ndarray, dim: int) -> int:
    """``a.size(dim)`` as PyTorch reads it (IndexError past the last dim)."""
    ndim = a.ndim
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})"
        )
    return a.shape[dim]


def _scalars(beta, alpha, dtype: np.dtype):
    """beta and alpha as an integer kernel reads them (checked, truncated), else as given."""
    if dtype.kind in "iu":
        return _integral_scalar(beta, dtype), _integral_scalar(alpha, dtype)
    return beta, alpha


# ---- addmv -------------------------------------------------------------------------------


def addmv_check(self, mat, vec) -> None:
    s, m, v = self._data, mat._data, vec._data
    if not (m.ndim == 2 and v.ndim == 1 and s.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {s.ndim}, {m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or not (m.shape[0] == s.size or s.size == 1):
        raise RuntimeError(
            f"size mismatch, got input ({_size(s, 0)}), mat ({m.shape[0]}x{m.shape[1]}), "
            f"vec ({v.shape[0]})"
        )


def addmv_inplace_check(self, mat, target) -> None:
    """addmv_ writes the product into self, which must have its shape (no broadcast)."""
    if target is self and self._data.shape != (mat._data.shape[0],):
        raise RuntimeError(
            f"Bad in-place call: input tensor size {list(self._data.shape)} and output tensor "
            f"size {[mat._data.shape[0]]} should match"
        )


def addmv(self, mat, vec, beta, alpha):
    """``beta * self + alpha * (mat @ vec)``; beta 0 ignores self (NaN included)."""
    if not (self.dtype == mat.dtype == vec.dtype):
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_name(self.dtype)}, {_name(mat.dtype)}, and {_name(vec.dtype)}"
        )
    dtype = mat.dtype
    if dtype == np.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    beta, alpha = _scalars(beta, alpha, dtype)
    product = np.matmul(opmath(mat), opmath(vec))
    if alpha != 1:
        product = product * alpha
    if beta != 0:
        base = opmath(self)
        product = product + (base if beta == 1 else base * beta)
    return np.broadcast_to(product, (mat.shape[0],)).astype(dtype, copy=True, order="C")


# ---- addr --------------------------------------------------------------------------------


def _check_1d(t: np.ndarray, arg: str, fn: str) -> None:
    if t.ndim != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument {arg}, but got {t.ndim}-D")


def addr_check(self, vec1, vec2) -> None:
    v1, v2 = vec1._data, vec2._data
    _check_1d(v1, "vec1", "addr")
    _check_1d(v2, "vec2", "addr")
    from .numpy_kernels import expand  # imported here: numpy_kernels imports this module

    expand(self._data, (v1.shape[0], v2.shape[0]))


def _refuse_float_scalar(value, name: str) -> None:
    if isinstance(value, (float, complex)) and not isinstance(value, bool):
        raise RuntimeError(
            f"For integral input tensors, argument {name} must not be a floating point number."
        )


def addr(self, vec1, vec2, beta, alpha):
    """On promoted arrays: ``beta * self + alpha * outer(vec1, vec2)`` computed element by
    element as PyTorch's kernel (``beta * self + alpha * v1 * v2`` in the result dtype;
    bool as ``beta && self || alpha && v1 && v2``); beta 0 ignores self."""
    dtype = vec1.dtype
    shape = (vec1.shape[0], vec2.shape[0])
    if dtype.kind in "iub":
        _refuse_float_scalar(beta, "beta")
        _refuse_float_scalar(alpha, "alpha")
    if dtype == np.bool_:
        product = np.logical_and.outer(vec1, vec2) if alpha else np.zeros(shape, np.bool_)
        if beta:
            product = product | self
        return np.broadcast_to(product, shape).astype(np.bool_, copy=True, order="C")
    if dtype.kind in "iu":
        beta, alpha = _integral_scalar(beta, dtype), _integral_scalar(alpha, dtype)
    else:
        beta, alpha = np.asarray(beta).astype(dtype), np.asarray(alpha).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        product = (alpha * vec1)[:, None] * vec2[None, :]
        if beta != 0:
            product = beta * self + product
    return np.broadcast_to(product, shape).astype(dtype, copy=True, order="C")


# ---- addbmm ------------------------------------------------------------------------------


def addbmm_check(self, batch1, batch2) -> None:
    s, b1, b2 = self._data, batch1._data, batch2._data
    from .numpy_kernels import expand  # imported here: numpy_kernels imports this module

    expand(s, (_size(b1, 1), _size(b2, 2)))
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {b1.shape[0]} and "
            f"{b2.shape[0]}"
        )
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
            f"{b2.shape[1]}x{b2.shape[2]})"
        )


def addbmm(self, batch1, batch2, beta, alpha, target=None):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])`` in self's dtype (the written
    tensor's for out=), refused in addmm's words as PyTorch's per-batch addmm_ refuses."""
    dtype = (target._data if target is not None else self).dtype
    if dtype != batch2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_name(dtype)} and "
            f"{_name(batch2.dtype)}"
        )
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_name(batch1.dtype)} and "
            f"{_name(batch2.dtype)}"
        )
    if dtype == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    beta, alpha = _scalars(beta, alpha, dtype)
    shape = (batch1.shape[1], batch2.shape[2])
    with np.errstate(over="ignore", invalid="ignore"):
        product = np.matmul(opmath(batch1), opmath(batch2)).sum(axis=0)
        if alpha != 1:
            product = product * alpha
        if beta != 0:
            base = opmath(self)
            product = product + (base if beta == 1 else base * beta)
    return np.broadcast_to(product, shape).astype(dtype, copy=True, order="C")


# ---- vdot --------------------------------------------------------------------------------


def vdot(self, other):
    from .numpy_kernels import dot  # imported here: numpy_kernels imports this module

    return dot(np.conj(self) if self.dtype.kind == "c" else self, other)


def vdot_out_check(self, target) -> None:
    """dot's and vdot's out= want out in the inputs' very dtype."""
    want, got = self._data.dtype, target._data.dtype
    if want != got:
        raise RuntimeError(f"result dtype {_name(got)} does not match input dtype {_name(want)}")


# ---- linalg_cross ------------------------------------------------------------------------


def linalg_cross_check(self, other, dim) -> None:
    a, b = self._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    sa, sb = _size(a, dim), _size(b, dim)
    if sa != 3 or sb != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}"
        )
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        from .numpy_kernels import broadcast_error  # imported here: it imports this module

        raise RuntimeError(broadcast_error(a.shape, b.shape)) from None


def linalg_cross(self, other, dim):
    """The cross product along ``dim`` of the inputs broadcast to one shape, in self's
    dtype (other must have it: PyTorch does not promote here)."""
    if other.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {_name(self.dtype)} but found {_name(other.dtype)}"
        )
    if self.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    shape = np.broadcast_shapes(self.shape, other.shape)
    a, b = np.broadcast_to(self, shape), np.broadcast_to(other, shape)
    d = dim % len(shape)
    a0, a1, a2 = (np.take(a, i, axis=d) for i in range(3))
    b0, b1, b2 = (np.take(b, i, axis=d) for i in range(3))
    with np.errstate(over="ignore", invalid="ignore"):
        parts = (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)
    return np.ascontiguousarray(np.stack(parts, axis=d), dtype=self.dtype)


# ---- cdist: _cdist_forward, _cdist_backward, _euclidean_dist -------------------------------


def cdist_check(x1, x2) -> None:
    """The checks torch's cdist and _cdist_forward make first."""
    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: "
            f"{b.shape[-1]}"
        )


def cdist_impl_check(x1, x2, p, compute_mode) -> None:
    """cdist_impl's refusals: floating inputs, p >= 0, a known compute mode."""
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.dtype.kind != "f" and t._data.dtype.kind != "V":
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_name(t._data.dtype)}"
            )
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")


def _batch_shape(x1: np.ndarray, x2: np.ndarray) -> tuple:
    try:
        return np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        from .numpy_kernels import broadcast_error  # imported here: it imports this module

        raise RuntimeError(broadcast_error(x1.shape[:-2], x2.shape[:-2])) from None


def _cdist_p(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm over the last axis of ``diff`` as PyTorch's kernel: a count of non-zero
    differences for p 0, the largest one for inf, sqrt(sum d^2) for 2, sum |d| for 1."""
    ad = np.abs(diff)
    if p == 0:
        return (ad != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return ad.sum(-1)
    if p == 2:
        return np.sqrt((ad * ad).sum(-1))
    if p == np.inf:
        return ad.max(-1, initial=0)
    return (ad**p).sum(-1) ** (1.0 / p)


def _cdist_forward(x1, x2, p, compute_mode):
    if x2.dtype != x1.dtype:
        raise RuntimeError(f"expected scalar type {_name(x1.dtype)} but found {_name(x2.dtype)}")
    if x1.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cdist\" not implemented for '{_name(x1.dtype)}'")
    batch = _batch_shape(x1, x2)
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    shape = batch + (r1, r2)
    dtype = x1.dtype
    if r1 == 0 or r2 == 0 or 0 in batch or c == 0:
        return np.zeros(shape, dtype)
    a = np.broadcast_to(x1, batch + (r1, c)).astype(opmath(x1).dtype)
    b = np.broadcast_to(x2, batch + (r2, c)).astype(a.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        result = _cdist_p(a[..., :, None, :] - b[..., None, :, :], p)
    return np.ascontiguousarray(result, dtype=dtype)


def _cdist_backward(grad, x1, x2, p, cdist):
    """d cdist / d x1 for x1 broadcast to the batch (the engine sums the broadcast away)."""
    batch = _batch_shape(x1, x2)
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if r1 == 0 or r2 == 0 or c == 0 or 0 in batch:
        return np.zeros(x1.shape, x1.dtype)
    a = np.broadcast_to(x1, batch + (r1, c))
    b = np.broadcast_to(x2, batch + (r2, c))
    diff = a[..., :, None, :] - b[..., None, :, :]
    g = grad.reshape(batch + (r1, r2))[..., None]
    dist = cdist.reshape(batch + (r1, r2))[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if p == 0:
            term = np.zeros_like(diff)
        elif p == 1:
            term = np.sign(diff) * g
        elif p == 2:
            term = np.where(dist == 0, 0, diff * g / dist)
        elif p == np.inf:
            term = np.sign(diff) * (np.abs(diff) == dist) * g
        elif p < 2:
            term = np.where(
                (dist == 0) | (diff == 0),
                0,
                np.sign(diff) * np.abs(diff) ** (p - 1) * g / dist ** (p - 1),
            )
        else:
            term = np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) * g / dist ** (p - 1))
    return np.ascontiguousarray(term.sum(-2), dtype=x1.dtype)


def _euclidean_dist(x1, x2):
    """PyTorch's euclidean distance by one matrix product: [-2 x1, |x1|^2, 1] against
    [x2, 1, |x2|^2], clamped at 1e-30 before the square root."""
    wide = opmath(x1).dtype
    a, b = x1.astype(wide), x2.astype(wide)
    a_norm = (a * a).sum(-1, keepdims=True)
    b_norm = (b * b).sum(-1, keepdims=True)
    left = np.concatenate([a * -2, a_norm, np.ones_like(a_norm)], axis=-1)
    right = np.concatenate([b, np.ones_like(b_norm), b_norm], axis=-1)
    product = np.matmul(left, np.swapaxes(right, -1, -2))
    return np.ascontiguousarray(np.sqrt(np.maximum(product, 1e-30)), dtype=x1.dtype)
