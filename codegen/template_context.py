"""The model, shaped for the templates: one small object per thing a template emits.

Templates stay declarative; every decision (names, guards, what is saved,
how arguments are normalized) is made here, from the model alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from . import model as m

#: Python spelling of a formula's local for an argument name.
LOCAL_NAMES = {"self": "self_"}
#: the ints a Scalar holds (int64 or uint64); others get PyTorch's OverflowError
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def ident(schema) -> str:
    """Python identifier of an overload: ``mul.Tensor`` -> ``mul_Tensor``, ``exp`` -> ``exp``."""
    return schema.base_name + (f"_{schema.overload_name}" if schema.overload_name else "")


def local(name: str) -> str:
    return LOCAL_NAMES.get(name, name)


def _default_repr(arg) -> str:
    value = arg.default_value
    return repr(value)


@dataclass
class Param:
    alias_write: bool
    name: str
    type: str  # schema type text
    default: Optional[str]
    kwarg_only: bool
    normalize: Optional[str]  # statements, one a line, or None
    keys: Optional[str]  # expression of this argument's dispatch keys, if a tensor


def _param(arg, index: int, schema, numbers_as_tensors: bool) -> Param:
    t = arg.type
    n = arg.name
    normalize = keys = None
    if t.base == "Tensor" and not t.is_list:
        # numbers, subclasses and refusals are tensor_arg's to sort out (slow path only)
        convert = f"tensor_arg({n}, _site, {ident(schema)}_op, {index})"
        if t.optional:
            normalize = f"if {n} is not None and {n}.__class__ is not Tensor: {n} = {convert}"
            keys = f"({n}._keys if {n} is not None else 0)"
        elif numbers_as_tensors:
            # arithmetic wraps a Python number itself (x * 2 is the common case)
            normalize = (
                f"if {n}.__class__ not in TENSOR_CLASSES:\n"
                f"    if {n}.__class__ in WRAPPED_NUMBER_CLASSES: {n} = wrap_scalar({n})\n"
                f"    else: {n} = {convert}"
            )
            keys = f"{n}._keys"
        else:
            normalize = f"if {n}.__class__ not in TENSOR_CLASSES: {n} = {convert}"
            keys = f"{n}._keys"
    elif t.base == "Tensor":
        normalize = f"{n} = tensor_list({n}, {index})" if index else f"{n} = tensor_list({n})"
        keys = f"list_keys({n})"
    elif t.is_list and t.base in ("int", "SymInt"):
        # a tuple passes as given: int_list converts or refuses anything else
        call = f"int_list({n}, {t.list_size or 1}, _site, {ident(schema)}_op, {index})"
        guard = f"{n} is not None and " if t.optional else ""
        normalize = f"if {guard}{n}.__class__ is not tuple: {n} = {call}"
    elif t.base in ("int", "SymInt"):
        convert = f"int_arg({n}, _site, {ident(schema)}_op, {index})"
        if t.optional:
            normalize = f"if {n} is not None and {n}.__class__ is not int: {n} = {convert}"
        else:
            normalize = f"if {n}.__class__ is not int: {n} = {convert}"
    elif t.base == "float" and not t.is_list:
        convert = f"float_arg({n}, _site, {ident(schema)}_op, {index})"
        guard = f"{n} is not None and " if t.optional else ""
        normalize = f"if {guard}{n}.__class__ is not float: {n} = {convert}"
    elif t.base == "Scalar":
        # Python numbers pass (an int only within a Scalar's int64/uint64 range); tensors
        # give their value, numpy scalars the number they hold, anything else is refused
        convert = f"scalar_arg({n}, _site, {ident(schema)}_op, {index})"
        guard = f"{n} is not None and " if t.optional else ""
        normalize = (
            f"if {guard}{n}.__class__ not in PY_NUMBERS: {n} = {convert}\n"
            f"elif {n}.__class__ is int and not {_INT64_MIN} <= {n} <= {_UINT64_MAX}: "
            f"check_scalar_range({n})"
        )
    elif t.base == "ScalarType":
        # strings, numpy types, Python types: dtype_arg converts or refuses (given ones only)
        convert = f"dtype_arg({n}, _site, {ident(schema)}_op, {index})"
        guard = f"{n} is not None and " if t.optional else ""
        normalize = f"if {guard}{n}.__class__ is not DType: {n} = {convert}"
    elif t.base == "Device":
        convert = f"device_arg({n}, _site, {ident(schema)}_op, {index})"
        normalize = f"if {n} is not None: {n} = {convert}" if t.optional else f"{n} = {convert}"
    default = _default_repr(arg) if arg.has_default else None
    return Param(arg.is_write, n, str(t), default, arg.kwarg_only, normalize, keys)


@dataclass
class Overload:
    """One OpOverload and its entry function."""

    ident: str
    schema: str
    params: List[Param]
    entry: m.Entry
    kind: str  # functional | inplace_variant | inplace | out_variant | composite

    @property
    def numbers_as_tensors(self) -> bool:
        """Whether Python numbers may stand for its Tensor arguments (the op's tag)."""
        return "numbers_as_tensors" in self.entry.tags

    @property
    def written(self) -> Optional[str]:
        """The argument an in-place or out= overload writes (``self`` or ``out``)."""
        return next((p.name for p in self.params if p.alias_write), None)

    @property
    def writes_list(self) -> bool:
        """Whether it writes a list of tensors (``unbind_copy.int_out``'s ``Tensor(a!)[] out``)."""
        return any(p.alias_write and p.type.endswith("[]") for p in self.params)

    @property
    def all_written(self) -> List[str]:
        """Every argument it writes: an out= overload of an op with several results writes
        one tensor per result (``max.dim_max``: ``max``, ``max_values``)."""
        return [p.name for p in self.params if p.alias_write]

    @property
    def signature(self) -> str:
        parts, star = [], False
        for p in self.params:
            if p.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(p.name + (f"={p.default}" if p.default is not None else ""))
        return ", ".join(parts)

    @property
    def args(self) -> str:
        return ", ".join(p.name for p in self.params)

    @property
    def keyset(self) -> str:
        keys = [p.keys for p in self.params if p.keys]
        if not keys:
            return "include & _tls.keep"
        return f"({' | '.join(keys)} | include) & _tls.keep"

    @property
    def plain_test(self) -> str:
        """Whether the call may take the plain path: the key set of plain tensors (which
        the union of several tensors' keys also is when one is an inference tensor, so
        their intersection must be too) and the plain flag."""
        keys = [p.keys for p in self.params if p.keys]
        test = "_tls.plain and keyset == PLAIN_KEYS"
        if len(keys) > 1:
            test += f" and ({' & '.join(keys)}) == PLAIN_KEYS"
        return test

    @property
    def takes_tensors(self) -> bool:
        """Whether an argument may be a subclass whose __torch_function__ takes the call."""
        return any(p.keys for p in self.params)

    @property
    def normalizations(self) -> List[str]:
        return [line for p in self.params if p.normalize for line in p.normalize.split("\n")]


def overloads_of(entry: m.Entry) -> List[Overload]:
    kind = "composite" if entry.composite else ("inplace" if entry.is_inplace else "functional")
    numbers = "numbers_as_tensors" in entry.tags
    result = []
    for schema, kind in (
        (entry.schema, kind),
        (entry.inplace, "inplace_variant"),
        (entry.out, "out_variant"),
    ):
        if schema is not None:
            params = [_param(a, i, schema, numbers) for i, a in enumerate(schema.arguments)]
            result.append(Overload(ident(schema), str(schema), params, entry, kind))
    return result


def _varargs_methods(surface_methods: Dict[str, List[str]], by_ident: dict) -> set:
    """The methods of one overload that take ``x.view(2, 3)`` for ``x.view((2, 3))``: as
    PyTorch, those whose one positional argument after self is an int list (not
    ``x.roll(1, 0)``, a shift and a dim). Methods of several overloads all take them."""
    result = set()
    for name, idents in surface_methods.items():
        params = [p for p in by_ident[idents[0]].params if not p.kwarg_only]
        int_list = len(params) == 2 and re.fullmatch(r"(SymInt|int)\[\d*\]\??", params[1].type)
        if len(idents) == 1 and int_list:
            result.add(name)
    return result


# ---- CPU kernels ------------------------------------------------------------------------


@dataclass
class CpuKernel:
    ident: str
    doc: str
    params: str
    prelude: List[str]
    expr: str
    #: "copy" (in-place variant), "set" (metadata in-place), "out" (out= variant) or None
    writes: Optional[str]
    returns_many: bool = False
    #: the schema returns a Scalar or a bool: the kernel hands back the Python value itself
    returns_scalar: bool = False
    #: a tuple of results of which some may be undefined (None): a bool[N] output_mask
    #: argument says which the caller wants, as PyTorch's backward ops take one
    may_be_undefined: bool = False
    is_view: bool = False
    #: tensor inputs that broadcast together (their shapes name a broadcast error)
    broadcasts: Tuple[str, ...] = ()
    #: which of them are optional (absent ones have no shape to name)
    optional: Tuple[str, ...] = ()
    #: an out= variant whose outs are checked once the results are computed (several
    #: results, or the exact_result rule): the check of each out's dtype, or "None"
    #: (castable)
    out_check: Optional[str] = None
    #: a list copy's out= variant (writes "out_list"): how it writes its outs
    list_copy_out: Optional[m.ListCopyOut] = None

    @property
    def broadcast_shapes(self) -> str:
        """The argument list of broadcast_error: the shapes of the tensors given."""
        if not self.optional:
            return "".join(f"{t}.shape, " for t in self.broadcasts)
        names = ", ".join(self.broadcasts)
        return f"*[t.shape for t in ({names}) if t is not None]"


#: the check of each exact out_dtype rule: (result dtype, out's dtype) -> raises
_OUT_DTYPE_CHECKS = {
    "exact": "check_out_dtype",
    "exact_matmul": "check_matmul_out_dtype",
    "exact_scalar_type": "check_out_scalar_type",
}
#: the check of each rule applied to the computed results (write_outs)
_RESULT_DTYPE_CHECKS = {
    **_OUT_DTYPE_CHECKS,
    "castable": "None",
    "exact_result": "check_matmul_out_dtype",
}


def cpu_kernel(ov: Overload) -> CpuKernel:
    entry = ov.entry
    schema_args = entry.schema.arguments
    tensors = [a.name for a in schema_args if a.type.base == "Tensor" and not a.type.is_list]
    optional = {a.name for a in schema_args if a.type.optional}
    promoted = [t for t in tensors if t not in entry.non_differentiable]
    scalars = [
        a.name for a in schema_args if a.type.base == "Scalar" and a.name not in entry.unpromoted
    ]
    # the entry's check sees the arguments as given, before any promotion
    prelude = [entry.check] if entry.check else []
    if (
        ov.kind == "functional"
        and entry.cpu
        and re.search(r"\btarget\b", entry.cpu)
        and all(a.name != "target" for a in schema_args)
    ):
        # a kernel that reads the tensor its variants write (its dtype) gets None here
        prelude.append("target = None")
    writes = None
    if ov.writes_list:
        return _list_copy_out_kernel(ov, prelude)
    several_outs = ov.kind == "out_variant" and (
        len(ov.all_written) > 1 or entry.out_dtype == "exact_result"
    )
    if several_outs and len(ov.all_written) == 1:  # one out, checked once computed
        prelude.append(f"targets = ({ov.written},)")
        writes = "outs"
    elif several_outs:
        prelude.append(f"targets = ({', '.join(ov.all_written)})")
        writes = "outs"
    elif ov.kind in ("inplace_variant", "inplace", "out_variant"):
        prelude.append(f"target = {ov.written}")
        if ov.kind == "inplace":
            writes = "set" if "inplace_view" in entry.tags else "copy"
        else:
            writes = {"inplace_variant": "copy", "out_variant": "out"}[ov.kind]
    if entry.target_check and ov.kind in ("inplace_variant", "out_variant"):
        if several_outs:  # the one out (exact_result), checked as given before the kernel
            prelude.append(f"target = {ov.written}")
        prelude.append(entry.target_check)
    for a in schema_args:
        if a.type.base == "Tensor" and a.type.is_list:
            prelude.append(f"{a.name} = [t._data if t is not None else None for t in {a.name}]")
    rule = entry.dtype_rule
    plain = [t for t in tensors if rule == "none" or t not in promoted]
    for t in plain:
        prelude.append(
            f"{t} = {t}._data" + (f" if {t} is not None else None" if t in optional else "")
        )
    if rule != "none" and promoted:
        # a division without a rounding mode lifts integers to float, as true division
        lifted = {"float": "True", "division": "rounding_mode is None"}.get(rule, "False")
        if any(t in optional for t in promoted):
            names = ", ".join(promoted)
            prelude.append(f"{names} = promote_optional(({names}), {lifted})")
        elif len(promoted) == 1 and not scalars:
            t = promoted[0]
            prelude.append(f"{t} = float_array({t})" if rule == "float" else f"{t} = {t}._data")
        elif len(promoted) == 2 and not scalars:
            a, b = promoted
            keep = ", True" if "float16_scalar_other" in entry.tags else ""
            prelude.append(f"{a}, {b} = promote2({a}, {b}, {lifted}{keep})")
        else:
            names = ", ".join(promoted)
            scalar_names = ", ".join(scalars)
            prelude.append(
                f"{names}, = promote(({names},), ({scalar_names}{',' if len(scalars) == 1 else ''}), {lifted})"
            )
    if ov.kind == "inplace_variant" and rule != "none" and promoted:
        # as in PyTorch, the result type must be castable to self's before anything runs
        first = promoted[0]
        prelude.append(
            f"if {first}.dtype is not target._data.dtype: "
            f"check_cast({first}.dtype, target._data.dtype)"
        )
    if ov.kind == "out_variant" and entry.out_dtype == "bool":
        # a predicate writes only into bool outs, refused before anything runs
        prelude.append(f'check_bool_out(target._data.dtype, "{entry.schema.base_name}")')
    elif ov.kind == "out_variant" and entry.out_dtype != "castable" and not several_outs:
        # out must have the very result type, checked before anything runs (the first
        # tensor's array carries it once promoted); a castable result is checked as it is
        # written (write_out)
        first = promoted[0] if rule != "none" and promoted else tensors[0]
        check = _OUT_DTYPE_CHECKS[entry.out_dtype]
        prelude.append(
            f"if {first}.dtype is not target._data.dtype: "
            f"{check}({first}.dtype, target._data.dtype)"
        )
    returns = entry.schema.returns
    many = len(returns) > 1 or (len(returns) == 1 and returns[0].type.is_list)
    broadcasts = tuple(t for t in tensors) if rule != "none" and len(tensors) > 1 else ()
    is_view = entry.is_view and ov.kind == "functional" and not many
    if is_view:
        prelude.insert(0, f"source = {tensors[0]}")
    return CpuKernel(
        ov.ident,
        f"CPU kernel of {ov.schema.split('(')[0]}",
        ov.args,
        prelude,
        entry.cpu,
        writes,
        returns_many=many,
        returns_scalar=len(returns) == 1 and returns[0].type.base in ("Scalar", "bool"),
        may_be_undefined=many and any(a.name == "output_mask" for a in schema_args),
        broadcasts=broadcasts,
        optional=tuple(t for t in broadcasts if t in optional),
        is_view=is_view,
        out_check=_RESULT_DTYPE_CHECKS[entry.out_dtype] if several_outs else None,
    )


def _list_copy_out_kernel(ov: Overload, prelude: List[str]) -> CpuKernel:
    """The out= variant of a copy with a list of results (``split_copy.Tensor_out``): the
    view's results, which write_list_outs copies into the outs one by one, so that an out
    overlapping the input reads what the earlier writes left there, as in PyTorch."""
    entry = ov.entry
    source = entry.schema.arguments[0].name
    if entry.list_copy_out.refuses_grad_outs:  # first, as PyTorch's kernel does
        prelude = [f'refuse_grad_outs("{entry.schema.base_name}", {ov.written})'] + prelude
    return CpuKernel(
        ov.ident,
        f"CPU kernel of {ov.schema.split('(')[0]}",
        ov.args,
        prelude + [f"{source} = {source}._data"],
        entry.copied_view_cpu,
        "out_list",
        list_copy_out=entry.list_copy_out,
    )


# ---- nodes --------------------------------------------------------------------------------


class _Rename(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(id=local(node.id), ctx=node.ctx), node)


def _local_expr(expr: str) -> str:
    tree = ast.parse(expr, mode="eval")
    return ast.unparse(_Rename().visit(tree))


#: saved metadata PyTorch keeps without a Python getter
NO_ACCESSOR = frozenset({"scalar_type", "geometry", "info", "args_sizes", "args_scalartypes"})


@dataclass
class SavedSlot:
    slot: str  # attribute on the node: "self_", "alpha_"
    accessor: str  # "_saved_self"
    local: str  # name in apply
    kind: str  # tensor | tensor_list | output | value | metadata | output_metadata
    source: str
    metadata: Optional[str]
    guard: Optional[str]  # forward-time condition for saving it
    default: str = "None"  # its value when not saved
    optional: bool = False  # a Tensor? input: None is kept as None
    #: a saved return of an op with several: its position, and whether it is
    #: differentiable (an output of the node) or not (``log_sigmoid_forward``'s buffer)
    output_index: Optional[int] = None
    output_differentiable: bool = True

    @property
    def has_accessor(self) -> bool:
        return self.metadata not in NO_ACCESSOR

    @property
    def output_value(self) -> str:
        """The saved output's expression in the Autograd kernel."""
        return "result" if self.output_index is None else f"result[{self.output_index}]"


@dataclass
class NodeFormula:
    inputs: Tuple[str, ...]
    indices: Tuple[int, ...]  # positions of the inputs among the node's edges
    expr: str
    text: str
    #: ``expr`` as a direct call of its op's plain kernel, when it is one op call whose
    #: arguments need no conversion (see ``plain_formula_call``)
    plain_call: Optional[str] = None
    #: the saved tensors that call reads: each must be plain for it (``grad`` is tested
    #: once per apply)
    plain_tensors: Tuple[str, ...] = ()

    @property
    def index(self) -> int:
        return self.indices[0]

    @property
    def needed(self) -> str:
        return " or ".join(f"needs[{i}]" for i in self.indices)

    @property
    def targets(self) -> str:
        return ", ".join(f"grad_{i}" for i in self.inputs)


@dataclass
class NodeClass:
    name: str
    doc: str
    slots: List[SavedSlot]
    formulas: List[NodeFormula]  # sorted by their YAML keys: the order apply evaluates them
    num_edges: int
    uses_grads: bool
    imports: List[str]

    list_input: Optional[str] = None  # the one differentiable Tensor[] input, if any
    #: the Python class name: ``name`` unless several entries share it (NotImplemented),
    #: then made unique, the class's ``__name__`` staying ``name``
    class_name: str = ""

    def __post_init__(self) -> None:
        self.class_name = self.class_name or self.name

    @property
    def tests_plain(self) -> bool:
        """Whether apply asks once whether ``grad`` may go to plain kernels."""
        return any(f.plain_call for f in self.formulas)

    @property
    def returns(self) -> List[NodeFormula]:
        """The formulas in input order: the order of apply's result tuple."""
        return sorted(self.formulas, key=lambda f: f.index)

    @property
    def result_names(self) -> str:
        """apply's result tuple: one gradient per edge, in edge order (a formula for
        several inputs may name them in another order: ``input, weight, grad_out``)."""
        by_index = {i: name for f in self.formulas for i, name in zip(f.indices, f.inputs)}
        return ", ".join(f"grad_{by_index[i]}" for i in sorted(by_index)) + ","

    @property
    def tensor_slots(self) -> List[SavedSlot]:
        return [s for s in self.slots if s.kind in ("tensor", "tensor_list", "output")]


def metadata_expr(arg: str, kind: str) -> str:
    if kind == "sym_sizes":
        return f"{arg}._data.shape"
    if kind == "sym_sizes_opt":
        return f"({arg}._data.shape if {arg} is not None else None)"
    if kind == "sym_strides":
        return f"strides_of({arg})"
    if kind in ("sym_numel", "numel"):
        return f"{arg}._data.size"
    if kind == "dim":
        return f"{arg}._data.ndim"
    if kind == "scalar_type":
        return f"{arg}.dtype"
    if kind.startswith("sym_size:"):
        return f"{arg}._data.shape[{kind.split(':')[1]}]"
    if kind == "geometry":
        return f"geometry({arg})"
    if kind == "info":
        return f"({arg}._data.shape, {arg}.dtype)"
    if kind == "args_sizes":
        return f"tuple([t._data.shape for t in {arg}])"
    if kind == "args_scalartypes":
        return f"tuple([t.dtype for t in {arg}])"
    raise ValueError(kind)


def node_class(entry: m.Entry, name: str, helpers, functions) -> NodeClass:
    diff_inputs = entry.differentiable_inputs
    optional = {a.name for a in entry.schema.arguments if a.type.optional}
    # a saved ScalarType argument has no Python getter in PyTorch (like scalar_type())
    dtype_args = {a.name for a in entry.schema.arguments if a.type.base == "ScalarType"}
    returns = m._return_names(entry.schema)
    output_diff = entry.output_differentiability or (True,) * len(returns)
    slots = []
    for f in entry.saved:
        guard = None
        default = "None"
        needing = [i for i in f.needed_by if i in diff_inputs]
        if f.kind == "tensor" and set(needing) != set(diff_inputs):
            guard = (
                " or ".join(
                    f"({i} is not None and {i}._rg)" if i in optional else f"{i}._rg"
                    for i in needing
                )
                or "False"
            )
            if f.source in optional:
                guard = f"{f.source} is not None and ({guard})"
        if f.metadata == "sym_strides":
            # PyTorch reads strides only in their own input's formula, saved when it needs grad.
            guard, default = f"{f.source}._rg", "()"
        slots.append(
            SavedSlot(
                f"{f.name}_",
                f"_saved_{f.name}",
                local(f.name),
                f.kind,
                f.source,
                "scalar_type" if f.kind == "value" and f.source in dtype_args else f.metadata,
                guard,
                default,
                f.kind == "tensor" and f.source in optional,
                (
                    returns.index(f.source)
                    if f.kind in ("output", "output_metadata") and len(returns) > 1
                    else None
                ),
                f.kind != "output" or output_diff[returns.index(f.source)],
            )
        )
    formulas = []
    used = set()
    uses_grads = False
    for formula in entry.formulas:
        used.update(formula.names)
        uses_grads = uses_grads or "grads" in formula.names
        indices = tuple(diff_inputs.index(i) for i in formula.inputs)
        expr = _local_expr(formula.expr)
        if "grad_input_mask" in formula.names:
            # PyTorch's grad_input_mask: which of the formula's inputs need a gradient
            mask = (
                "(" + ", ".join(f"needs[{i}]" for i in indices) + ("," * (len(indices) == 1)) + ")"
            )
            expr = _rename(expr, {"grad_input_mask": mask})
        formulas.append(NodeFormula(formula.inputs, indices, expr, formula.text))
    # PyTorch's generated nodes evaluate the formulas in the sorted order of their YAML
    # keys ("mat2" before "self", "other" before "self"); a dispatch mode sees that order
    formulas.sort(key=lambda f: ", ".join(f.inputs))
    imports = sorted(n for n in used if n in helpers or n in functions)
    list_inputs = [
        a.name for a in entry.schema.arguments if a.type.is_list and a.name in diff_inputs
    ]
    return NodeClass(
        name,
        str(entry.schema),
        slots,
        formulas,
        len(diff_inputs),
        uses_grads,
        imports,
        list_inputs[0] if list_inputs else None,
    )


# ---- formulas calling plain kernels -------------------------------------------------------

#: ``a <op> b`` on two tensors: the overload Python's operator reaches, and the values of
#: its remaining arguments
_OPERATOR_OVERLOADS = {
    ast.Mult: ("mul_Tensor", ()),
    ast.Div: ("div_Tensor", ()),
    ast.Add: ("add_Tensor", ("1",)),
    ast.Sub: ("sub_Tensor", ("1",)),
}


def _plain_argument(node: ast.AST, param: "Param", tensors: set, sizes: set) -> Optional[str]:
    """``node`` as the plain kernel's argument for ``param``, when the entry would pass it
    on unchanged: a tensor local, a saved size tuple, or a literal of the parameter's
    type. None when the entry would convert it (numbers for tensors, lists)."""
    base = param.type.rstrip("?")
    if isinstance(node, ast.Name):
        if base == "Tensor" and node.id in tensors:
            return node.id
        if base in ("int[]", "SymInt[]") and node.id in sizes:
            return node.id
        return None
    if not isinstance(node, ast.Constant):
        return None
    value = node.value
    fits = {
        "Scalar": value.__class__ in (int, float) and abs(value) < 2**63,
        "bool": value.__class__ is bool,
        "int": value.__class__ is int,
        "SymInt": value.__class__ is int,
        "float": value.__class__ is float,
        "str": value.__class__ is str,
    }.get(base, False)
    return repr(value) if fits else None


def plain_formula_call(
    expr: str, node: NodeClass, plain: Dict[str, "Overload"], surface: Dict[str, List[str]]
) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """The plain-kernel call equal to ``expr`` (an apply's formula) and the saved tensors
    it reads, when ``expr`` is one call of an op that has a plain kernel, with arguments
    its entry passes on unchanged (``grad * self_``, ``aten.expand(grad, self_sym_sizes)``,
    ``threshold_backward(grad, result, 0)``). Else None: the formula runs as written."""
    tree = ast.parse(expr, mode="eval").body
    if isinstance(tree, ast.BinOp) and type(tree.op) in _OPERATOR_OVERLOADS:
        ident_, extra = _OPERATOR_OVERLOADS[type(tree.op)]
        given = [tree.left, tree.right] + [ast.parse(v, mode="eval").body for v in extra]
        keywords: Dict[str, ast.AST] = {}
    elif isinstance(tree, ast.Call):
        func = tree.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id != "aten":
                return None  # a method: the overload depends on the arguments
            ident_ = func.attr
        elif isinstance(func, ast.Name) and len(surface.get(func.id, ())) == 1:
            ident_ = surface[func.id][0]
        else:
            return None
        if any(isinstance(a, ast.Starred) for a in tree.args) or any(
            k.arg is None for k in tree.keywords
        ):
            return None
        given = list(tree.args)
        keywords = {k.arg: k.value for k in tree.keywords}
    else:
        return None
    overload = plain.get(ident_)
    if overload is None or len(given) > len(overload.params):
        return None
    tensors = {"grad"} | {s.local for s in node.slots if s.kind in ("tensor", "output")}
    sizes = {s.local for s in node.slots if s.metadata == "sym_sizes"}
    args, read = [], []
    for index, param in enumerate(overload.params):
        if index < len(given):
            value = given[index]
        elif param.name in keywords:
            value = keywords.pop(param.name)
        elif param.default is not None:
            value = ast.parse(param.default, mode="eval").body
        else:
            return None
        arg = _plain_argument(value, param, tensors, sizes)
        if arg is None:
            return None
        if param.keys and arg != "grad" and arg not in read:
            read.append(arg)
        args.append(arg)
    if keywords:
        return None
    return f"plain_kernels.{ident_}({', '.join(args)})", tuple(read)


def attach_plain_calls(
    nodes: List[NodeClass], plain: Dict[str, "Overload"], surface: Dict[str, List[str]]
) -> None:
    for node in nodes:
        if node.uses_grads or node.list_input:
            continue
        for formula in node.formulas:
            if len(formula.inputs) != 1:
                continue  # one expression for several inputs returns a tuple
            found = plain_formula_call(formula.expr, node, plain, surface)
            if found is not None:
                formula.plain_call, formula.plain_tensors = found


# ---- autograd kernels ------------------------------------------------------------------------


@dataclass
class AutogradKernel:
    ident: str
    op: str  # the Overload ident whose OpOverload is redispatched
    params: str
    node: NodeClass
    edges: List[str]
    requires_grad: str
    kind: str
    multi_output: bool  # a tuple or list of results
    tags: Tuple[str, ...] = ()
    jvp: Optional["JvpKernel"] = None
    #: the differentiable inputs, in edge order
    node_inputs: Tuple[str, ...] = ()
    #: output_differentiability of an op with several results, when some are not
    output_differentiability: Optional[Tuple[bool, ...]] = None

    @property
    def saves_output(self) -> bool:
        return any(s.kind in ("output", "output_metadata") for s in self.node.slots)


def autograd_kernel(
    ov: Overload, node: NodeClass, functions: frozenset, linear: Linearity
) -> AutogradKernel:
    entry = ov.entry
    optional = {a.name for a in entry.schema.arguments if a.type.optional}
    diff = entry.differentiable_inputs
    checks, edges = [], []
    for d in diff:
        if d == node.list_input:
            checks.append(f"any([t._rg for t in {d}])")
            edges.append(f"*[next_edge(t) for t in {d}]")
        elif d in optional:
            checks.append(f"({d} is not None and {d}._rg)")
            edges.append(f"next_edge({d}) if {d} is not None else None")
        else:
            checks.append(f"{d}._rg")
            edges.append(f"next_edge({d})")
    returns = entry.schema.returns
    multi = len(returns) > 1 or (len(returns) == 1 and returns[0].type.is_list)
    return AutogradKernel(
        ov.ident,
        ov.ident,
        ov.args,
        node,
        edges,
        " or ".join(checks),
        ov.kind,
        multi,
        entry.tags,
        jvp_kernel(ov, functions, linear),
        tuple(diff),
        entry.output_differentiability if multi else None,
    )


# ---- plain kernels -----------------------------------------------------------------------------


@dataclass
class PlainKernel:
    """An op computed in one frame while nothing observes aten calls (the plain path):
    the numpy result from the entry's ``cpu`` expression, then the node, its edges and
    saved inputs, the result's history and a saved result, as the autograd and CPU
    kernels would make them. ``fits`` is the test under which that equals the full path bit for bit;
    otherwise the entry steps aside before anything is created."""

    ident: str
    params: str
    tensors: List[str]  # Tensor arguments (each gets a ``<name>_data`` local)
    fits: str
    check: Optional[str]
    expr: str  # the cpu expression on the ``_data`` locals
    broadcasts: bool
    kernel: Optional[AutogradKernel]  # the node to record, if the op is differentiable
    is_view: bool = False  # the result views the first tensor (ADInplaceOrView's as_view)

    @property
    def edges(self) -> List[str]:
        """Per differentiable input, the statements making its stored edge (``next_edge``,
        without a call for a tensor with history) into ``edge_<input>``."""
        lines = []
        for name in self.kernel.node_inputs:
            lines += [
                f"edge_{name} = {name}._grad_fn",
                f"if edge_{name} is None:",
                f"    edge_{name} = grad_accumulator({name}) if {name}._rg else None",
                f"elif {name}._output_nr:",
                f"    edge_{name} = (edge_{name}, {name}._output_nr)",
            ]
        return lines


#: dtypes whose promotion among themselves and with Python numbers is the identity when
#: every tensor has the same one (numpy's own rules then agree with PyTorch's)
_PLAIN_FLOAT_TEST = "{}.dtype in PLAIN_FLOATS"


def plain_kernel(ov: Overload, kernel: Optional[AutogradKernel]) -> Optional[PlainKernel]:
    """The plain-path body of a functional overload, or None where the full path alone
    knows the op (views, several results, optional or list tensors, composites)."""
    entry = ov.entry
    if ov.kind != "functional" or entry.composite or not entry.cpu:
        return None
    if entry.is_view and "not_a_view" in entry.tags:
        return None
    returns = entry.schema.returns
    if len(returns) != 1 or returns[0].type.base != "Tensor" or returns[0].type.is_list:
        return None
    args = entry.schema.arguments
    if any(a.type.base == "Tensor" and (a.type.optional or a.type.is_list) for a in args):
        return None
    if entry.dtype_rule not in ("promote", "float", "division", "none"):
        return None
    tensors = [a.name for a in args if a.type.base == "Tensor"]
    if not tensors:
        return None  # factories: their entries have no tensor to be plain
    first = f"{tensors[0]}_data"
    tests = [_PLAIN_FLOAT_TEST.format(first)]
    tests += [f"{t}_data.dtype is {first}.dtype" for t in tensors[1:]]
    mapping = {t: f"{t}_data" for t in tensors}
    if all(a.name != "target" for a in args):
        mapping["target"] = "None"  # the tensor a variant writes: none here (cpu_kernel)
    return PlainKernel(
        ov.ident,
        ov.args,
        tensors,
        " and ".join(tests),
        entry.check,
        _rename(entry.cpu, mapping),
        len(tensors) > 1,
        kernel,
        entry.is_view,
    )


# ---- forward-mode (JVP) kernels ---------------------------------------------------------------


@dataclass
class JvpInput:
    """A differentiable input of a forward-mode kernel and how its tangent is read."""

    name: str
    kind: str  # tensor | optional | list
    used: bool  # the formula reads its tangent

    @property
    def read(self) -> str:
        n = self.name
        if self.kind == "list":
            return f"{n}_t = [fw_grad(t) for t in {n}]"
        if self.kind == "optional":
            return f"{n}_t = fw_grad({n}) if {n} is not None else None"
        return f"{n}_t = fw_grad({n})"

    @property
    def undefined(self) -> str:
        if self.kind == "list":
            return f"all([t is None for t in {self.name}_t])"
        return f"{self.name}_t is None"

    @property
    def fill(self) -> str:
        n = self.name
        if self.kind == "list":
            return f"{n}_t = [g if g is not None else zeros_tangent(t) for g, t in zip({n}_t, {n})]"
        if self.kind == "optional":
            return f"if {n}_t is None and {n} is not None: {n}_t = zeros_tangent({n})"
        return f"if {n}_t is None: {n}_t = zeros_tangent({n})"


@dataclass
class JvpKernel:
    """The forward-mode half of one Autograd kernel: the output tangent from the inputs'."""

    ident: str
    params: str
    inputs: List[JvpInput]
    expr: str  # the tangent, from <input>_t, the inputs and ``result``
    text: str  # the formula as derivatives.yaml writes it
    inplace: bool  # self's tangent is updated in place
    needs_original: bool  # the formula reads self from before an in-place op
    multi_output: bool
    is_view: bool  # a view op: views of it know their forward base
    names: Tuple[str, ...] = ()
    inplace_view: bool = False  # squeeze_ ...: the tangent itself changes shape
    #: (input, the formula without that input's tangent) for two-input formulas
    without: Tuple[Tuple[str, str], ...] = ()

    @property
    def records(self) -> str:
        """Whether the formula's history is recorded: PyTorch's zero tensors still link the
        tangent to every primal then, so the terms are kept (requires_grad, grad_fn)."""
        primals = " or ".join(f"{i.name}._rg" for i in self.inputs if i.used)
        return f"(_tls.grad_enabled and ({primals}))"

    @property
    def clones_self_tangent(self) -> bool:
        """In-place ops read self's tangent from a clone while grad mode records
        (PyTorch's rule): the update in place must not invalidate what the formula saved."""
        return (
            self.inplace
            and not self.inplace_view
            and any(i.name == "self" and i.used for i in self.inputs)
        )

    @property
    def none_defined(self) -> str:
        return " and ".join(i.undefined for i in self.inputs)

    @property
    def tangent_names(self) -> str:
        names = [f"{i.name}_t" for i in self.inputs]
        if self.needs_original:
            names.append("original_self")
        return ", ".join(names) + ("," if len(names) == 1 else "")


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: Dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        new = self.mapping.get(node.id)
        return ast.copy_location(ast.Name(id=new, ctx=node.ctx), node) if new else node


def _rename(text: str, mapping: Dict[str, str]) -> str:
    return ast.unparse(_Renamer(mapping).visit(ast.parse(text.strip(), mode="eval")))


class _Zero:
    """An undefined tangent while simplifying a forward formula (PyTorch's efficient
    zero tensor): products with it vanish, sums drop it, so ``0 * inf`` never appears."""


_ZERO = _Zero()


class _NotSimplifiable(Exception):
    pass


#: Tensor methods formulas call that are Python methods rather than YAML ops, linear in
#: the tensor they are called on
_LINEAR_METHODS = frozenset({"contiguous", "conj", "to", "view_as"})


@dataclass(frozen=True)
class Linearity:
    """The functions a forward formula may drop a zero tangent through, by the name a
    formula calls them by: ``f(zero, ...)`` is zero for ``first``, ``f(..., zero, ...)``
    for ``every``."""

    first: frozenset
    every: frozenset


def linearity(model: m.Model) -> Linearity:
    """From the model: ops tagged ``linear`` (in every tensor) or ``linear_in_first``,
    ops whose forward formula is auto_linear, helpers decorated ``@linear_in_first``,
    and the linear Tensor methods."""
    every = model.names_tagged("linear")
    auto = {
        e.schema.base_name
        for e in model.entries
        if any(text.strip() == "auto_linear" for _, text in e.forward_formulas)
    }
    first = (
        every
        | model.names_tagged("linear_in_first")
        | auto
        | set(model.linear_helpers)
        | _LINEAR_METHODS
    )
    return Linearity(frozenset(first), every)


def _simplify_zero(node: ast.AST, zeros: set, linear: Linearity):
    """``node`` with the tangents named in ``zeros`` taken as zero: a new node, ``_ZERO``,
    or _NotSimplifiable when a zero would have to be materialized."""
    if isinstance(node, ast.Name):
        return _ZERO if node.id in zeros else node
    if isinstance(node, ast.Constant):
        return node
    if isinstance(node, ast.UnaryOp):
        operand = _simplify_zero(node.operand, zeros, linear)
        if operand is _ZERO:
            if isinstance(node.op, (ast.USub, ast.UAdd)):
                return _ZERO
            raise _NotSimplifiable
        return ast.UnaryOp(op=node.op, operand=operand)
    if isinstance(node, ast.BinOp):
        left, right = _simplify_zero(node.left, zeros, linear), _simplify_zero(
            node.right, zeros, linear
        )
        if left is not _ZERO and right is not _ZERO:
            return ast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node.op, ast.Mult) or (isinstance(node.op, ast.Div) and right is not _ZERO):
            return _ZERO
        if isinstance(node.op, ast.Add):
            return right if left is _ZERO else left
        if isinstance(node.op, ast.Sub):
            if right is _ZERO:
                return left
            return ast.UnaryOp(op=ast.USub(), operand=right)
        raise _NotSimplifiable
    if isinstance(node, ast.Call):
        func = node.func
        receiver = None
        if isinstance(func, ast.Attribute):
            name = func.attr
            receiver = _simplify_zero(func.value, zeros, linear)
            if isinstance(func.value, ast.Name) and func.value.id in ("F", "ops"):
                receiver = func.value  # a module, not a tensor
        elif isinstance(func, ast.Name):
            name = func.id
        else:
            raise _NotSimplifiable
        args = [_simplify_zero(a, zeros, linear) for a in node.args]
        kwargs = [(k.arg, _simplify_zero(k.value, zeros, linear)) for k in node.keywords]
        if any(v is _ZERO for _, v in kwargs):
            raise _NotSimplifiable
        if receiver is _ZERO:
            if name in linear.first and not any(a is _ZERO for a in args):
                return _ZERO
            raise _NotSimplifiable
        zero_args = [i for i, a in enumerate(args) if a is _ZERO]
        if zero_args:
            if name in linear.every or (name in linear.first and zero_args == [0]):
                return _ZERO
            raise _NotSimplifiable
        new_func = ast.Attribute(value=receiver, attr=name, ctx=ast.Load()) if receiver else func
        return ast.Call(
            func=new_func, args=args, keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs]
        )
    if any(isinstance(n, ast.Name) and n.id in zeros for n in ast.walk(node)):
        raise _NotSimplifiable
    return node


