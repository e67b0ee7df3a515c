"""CompositeImplicitAutograd ops of the statistical reductions: nanmean (nansum over the
count of non-NaN elements, so its node is DivBackward0) and the ``unbiased=`` spellings of
var, std, var_mean and std_mean, which reach their ``correction`` overloads with a
correction of 1 (unbiased) or 0, as in PyTorch."""

from __future__ import annotations

from .generated import ops as aten
from . import dtypes

__all__ = [
    "nanmean",
    "nanmean_out",
    "std_dim",
    "std_mean_dim",
    "std_mean_unbiased",
    "std_out",
    "std_unbiased",
    "var_dim",
    "var_mean_dim",
    "var_mean_unbiased",
    "var_out",
    "var_unbiased",
]


def _non_nan_count(self, dim, keepdim: bool):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        name = dtypes.scalar_type_name(self._data.dtype)
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {name}"
        )
    # self == self is False exactly at NaN
    return aten.sum_dim_IntList(aten.eq_Tensor(self, self), dim, keepdim)


def nanmean(self, dim, keepdim, dtype):
    count = _non_nan_count(self, dim, keepdim)
    return aten.div_Tensor(aten.nansum(self, dim, keepdim, dtype=dtype), count)


def nanmean_out(self, dim, keepdim, dtype, out):
    count = _non_nan_count(self, dim, keepdim)
    return aten.div__Tensor(aten.nansum_out(self, dim, keepdim, dtype=dtype, out=out), count)


def _correction(unbiased: bool) -> int:
    return 1 if unbiased else 0


def var_dim(self, dim, unbiased, keepdim):
    return aten.var_correction(self, dim, correction=_correction(unbiased), keepdim=keepdim)


def var_out(self, dim, unbiased, keepdim, out):
    return aten.var_correction_out(
        self, dim, correction=_correction(unbiased), keepdim=keepdim, out=out
    )


def var_unbiased(self, unbiased):
    return aten.var_correction(self, None, correction=_correction(unbiased))


def std_dim(self, dim, unbiased, keepdim):
    return aten.std_correction(self, dim, correction=_correction(unbiased), keepdim=keepdim)


def std_out(self, dim, unbiased, keepdim, out):
    return aten.std_correction_out(
        self, dim, correction=_correction(unbiased), keepdim=keepdim, out=out
    )


def std_unbiased(self, unbiased):
    return aten.std_correction(self, None, correction=_correction(unbiased))


def var_mean_dim(self, dim, unbiased, keepdim):
    return aten.var_mean_correction(self, dim, correction=_correction(unbiased), keepdim=keepdim)


def var_mean_unbiased(self, unbiased):
    return aten.var_mean_correction(self, None, correction=_correction(unbiased))


def std_mean_dim(self, dim, unbiased, keepdim):
    return aten.std_mean_correction(self, dim, correction=_correction(unbiased), keepdim=keepdim)


def std_mean_unbiased(self, unbiased):
    return aten.std_mean_correction(self, None, correction=_correction(unbiased))
