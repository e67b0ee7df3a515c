"""derivatives.yaml -> validated dataclasses: the single parsed model.

Every generator is a function of this model; nothing else reads the YAML.
Errors name the file and line of the faulty entry:
``derivatives.yaml:LINE: op: what is wrong``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Tuple

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _load_schema_module():
    # The runtime's parser, loaded by path: codegen never imports the opgrad package.
    spec = importlib.util.spec_from_file_location("_opgrad_schema", ROOT / "runtime" / "schema.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


schema_module = _load_schema_module()
FunctionSchema = schema_module.FunctionSchema
parse_schema = schema_module.parse_schema
SchemaError = schema_module.SchemaError


class ModelError(Exception):
    """A fault in derivatives.yaml, located at ``path:line``."""

    def __init__(self, path: str, line: int, op: str, message: str) -> None:
        super().__init__(f"{path}:{line}: {op}: {message}")


DTYPE_RULES = ("none", "promote", "float", "division", "compare")
VARIANTS = ("function", "method")
# Metadata reads a formula may make on a tensor input, saved in place of the tensor.
METADATA_CALLS = {
    "sym_sizes": "sym_sizes",
    "sym_strides": "sym_strides",
    "sym_numel": "sym_numel",
    "numel": "numel",
    "dim": "dim",
    "scalar_type": "scalar_type",
    "geometry": "geometry",
}
# Function calls on an input that save only its metadata (PyTorch's names):
# zeros_like(values) -> values_info, to_args_sizes(tensors) -> tensors_args_sizes ...
METADATA_FUNCTIONS = {
    "zeros_like": ("info", "zeros_like_info"),
    "to_args_sizes": ("args_sizes", None),
    "to_args_scalartypes": ("args_scalartypes", None),
}
#: names formulas may use without declaring them
BUILTINS = frozenset(
    "None True False len range tuple list int float abs min max isinstance".split()
)
KNOWN_KEYS = frozenset(
    "name cpu check target_check autograd_check dtype unpromoted composite node inplace out "
    "out_dtype variants output_differentiability tags copy copy_out python_module".split()
)
#: torch submodules whose functions are ops of this file (`python_module:`)
PYTHON_MODULES = ("special",)
#: how an out= variant treats out's dtype (PyTorch's rule for the op)
OUT_DTYPE_RULES = ("castable", "exact", "exact_matmul", "exact_result", "exact_scalar_type", "bool")
TAGS = frozenset(
    {
        "inplace_view",
        "version_on_size_change",
        "aten_only_out",
        "inplace_function",
        "not_a_view",
        "float16_scalar_other",
        "numbers_as_tensors",
        "linear",
        "linear_in_first",
    }
)
#: tags that hold for a name rather than one overload (Python calls and formulas reach an
#: op by its name): every overload of the name carries them or none does
NAME_TAGS = ("numbers_as_tensors", "linear", "linear_in_first")
#: node names several entries may carry, as in PyTorch (each gets a class of its own)
SHARED_NODE_NAMES = frozenset({"NotImplemented"})
#: the decorator in functions_manual.py that marks a helper linear in its first argument
LINEAR_HELPER_DECORATOR = "linear_in_first"


@dataclass(frozen=True)
class Formula:
    """One backward formula: the inputs it differentiates and its expression."""

    inputs: Tuple[str, ...]
    text: str
    expr: str  # rewritten Python source (metadata calls replaced by saved names)
    names: Tuple[str, ...]  # every name the rewritten expression reads
    #: the metadata the expression reads in place of a tensor, by the name it reads it
    #: as: ``("self_sym_sizes", ("self", "sym_sizes"))``
    metadata: Tuple[Tuple[str, Tuple[str, str]], ...] = ()


@dataclass(frozen=True)
class SavedField:
    """A value a node keeps for backward: ``_saved_<name>``."""

    name: str  # accessor suffix: "self", "self_sym_sizes", "result", "alpha"
    kind: str  # "tensor", "output", "value", "metadata"
    source: str  # argument or return it comes from
    metadata: Optional[str] = None  # sym_sizes, sym_numel, ...
    #: formulas' differentiable inputs whose need triggers saving (tensors only)
    needed_by: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ListCopyOut:
    """How the out= variant of a copy with a list of results (``split_copy.Tensor_out``)
    treats its outs; PyTorch's three such ops differ."""

    #: the name its error for a list of the wrong length starts with
    size_error: str
    #: "resized": each out must have its result's dtype and is resized as out= tensors
    #: are; "copy_": each is written as ``out.copy_(result)`` (any dtype, broadcast, never
    #: resized)
    writes: str = "resized"
    #: whether outs that require grad are refused (else written, without history)
    refuses_grad_outs: bool = True