def _without_tangent(expr: str, name: str, linear: Linearity) -> Optional[Tuple[str, bool]]:
    """``expr`` with ``<name>_t`` undefined, when no zero tensor is needed for it, and
    whether the result may be another tensor's tangent object itself (then it is copied)."""
    try:
        tree = _simplify_zero(ast.parse(expr, mode="eval").body, {f"{name}_t"}, linear)
    except _NotSimplifiable:
        return None
    if tree is _ZERO:
        return None
    passes_through = isinstance(tree, ast.Name) or (
        isinstance(tree, ast.Call)
        and isinstance(tree.func, ast.Name)
        and tree.func.id == "maybe_multiply"
    )
    return ast.unparse(ast.fix_missing_locations(tree)), passes_through


def _zero_variant(expr: str, name: str, inplace: bool, linear: Linearity) -> Optional[str]:
    simplified = _without_tangent(expr, name, linear)
    if simplified is None:
        return None
    text, passes_through = simplified
    if inplace and name == "self":
        return f"zeros_tangent(self) + {text}"  # in place, self gets a real zero tangent
    # the output's tangent must not be another tensor's tangent object
    return f"{text}.clone()" if passes_through else text


def jvp_kernel(ov: Overload, functions: frozenset, linear: Linearity) -> Optional[JvpKernel]:
    """PyTorch's rules: an explicit formula reads ``<arg>_p``/``<arg>_t``/``result``;
    ``auto_element_wise`` is the backward formula with ``grad`` replaced by the tangent;
    ``auto_linear`` is the op itself applied to the tangents. An in-place variant's
    formula reads ``self`` from before the op and ``result`` after it."""
    entry = ov.entry
    forward = [text for key, text in entry.forward_formulas]
    if not forward:
        return None
    text = forward[0].strip()
    diff = entry.differentiable_inputs
    schema = entry.schema
    if len(schema.returns) > 1:
        # one formula per return, keyed by its name: the tangents in return order (the
        # returns without a formula, non-differentiable, come last and get none)
        by_return = dict(entry.forward_formulas)
        texts = [by_return[r] for r in m._return_names(schema) if r in by_return]
        text = "(" + ", ".join(t.strip() for t in texts) + ",)"
    if text == "auto_linear":
        parts = []
        for a in schema.arguments:
            value = f"{a.name}_t" if a.name in diff else a.name
            parts.append(f"{a.name}={value}" if a.kwarg_only else value)
        expr = f"ops.{ident(schema)}({', '.join(parts)})"
    elif text == "auto_element_wise":
        (inp,) = diff
        backward = next(f for f in entry.formulas if f.inputs == (inp,))
        expr = _rename(backward.text, {"grad": f"{inp}_t"})
    else:
        expr = _rename(text, {f"{a.name}_p": a.name for a in schema.arguments})
    if len(schema.returns) > 1:
        # the other returns a formula names are elements of the result tuple
        returns = m._return_names(schema)
        expr = _rename(expr, {r: f"result[{i}]" for i, r in enumerate(returns)})
    needs_original = False
    if ov.kind == "inplace_variant":
        renamed = _rename(expr, {"self": "original_self"})
        needs_original = renamed != expr
        expr = renamed
    elif ov.kind == "inplace":
        # an in-place entry of its own names self from before the op original_self_p
        renamed = _rename(expr, {"original_self_p": "original_self"})
        needs_original = renamed != expr
        expr = renamed
    tree = ast.parse(expr, mode="eval")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    # op functions by module (``F.mm``): the kernels here carry op names themselves
    locals_ = {a.name for a in schema.arguments} | {"result", "original_self"}
    expr = _rename(expr, {n: f"F.{n}" for n in (names & set(functions)) - locals_})
    optional = {a.name for a in schema.arguments if a.type.optional}
    lists = {a.name for a in schema.arguments if a.type.is_list}
    inputs = [
        JvpInput(
            d,
            "list" if d in lists else "optional" if d in optional else "tensor",
            f"{d}_t" in names,
        )
        for d in diff
    ]
    returns = schema.returns
    multi = len(returns) > 1 or (len(returns) == 1 and returns[0].type.is_list)
    used = [i for i in inputs if i.used]
    without = ()
    inplace = ov.kind in ("inplace", "inplace_variant")
    if len(used) == 2 and all(i.kind == "tensor" for i in used) and not multi:
        variants = [(i.name, _zero_variant(expr, i.name, inplace, linear)) for i in used]
        without = tuple((n, e) for n, e in variants if e is not None)
    return JvpKernel(
        ov.ident,
        ov.args,
        inputs,
        expr,
        text,
        ov.kind in ("inplace", "inplace_variant"),
        needs_original,
        multi,
        entry.is_view and ov.kind == "functional",
        tuple(sorted(names)),
        "inplace_view" in entry.tags,
        without,
    )


