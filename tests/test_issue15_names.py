"""Every op issue 15 point 1 ("Unary math") names that torch has, looked up in opgrad:
functions, Tensor methods and in-place methods, in-place functions (torch.acos_) and
opgrad.special. The ops not built yet are listed in NOT_YET, and the list must be exactly
what is missing: building one fails this test until it leaves the list."""

from __future__ import annotations

import opgrad as og

_UNARY = """
acos asin atan acosh asinh atanh arccos arcsin arctan arccosh arcsinh arctanh sinh cosh tan
ceil floor round trunc fix frac rsqrt erf erfc erfinv exp2 expm1 log1p log2 log10 logit
lgamma digamma polygamma mvlgamma i0 sinc deg2rad rad2deg positive nan_to_num frexp sgn sign
""".split()

FUNCTIONS = _UNARY

#: torch's Tensor methods: every op, and the in-place variants torch has as methods
METHODS = _UNARY + [name + "_" for name in _UNARY if name not in ("positive", "frexp")]

#: torch's in-place functions (torch.acos_): erfinv_, lgamma_, digamma_, polygamma_ and
#: mvlgamma_ are methods only in torch
INPLACE_FUNCTIONS = [
    name + "_"
    for name in _UNARY
    if name not in ("positive", "frexp", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma")
    and name not in ("sgn", "sign")
]

SPECIAL = """
expit logit erf erfc erfcx erfinv ndtr ndtri log_ndtr xlogy xlog1py entr i0 i0e i1 i1e
gammaln digamma psi polygamma multigammaln sinc round log1p expm1 exp2 softmax log_softmax
logsumexp zeta bessel_j0 bessel_j1
""".split()

#: what issue 15 point 1 names and opgrad does not have yet
NOT_YET = {
    "function": set(),
    "method": set(),
    "inplace_function": set(),
    "special": set(),
}


def _missing():
    special = getattr(og, "special", None)
    return {
        "function": {n for n in FUNCTIONS if not hasattr(og, n)},
        "method": {n for n in METHODS if not hasattr(og.Tensor, n)},
        "inplace_function": {n for n in INPLACE_FUNCTIONS if not hasattr(og, n)},
        "special": {n for n in SPECIAL if special is None or not hasattr(special, n)},
    }


def test_every_op_issue_15_point_1_names_exists_but_those_listed_as_not_yet(torch):
    for name in FUNCTIONS:
        assert hasattr(torch, name), name
    for name in METHODS:
        assert hasattr(torch.Tensor, name), name
    for name in INPLACE_FUNCTIONS:
        assert hasattr(torch, name), name
    for name in SPECIAL:
        assert hasattr(torch.special, name), name
    assert _missing() == NOT_YET


# ---- issue 15 point 2, "Binary math" -------------------------------------------------------

_BINARY = """
atan2 arctan2 hypot logaddexp logaddexp2 copysign heaviside nextafter ldexp fmod remainder
floor_divide true_divide lerp addcmul addcdiv float_power igamma igammac xlogy maximum
minimum div
""".split()

BINARY_FUNCTIONS = _BINARY + ["ldexp_"]

#: torch's Tensor methods: every op, and the in-place variants torch has as methods
#: (logaddexp, logaddexp2, maximum and minimum have none)
BINARY_METHODS = _BINARY + [
    name + "_" for name in _BINARY if name not in ("logaddexp", "logaddexp2", "maximum", "minimum")
]

#: the torch.special functions point 2 builds the aten ops of (opgrad.special exposes them)
BINARY_ATEN = """
special_xlog1py.default special_xlog1py.self_scalar special_xlog1py.other_scalar
special_xlog1py.out special_xlog1py.self_scalar_out special_xlog1py.other_scalar_out
special_zeta.default special_zeta.self_scalar special_zeta.other_scalar special_zeta.out
special_zeta.self_scalar_out special_zeta.other_scalar_out
""".split()

#: what issue 15 point 2 names and opgrad does not have yet
NOT_YET_BINARY = {
    "function": set(),
    "method": set(),
    "aten": set(),
}


def _missing_binary():
    def has_aten(name):
        op, overload = name.split(".")
        packet = getattr(og.ops.aten, op, None)
        return packet is not None and hasattr(packet, overload)

    return {
        "function": {n for n in BINARY_FUNCTIONS if not hasattr(og, n)},
        "method": {n for n in BINARY_METHODS if not hasattr(og.Tensor, n)},
        "aten": {n for n in BINARY_ATEN if not has_aten(n)},
    }


def test_every_op_issue_15_point_2_names_exists_but_those_listed_as_not_yet(torch):
    for name in BINARY_FUNCTIONS:
        assert hasattr(torch, name), name
    for name in BINARY_METHODS:
        assert hasattr(torch.Tensor, name), name
    for name in BINARY_ATEN:
        op, overload = name.split(".")
        assert hasattr(getattr(torch.ops.aten, op), overload), name
    assert _missing_binary() == NOT_YET_BINARY


# ---- issue 15 point 3: the matmul family ----------------------------------------------------

_MATMUL = """
addmv addr addbmm outer ger vdot inner kron tensordot chain_matmul matrix_power cross cdist
einsum
""".split()

#: torch's functions of point 3 (torch.addmv_ is a function too; addr_ and addbmm_ are not)
MATMUL_FUNCTIONS = _MATMUL + ["addmv_"]

#: torch's Tensor methods of point 3 (tensordot, chain_matmul, cdist and einsum are
#: functions only) and their in-place variants
MATMUL_METHODS = [
    n for n in _MATMUL if n not in ("tensordot", "chain_matmul", "cdist", "einsum")
] + ["addmv_", "addr_", "addbmm_"]

MATMUL_LINALG = ["multi_dot", "matrix_power", "cross"]

#: what point 3 names and opgrad does not have yet
NOT_YET_MATMUL = {
    "function": set(),
    "method": set(),
    "linalg": set(),
}


def _missing_matmul():
    return {
        "function": {n for n in MATMUL_FUNCTIONS if not hasattr(og, n)},
        "method": {n for n in MATMUL_METHODS if not hasattr(og.Tensor, n)},
        "linalg": {n for n in MATMUL_LINALG if not hasattr(og.linalg, n)},
    }


def test_every_op_issue_15_point_3_names_exists_but_those_listed_as_not_yet(torch):
    for name in MATMUL_FUNCTIONS:
        assert hasattr(torch, name), name
    for name in MATMUL_METHODS:
        assert hasattr(torch.Tensor, name), name
    for name in MATMUL_LINALG:
        assert hasattr(torch.linalg, name), name
    assert _missing_matmul() == NOT_YET_MATMUL