LIST_COPY_OUT_KEYS = {"size_error", "writes", "grad_outs"}


@dataclass(frozen=True)
class Entry:
    """One op overload of derivatives.yaml."""

    line: int
    schema: FunctionSchema
    cpu: Optional[str]
    dtype_rule: str
    composite: Optional[str]
    formulas: Tuple[Formula, ...]
    forward_formulas: Tuple[Tuple[str, str], ...]
    non_differentiable: Tuple[str, ...]
    output_differentiability: Optional[Tuple[bool, ...]]
    node_name: Optional[str]
    variants: Tuple[str, ...]
    inplace: Optional[FunctionSchema]
    out: Optional[FunctionSchema]
    tags: Tuple[str, ...] = ()
    saved: Tuple[SavedField, ...] = ()
    check: Optional[str] = None
    unpromoted: Tuple[str, ...] = ()
    #: the out= variant's rule for out's dtype: one of OUT_DTYPE_RULES
    out_dtype: str = "castable"
    #: run in the in-place and out= variants' kernels after ``check``, with ``target`` the
    #: tensor they write (self, out): PyTorch's own checks of that tensor
    target_check: Optional[str] = None
    #: for a view's ``*_copy`` op (the `copy:` key): the view's op name, and its kernel
    #: expression (what a copy with a list of results writes into its outs)
    copy_of: Optional[str] = None
    copied_view_cpu: Optional[str] = None
    #: for a copy with a list of results: how its out= variant writes (the `copy_out:` key)
    list_copy_out: Optional["ListCopyOut"] = None
    #: run by the Autograd kernel of a non-differentiable op before the op goes further (a
    #: dispatch mode never sees a call it refuses): PyTorch's checks in its manual autograd
    #: kernels (resize_: "cannot resize variables that require grad")
    autograd_check: Optional[str] = None
    #: the torch submodule whose function this op is (`special`: ``torch.special.entr`` is
    #: ``special_entr``), as PyTorch's native_functions.yaml says; None for ``torch.<op>``
    python_module: Optional[str] = None

    @property
    def op_name(self) -> str:
        s = self.schema
        return f"{s.base_name}.{s.overload_name}" if s.overload_name else s.base_name

    @property
    def is_differentiable(self) -> bool:
        return bool(self.formulas)

    @property
    def differentiable_inputs(self) -> Tuple[str, ...]:
        """Inputs with a formula, in schema order: one next edge each."""
        with_formula = {name for f in self.formulas for name in f.inputs}
        return tuple(a.name for a in self.schema.arguments if a.name in with_formula)

    @property
    def is_view(self) -> bool:
        return self.schema.is_view

    @property
    def is_inplace(self) -> bool:
        return self.schema.is_inplace


@dataclass
class Model:
    path: str
    entries: List[Entry]
    helpers: Tuple[str, ...]
    #: helpers decorated ``@linear_in_first``: f(0, ...) is 0
    linear_helpers: Tuple[str, ...] = ()

    def by_name(self) -> Dict[str, Entry]:
        return {e.op_name: e for e in self.entries}

    def names_tagged(self, tag: str) -> FrozenSet[str]:
        """Base names whose overloads carry ``tag`` (one of NAME_TAGS)."""
        return frozenset(e.schema.base_name for e in self.entries if tag in e.tags)


@dataclass(frozen=True)
class FileFacts:
    """What any entry's formulas may name, known once the whole file has been read."""

    path: str
    helpers: Tuple[str, ...]  # functions_manual's public functions
    op_functions: FrozenSet[str]  # ops callable as functions
    #: methods a formula's ``t.name(...)`` may turn into the op's entry: how many
    #: positional arguments follow the tensor
    entry_methods: Mapping[str, int]