# ---- the whole context ---------------------------------------------------------------------------


def build_context(model: m.Model) -> Dict:
    functions = set()
    for e in model.entries:
        if "function" in e.variants:
            functions.add(e.schema.base_name)
    linear = linearity(model)
    overloads: List[Overload] = []
    cpu_kernels: List[CpuKernel] = []
    nodes: List[NodeClass] = []
    autograd: List[AutogradKernel] = []
    views: List[Overload] = []
    inplace: List[Overload] = []
    composites: List[Overload] = []
    out_autograd: List[Overload] = []
    checked_autograd: List[Overload] = []
    plain_kernels: List[PlainKernel] = []
    for entry in model.entries:
        node = None
        if entry.is_differentiable:
            node = node_class(
                entry, m.node_class_name(entry, model.entries), model.helpers, functions
            )
            if any(n.name == node.name for n in nodes):
                node.class_name = f"{node.name}_{ident(entry.schema)}"
            nodes.append(node)
        for ov in overloads_of(entry):
            overloads.append(ov)
            if ov.kind == "composite":
                composites.append(ov)
                continue
            cpu_kernels.append(cpu_kernel(ov))
            if ov.kind == "out_variant":
                if entry.is_differentiable:
                    out_autograd.append(ov)
            elif node is not None:
                autograd.append(autograd_kernel(ov, node, functions, linear))
            elif entry.autograd_check:
                checked_autograd.append(ov)
            plain = plain_kernel(
                ov, autograd[-1] if node is not None and ov.kind == "functional" else None
            )
            if plain is not None and (node is not None or not entry.is_differentiable):
                plain_kernels.append(plain)
            if ov.kind in ("inplace", "inplace_variant", "out_variant"):
                inplace.append(ov)
            elif entry.is_view:
                views.append(ov)

    # The Python surface: op name -> overloads, for functions and for methods.
    surface_functions: Dict[str, List[str]] = {}
    surface_methods: Dict[str, List[str]] = {}
    # torch.special.entr and the like: submodule -> name in it -> overloads
    surface_modules: Dict[str, Dict[str, List[str]]] = {}
    for ov in overloads:
        variants = ov.entry.variants
        name = ov.schema.split("(")[0].split(".")[0]
        if ov.kind == "inplace_variant":
            # torch.acos_: the in-place variant is a function too where PyTorch's is
            function = "function" in variants and "inplace_function" in ov.entry.tags
            variants = (("method",) + (("function",) if function else ())) if variants else ()
        elif ov.kind == "out_variant":
            # PyTorch generates some out= variants for aten only (flip.out): no Python out=
            python_out = "function" in variants and "aten_only_out" not in ov.entry.tags
            variants = ("function",) if python_out else ()
        module = ov.entry.python_module
        if "function" in variants and module:
            short = name[len(module) + 1 :]
            surface_modules.setdefault(module, {}).setdefault(short, []).append(ov.ident)
        elif "function" in variants:
            surface_functions.setdefault(name, []).append(ov.ident)
        if "method" in variants and ov.params and ov.params[0].name == "self":
            surface_methods.setdefault(name, []).append(ov.ident)
    by_ident = {ov.ident: ov for ov in overloads}
    plain_overloads = {p.ident: by_ident[p.ident] for p in plain_kernels}
    attach_plain_calls(nodes, plain_overloads, surface_functions)
    jvp_names = {n for k in autograd if k.jvp for n in k.jvp.names}
    return dict(
        jvp_kernels=[k.jvp for k in autograd if k.jvp],
        jvp_helpers=sorted(jvp_names & set(model.helpers)),
        overloads=overloads,
        plain_kernels=plain_kernels,
        plain_idents={p.ident for p in plain_kernels},
        cpu_kernels=cpu_kernels,
        nodes=nodes,
        autograd_kernels=autograd,
        out_autograd_kernels=out_autograd,
        checked_autograd_kernels=checked_autograd,
        view_overloads=views,
        inplace_overloads=inplace,
        composites=composites,
        surface_functions=surface_functions,
        surface_methods=surface_methods,
        surface_modules=surface_modules,
        varargs_methods=_varargs_methods(surface_methods, by_ident),
        node_helpers=sorted({n for node in nodes for n in node.imports if n in model.helpers}),
        node_functions=sorted(
            {n for node in nodes for n in node.imports if n not in model.helpers}
        ),
    )
