"""Composites of the unary math ops of issue 15: torch's aliases (arccos ... arctanh call
acos ... atanh, fix calls trunc, in-place and out= alike) and positive (self itself, bool
refused), CompositeImplicitAutograd in PyTorch: no node of their own."""

from __future__ import annotations

from . import numpy_kernels as k
from .generated import ops as aten

__all__ = [
    "arccos",
    "arccos_",
    "arccos_out",
    "arcsin",
    "arcsin_",
    "arcsin_out",
    "arctan",
    "arctan_",
    "arctan_out",
    "arccosh",
    "arccosh_",
    "arccosh_out",
    "arcsinh",
    "arcsinh_",
    "arcsinh_out",
    "arctanh",
    "arctanh_",
    "arctanh_out",
    "fix",
    "fix_",
    "fix_out",
    "positive",
]


def arccos(self):
    return aten.acos(self)


def arccos_(self):
    return aten.acos_(self)


def arccos_out(self, out):
    return aten.acos_out(self, out=out)


def arcsin(self):
    return aten.asin(self)


def arcsin_(self):
    return aten.asin_(self)


def arcsin_out(self, out):
    return aten.asin_out(self, out=out)


def arctan(self):
    return aten.atan(self)


def arctan_(self):
    return aten.atan_(self)


def arctan_out(self, out):
    return aten.atan_out(self, out=out)


def arccosh(self):
    return aten.acosh(self)


def arccosh_(self):
    return aten.acosh_(self)


def arccosh_out(self, out):
    return aten.acosh_out(self, out=out)


def arcsinh(self):
    return aten.asinh(self)


def arcsinh_(self):
    return aten.asinh_(self)


def arcsinh_out(self, out):
    return aten.asinh_out(self, out=out)


def arctanh(self):
    return aten.atanh(self)


def arctanh_(self):
    return aten.atanh_(self)


def arctanh_out(self, out):
    return aten.atanh_out(self, out=out)


def fix(self):
    return aten.trunc(self)


def fix_(self):
    return aten.trunc_(self)


def fix_out(self, out):
    return aten.trunc_out(self, out=out)


def positive(self):
    k.positive_check(self)
    return self