@dataclass(frozen=True)
class EntryScope:
    """The entry being read: where it is, its schema, and the file's facts."""

    facts: FileFacts
    op: str
    schema: FunctionSchema
    line: int
    key_lines: Mapping[str, int]

    def error(self, message: str, key: Optional[str] = None) -> ModelError:
        """A fault at ``key``'s line, or the entry's."""
        return ModelError(self.facts.path, self.key_lines.get(key, self.line), self.op, message)

    def error_at(self, line: int, message: str) -> ModelError:
        return ModelError(self.facts.path, line, self.op, message)

    @property
    def arg_names(self) -> List[str]:
        return [a.name for a in self.schema.arguments]

    @property
    def tensor_args(self) -> List[str]:
        return [a.name for a in self.schema.arguments if a.type.base == "Tensor"]

    @property
    def return_names(self) -> Tuple[str, ...]:
        return _return_names(self.schema)


class _LineLoader(yaml.SafeLoader):
    """A SafeLoader that records each mapping's line in a ``__line__`` key."""


def _construct_mapping(loader, node, deep=False):
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    mapping["__line__"] = node.start_mark.line + 1
    mapping["__key_lines__"] = {k.value: k.start_mark.line + 1 for k, _ in node.value}
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _helper_functions(path: Path) -> List[ast.FunctionDef]:
    """Top-level public functions of functions_manual.py, read without importing it, and
    of the sibling modules it re-exports with ``from .<module> import *``; not the
    decorators among them, which mark helpers rather than compute gradients."""
    functions = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            functions.append(node)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 1
            and node.module
            and [a.name for a in node.names] == ["*"]
        ):
            functions += _helper_functions(path.parent / f"{node.module}.py")
    decorators = {
        d.id for node in functions for d in node.decorator_list if isinstance(d, ast.Name)
    }
    return [node for node in functions if node.name not in decorators]


def helper_names(path: Path) -> Tuple[str, ...]:
    return tuple(node.name for node in _helper_functions(path))


def linear_helper_names(path: Path) -> Tuple[str, ...]:
    return tuple(
        node.name
        for node in _helper_functions(path)
        if any(
            isinstance(d, ast.Name) and d.id == LINEAR_HELPER_DECORATOR for d in node.decorator_list
        )
    )


def load(path: Path) -> Model:
    text = path.read_text()
    name = path.name
    try:
        raw = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise ModelError(name, line, "<yaml>", str(exc).splitlines()[0]) from None
    if not isinstance(raw, list):
        raise ModelError(name, 1, "<file>", "expected a list of entries")
    manual = ROOT / "runtime" / "autograd" / "functions_manual.py"
    helpers = helper_names(manual)

    entries: List[Entry] = []
    seen: Dict[str, int] = {}
    parsed = []
    for item in raw:
        if not isinstance(item, dict) or "name" not in item:
            line = item.get("__line__", 1) if isinstance(item, dict) else 1
            raise ModelError(name, line, "<entry>", "every entry needs a 'name' (its schema)")
        line = item["__line__"]
        try:
            schema = parse_schema(str(item["name"]))
        except SchemaError as exc:
            raise ModelError(name, line, str(item["name"]).split("(")[0], f"bad schema: {exc}")
        op = (
            f"{schema.base_name}.{schema.overload_name}"
            if schema.overload_name
            else schema.base_name
        )
        variant_schemas = []
        for key in ("inplace", "out", "copy"):
            if key in item:
                try:
                    variant_schemas.append(parse_schema(str(item[key])))
                except SchemaError as exc:
                    raise ModelError(
                        name, item["__key_lines__"][key], op, f"bad {key} schema: {exc}"
                    )
        if "copy" in item:
            variant_schemas.append(copy_out_schema(variant_schemas[-1]))
        for s in [schema] + [v for v in variant_schemas if v is not None]:
            overload = f"{s.base_name}.{s.overload_name}" if s.overload_name else s.base_name
            if overload in seen:
                raise ModelError(
                    name,
                    line,
                    op,
                    f"duplicate overload {overload} (first at line {seen[overload]})",
                )
            seen[overload] = line
        parsed.append((item, line, schema, op, variant_schemas))

    op_functions = set()
    for item, _, schema, _, _ in parsed:
        variants = _variants(item)
        if "function" in variants:
            op_functions.add(schema.base_name)
        for key in ("inplace",):
            if key in item:
                op_functions.add(parse_schema(str(item[key])).base_name)

    overloads_by_name: Dict[str, list] = {}
    for item, _, schema, _, _ in parsed:
        overloads_by_name.setdefault(schema.base_name, []).append((item, schema))
    entry_methods = {}  # method name -> how many positional arguments follow the tensor
    for base, overloads in overloads_by_name.items():
        if len(overloads) == 1:
            item, schema = overloads[0]
            if "method" in _variants(item) and not schema.overload_name and "composite" not in item:
                entry_methods[base] = sum(1 for a in schema.arguments[1:] if not a.kwarg_only)

    facts = FileFacts(name, helpers, frozenset(op_functions), entry_methods)
    copied = []  # (view entry, copy schema, its out schema, its out's error name, line)
    for item, line, schema, op, variant_schemas in parsed:
        scope = EntryScope(facts, op, schema, line, item["__key_lines__"])
        if "copy" in item:
            *variant_schemas, copy, copy_out = variant_schemas
            if not schema.is_view or item.get("cpu") is None:
                raise scope.error("only a view op with a cpu kernel has a copy variant", "copy")
            list_out = _list_copy_out(scope, item, copy, copy_out)
            copied.append((copy, copy_out, list_out, item["__key_lines__"]["copy"]))
        elif "copy_out" in item:
            raise scope.error("copy_out needs a copy", "copy_out")
        entries.append(_entry(scope, item, variant_schemas))
        if "copy" in item:
            copied[-1] = (entries[-1],) + copied[-1]
    # node names of the copies follow their views' derived names, so come after them
    entries += [_copy_entry(view, *copy, entries) for view, *copy in copied]
    _check_node_names(name, entries)
    _check_name_tags(name, entries)
    return Model(name, entries, helpers, linear_helper_names(manual))


