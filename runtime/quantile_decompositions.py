"""CompositeImplicitAutograd ops of the quantile family, composed as PyTorch composes them so
that a dispatch mode sees the same aten calls and the nodes are the same:

- quantile and nanquantile sort the input (flattened, or with the reduced dim moved last),
  turn q into ranks (``q * (n - 1)``, NaN rows sent to the last rank; for nanquantile
  ``q * (non-NaN count - 1)``), round the ranks in place for lower/higher/nearest, gather
  the values below and, for linear and midpoint, ``lerp_`` towards the values above. The
  result's node is SqueezeBackward4 over LerpBackward1 (or GatherBackward0).
- cov centres the observations and divides ``mm(x, (x * w).t())`` by the normalisation;
  corrcoef divides cov by the outer product of the standard deviations and clamps to
  [-1, 1].

The out= variants resize ``out`` (with PyTorch's warning when it had elements) and copy the
result in; PyTorch's resize_ call is not an op of opgrad, so a mode does not see it.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from ._tls import state as _tls
from .cpu_support import write_out
from .generated import ops as aten
from .numpy_kernels import wrap_dim
from .user_warnings import warn_user

__all__ = [
    "corrcoef",
    "cov",
    "nanquantile",
    "nanquantile_out",
    "nanquantile_scalar",
    "nanquantile_scalar_out",
    "quantile",
    "quantile_out",
    "quantile_scalar",
    "quantile_scalar_out",
]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


# ---- quantile and nanquantile -----------------------------------------------------------


def _mode(interpolation: str) -> str:
    if interpolation not in _MODES:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    return interpolation


def _scalar_q(self, q: float):
    if not (q >= 0 and q <= 1):
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return aten.scalar_tensor(q, dtype=self.dtype)


def _checks(self, q) -> None:
    if self._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q._data.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self._data.dtype.kind != "f" or self._data.dtype.itemsize < 4:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._data.dtype != self._data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")


def _output_shape(self, q, dim, keepdim: bool, wrapped: int) -> list:
    ndim = self._data.ndim
    if dim is not None and ndim > 0:
        shape = list(self._data.shape)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    elif keepdim:
        shape = [1] * ndim
    else:
        shape = []
    if q._data.ndim > 0:
        shape.insert(0, q._data.size)
    return shape


def _q_values_check(q) -> None:
    # PyTorch reads q's values only when q is no tensor subclass and no dispatch mode is
    # active (isTensorSubclassLike): under a mode a q out of range goes on to gather
    if not _tls.mode_stack:
        v = q._data
        if not np.all((v >= 0) & (v <= 1)):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _compute(self, q, dim, mode: str, ignore_nan: bool, wrapped: int, out_shape: list):
    _q_values_check(q)
    if dim is None:
        values = aten.sort(aten.flatten_using_ints(self))[0]
    elif wrapped == self.dim() - 1:
        values = aten.sort(self)[0]
    else:
        values = aten.sort(aten.transpose_int(aten.unsqueeze(self, -1), wrapped, -1))[0]
    if q.dim() == 0:
        out_shape = [q._data.size] + out_shape
    # the reduced shape, then the sorted dim
    values = aten.view(values, list(out_shape[1:]) + [values.shape[-1]])
    if values.shape[-1] > 2**24:
        raise RuntimeError("quantile() input tensor is too large")

    if ignore_nan:
        counts = aten.sum_dim_IntList(aten.logical_not_(aten.isnan(values)), [-1], True)
        ranks = aten.mul_Tensor(q, aten.sub_Scalar(counts, 1))
        aten.masked_fill__Scalar(ranks, aten.lt_Scalar(ranks, 0), 0)
    else:
        last = values.shape[-1] - 1
        scaled, has_nan = aten.broadcast_tensors(
            [aten.mul_Scalar(q, last), aten.any_dim(aten.isnan(values), -1, True)]
        )
        ranks = aten.masked_fill_Scalar(scaled, has_nan, last)

    if mode == "lower":
        aten.floor_(ranks)
    elif mode == "higher":
        aten.ceil_(ranks)
    elif mode == "nearest":
        aten.round_(ranks)

    ranks_below = aten._to_copy(ranks, dtype=dtypes.int64)
    result = aten.gather(values, -1, ranks_below)
    if mode in ("linear", "midpoint"):
        if mode == "midpoint":
            weights = aten.full_like(ranks, 0.5)
        else:
            weights = aten.sub_Tensor(ranks, ranks_below)
        ranks_above = aten._to_copy(aten.ceil_(ranks), dtype=dtypes.int64)
        above = aten.gather(values, -1, ranks_above)
        aten.lerp__Tensor(result, above, weights)

    if q.dim() == 0:
        aten.squeeze__dim(result, -1)
    else:
        aten.squeeze__dim(aten.transpose_(aten.unsqueeze_(result, 0), 0, -1), -1)
    return result


def _quantile(self, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    mode = _mode(interpolation)
    _checks(self, q)
    wrapped = wrap_dim(0 if dim is None else dim, self.dim())
    shape = _output_shape(self, q, dim, keepdim, wrapped)
    return _compute(self, q, dim, mode, ignore_nan, wrapped, shape)


def _quantile_out(self, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool, out):
    mode = _mode(interpolation)
    _checks(self, q)
    if out._data.dtype != self._data.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    wrapped = wrap_dim(0 if dim is None else dim, self.dim())
    shape = _output_shape(self, q, dim, keepdim, wrapped)
    if list(out.shape) != shape:  # resized (with PyTorch's warning) before the copy
        write_out(out, np.empty(shape, out._data.dtype))
    result = _compute(self, q, dim, mode, ignore_nan, wrapped, shape)
    return aten.copy_(out, result)


def quantile(self, q, dim, keepdim, interpolation):
    return _quantile(self, q, dim, keepdim, interpolation, False)


def quantile_scalar(self, q, dim, keepdim, interpolation):
    return _quantile(self, _scalar_q(self, q), dim, keepdim, interpolation, False)


def quantile_out(self, q, dim, keepdim, interpolation, out):
    return _quantile_out(self, q, dim, keepdim, interpolation, False, out)


def quantile_scalar_out(self, q, dim, keepdim, interpolation, out):
    return _quantile_out(self, _scalar_q(self, q), dim, keepdim, interpolation, False, out)


def nanquantile(self, q, dim, keepdim, interpolation):
    return _quantile(self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(self, q, dim, keepdim, interpolation):
    return _quantile(self, _scalar_q(self, q), dim, keepdim, interpolation, True)


def nanquantile_out(self, q, dim, keepdim, interpolation, out):
    return _quantile_out(self, q, dim, keepdim, interpolation, True, out)


def nanquantile_scalar_out(self, q, dim, keepdim, interpolation, out):
    return _quantile_out(self, _scalar_q(self, q), dim, keepdim, interpolation, True, out)


# ---- cov and corrcoef ---------------------------------------------------------------------


def _is_true(t) -> bool:
    """PyTorch's is_scalar_tensor_true: ``t.equal(t.new_ones([], dtype=bool))``."""
    return aten.equal(t, aten.new_ones(t, [], dtype=dtypes.bool_))


