"""Composites of torch.special (CompositeImplicitAutograd in PyTorch): most functions are
other names of opgrad's ops (expit is sigmoid, psi is digamma, gammaln is lgamma), so a
dispatch mode sees, and autograd records, those ops; ndtr is composed from erf."""

from __future__ import annotations

import math

from .cpu_support import check_cast, warn_if_resized
from .generated import ops as aten

__all__ = [
    "special_digamma",
    "special_digamma_out",
    "special_erf",
    "special_erf_out",
    "special_erfc",
    "special_erfc_out",
    "special_erfinv",
    "special_erfinv_out",
    "special_exp2",
    "special_exp2_out",
    "special_expit",
    "special_expit_out",
    "special_expm1",
    "special_expm1_out",
    "special_gammaln",
    "special_gammaln_out",
    "special_i0",
    "special_i0_out",
    "special_log1p",
    "special_log1p_out",
    "special_log_softmax",
    "special_logit",
    "special_logit_out",
    "special_logsumexp",
    "special_logsumexp_out",
    "special_multigammaln",
    "special_multigammaln_out",
    "special_ndtr",
    "special_ndtr_out",
    "special_polygamma",
    "special_polygamma_out",
    "special_psi",
    "special_psi_out",
    "special_round",
    "special_round_out",
    "special_sinc",
    "special_sinc_out",
    "special_softmax",
    "special_xlogy",
    "special_xlogy_self_scalar",
    "special_xlogy_other_scalar",
    "special_xlogy_out",
    "special_xlogy_self_scalar_out",
    "special_xlogy_other_scalar_out",
    "special_gammainc",
    "special_gammainc_out",
    "special_gammaincc",
    "special_gammaincc_out",
]


def _renamed(op, op_out):
    """The functional and out= composites of a special function that is ``op`` by
    another name (its arguments in the same order)."""

    def functional(*args):
        return op(*args)

    def out_variant(*args):
        *inputs, out = args
        return op_out(*inputs, out=out)

    return functional, out_variant


special_expit, special_expit_out = _renamed(aten.sigmoid, aten.sigmoid_out)
special_erf, special_erf_out = _renamed(aten.erf, aten.erf_out)
special_erfc, special_erfc_out = _renamed(aten.erfc, aten.erfc_out)
special_erfinv, special_erfinv_out = _renamed(aten.erfinv, aten.erfinv_out)
special_exp2, special_exp2_out = _renamed(aten.exp2, aten.exp2_out)
special_expm1, special_expm1_out = _renamed(aten.expm1, aten.expm1_out)
special_gammaln, special_gammaln_out = _renamed(aten.lgamma, aten.lgamma_out)
special_digamma, special_digamma_out = _renamed(aten.digamma, aten.digamma_out)
special_psi, special_psi_out = _renamed(aten.digamma, aten.digamma_out)
special_i0, special_i0_out = _renamed(aten.i0, aten.i0_out)
special_log1p, special_log1p_out = _renamed(aten.log1p, aten.log1p_out)
special_logit, special_logit_out = _renamed(aten.logit, aten.logit_out)
special_multigammaln, special_multigammaln_out = _renamed(aten.mvlgamma, aten.mvlgamma_out)
special_polygamma, special_polygamma_out = _renamed(aten.polygamma, aten.polygamma_out)
special_sinc, special_sinc_out = _renamed(aten.sinc, aten.sinc_out)
special_logsumexp, special_logsumexp_out = _renamed(aten.logsumexp, aten.logsumexp_out)
special_xlogy, special_xlogy_out = _renamed(aten.xlogy_Tensor, aten.xlogy_OutTensor)
special_xlogy_self_scalar, special_xlogy_self_scalar_out = _renamed(
    aten.xlogy_Scalar_Self, aten.xlogy_OutScalar_Self
)
special_xlogy_other_scalar, special_xlogy_other_scalar_out = _renamed(
    aten.xlogy_Scalar_Other, aten.xlogy_OutScalar_Other
)
special_gammainc, special_gammainc_out = _renamed(aten.igamma, aten.igamma_out)
special_gammaincc, special_gammaincc_out = _renamed(aten.igammac, aten.igammac_out)


def special_round(self, decimals: int):
    return aten.round_decimals(self, decimals=decimals)


def special_round_out(self, decimals: int, out):
    return aten.round_decimals_out(self, decimals=decimals, out=out)


def special_softmax(self, dim: int, dtype):
    return aten.softmax_int(self, dim, dtype)


def special_log_softmax(self, dim: int, dtype):
    return aten.log_softmax_int(self, dim, dtype)


def special_ndtr(self):
    """The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, in PyTorch's four ops."""
    return aten.mul_Scalar(aten.add_Scalar(aten.erf(aten.mul_Scalar(self, math.sqrt(0.5))), 1), 0.5)


def special_ndtr_out(self, out):
    result = special_ndtr(self)
    check_cast(result._data.dtype, out._data.dtype)
    if out.shape != result.shape:
        warn_if_resized(out, tuple(result.shape))
        aten.resize_(out, result.shape)
    return aten.copy_(out, result)