def _variants(item: dict) -> Tuple[str, ...]:
    text = str(item.get("variants", "function, method"))
    if text.strip() == "none":
        return ()
    return tuple(v.strip() for v in text.split(",") if v.strip())


def _entry(scope: EntryScope, item: dict, variant_schemas: List[FunctionSchema]) -> Entry:
    schema, fail = scope.schema, scope.error

    for key in item:
        if key.startswith("__"):
            continue
        if (
            key not in KNOWN_KEYS
            and key not in {a.name for a in schema.arguments}
            and not _is_formula_key(key, schema)
        ):
            raise fail(f"unknown key or input '{key}'", key)

    dtype_rule = str(item.get("dtype", "none"))
    if dtype_rule not in DTYPE_RULES:
        raise fail(f"dtype must be one of {', '.join(DTYPE_RULES)}, got '{dtype_rule}'", "dtype")
    unpromoted = tuple(n.strip() for n in str(item.get("unpromoted", "")).split(",") if n.strip())
    scalar_args = {a.name for a in schema.arguments if a.type.base == "Scalar"}
    for name in unpromoted:
        if name not in scalar_args:
            raise fail(f"unpromoted names '{name}', which is no Scalar input", "unpromoted")
    variants = _variants(item)
    for v in variants:
        if v not in VARIANTS:
            raise fail(f"unknown variant '{v}'", "variants")
    cpu = item.get("cpu")
    composite = item.get("composite")
    if composite is not None and cpu is not None:
        raise fail("a composite op has no cpu kernel of its own", "composite")
    if composite is None and cpu is None:
        raise fail("needs a 'cpu' kernel or a 'composite' decomposition")
    if cpu is not None:
        _check_cpu_expression(str(cpu), schema, fail)
    check = item.get("check")
    if check is not None:
        if cpu is None:
            raise fail("only an op with a cpu kernel has a check", "check")
        _check_check_expression(str(check), schema, fail)

    output_diff = item.get("output_differentiability")
    if output_diff is not None:
        if not isinstance(output_diff, list) or not all(isinstance(b, bool) for b in output_diff):
            raise fail(
                "output_differentiability must be a list of booleans", "output_differentiability"
            )
        output_diff = tuple(output_diff)

    arg_names, tensor_args = scope.arg_names, scope.tensor_args
    formulas, forward, non_diff = [], [], []
    for key, value in item.items():
        if key.startswith("__") or key in KNOWN_KEYS:
            continue
        key_line = item["__key_lines__"][key]
        if key in scope.return_names or key.startswith("result"):
            forward.append((key, str(value)))
            continue
        inputs = tuple(k.strip() for k in key.split(","))
        for inp in inputs:
            if inp not in arg_names:
                raise scope.error_at(key_line, f"'{inp}' is not an input of {scope.op}")
            if inp not in tensor_args:
                raise scope.error_at(
                    key_line, f"input '{inp}' is not a Tensor and cannot have a formula"
                )
        if str(value).strip() == "non_differentiable":
            non_diff.extend(inputs)
            continue
        formulas.append(_formula(scope, key_line, inputs, str(value)))

    all_false = output_diff is not None and not any(output_diff)
    if composite is None and not all_false:
        covered = {i for f in formulas for i in f.inputs} | set(non_diff)
        for arg in schema.arguments:
            if arg.type.base == "Tensor" and not arg.kwarg_only and arg.name not in covered:
                raise fail(
                    f"input '{arg.name}' has no formula and is not marked non_differentiable"
                )
        if formulas and not forward:
            raise fail("differentiable ops need a forward-mode formula ('result: ...')")
    if all_false and formulas:
        raise fail("an op whose outputs are all non-differentiable has no backward formulas")
    for key, text in forward:
        _check_forward(scope, item["__key_lines__"][key], text, non_diff)

    tags = tuple(t.strip() for t in str(item.get("tags", "")).split(",") if t.strip())
    for tag in tags:
        if tag not in TAGS:
            raise fail(f"unknown tag '{tag}'", "tags")
    node_name = item.get("node")
    if node_name is not None and not re.match(r"^[A-Z][A-Za-z0-9]*(_copy)?$", str(node_name)):
        raise fail(f"bad node name '{node_name}'", "node")
    inplace = out = None
    for s in variant_schemas:
        if s.is_inplace:
            inplace = s
        else:
            out = s
    out_dtype = str(item.get("out_dtype", "castable"))
    if out_dtype not in OUT_DTYPE_RULES:
        raise fail(
            f"out_dtype must be one of {', '.join(OUT_DTYPE_RULES)}, got '{out_dtype}'", "out_dtype"
        )
    if "out_dtype" in item and out is None:
        raise fail("out_dtype without an out= variant", "out_dtype")
    target_check = item.get("target_check")
    if target_check is not None:
        if inplace is None and out is None:
            raise fail("target_check without an in-place or out= variant", "target_check")
        if out is not None and len(out.returns) > 1 and inplace is not None:
            raise fail(
                "target_check of an out= variant with several outs needs no in-place variant",
                "target_check",
            )
        _check_check_expression(
            str(target_check), schema, fail, "target_check", ("target", "targets")
        )
    autograd_check = item.get("autograd_check")
    if autograd_check is not None:
        if output_diff is None or any(output_diff):
            raise fail("autograd_check on a differentiable op", "autograd_check")
        _check_check_expression(str(autograd_check), schema, fail, "autograd_check")
    python_module = item.get("python_module")
    if python_module is not None:
        if python_module not in PYTHON_MODULES:
            raise fail(f"python_module must be one of {', '.join(PYTHON_MODULES)}", "python_module")
        if "function" not in variants or not schema.base_name.startswith(f"{python_module}_"):
            raise fail(
                f"a {python_module} function is a function variant named {python_module}_<name>",
                "python_module",
            )
    entry = Entry(
        line=scope.line,
        schema=schema,
        cpu=str(cpu) if cpu is not None else None,
        dtype_rule=dtype_rule,
        composite=str(composite) if composite is not None else None,
        formulas=tuple(formulas),
        forward_formulas=tuple(forward),
        non_differentiable=tuple(non_diff),
        output_differentiability=output_diff,
        node_name=str(node_name) if node_name else None,
        variants=variants,
        inplace=inplace,
        out=out,
        tags=tags,
        check=str(check) if check is not None else None,
        unpromoted=unpromoted,
        out_dtype=out_dtype,
        target_check=str(target_check) if target_check is not None else None,
        autograd_check=str(autograd_check) if autograd_check is not None else None,
        python_module=python_module,
    )
    return _with_saved(entry)