def _weights_check(w, name: str, num_observations: int, floating: bool) -> None:
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.dim()} dimensions"
        )
    kind = w._data.dtype.kind
    if floating and kind != "f":
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with "
            f"{dtypes.scalar_type_name(w._data.dtype)} dtype"
        )
    if not floating and kind not in "iu":
        raise RuntimeError(
            f"cov(): expected {name} to have integral dtype but got {name} with "
            f"{dtypes.scalar_type_name(w._data.dtype)} dtype"
        )
    if w._data.size != num_observations:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w._data.size} != {num_observations}"
        )
    if num_observations != 0 and not _is_true(aten.ge_Scalar(aten.min(w), 0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(self, correction, fweights, aweights):
    if self.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{self.dim()} dimensions"
        )
    if self._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = aten.view(self, [1, -1]) if self.dim() < 2 else self
    num_observations = x.shape[1]
    w = None
    if fweights is not None:
        _weights_check(fweights, "fweights", num_observations, False)
        w = fweights
    if aweights is not None:
        _weights_check(aweights, "aweights", num_observations, True)
        w = aweights if w is None else aten.mul_Tensor(w, aweights)

    if w is not None:
        w_sum = aten.sum(w)
        if not _is_true(aten.ne_Scalar(w_sum, 0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = aten.div_Tensor(aten.sum_dim_IntList(aten.mul_Tensor(x, w), [1]), w_sum)
    else:
        w_sum = aten.scalar_tensor(num_observations, dtype=dtypes.int64)
        avg = aten.div_Tensor(aten.sum_dim_IntList(x, [1]), w_sum)

    if w is not None and correction != 0:
        if aweights is not None:
            spread = aten.mul_Scalar(aten.sum(aten.mul_Tensor(w, aweights)), correction)
            norm_factor = aten.sub_Tensor(w_sum, aten.div_Tensor(spread, w_sum))
        else:
            norm_factor = aten.sub_Scalar(w_sum, correction)
    elif w is not None:
        norm_factor = w_sum
    else:
        norm_factor = aten.scalar_tensor(num_observations - correction, dtype=dtypes.int64)

    if _is_true(aten.le_Scalar(norm_factor, 0)):
        warn_user(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations."
        )
        aten.zero_(norm_factor)

    x = aten.sub_Tensor(x, aten.unsqueeze(avg, 1))
    weighted = aten.mul_Tensor(x, w) if w is not None else x
    c = aten.mm(x, aten.t(weighted))
    return aten.squeeze(aten.div_Tensor(c, norm_factor))


def corrcoef(self):
    if self.dim() > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{self.dim()} dimensions"
        )
    c = cov(self, 1, None, None)
    if c.dim() == 0:
        # one variable: nan for a covariance of nan, inf or 0, else 1
        return aten.div_Tensor(c, c)
    stddev = aten.sqrt(aten.diagonal(c))
    c = aten.div_Tensor(c, aten.view(stddev, [-1, 1]))
    c = aten.div_Tensor(c, aten.view(stddev, [1, -1]))
    return aten.clamp(c, -1, 1)
