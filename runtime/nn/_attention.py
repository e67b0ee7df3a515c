"""``opgrad.nn.functional.scaled_dot_product_attention``: torch binds it straight to the
aten op (torch._C._nn), which picks the flash kernel or the math composition."""

from __future__ import annotations

from .. import python_arg_parser as _python_arg_parser
from ..generated import ops as _aten

__all__ = ["scaled_dot_product_attention"]

scaled_dot_product_attention = _python_arg_parser._overloaded(
    "scaled_dot_product_attention",
    "scaled_dot_product_attention",
    (_aten.scaled_dot_product_attention_op,),
    varargs=False,
)