def copy_out_schema(copy: FunctionSchema) -> Optional[FunctionSchema]:
    """The out= variant PyTorch generates for a view's copy: ``<overload>_out`` (``out`` for
    the default overload) with a keyword-only ``out`` of the copy's result type: one tensor,
    returned, or for a list of results a list of tensors and no return (``Tensor(a!)[] out
    -> ()``). None for a copy with several separate results (PyTorch has none)."""
    if len(copy.returns) != 1:
        return None
    overload = f"{copy.overload_name}_out" if copy.overload_name else "out"
    text = str(copy)
    arguments = text[text.index("(") + 1 : text.rindex(") -> ")]
    separator = ", " if "*" in arguments else ", *, "
    if copy.returns[0].type.is_list:
        out, returns = "Tensor(a!)[] out", "()"
    else:
        out, returns = "Tensor(a!) out", "Tensor(a!)"
    return parse_schema(f"{copy.base_name}.{overload}({arguments}{separator}{out}) -> {returns}")


def _list_copy_out(scope, item, copy: FunctionSchema, copy_out) -> Optional[ListCopyOut]:
    """The `copy_out:` key of a copy with a list of results (its defaults without it)."""
    given = item.get("copy_out", {})
    if isinstance(given, dict):  # without the loader's line marks
        given = {k: v for k, v in given.items() if not k.startswith("__")}
    if not copy.returns[0].type.is_list:
        if "copy_out" in item:
            raise scope.error("copy_out is for a copy with a list of results", "copy_out")
        return None
    if not isinstance(given, dict) or not set(given) <= LIST_COPY_OUT_KEYS:
        keys = ", ".join(sorted(LIST_COPY_OUT_KEYS))
        raise scope.error(f"copy_out is a mapping of {keys}", "copy_out")
    writes = str(given.get("writes", "resized"))
    grad_outs = str(given.get("grad_outs", "refused"))
    if writes not in ("resized", "copy_") or grad_outs not in ("refused", "accepted"):
        raise scope.error(
            "copy_out's writes is resized or copy_, its grad_outs refused or accepted",
            "copy_out",
        )
    size_error = str(given.get("size_error", f"{copy.base_name}_{copy_out.overload_name}"))
    return ListCopyOut(size_error, writes, grad_outs == "refused")


