"""PyTorch's operator schema grammar, parsed into frozen dataclasses.

One parser serves codegen (loaded by file path, so codegen never imports the
opgrad package) and the runtime (``OpOverload._schema``, ``opgrad.library``).
It depends on nothing but the standard library.

Grammar: ``ns::name.overload(Args) -> Returns`` where an argument is
``Type[(alias)] name[=default]`` and ``*`` starts the keyword-only ones.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Optional, Tuple

__all__ = ["SchemaError", "AliasInfo", "Type", "Argument", "FunctionSchema", "parse_schema"]

BASE_TYPES = frozenset(
    "Tensor int SymInt float bool str Scalar ScalarType Layout Device "
    "MemoryFormat Generator Dimname Storage Stream Any".split()
)


#: the operators whose ``__i<name>__`` form is in-place, as PyTorch's schemas name them
_AUGMENTED_ASSIGNMENTS = frozenset("add sub mul div mod pow lshift rshift and xor or".split())


class SchemaError(ValueError):
    """A schema string that does not follow the grammar."""


@dataclass(frozen=True)
class AliasInfo:
    """``(a)``, ``(a!)`` or ``(a -> *)`` after a Tensor type."""

    before_set: Tuple[str, ...]
    after_set: Tuple[str, ...]
    is_write: bool

    def __str__(self) -> str:
        text = "|".join(self.before_set) + ("!" if self.is_write else "")
        if self.after_set != self.before_set:
            text += " -> " + "|".join(self.after_set)
        return f"({text})"


@dataclass(frozen=True)
class Type:
    """A schema type: base name, list-ness (with optional fixed size), optional-ness."""

    base: str
    is_list: bool = False
    list_size: Optional[int] = None
    optional: bool = False
    elem_optional: bool = False  # Tensor?[]

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"

    def __str__(self) -> str:
        text = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            text += f"[{self.list_size}]" if self.list_size is not None else "[]"
        return text + ("?" if self.optional else "")


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Argument:
    """One argument or return of a schema."""

    name: str
    type: Type
    default_text: Optional[str] = None
    kwarg_only: bool = False
    alias_info: Optional[AliasInfo] = None

    @property
    def has_default(self) -> bool:
        return self.default_text is not None

    @cached_property  # read on every call a dispatch mode sees: parsed once
    def default_value(self) -> Any:
        """The default as a Python value (``None``, ``1``, ``[]``, ``'none'``)."""
        return _default_to_python(self.default_text, self.type)

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self) -> str:
        text = str(self.type)
        if self.alias_info is not None:
            base, rest = text[: len(self.type.base)], text[len(self.type.base) :]
            text = base + str(self.alias_info) + rest
        if self.name:
            text += " " + self.name
        if self.default_text is not None:
            text += "=" + self.default_text
        return text


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed operator schema; ``str()`` gives back the canonical text."""

    name: str  # "aten::mul" when a namespace was given, else "mul"
    overload_name: str
    arguments: Tuple[Argument, ...]
    returns: Tuple[Argument, ...]

    @property
    def base_name(self) -> str:
        return self.name.split("::")[-1]

    @property
    def namespace(self) -> Optional[str]:
        return self.name.split("::")[0] if "::" in self.name else None

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    @property
    def is_inplace(self) -> bool:
        """``add_``-style (the base name ends with ``_``) or an augmented assignment
        (``__iand__``), and self is written."""
        name = self.base_name
        if name.endswith("__"):
            if not (name.startswith("__i") and name[3:-2] in _AUGMENTED_ASSIGNMENTS):
                return False
        elif not name.endswith("_"):
            return False
        return bool(self.arguments) and self.arguments[0].is_write

    @property
    def is_out(self) -> bool:
        return any(a.is_write and a.kwarg_only for a in self.arguments)

    def _is_view_op(self) -> bool:
        """A return aliases an input without writing to it."""
        return any(r.alias_info is not None and not r.is_write for r in self.returns)

    @property
    def is_view(self) -> bool:
        return self._is_view_op()

    @property
    def positional(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def kwarg_only(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    def __str__(self) -> str:
        name = self.name + ("." + self.overload_name if self.overload_name else "")
        parts = []
        star_done = False
        for arg in self.arguments:
            if arg.kwarg_only and not star_done:
                parts.append("*")
                star_done = True
            parts.append(str(arg))
        if len(self.returns) == 1 and not self.returns[0].name:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{name}({', '.join(parts)}) -> {rets}"


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)?$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPE = re.compile(
    r"^(?P<base>[A-Za-z]+)(?P<elemopt>\?)?(?P<alias>\([^)]*\))?"
    r"(?P<list>\[(?P<size>\d*)\])?(?P<opt>\?)?$"
)


def parse_schema(text: str) -> FunctionSchema:
    """Parse ``name.overload(args) -> returns``; raise SchemaError naming the fault."""
    text = text.strip()
    open_paren = text.find("(")
    close_paren = _matching_paren(text, open_paren) if open_paren >= 0 else -1
    if open_paren < 0 or close_paren < 0:
        raise SchemaError(f"expected 'name(args) -> returns', got {text!r}")
    head, args_text = text[:open_paren].strip(), text[open_paren + 1 : close_paren]
    tail = text[close_paren + 1 :].strip()
    if not tail.startswith("->"):
        raise SchemaError(f"missing '-> returns' in {text!r}")
    name, _, overload = head.partition(".")
    if not _NAME.match(name) or (overload and not _IDENT.match(overload)):
        raise SchemaError(f"bad operator name {head!r}")

    arguments = []
    kwarg_only = False
    for piece in _split_top_level(args_text):
        if piece == "*":
            if kwarg_only:
                raise SchemaError("'*' appears twice")
            kwarg_only = True
            continue
        arguments.append(_parse_argument(piece, kwarg_only, is_return=False))
    names = [a.name for a in arguments]
    if len(set(names)) != len(names):
        raise SchemaError(f"duplicate argument name in {text!r}")

    returns_text = tail[2:].strip()
    if returns_text.startswith("(") and returns_text.endswith(")"):
        returns_text = returns_text[1:-1]
    returns = tuple(
        _parse_argument(piece, False, is_return=True) for piece in _split_top_level(returns_text)
    )
    return FunctionSchema(name, overload, tuple(arguments), returns)


def _matching_paren(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top_level(text: str) -> list:
    pieces, depth, current = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            pieces.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    last = "".join(current).strip()
    if last:
        pieces.append(last)
    if any(not p for p in pieces):
        raise SchemaError(f"empty argument in {text!r}")
    return pieces


def _parse_argument(text: str, kwarg_only: bool, is_return: bool) -> Argument:
    type_text, default = text, None
    if "=" in text:
        type_text, default = (s.strip() for s in text.split("=", 1))
        if is_return:
            raise SchemaError(f"a return cannot have a default: {text!r}")
    # The alias annotation may hold spaces ("Tensor(a -> *)"): split the name off the end.
    match = re.match(r"^(?P<type>.*?)(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?$", type_text.strip())
    if match is None or not match.group("type"):
        raise SchemaError(f"bad argument {text!r}")
    name = match.group("name") or ""
    if not name and not is_return:
        raise SchemaError(f"argument without a name: {text!r}")
    type_, alias = _parse_type(match.group("type").replace(" ", ""))
    if default is not None:
        _check_default(default, type_, text)
    return Argument(name, type_, default, kwarg_only, alias)


def _parse_type(text: str) -> Tuple[Type, Optional[AliasInfo]]:
    match = _TYPE.match(text)
    if match is None or match.group("base") not in BASE_TYPES:
        raise SchemaError(f"unknown type {text!r}")
    alias = None
    if match.group("alias"):
        alias = _parse_alias(match.group("alias")[1:-1])
    is_list = match.group("list") is not None
    size = match.group("size")
    type_ = Type(
        base=match.group("base"),
        is_list=is_list,
        list_size=int(size) if size else None,
        optional=bool(match.group("opt")),
        elem_optional=bool(match.group("elemopt")),
    )
    if type_.elem_optional and not is_list:
        # "Tensor?" without a list: the '?' belongs to the whole type.
        type_ = Type(base=type_.base, optional=True)
    return type_, alias


def _parse_alias(text: str) -> AliasInfo:
    is_write = "!" in text
    text = text.replace("!", "")
    before, _, after = text.partition("->")
    before_set = tuple(s for s in before.split("|") if s)
    after_set = tuple(s for s in after.split("|") if s) if after else before_set
    if not before_set:
        raise SchemaError(f"empty alias annotation ({text})")
    return AliasInfo(before_set, after_set, is_write)


def _check_default(default: str, type_: Type, text: str) -> None:
    try:
        _default_to_python(default, type_)
    except (ValueError, SyntaxError) as exc:
        raise SchemaError(f"bad default in {text!r}: {exc}") from None


_ENUM_DEFAULTS = {"Mean": 1, "Sum": 2, "contiguous_format": "contiguous_format"}


def _default_to_python(text: Optional[str], type_: Type) -> Any:
    if text is None:
        return _NO_DEFAULT
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text in _ENUM_DEFAULTS:
        return _ENUM_DEFAULTS[text]
    if text.startswith("[") and text.endswith("]"):
        return tuple(int(s) for s in text[1:-1].split(",") if s.strip())
    if text.startswith(("'", '"')):
        return ast.literal_eval(text)
    value = ast.literal_eval(text)
    if type_.is_list and isinstance(value, int):
        return (value,) * (type_.list_size or 1)
    return value