def _copy_entry(
    view: Entry, copy: FunctionSchema, out, list_out: Optional[ListCopyOut], line: int, entries
) -> Entry:
    """A view's ``*_copy`` variant: the view's formulas and saved fields on a fresh row-major
    copy of its result, under PyTorch's node name for it (the view's + ``_copy``)."""
    return replace(
        view,
        line=line,
        schema=copy,
        cpu=f"k.copy_of({view.cpu})",
        node_name=f"{node_class_name(view, entries)}_copy",
        variants=("function",),
        inplace=None,
        out=out,
        tags=tuple(t for t in view.tags if t not in ("inplace_view", "not_a_view")),
        out_dtype="exact_result",
        copy_of=view.op_name,
        copied_view_cpu=view.cpu,
        list_copy_out=list_out,
    )


def _is_formula_key(key: str, schema) -> bool:
    names = {a.name for a in schema.arguments}
    return (
        all(k.strip() in names for k in key.split(","))
        or key in _return_names(schema)
        or key.startswith("result")
    )


def _return_names(schema) -> Tuple[str, ...]:
    if len(schema.returns) == 1:
        return (schema.returns[0].name or "result",)
    return tuple(r.name or f"result{i}" for i, r in enumerate(schema.returns))


def _check_cpu_expression(text: str, schema, fail) -> None:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise fail(f"cpu kernel is not a Python expression: {exc.msg}", "cpu")
    # an argument named k (topk's) hides the kernels module k inside the kernel's body
    if any(a.name == "k" for a in schema.arguments) and any(
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "k"
        for node in ast.walk(tree)
    ):
        raise fail("argument 'k' hides the kernels module k: name it numpy_kernels", "cpu")


def _check_check_expression(text: str, schema, fail, key: str = "check", extra=()) -> None:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise fail(f"{key} is not a Python expression: {exc.msg}", key)
    known = {a.name for a in schema.arguments} | {"k", "np", "numpy_kernels"} | BUILTINS
    known |= set(extra)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in known:
            raise fail(f"unknown name '{node.id}' in {key}", key)


class _MetadataRewriter(ast.NodeTransformer):
    """``self.sym_sizes()`` -> ``self_sym_sizes``; collects what was rewritten."""

    def __init__(self, tensor_args, optional_args=(), returns=()) -> None:
        self.tensor_args = set(tensor_args)
        self.optional_args = set(optional_args)
        #: results whose one size a formula may save (``S.sym_size(-1)``, after the kernel)
        self.returns = set(returns)
        self.found: Dict[str, Tuple[str, str]] = {}

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in METADATA_FUNCTIONS
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.tensor_args
        ):
            arg = node.args[0].id
            suffix, replacement = METADATA_FUNCTIONS[func.id]
            field_name = f"{arg}_{suffix}"
            self.found[field_name] = (arg, suffix)
            new = ast.Name(id=field_name, ctx=ast.Load())
            if replacement:
                new = ast.Call(
                    func=ast.Name(id=replacement, ctx=ast.Load()), args=[new], keywords=[]
                )
            return ast.copy_location(new, node)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in self.tensor_args
        ):
            arg = func.value.id
            if func.attr in METADATA_CALLS and not node.args:
                kind = METADATA_CALLS[func.attr]
                if kind == "sym_sizes" and arg in self.optional_args:
                    kind = "sym_sizes_opt"  # PyTorch's OptionalArray: None without the tensor
                field_name = f"{arg}_{kind}"
                self.found[field_name] = (arg, kind)
                return ast.copy_location(ast.Name(id=field_name, ctx=ast.Load()), node)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in self.tensor_args | self.returns
        ):
            arg = func.value.id
            if (
                func.attr == "sym_size"
                and len(node.args) == 1
                and isinstance(node.args[0], (ast.Constant, ast.UnaryOp))
            ):
                value = ast.literal_eval(node.args[0])
                suffix = f"minus_{-value}" if value < 0 else str(value)
                field_name = f"{arg}_sym_argsize_{suffix}"
                self.found[field_name] = (arg, f"sym_size:{value}")
                return ast.copy_location(ast.Name(id=field_name, ctx=ast.Load()), node)
        return node


def _names(tree) -> List[str]:
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]


class _MethodToEntry(ast.NodeTransformer):
    """``t.name(args)`` becomes ``aten.name(t, args)`` when ``name`` is the method of an op
    with one overload and the call passes its positional arguments exactly: the node then
    calls the op's entry (and so, in the plain state, its fused kernel) without the Python
    surface resolving overloads."""

    def __init__(self, entry_methods: Dict[str, int]) -> None:
        self.entry_methods = entry_methods

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and not (isinstance(func.value, ast.Name) and func.value.id in ("F", "ops", "aten"))
            and self.entry_methods.get(func.attr) == len(node.args)
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            entry = ast.Attribute(value=ast.Name(id="aten", ctx=ast.Load()), attr=func.attr)
            call = ast.Call(func=entry, args=[func.value, *node.args], keywords=[])
            return ast.copy_location(call, node)
        return node


def _formula(scope: EntryScope, line: int, inputs: Tuple[str, ...], text: str) -> Formula:
    schema, facts = scope.schema, scope.facts
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise scope.error_at(
            line, f"formula for {', '.join(inputs)} is not a Python expression: {exc.msg}"
        )
    optional = [a.name for a in schema.arguments if a.type.optional]
    rewriter = _MetadataRewriter(scope.tensor_args, optional, scope.return_names)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    tree = ast.fix_missing_locations(_MethodToEntry(facts.entry_methods).visit(tree))
    allowed = (
        {"grad", "grads", "grad_input_mask"}
        | set(scope.arg_names)
        | set(scope.return_names)
        | set(rewriter.found)
        | set(facts.helpers)
        | facts.op_functions
        | BUILTINS
        | {"aten"}
    )
    names = _names(tree)
    for n in names:
        if n not in allowed:
            raise scope.error_at(line, f"unknown name '{n}' in formula for {', '.join(inputs)}")
    if "grads" in names and "grad" in names:
        raise scope.error_at(line, "a formula uses either 'grad' or 'grads', not both")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "grads"
        ):
            index = node.slice
            if (
                not isinstance(index, ast.Constant)
                or not isinstance(index.value, int)
                or not 0 <= index.value < len(schema.returns)
            ):
                raise scope.error_at(
                    line, f"grads[...] index out of range for {len(schema.returns)} outputs"
                )
    return Formula(
        inputs=inputs,
        text=text.strip(),
        expr=ast.unparse(tree),
        names=tuple(dict.fromkeys(names)),
        metadata=tuple(sorted(rewriter.found.items())),
    )


def _check_forward(scope: EntryScope, line: int, text: str, non_diff: List[str]) -> None:
    text = text.strip()
    if text in ("auto_element_wise", "auto_linear"):
        return
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise scope.error_at(line, f"forward formula is not a Python expression: {exc.msg}")
    facts = scope.facts
    allowed = set(scope.return_names) | set(facts.helpers) | facts.op_functions | BUILTINS
    for a in scope.schema.arguments:
        differentiable = a.type.base == "Tensor" and a.name not in non_diff
        allowed |= {f"{a.name}_p", f"{a.name}_t"} if differentiable else {a.name}
    if scope.schema.is_inplace:
        allowed.add("original_self_p")  # self as it was before the op
    for n in _names(tree):
        if n not in allowed:
            hint = (
                " (use <name>_p for the primal and <name>_t for the tangent)"
                if n in scope.arg_names
                else ""
            )
            raise scope.error_at(line, f"unknown name '{n}' in forward formula{hint}")


def _with_saved(entry: Entry) -> Entry:
    """Decide what the node saves from the names its formulas read."""
    schema = entry.schema
    args = {a.name: a for a in schema.arguments}
    returns = _return_names(schema)
    fields: Dict[str, SavedField] = {}
    for formula in entry.formulas:
        for field_name, (arg, kind) in formula.metadata:
            saved_kind = "output_metadata" if arg in returns else "metadata"
            fields[field_name] = SavedField(field_name, saved_kind, arg, kind)
        for n in formula.names:
            if n in args:
                a = args[n]
                if a.type.base == "Tensor":
                    previous = fields.get(n)
                    needed = (previous.needed_by if previous else ()) + formula.inputs
                    kind = "tensor_list" if a.type.is_list else "tensor"
                    fields[n] = SavedField(n, kind, n, None, tuple(dict.fromkeys(needed)))
                else:
                    fields[n] = SavedField(n, "value", n)
            elif n in returns:
                fields[n] = SavedField(n, "output", n)
    saved = tuple(fields[k] for k in sorted(fields))
    return replace(entry, saved=saved)


def _check_name_tags(path, entries: List[Entry]) -> None:
    for tag in NAME_TAGS:
        tagged = {e.schema.base_name for e in entries if tag in e.tags}
        for e in entries:
            if e.schema.base_name in tagged and tag not in e.tags:
                raise ModelError(
                    path,
                    e.line,
                    e.op_name,
                    f"tag '{tag}' holds for every overload of {e.schema.base_name} or none",
                )


def node_prefix(base_name: str) -> str:
    """PyTorch's rule: CamelCase of the base name + Backward (``_unsafe_view`` -> UnsafeViewBackward)."""
    name = base_name.rstrip("_")
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    camel += "Backward"
    return camel.replace("ForwardBackward", "Backward")


def _check_node_names(path, entries: List[Entry]) -> None:
    seen: Dict[str, int] = {}
    first: Dict[str, Entry] = {}
    for e in entries:
        if not e.is_differentiable:
            continue
        name = node_class_name(e, entries)
        # an in-place entry of its own (index_reduce_) may share its functional op's node, as
        # PyTorch's in-place variants do
        shares = (
            name in first
            and e.schema.is_inplace
            and node_prefix(e.schema.base_name) == node_prefix(first[name].schema.base_name)
        )
        first.setdefault(name, e)
        if name in seen and name not in SHARED_NODE_NAMES and not shares:
            raise ModelError(
                path, e.line, e.op_name, f"node name {name} already used at line {seen[name]}"
            )
        seen[name] = e.line


def node_class_name(entry: Entry, entries: List[Entry]) -> str:
    """The explicit ``node:`` or PyTorch's derived name (prefix + file-order counter)."""
    if entry.node_name:
        return entry.node_name
    prefix = node_prefix(entry.schema.base_name)
    count = 0
    for e in entries:
        if e is entry:
            break
        if e.is_differentiable and node_prefix(e.schema.base_name) == prefix and not e.node_name:
            count += 1
    return f"{prefix}{count}"
